package agentcheckcmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/services/tournament"
)

// Config is what to check and how.
type Config struct {
	// Agents opens the bot and its opponents. Required.
	Agents *agentconn.Resolver
	// Addr is the bot's address (grpc://host:port, or any agent address the referee takes).
	Addr string
	// Games to check; empty: every game the bot claims (every game when it claims none).
	Games []string
	// Matches per seat per game for the legal-replies check.
	Matches int
	// Seed of the matches.
	Seed uint64
	// Deadline is the time the bot has for each answer, as a referee's move timeout.
	Deadline time.Duration
	// Opponent is the agent in the other seats; "builtin:random" is seeded per match. Empty:
	// the built-in agents that play the game, in turn from match to match.
	Opponent string
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
	// Problems are examples of what went wrong.
	Problems []string
}

// maxProblems bounds the examples printed per check.
const maxProblems = 5

// checker runs the checks against one bot.
type checker struct {
	cfg   Config
	games *games.Registry
	bot   *agentconn.Conn

	latencies []time.Duration // of every request sent to the bot
	late      []string        // requests answered after the deadline
	checks    []Check
}

// Run checks the bot at cfg.Addr and returns one Check per check, in order. The error is for
// a check that could not be set up (a bad address or game): the report is then incomplete.
func Run(ctx context.Context, reg *games.Registry, cfg Config) ([]Check, error) {
	for _, g := range cfg.Games {
		if _, err := reg.Lookup(g); err != nil {
			return nil, err
		}
	}
	bot, err := cfg.Agents.Open(ctx, cfg.Addr)
	if err != nil {
		return nil, err
	}
	defer bot.Close()
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

func (c *checker) health(ctx context.Context) {
	hc := healthpb.NewHealthClient(c.bot.ClientConn())
	var problems []string
	for _, svc := range []string{"", agentv1.AgentService_ServiceDesc.ServiceName} {
		cctx, cancel := context.WithTimeout(ctx, c.cfg.Deadline)
		resp, err := hc.Check(cctx, &healthpb.HealthCheckRequest{Service: svc})
		cancel()
		switch {
		case status.Code(err) == codes.Unimplemented:
			problems = append(problems, "the bot serves no grpc.health.v1.Health service (every Parley SDK registers one)")
		case err != nil:
			problems = append(problems, fmt.Sprintf("health check of %q: %v", svc, err))
		case resp.GetStatus() != healthpb.HealthCheckResponse_SERVING:
			problems = append(problems, fmt.Sprintf("health check of %q: %s, want SERVING", svc, resp.GetStatus()))
		}
		if status.Code(err) == codes.Unimplemented {
			break
		}
	}
	ch := Check{Name: "health", Passed: len(problems) == 0, Problems: problems}
	if ch.Passed {
		ch.Detail = fmt.Sprintf("SERVING for the server and for %s", agentv1.AgentService_ServiceDesc.ServiceName)
	} else {
		ch.Detail = "the standard gRPC health check failed"
	}
	c.add(ch)
}

func (c *checker) describe(ctx context.Context) (*gamev1.AgentInfo, bool) {
	info, err := c.bot.Describe(ctx, c.cfg.Deadline)
	if err != nil {
		c.add(Check{Name: "describe", Detail: err.Error()})
		return nil, false
	}
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
	if l, ok := game.(games.Loader); ok {
		if params, err = l.Load(params, seed, os.ReadFile); err != nil {
			return nil, fmt.Errorf("%s: parameters: %w", name, err)
		}
	}
	resolved, err := game.Resolve(params)
	if err != nil {
		return nil, fmt.Errorf("%s: parameters: %w", name, err)
	}
	seats, _ := games.Seats(game, resolved)
	p := &probe{bot: c.bot.Client, mode: m}
	clients := make([]agentv1.AgentServiceClient, len(seats))
	for i := range seats {
		if int32(i) == seat {
			clients[i] = p
			continue
		}
		addr := opponent
		if addr == "builtin:random" {
			addr = fmt.Sprintf("builtin:random?seed=%d", seed+uint64(i))
		}
		opp, err := c.cfg.Agents.Open(ctx, addr)
		if err != nil {
			return nil, fmt.Errorf("opponent: %w", err)
		}
		defer opp.Close()
		clients[i] = opp.Client
	}
	res, err := match.NewRunner(nil).Run(ctx, match.Spec{
		ID:     fmt.Sprintf("agent-check-%s-s%d-%d", name, seat, seed),
		Game:   game,
		Params: resolved,
		Seed:   seed,
		Agents: clients,
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(c.cfg.Deadline)},
	})
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

// opponents are the agents the bot meets in game: --opponent, or every built-in agent that
// says it plays the game, then builtin:random (which plays any).
func (c *checker) opponents(game string) []string {
	if c.cfg.Opponent != "" {
		return []string{c.cfg.Opponent}
	}
	var out []string
	for _, e := range builtin.Catalog() {
		a, err := e.New(nil)
		if err != nil {
			continue // needs settings (a language model's address)
		}
		if d, ok := a.(sdk.Describer); ok && slices.Contains(d.Describe().GetGames(), game) {
			out = append(out, "builtin:"+e.Name)
		}
		if cl, ok := a.(io.Closer); ok {
			cl.Close()
		}
	}
	return append(out, "builtin:random")
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
	opponent := func(k int) string { return opponents[k%len(opponents)] }

	// Legal replies: every observation of Matches matches per seat.
	var problems []string
	observations, matches := 0, 0
	k := 0
	for seat := range int32(n) {
		for range c.cfg.Matches {
			pl, err := c.play(ctx, game, seat, tournament.MatchSeed(c.cfg.Seed, k), forward, opponent(k))
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
	c.add(c.rejection(ctx, game, n, tournament.MatchSeed(c.cfg.Seed, k)))
	k++

	// Unknown fields in every request.
	problems, observations = nil, 0
	for seat := range int32(n) {
		pl, err := c.play(ctx, game, seat, tournament.MatchSeed(c.cfg.Seed, k), unknownFields, opponent(k))
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
	return nil
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
