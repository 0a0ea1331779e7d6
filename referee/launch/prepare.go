// Package launch is the one way a match is prepared and played, whichever door it comes in by:
// `parley play` and `replay`, the referee's StartMatch (gRPC, and HTTP through the gateway), the
// work-queue worker, tournaments, agent-check, analyze and bench.
//
// Prepare turns a Request (what a person or a program asks for) into a Match (everything the
// runner needs, checked): the game, its parameters with the files they name loaded and every
// default filled in, the seed (a fresh one unless given), the id, the limits, and the agents —
// one per seat, each address allowed by the resolver, reachable, and claiming the game. Every
// refusal is an error a person can act on, the same from every door.
//
// Play opens a prepared match's agents through the resolver, runs the match runner, and closes
// them.
package launch

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/budget"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/policy"
)

// DefaultProbeTimeout bounds asking one agent who it is while a match is prepared.
const DefaultProbeTimeout = 10 * time.Second

// DefaultHumanMoveTimeout is the time per move of a match with a person in a seat when neither
// its request nor the organiser's policy (human_move_timeout) says otherwise: a person needs
// longer than a program.
const DefaultHumanMoveTimeout = 2 * time.Minute

// Errors of Prepare.
var (
	// ErrInvalid is wrapped by every error of Prepare about the request: the caller's to fix.
	ErrInvalid = errors.New("invalid match request")
	// ErrUnreachable is wrapped, with ErrInvalid, when an agent did not answer who it is: the
	// address may be right and its agent down.
	ErrUnreachable = errors.New("agent unreachable")
)

// unreachableError marks err as ErrUnreachable without changing its message.
type unreachableError struct{ error }

func (e unreachableError) Is(target error) bool { return target == ErrUnreachable }
func (e unreachableError) Unwrap() error        { return e.error }

// SeatsError is the error (wrapping ErrInvalid) for a request whose agents do not fill the
// game's seats one for one.
type SeatsError struct {
	Game  string
	Seats []string
	Got   int
}

func (e *SeatsError) Error() string {
	return fmt.Sprintf("%s: %s needs %d agents, one per seat (%s); got %d", ErrInvalid, e.Game, len(e.Seats), strings.Join(e.Seats, ", "), e.Got)
}

func (e *SeatsError) Unwrap() error { return ErrInvalid }

// Request is a match as asked for.
type Request struct {
	// Game names the game.
	Game string
	// Params are the game's parameters as given; unset fields take their defaults. Parameters
	// naming files are read with Preparer.ReadFile.
	Params *matchv1.GameParams
	// Resolved says Params were resolved already, for this game (a tournament's plan resolved
	// them once for all its matches): they are taken as they are.
	Resolved bool
	// Seed of the match's randomness, when SeedGiven; otherwise a fresh random seed is drawn.
	Seed      uint64
	SeedGiven bool
	// Agents, one address per seat in seat order.
	Agents []string
	// Labels name the agents in tables, one per seat or none.
	Labels []string
	// Limits on the agents; unset fields take the runner's defaults.
	Limits *matchv1.Limits
	// MatchID names the match; empty: a fresh id.
	MatchID string
	// TournamentID, when set, is the tournament the match belongs to.
	TournamentID string
	// RevealPrivate lets spectators see the match's private parts.
	RevealPrivate bool
	// Prefix and FromTurn continue an earlier record (see match.Spec).
	Prefix   []*eventsv1.MatchEvent
	FromTurn int32
	// Caller is who asks: the policy's bounds depend on it. The zero Caller is a spectator.
	Caller policy.Caller
	// Owner is who the match is played for when not Caller (policy.Caller.Owner of a
	// tournament's owner, for its matches).
	Owner string
}

// Match is a checked request: what Play needs.
type Match struct {
	ID     string
	Game   games.Game
	Params *matchv1.GameParams // resolved: files loaded, every default filled in
	Seed   uint64
	Agents []string
	// Seats are the seat names, one per agent.
	Seats         []string
	Labels        []string // nil when no seat has one
	Limits        *matchv1.Limits
	TournamentID  string
	RevealPrivate bool
	// Owner is who the match is played for (policy.Caller.Owner): its lane of the work queue.
	Owner    string
	Prefix   []*eventsv1.MatchEvent
	FromTurn int32
	// MaxDuration bounds the match's wall-clock time (0: no bound); past it the match ends
	// void, saying so.
	MaxDuration time.Duration
	// MaxRecordBytes bounds the match's record (0: the runner's bound); see match.Spec.
	MaxRecordBytes int64
	// Release gives back the match's hold on its caller's budgets (Prepare's), for a match
	// refused after it was prepared; the hold is otherwise given back when its record ends.
	Release func()
}

// Preparer checks match requests. Its fields are read-only once it is in use.
type Preparer struct {
	// Games is the catalogue. Required.
	Games *games.Registry
	// Agents opens agent addresses. Required.
	Agents *agentconn.Resolver
	// ReadFile reads the files parameters name (a game file, a corpus). Nil: parameters may not
	// name files on this machine (requests from the network).
	ReadFile games.ReadFile
	// ProbeTimeout bounds asking each agent who it is (0: DefaultProbeTimeout).
	ProbeTimeout time.Duration
	// NoProbe skips connecting to the agents: only their addresses are checked. For requests
	// whose agents were checked when they were first asked for (a queued match).
	NoProbe bool
	// Policy bounds what callers may ask for (nil: only the runner's hard limits, as for the
	// organiser's own command line).
	Policy *policy.Policy
	// Budgets holds what each caller's matches and tournaments may still cost, against the
	// policy's budgets (nil: not counted, as for the organiser's own command line).
	Budgets *budget.Ledger
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrInvalid, fmt.Errorf(format, args...))
}

// Prepare checks req and completes it into a Match: the caller's standing under the policy,
// what Setup checks and fills in, then the agents (see CheckAgents) and the labels. It is the
// one preparation of a match asked for by anyone; what it returns is played as it is (a queued
// match is reopened from its Request, never prepared again). Its errors wrap ErrInvalid and
// read as one line a person can act on; a refusal for want of budget wraps budget.ErrExhausted
// too. The match holds its cost on the caller's budgets until its record ends.
func (p *Preparer) Prepare(ctx context.Context, req Request) (*Match, error) {
	if p.Policy != nil {
		if err := p.Policy.StartMatch(req.Caller); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	if err := p.Admit(req.Caller, req.Limits, req.Agents); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	m, err := p.Setup(req)
	if err != nil {
		return nil, err
	}
	name := m.Game.Info().GetName()
	if len(req.Agents) != len(m.Seats) {
		return nil, &SeatsError{Game: name, Seats: m.Seats, Got: len(req.Agents)}
	}
	// The budget before the agents: a caller over it costs no probe.
	if m.Release, err = p.Budgets.HoldMatch(req.Caller, m.ID, HumanSeats(m.Agents)); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	registered, err := p.CheckAgents(ctx, name, req.Agents)
	if err != nil {
		m.Release()
		return nil, err
	}
	if req.RevealPrivate && p.Policy != nil {
		if err := p.Policy.Reveal(req.Caller, req.Agents, registered); err != nil {
			m.Release()
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	given, err := p.CheckLabels(req.Caller, req.Labels, registered)
	if err != nil {
		m.Release()
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	m.Labels = labels(given, registered)
	return m, nil
}

// HumanSeats counts the seats of agents that wait for a person.
func HumanSeats(agents []string) int {
	n := 0
	for _, a := range agents {
		if agentconn.IsHuman(a) {
			n++
		}
	}
	return n
}

// Setup prepares what is played whoever plays it: the game, its parameters (files they name
// read, every default filled in), the seats, the seed (a fresh one unless given), the id, the
// limits and the policy's bound on the match's time. It checks neither the caller nor the
// agents (Prepare does); callers that seat agents of their own (the conformance checks) start
// here. Labels given are kept as given.
func (p *Preparer) Setup(req Request) (*Match, error) {
	game, err := LookupGame(p.Games, req.Game)
	if err != nil {
		return nil, err
	}
	m := &Match{
		Game: game, Seed: req.Seed, TournamentID: req.TournamentID, RevealPrivate: req.RevealPrivate,
		Prefix: req.Prefix, FromTurn: req.FromTurn, Agents: slices.Clone(req.Agents), Owner: req.Owner,
	}
	if m.Owner == "" {
		m.Owner = req.Caller.Owner()
	}
	if !req.SeedGiven {
		m.Seed = FreshSeed()
	}
	m.Params = req.Params
	if !req.Resolved {
		if m.Params, err = p.params(game, req.Params, m.Seed); err != nil {
			return nil, err
		}
	}
	m.Seats, _ = games.Seats(game, m.Params)
	if n := len(req.Labels); n > 0 && n != len(m.Seats) {
		return nil, invalid("labels name the agents of the seats: give %d (one per seat) or none; got %d", len(m.Seats), n)
	}
	if len(req.Labels) > 0 {
		m.Labels = slices.Clone(req.Labels)
	}
	m.ID = req.MatchID
	if m.ID == "" {
		m.ID = NewMatchID(game.Info().GetName())
	}
	m.Limits = match.ResolveLimits(req.Limits)
	if d := req.Limits.GetMoveTimeout(); !(d.IsValid() && d.AsDuration() > 0) && slices.ContainsFunc(req.Agents, agentconn.IsHuman) {
		m.Limits.MoveTimeout = durationpb.New(min(p.humanMoveTimeout(), match.MaxMoveTimeout))
	}
	if p.Policy != nil {
		m.MaxDuration, m.MaxRecordBytes = p.Policy.MaxMatchTime, p.Policy.MaxRecordBytes
	}
	return m, nil
}

// humanMoveTimeout is the time per move of a match with a person in a seat and no move
// timeout asked for: the policy's, else DefaultHumanMoveTimeout.
func (p *Preparer) humanMoveTimeout() time.Duration {
	if p.Policy != nil && p.Policy.HumanMoveTimeout > 0 {
		return p.Policy.HumanMoveTimeout
	}
	return DefaultHumanMoveTimeout
}

// Admit checks what caller asks for against the policy, as every start does (a match, a
// tournament's entrants): the limits, and each agent address. No policy admits everything.
func (p *Preparer) Admit(caller policy.Caller, limits *matchv1.Limits, agents []string) error {
	if p.Policy == nil {
		return nil
	}
	if err := p.Policy.Limits(caller, limits); err != nil {
		return err
	}
	for _, a := range agents {
		if err := p.Policy.Agent(caller, a); err != nil {
			return err
		}
	}
	return nil
}

// CheckLabels checks each label caller gives against the policy (policy.Label): none may claim
// a registered bot's name but that bot (registered holds each seat's registered label, see
// CheckAgents), none holds control characters. It returns the labels as recorded (NFKC).
func (p *Preparer) CheckLabels(caller policy.Caller, labels, registered []string) ([]string, error) {
	if p.Policy == nil {
		return labels, nil
	}
	out := make([]string, len(labels))
	for i, l := range labels {
		var err error
		if out[i], err = p.Policy.Label(caller, l, registered[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// LookupGame finds a game of the catalogue, with the refusal every door gives.
func LookupGame(reg *games.Registry, name string) (games.Game, error) {
	g, err := reg.Lookup(name)
	if err != nil {
		return nil, invalid("%v; see `parley games`", err)
	}
	return g, nil
}

// params loads the files params name and resolves them. A panic in the rules while they do is
// a refusal naming it, like any other, never a crash of the server asked.
func (p *Preparer) params(game games.Game, params *matchv1.GameParams, seed uint64) (_ *matchv1.GameParams, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = invalid("the rules failed on these parameters: %v", r)
		}
	}()
	if l, ok := game.(games.Loader); ok {
		read := p.ReadFile
		if read == nil {
			read = func(name string) ([]byte, error) {
				return nil, fmt.Errorf("%q names a file of the server, which requests from the network may not read; give the content instead", name)
			}
		}
		var err error
		if params, err = l.Load(params, seed, read); err != nil {
			return nil, invalid("%v", err)
		}
	}
	resolved, err := game.Resolve(params)
	if err != nil {
		return nil, invalid("%v", err)
	}
	return resolved, nil
}

// Params loads the files params name (drawing from a corpus with seed) and resolves them: the
// parameters of a match Prepare would make, for a tournament's plan.
func (p *Preparer) Params(game string, params *matchv1.GameParams, seed uint64) (games.Game, *matchv1.GameParams, error) {
	g, err := LookupGame(p.Games, game)
	if err != nil {
		return nil, nil, err
	}
	resolved, err := p.params(g, params, seed)
	return g, resolved, err
}

// CheckAgents checks that every address may be used for a match of game: its form and
// settings, the dial rule, a registered bot's standing; then, unless NoProbe, that the agent
// answers who it is in time and claims the game (human seats are only checked, never used
// up). It returns each address's registered-bot label ("" for others).
func (p *Preparer) CheckAgents(ctx context.Context, game string, addrs []string) ([]string, error) {
	for _, a := range addrs {
		if err := p.Agents.Check(ctx, a); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
		}
	}
	labels := make([]string, len(addrs))
	if p.NoProbe {
		return labels, nil
	}
	timeout := p.ProbeTimeout
	if timeout <= 0 {
		timeout = DefaultProbeTimeout
	}
	// Each distinct address once, all at once: an unreachable agent costs one timeout.
	errs := make([]error, len(addrs))
	var wg sync.WaitGroup
	for i, a := range addrs {
		if agentconn.IsHuman(a) || slices.Index(addrs, a) < i {
			continue
		}
		wg.Go(func() { labels[i], errs[i] = p.probe(ctx, game, a, timeout) })
	}
	wg.Wait()
	for i, a := range addrs {
		if j := slices.Index(addrs, a); j < i {
			labels[i], errs[i] = labels[j], nil
		}
	}
	var msgs []string
	unreachable := false
	for _, err := range errs {
		if err != nil {
			msgs = append(msgs, err.Error())
			unreachable = unreachable || errors.Is(err, ErrUnreachable)
		}
	}
	if len(msgs) > 0 {
		// One line however many agents failed.
		err := invalid("%s", strings.Join(msgs, "; "))
		if unreachable {
			err = unreachableError{err}
		}
		return nil, err
	}
	return labels, nil
}

// probe opens addr, asks who it is and closes it again.
func (p *Preparer) probe(ctx context.Context, game, addr string, timeout time.Duration) (string, error) {
	c, err := p.Agents.Open(ctx, addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	info, err := c.Describe(ctx, timeout)
	if err != nil {
		return "", unreachableError{err}
	}
	if claims := info.GetGames(); len(claims) > 0 && !slices.Contains(claims, game) {
		return "", fmt.Errorf("agent %s plays %s, not %s", addr, quoted(claims), game)
	}
	return c.Label, nil
}

// quoted writes what an agent claims for a person to read: each name quoted and cut short, at
// most a few of them, so that what an agent says cannot forge lines or flood a message.
func quoted(names []string) string {
	const most, long = 8, 40
	var out []string
	for i, n := range names {
		if i == most {
			out = append(out, fmt.Sprintf("and %d more", len(names)-most))
			break
		}
		out = append(out, strconv.Quote(match.Clip(n, long)))
	}
	return strings.Join(out, ", ")
}

// labels returns the labels to record: each given one, or a registered bot's own; nil when no
// seat has one.
func labels(given, registered []string) []string {
	out := make([]string, len(registered))
	labelled := false
	for i := range out {
		if i < len(given) && given[i] != "" {
			out[i] = given[i]
		} else {
			out[i] = registered[i]
		}
		labelled = labelled || out[i] != ""
	}
	if !labelled {
		return nil
	}
	return out
}

// FreshSeed draws a random seed, kept below 2^63 so it reads the same as a signed integer.
func FreshSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:]) >> 1
}

// NewMatchID returns a fresh match id for a match of game: "GAME-" and 16 random hex digits.
func NewMatchID(game string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%s", game, hex.EncodeToString(b[:]))
}
