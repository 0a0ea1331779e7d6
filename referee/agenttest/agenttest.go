// Package agenttest is the conformance suite for agents, as gametest is for games: it plays
// real matches, run by the referee's own match runner and rules, with the agent under check in
// every seat against other agents, and looks at what the agent did with each request. `parley
// agent-check` is a thin command over it.
//
// The package opens no agent itself: the caller passes the agent under check, already
// connected, and a function that opens opponents by address, so it works the same for an
// agent served on an address and for a dial-out bot reached through a gateway.
package agenttest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/types/known/durationpb"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
)

// Conn is an open connection to an agent: the one under check, or an opponent.
type Conn struct {
	// Client calls the agent.
	Client agentv1.AgentServiceClient
	// Health is the standard health service of the agent's server (nil: the health check
	// fails, saying the agent serves none). Unused for opponents.
	Health healthpb.HealthClient
	// Link, when set, says the agent is a dial-out bot reached through the gateway at this URL:
	// its health is then the gateway's word on whether the bot's link is connected.
	Link string
	// Close releases the connection; nil when there is nothing to release.
	Close func() error
}

// close closes c if it has anything to close.
func (c *Conn) close() {
	if c.Close != nil {
		_ = c.Close()
	}
}

// Config is what to check and how.
type Config struct {
	// Addr names the agent under check in the report (its address as the user gave it).
	Addr string
	// Games to check; empty: every game the bot claims (every game when it claims none).
	Games []string
	// Matches per seat per game for the legal-replies check.
	Matches int
	// Seed of the matches.
	Seed uint64
	// Deadline is the time the bot has for each answer, as a referee's move timeout.
	Deadline time.Duration
	// Opponent is the agent in the other seats. Empty: Opponents(game), in turn from match to
	// match.
	Opponent string
	// Opponents lists the agents that play game, the last of them one that plays any game.
	// Required when Opponent is empty.
	Opponents func(game string) []string
	// Open opens an opponent's address. seed is the match's seed plus the seat's index, for
	// agents that draw randomly. Required.
	Open func(ctx context.Context, addr string, seed uint64) (*Conn, error)
	// Params are game parameters (key=value, as `parley play --param`) for the one game of
	// Games; empty: the game's defaults.
	Params []string
}

// Check is the result of one check.
type Check struct {
	Name   string
	Passed bool
	// Detail is one line saying what was checked and found.
	Detail string
	// Problems are examples of what went wrong, the first MaxProblems of them worth printing.
	Problems []string
}

// MaxProblems bounds the examples worth printing per check.
const MaxProblems = 5

// checker runs the checks against one bot.
type checker struct {
	cfg   Config
	games *games.Registry
	bot   *Conn

	latencies []time.Duration // of every request sent to the bot
	late      []string        // requests answered after the deadline
	checks    []Check
}

// Run checks bot and returns one Check per check, in order. The error is for a check that
// could not be set up (a game or its parameters, an opponent): the report is then incomplete.
// Run does not close bot.
func Run(ctx context.Context, reg *games.Registry, bot *Conn, cfg Config) ([]Check, error) {
	switch {
	case cfg.Open == nil:
		return nil, fmt.Errorf("agenttest: no Open for opponents")
	case cfg.Opponent == "" && cfg.Opponents == nil:
		return nil, fmt.Errorf("agenttest: no opponent and no Opponents")
	case cfg.Matches < 1:
		return nil, fmt.Errorf("agenttest: matches must be at least 1, got %d", cfg.Matches)
	case cfg.Deadline <= 0:
		return nil, fmt.Errorf("agenttest: the deadline must be positive, got %s", cfg.Deadline)
	}
	for _, g := range cfg.Games {
		if _, err := reg.Lookup(g); err != nil {
			return nil, err
		}
	}
	c := &checker{cfg: cfg, games: reg, bot: bot}
	c.health(ctx)
	info, ok := c.describe(ctx)
	if !ok {
		c.add(Check{Name: "games", Detail: "not checked: the bot did not answer Describe"})
		return c.checks, nil
	}
	for _, name := range c.gamesToCheck(info) {
		game, _ := reg.Lookup(name)
		if err := c.game(ctx, game); err != nil {
			return c.checks, err
		}
	}
	c.deadline()
	return c.checks, nil
}

func (c *checker) add(ch Check) { c.checks = append(c.checks, ch) }

// health asks the standard health service for the server and for AgentService. A dial-out
// bot serves none itself: the gateway answers for it, SERVING while its link is connected.
func (c *checker) health(ctx context.Context) {
	var problems []string
	hc := c.bot.Health
	if hc == nil {
		problems = append(problems, "the bot serves no grpc.health.v1.Health service (every Parley SDK registers one; without an SDK see docs/writing-an-agent.md)")
	}
	for _, svc := range []string{"", agentv1.AgentService_ServiceDesc.ServiceName} {
		if hc == nil {
			break
		}
		cctx, cancel := context.WithTimeout(ctx, c.cfg.Deadline)
		resp, err := hc.Check(cctx, &healthpb.HealthCheckRequest{Service: svc})
		cancel()
		switch {
		case status.Code(err) == codes.Unimplemented && c.bot.Link != "":
			problems = append(problems, fmt.Sprintf("the gateway at %s does not answer for dial-out bots (grpc.health.v1.Health): it is older than this checker", c.bot.Link))
		case status.Code(err) == codes.Unimplemented:
			problems = append(problems, "the bot serves no grpc.health.v1.Health service (every Parley SDK registers one; without an SDK see docs/writing-an-agent.md)")
		case err != nil:
			problems = append(problems, fmt.Sprintf("health check of %q: %v", svc, err))
		case resp.GetStatus() != healthpb.HealthCheckResponse_SERVING && c.bot.Link != "":
			problems = append(problems, fmt.Sprintf("the bot has no link open to the gateway at %s (%s): start it dialling out to that gateway", c.bot.Link, resp.GetStatus()))
		case resp.GetStatus() != healthpb.HealthCheckResponse_SERVING:
			problems = append(problems, fmt.Sprintf("health check of %q: %s, want SERVING", svc, resp.GetStatus()))
		}
		if status.Code(err) == codes.Unimplemented || c.bot.Link != "" {
			break // a dial-out bot's link is one answer for both
		}
	}
	ch := Check{Name: "health", Passed: len(problems) == 0, Problems: problems}
	switch {
	case ch.Passed && c.bot.Link != "":
		ch.Detail = fmt.Sprintf("the bot's link to the gateway at %s is connected (a dial-out bot's health is its link)", c.bot.Link)
	case ch.Passed:
		ch.Detail = fmt.Sprintf("SERVING for the server and for %s", agentv1.AgentService_ServiceDesc.ServiceName)
	case c.bot.Link != "":
		ch.Detail = "the gateway does not see the bot connected"
	default:
		ch.Detail = "the standard gRPC health check failed"
	}
	c.add(ch)
}

// describe asks the bot who it is and checks the answer against the games this referee knows.
func (c *checker) describe(ctx context.Context) (*gamev1.AgentInfo, bool) {
	cctx, cancel := context.WithTimeout(ctx, c.cfg.Deadline)
	resp, err := c.bot.Client.Describe(cctx, &agentv1.DescribeRequest{})
	cancel()
	if err != nil {
		c.add(Check{Name: "describe", Detail: fmt.Sprintf("agent %s failed Describe: unreachable or not a Parley agent: %v", c.cfg.Addr, err)})
		return nil, false
	}
	info := resp.GetAgent()
	ch := Check{Name: "describe", Passed: true}
	if info.GetName() == "" {
		ch.Problems = append(ch.Problems, "the reply has no name: every seat of a match is shown who plays it")
	}
	var unknown []string
	for _, g := range info.GetGames() {
		if _, err := c.games.Lookup(g); err != nil {
			unknown = append(unknown, g)
		}
	}
	if len(unknown) > 0 {
		ch.Problems = append(ch.Problems, fmt.Sprintf("claims games this referee does not know: %s (see `parley games`)", strings.Join(unknown, ", ")))
	}
	if len(info.GetGames()) > 0 {
		for _, g := range c.cfg.Games {
			if !slices.Contains(info.GetGames(), g) {
				ch.Problems = append(ch.Problems, fmt.Sprintf("--game %s, but the bot does not claim it (it claims %s)", g, strings.Join(info.GetGames(), ", ")))
			}
		}
	}
	ch.Passed = len(ch.Problems) == 0
	who := fmt.Sprintf("%q", info.GetName())
	if v := info.GetVersion(); v != "" {
		who += " version " + v
	}
	if a := info.GetAuthor(); a != "" {
		who += " by " + a
	}
	claims := "any game"
	if len(info.GetGames()) > 0 {
		claims = strings.Join(info.GetGames(), ", ")
	}
	ch.Detail = fmt.Sprintf("%s, claims %s", who, claims)
	c.add(ch)
	return info, true
}

// gamesToCheck is --game, or what the bot claims and the referee knows, or every game.
func (c *checker) gamesToCheck(info *gamev1.AgentInfo) []string {
	if len(c.cfg.Games) > 0 {
		return c.cfg.Games
	}
	var out []string
	for _, g := range c.games.Games() {
		name := g.Info().GetName()
		if len(info.GetGames()) == 0 || slices.Contains(info.GetGames(), name) {
			out = append(out, name)
		}
	}
	return out
}

// played is one match the bot played, with what its probe saw.
type played struct {
	seat   int32
	seed   uint64
	events []*eventsv1.MatchEvent
	probe  *probe
}

// play runs one match of game with the bot (behind a probe in mode m) in seat and the
// opponent in the other seats, exactly as a referee would, keeping the record in memory.
func (c *checker) play(ctx context.Context, game games.Game, seat int32, seed uint64, m mode, opponent string) (*played, error) {
	name := game.Info().GetName()
	params, err := games.ParseParams(name, c.cfg.Params)
	if err != nil {
		return nil, fmt.Errorf("%s: parameters: %w", name, err)
	}
	// Prepared as every match is: files the parameters name read, defaults filled in.
	_, resolved, err := (&launch.Preparer{Games: c.games, ReadFile: os.ReadFile}).Params(name, params, seed)
	if err != nil {
		return nil, fmt.Errorf("%s: parameters: %w", name, err)
	}
	seats, _ := games.Seats(game, resolved)
	bot := c.bot.Client
	if m == wholeOnly {
		bot = agentconn.ActOnly(bot)
	}
	p := &probe{bot: bot, mode: m}
	clients := make([]agentv1.AgentServiceClient, len(seats))
	for i := range seats {
		if int32(i) == seat {
			clients[i] = p
			continue
		}
		opp, err := c.cfg.Open(ctx, opponent, seed+uint64(i))
		if err != nil {
			return nil, fmt.Errorf("opponent: %w", err)
		}
		defer opp.close()
		clients[i] = opp.Client
	}
	match := &launch.Match{
		ID: fmt.Sprintf("agent-check-%s-s%d-%d", name, seat, seed), Game: game, Params: resolved, Seed: seed, Seats: seats,
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(c.cfg.Deadline)},
	}
	res, err := match.Run(ctx, clients, nil, nil)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	pl := &played{seat: seat, seed: seed, events: res.Events, probe: p}
	for _, call := range p.sent() {
		c.latencies = append(c.latencies, call.latency)
		if call.timedOut(c.cfg.Deadline) {
			c.late = append(c.late, fmt.Sprintf("%s, %s: took %s", name, where(call.obs), call.latency.Round(time.Millisecond)))
		}
	}
	return pl, nil
}

// opponents are the agents the bot meets in game: Config.Opponent, or Config.Opponents.
func (c *checker) opponents(game string) []string {
	if c.cfg.Opponent != "" {
		return []string{c.cfg.Opponent}
	}
	return c.cfg.Opponents(game)
}

// matchSeed is the seed of the k-th match of a check run seeded with seed: distinct for every
// k, and the same on every run.
func matchSeed(seed uint64, k int) uint64 {
	return rand.New(rand.NewPCG(seed, uint64(k))).Uint64() >> 1 // also a positive int64
}

// seatsOf is the number of seats of game with its default parameters.
func seatsOf(game games.Game) (int, error) {
	params, err := game.Resolve(nil)
	if err != nil {
		return 0, fmt.Errorf("%s: default parameters: %w", game.Info().GetName(), err)
	}
	names, _ := games.Seats(game, params)
	return len(names), nil
}

// game runs the three per-game checks.
func (c *checker) game(ctx context.Context, game games.Game) error {
	name := game.Info().GetName()
	n, err := seatsOf(game)
	if err != nil {
		return err
	}

	opponents := c.opponents(name)
	if len(opponents) == 0 {
		return fmt.Errorf("agenttest: no opponent for %s", name)
	}
	opponent := func(k int) string { return opponents[k%len(opponents)] }

	// Legal replies: every observation of Matches matches per seat.
	var problems []string
	observations, matches := 0, 0
	k := 0
	for seat := range int32(n) {
		for range c.cfg.Matches {
			pl, err := c.play(ctx, game, seat, matchSeed(c.cfg.Seed, k), forward, opponent(k))
			k++
			if err != nil {
				return err
			}
			matches++
			observations += len(pl.probe.sent())
			problems = append(problems, misplays(pl)...)
		}
	}
	ch := Check{Name: name + ": legal replies", Passed: len(problems) == 0, Problems: problems}
	ch.Detail = fmt.Sprintf("%s from %s (the bot in each of %s, vs %s)", count(observations, "observation"), count(matches, "match"), count(n, "seat"), strings.Join(opponents, ", "))
	if ch.Passed {
		ch.Detail += ": every reply accepted"
	}
	if observations == 0 {
		ch.Passed = false
		ch.Detail += ": the bot was never asked to move"
	}
	c.add(ch)

	// A refused action: the bot must answer the rejection with a legal action.
	c.add(c.rejection(ctx, game, n, matchSeed(c.cfg.Seed, k)))
	k++

	// Unknown fields in every request.
	problems, observations = nil, 0
	for seat := range int32(n) {
		pl, err := c.play(ctx, game, seat, matchSeed(c.cfg.Seed, k), unknownFields, opponent(k))
		k++
		if err != nil {
			return err
		}
		observations += len(pl.probe.sent())
		problems = append(problems, misplays(pl)...)
	}
	ch = Check{Name: name + ": unknown fields", Passed: len(problems) == 0 && observations > 0, Problems: problems}
	ch.Detail = fmt.Sprintf("%s carrying fields %d and %d (at the top, in the observation, in each seat)", count(observations, "request"), unknownBytesField, unknownVarintField)
	if ch.Passed {
		ch.Detail += ": every reply accepted"
	}
	c.add(ch)

	ch, err = c.parts(ctx, game, n, matchSeed(c.cfg.Seed, k), opponent(k))
	if err != nil {
		return err
	}
	c.add(ch)
	return nil
}

// parts checks that the bot sees the same game whether each observation is sent whole (Act)
// or less what the call before it carried (over Play, where the bot serves it, as a referee
// sends it): for each seat, the same match (seed, opponents) is played twice with whole
// observations and once in parts, and the bot's answers must not differ between the ways
// when they do not differ between the two whole runs (a bot that draws at random is not
// compared).
func (c *checker) parts(ctx context.Context, game games.Game, seats int, seed uint64, opponent string) (Check, error) {
	ch := Check{Name: game.Info().GetName() + ": whole or in parts"}
	compared, varied, answers := 0, 0, 0
	for seat := range int32(seats) {
		var runs [3][]string
		for i, m := range []mode{wholeOnly, wholeOnly, forward} {
			pl, err := c.play(ctx, game, seat, seed, m, opponent)
			if err != nil {
				return ch, err
			}
			runs[i] = answersOf(pl)
		}
		if !slices.Equal(runs[0], runs[1]) {
			varied++
			continue
		}
		compared++
		answers += len(runs[2])
		if i, differ := firstDifference(runs[0], runs[2]); differ {
			ch.Problems = append(ch.Problems, fmt.Sprintf("seed %d, seat %d, answer %d: sent whole, the bot answered %s; sent in parts, %s",
				seed, seat, i+1, at(runs[0], i), at(runs[2], i)))
		}
	}
	ch.Passed = len(ch.Problems) == 0
	switch {
	case compared == 0:
		ch.Detail = fmt.Sprintf("not compared: the bot answered the same match differently from run to run in each of %s", count(seats, "seat"))
	case !ch.Passed:
		ch.Detail = "the bot answers differently when a call leaves out what the call before carried: it does not put observations back together (see PlayRequest.same_as_before)"
	default:
		ch.Detail = fmt.Sprintf("%s alike, sent whole and in parts, in %s", count(answers, "answer"), count(compared, "seat"))
		if varied > 0 {
			ch.Detail += fmt.Sprintf(" (%s not compared: answers varied from run to run)", count(varied, "seat"))
		}
	}
	return ch, nil
}

// answersOf lists the bot's answers in a match it played, each as its move and messages.
func answersOf(pl *played) []string {
	var out []string
	add := func(a *agentv1.Action) {
		out = append(out, prototext.MarshalOptions{}.Format(&agentv1.Action{Move: a.GetMove(), Messages: a.GetMessages()}))
	}
	for _, ev := range pl.events {
		switch p := ev.GetPayload().(type) {
		case *eventsv1.MatchEvent_ActionRefused:
			if p.ActionRefused.GetSeat() == pl.seat {
				add(p.ActionRefused.GetAction())
			}
		case *eventsv1.MatchEvent_ActionTaken:
			if p.ActionTaken.GetSeat() == pl.seat && p.ActionTaken.GetDefaultReason() == "" {
				add(p.ActionTaken.GetAction())
			}
		}
	}
	return out
}

// firstDifference is the first index where a and b differ (a shorter list differs where it
// ends).
func firstDifference(a, b []string) (int, bool) {
	for i := range max(len(a), len(b)) {
		if i >= len(a) || i >= len(b) || a[i] != b[i] {
			return i, true
		}
	}
	return 0, false
}

// at is answer i of answers, or says there was none.
func at(answers []string, i int) string {
	if i >= len(answers) {
		return "nothing (the match went another way)"
	}
	return "{" + strings.TrimSpace(answers[i]) + "}"
}

// rejection plays matches in which the bot's first answer is replaced by one the rules refuse,
// until the bot has been asked in one, and checks its answer to the refusal.
func (c *checker) rejection(ctx context.Context, game games.Game, seats int, seed uint64) Check {
	ch := Check{Name: game.Info().GetName() + ": rejection"}
	for seat := range int32(seats) {
		pl, err := c.play(ctx, game, seat, seed, rejectFirst, c.opponents(game.Info().GetName())[0])
		if err != nil {
			ch.Detail = err.Error()
			return ch
		}
		if !pl.probe.sabotaged {
			continue // this seat never moved in this match
		}
		var refused *eventsv1.ActionRefused
		for _, ev := range pl.events {
			switch p := ev.GetPayload().(type) {
			case *eventsv1.MatchEvent_ActionRefused:
				if p.ActionRefused.GetSeat() != seat {
					continue
				}
				if refused == nil {
					refused = p.ActionRefused
					continue
				}
				ch.Detail = "after a refused action, the bot's next answer was refused too"
				ch.Problems = []string{fmt.Sprintf("turn %d, attempt %d: refused (%s): %s", ev.GetTurn(), p.ActionRefused.GetAttempt(),
					strings.TrimPrefix(p.ActionRefused.GetRejection().GetCode().String(), "REJECTION_CODE_"), p.ActionRefused.GetRejection().GetMessage())}
				return ch
			case *eventsv1.MatchEvent_AgentFault:
				if p.AgentFault.GetSeat() != seat || refused == nil {
					continue
				}
				ch.Detail = "after a refused action, the bot failed to answer"
				ch.Problems = []string{fmt.Sprintf("turn %d, attempt %d: %s: %s", ev.GetTurn(), p.AgentFault.GetAttempt(), p.AgentFault.GetKind(), p.AgentFault.GetDetail())}
				return ch
			case *eventsv1.MatchEvent_ActionTaken:
				if p.ActionTaken.GetSeat() != seat || refused == nil {
					continue
				}
				ch.Passed = true
				ch.Detail = fmt.Sprintf("the referee refused an action with no move (%s: %q); the bot's next answer was legal",
					strings.TrimPrefix(refused.GetRejection().GetCode().String(), "REJECTION_CODE_"), refused.GetRejection().GetMessage())
				return ch
			}
		}
		ch.Detail = "the referee did not refuse the substituted action, so the bot's reaction could not be checked"
		return ch
	}
	ch.Detail = "the bot was never asked to move"
	return ch
}

// misplays lists the refusals and faults (other than timeouts, which the deadline check
// reports) of the bot's seat in a match.
func misplays(pl *played) []string {
	var out []string
	var seatNames []string
	for _, s := range pl.events[0].GetMatchStarted().GetSeats() {
		seatNames = append(seatNames, s.GetName())
	}
	for _, ev := range pl.events {
		switch p := ev.GetPayload().(type) {
		case *eventsv1.MatchEvent_ActionRefused:
			if p.ActionRefused.GetSeat() != pl.seat {
				continue
			}
			out = append(out, fmt.Sprintf("seed %d, seat %d, turn %d, attempt %d: refused (%s): %s; the bot's move: %s",
				pl.seed, pl.seat, ev.GetTurn(), p.ActionRefused.GetAttempt(),
				strings.TrimPrefix(p.ActionRefused.GetRejection().GetCode().String(), "REJECTION_CODE_"),
				p.ActionRefused.GetRejection().GetMessage(), games.DescribeMove(p.ActionRefused.GetAction().GetMove(), seatNames)))
		case *eventsv1.MatchEvent_AgentFault:
			f := p.AgentFault
			if f.GetSeat() != pl.seat || f.GetKind() == eventsv1.FaultKind_FAULT_KIND_TIMEOUT ||
				f.GetKind() == eventsv1.FaultKind_FAULT_KIND_RETRIES_EXHAUSTED {
				continue
			}
			out = append(out, fmt.Sprintf("seed %d, seat %d, turn %d: %s: %s", pl.seed, pl.seat, ev.GetTurn(),
				strings.TrimPrefix(f.GetKind().String(), "FAULT_KIND_"), f.GetDetail()))
		}
	}
	return out
}

// deadline reports the latency of every request sent to the bot.
func (c *checker) deadline() {
	ch := Check{Name: "deadline", Passed: len(c.late) == 0 && len(c.latencies) > 0, Problems: c.late}
	if len(c.latencies) == 0 {
		ch.Detail = "no request was sent to the bot"
		c.add(ch)
		return
	}
	sorted := slices.Clone(c.latencies)
	slices.Sort(sorted)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d.Microseconds())/1000) }
	ch.Detail = fmt.Sprintf("%d of %d replies within %s; p50 %s, p90 %s, p99 %s, max %s",
		len(sorted)-len(c.late), len(sorted), c.cfg.Deadline,
		ms(percentile(sorted, 50)), ms(percentile(sorted, 90)), ms(percentile(sorted, 99)), ms(sorted[len(sorted)-1]))
	c.add(ch)
}

// percentile is the nearest-rank percentile p of sorted (not empty).
func percentile(sorted []time.Duration, p int) time.Duration {
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// where names the move an observation asks for.
func where(obs *agentv1.Observation) string {
	return fmt.Sprintf("seat %d, turn %d, attempt %d", obs.GetSeat(), obs.GetTurn(), obs.GetAttempt())
}

// count is n with its noun, plural unless n is 1.
func count(n int, noun string) string {
	switch {
	case n == 1:
		return "1 " + noun
	case strings.HasSuffix(noun, "ch"):
		return fmt.Sprintf("%d %ses", n, noun)
	default:
		return fmt.Sprintf("%d %ss", n, noun)
	}
}
