// Package match runs one match: it asks the agents for their moves over gRPC, owns the clock
// (per-move deadlines, bounded retries, default moves), feeds the rules, and writes every event
// to a Recorder in order. The rules stay pure; everything that can fail lives here.
package match

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Defaults for matchv1.Limits fields left unset.
const (
	DefaultMoveTimeout   = 10 * time.Second
	DefaultMaxRetries    = 2
	DefaultMaxReplyBytes = 64 << 10
)

// Hard limits: whatever a Spec's Limits ask, the runner keeps within these (values beyond
// are taken as the nearer end), so that no request can make a match hold a worker for days,
// pile up refusals or read replies larger than its record carries. An organiser's policy may
// set tighter ones.
const (
	MaxMoveTimeout   = 30 * time.Minute
	MaxMaxRetries    = 10
	MinMaxReplyBytes = 1 << 10
	// MaxMaxReplyBytes keeps a recorded reply, with its event's envelope, well inside the
	// 1 MiB NATS payload. A reply holds at most MaxMessages texts of MaxTextBytes plus
	// reasoning and notes (about 150 KiB) when legal, so honest agents never come near it.
	MaxMaxReplyBytes = 512 << 10
)

// DefaultMaxEventBytes is the largest event the runner records when its Recorder does not say
// (EventSizer): NATS' default payload limit, less room for the headers JetStream adds.
const DefaultMaxEventBytes = 1<<20 - 1<<10

const (
	// maxEvents bounds a match's record so that a game whose rules never end cannot run
	// forever; reaching it voids the match.
	maxEvents = 100_000
	// eventEnvelope is room for what an event adds around the reply it records: match id,
	// sequence, turn, time, seat, attempt, default reason.
	eventEnvelope = 4 << 10
	// maxTextBytes bounds the texts an agent or the rules may make long that the runner
	// records and feeds back: a fault's detail, a rejection's reason, a model's name.
	maxTextBytes = 1 << 10
)

// Recorder receives every event of a match, in order. An error from Record is an
// infrastructure failure: the match stops and Run returns it.
type Recorder interface {
	Record(ctx context.Context, ev *eventsv1.MatchEvent) error
}

// EventSizer is implemented by a Recorder whose transport carries events of bounded size
// (bus.Publisher: the NATS payload limit). The runner keeps every event within MaxEventBytes,
// and agents' replies with room to spare under it; without one it assumes
// DefaultMaxEventBytes.
type EventSizer interface {
	MaxEventBytes() int
}

// RecorderFunc adapts a function to Recorder.
type RecorderFunc func(ctx context.Context, ev *eventsv1.MatchEvent) error

// Record calls f.
func (f RecorderFunc) Record(ctx context.Context, ev *eventsv1.MatchEvent) error { return f(ctx, ev) }

// Spec describes one match to run.
type Spec struct {
	// ID of the match; the runner does not check its form.
	ID string
	// Game to play.
	Game games.Game
	// Params for the game, resolved (Game.Resolve's result, as launch.Preparer gives them): the
	// runner and the rules take them as they are, and record them in MatchStarted.
	Params *matchv1.GameParams
	// Seed of the match's randomness.
	Seed uint64
	// Agents in seat order.
	Agents []agentv1.AgentServiceClient
	// Limits on agents; nil or unset fields take the defaults.
	Limits *matchv1.Limits
	// Prefix, when set, holds events of an earlier match of the same game, parameters and
	// seed: its ActionTaken events before turn FromTurn are applied again, in order, before any
	// agent is asked, so the match continues from there with Agents (a counterfactual run).
	Prefix []*eventsv1.MatchEvent
	// FromTurn is the first turn the agents play when Prefix is set.
	FromTurn int32
	// TournamentID, when set, is recorded in MatchStarted.
	TournamentID string
	// Labels, when set, name the agents, one per seat in seat order: recorded in
	// MatchStarted.seats[i].label (an empty entry records none).
	Labels []string
	// RevealPrivate, recorded in MatchStarted, lets spectators see the match's private parts.
	RevealPrivate bool
	// MaxRecordBytes bounds the match's record (0: DefaultMaxRecordBytes; at most
	// MaxRecordBytes): each seat may fill an equal share of it with its own events, and plays
	// the game's default move once it has, recorded as its fault.
	MaxRecordBytes int64
}

// Result is a finished match.
type Result struct {
	// Events is the whole record, MatchStarted first and MatchEnded last.
	Events []*eventsv1.MatchEvent
	// Outcome is the MatchEnded outcome.
	Outcome *matchv1.Outcome
}

// Runner runs matches. It is safe for concurrent use; each Run is independent.
type Runner struct {
	recorder   Recorder
	clock      func() time.Time
	timestamps bool
	logger     *slog.Logger
	observer   Observer
}

// Option configures a Runner.
type Option func(*Runner)

// WithClock sets the clock used for deadlines and timestamps (default time.Now).
func WithClock(now func() time.Time) Option { return func(r *Runner) { r.clock = now } }

// WithTimestamps stamps every event with the clock's time. Off by default so that the same
// seed and agents give the same record byte for byte.
func WithTimestamps(on bool) Option { return func(r *Runner) { r.timestamps = on } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(r *Runner) { r.logger = l } }

// WithObserver tells o what every match does (default: nobody).
func WithObserver(o Observer) Option { return func(r *Runner) { r.observer = o } }

// NewRunner returns a Runner writing events to rec (nil: events are only kept in Result).
func NewRunner(rec Recorder, opts ...Option) *Runner {
	r := &Runner{recorder: rec, clock: time.Now, logger: slog.New(slog.DiscardHandler), observer: nopObserver{}}
	for _, o := range opts {
		o(r)
	}
	if r.observer == nil {
		r.observer = nopObserver{}
	}
	return r
}

// ErrBadSpec is wrapped by errors about a Spec that cannot be run.
var ErrBadSpec = errors.New("match: bad spec")

// Run plays the match to its end. Agent failures of every kind are part of the record, not
// errors; the error return is for a spec that cannot start and for infrastructure failures
// (the Recorder). A panic in the rules voids the match (or, before it starts, is an ErrBadSpec
// error) rather than crashing the process.
func (r *Runner) Run(ctx context.Context, spec Spec) (*Result, error) {
	if spec.Game == nil {
		return nil, fmt.Errorf("%w: no game", ErrBadSpec)
	}
	info, params, seatNames, seatRoles, state, err := setUp(spec)
	if err != nil {
		return nil, err
	}
	maxEvent := DefaultMaxEventBytes
	if s, ok := r.recorder.(EventSizer); ok && s.MaxEventBytes() > 0 {
		maxEvent = s.MaxEventBytes()
	}
	m := &run{
		Runner: r,
		spec:   spec,
		limits: resolveLimits(spec.Limits, maxEvent),
		state:  state,
		notes:  make([][]string, len(spec.Agents)),
		faults: make([]bool, len(spec.Agents)),
		usage:  make([]*agentv1.Usage, len(spec.Agents)),
		shares: newShares(len(spec.Agents), spec.MaxRecordBytes),
		logger: r.logger.With("match_id", spec.ID, "game", info.GetName()),
	}
	m.maxEvent = maxEvent
	m.budget.limit = m.limits.GetTokenBudget()
	return m.play(ctx, info, params, seatNames, seatRoles)
}

// setUp checks the agents against the seats and deals the first state. A panic in the rules here is an error about the spec, like any other refusal to start,
// and nothing is recorded.
func setUp(spec Spec) (info *gamev1.GameInfo, params *matchv1.GameParams, seatNames, seatRoles []string, state games.State, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: the rules panicked while setting up the match: %v", ErrBadSpec, p)
		}
	}()
	info, params = spec.Game.Info(), spec.Params
	seatNames, seatRoles = games.Seats(spec.Game, params)
	if len(spec.Agents) != len(seatNames) {
		return nil, nil, nil, nil, nil, fmt.Errorf("%w: %s needs %d agents (one per seat: %s), got %d", ErrBadSpec,
			info.GetName(), len(seatNames), strings.Join(seatNames, ", "), len(spec.Agents))
	}
	state, err = spec.Game.NewState(params, spec.Seed)
	if err != nil {
		return nil, nil, nil, nil, nil, fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	return info, params, seatNames, seatRoles, state, nil
}

// ResolveLimits returns l with every unset field set to its default and every value within the
// hard limits, as the runner applies it with a recorder that does not say how large an event
// it carries (the runner may lower max_reply_bytes further for one that carries less).
func ResolveLimits(l *matchv1.Limits) *matchv1.Limits { return resolveLimits(l, DefaultMaxEventBytes) }

// resolveLimits fills l's unset fields with the defaults and brings every value within the
// hard limits; replies also stay an envelope under maxEvent, the largest event recorded.
func resolveLimits(l *matchv1.Limits, maxEvent int) *matchv1.Limits {
	timeout := DefaultMoveTimeout
	if d := l.GetMoveTimeout(); d.IsValid() && d.AsDuration() > 0 {
		timeout = min(d.AsDuration(), MaxMoveTimeout)
	}
	retries := int32(DefaultMaxRetries)
	if l != nil && l.MaxRetries != nil {
		retries = min(max(0, l.GetMaxRetries()), MaxMaxRetries)
	}
	reply := int32(DefaultMaxReplyBytes)
	if l.GetMaxReplyBytes() > 0 {
		reply = l.GetMaxReplyBytes()
	}
	reply = max(min(reply, int32(min(MaxMaxReplyBytes, maxEvent-eventEnvelope))), MinMaxReplyBytes)
	out := &matchv1.Limits{}
	if l != nil {
		out = proto.CloneOf(l) // limits this function does not know pass through
	}
	out.MoveTimeout, out.MaxRetries, out.MaxReplyBytes = durationpb.New(timeout), proto.Int32(retries), reply
	out.TokenBudget = max(0, l.GetTokenBudget())
	return out
}

// run is the state of one Run call.
type run struct {
	*Runner
	spec   Spec
	limits *matchv1.Limits
	state  games.State
	seats  []*gamev1.SeatInfo
	events []*eventsv1.MatchEvent
	notes  [][]string // notes[seat]: that seat's own private notes, oldest first
	// whoPlays()[seat] ends seat's briefing: which agent sits in every seat. The rules never
	// learn who plays, so the runner adds it; written when first asked for, so a match whose
	// agents read no briefing writes none.
	whoPlays func() []string
	// shown[seat] is what seat is told of every seat (Observation.seats): with
	// Limits.conceal_agents, the other seats' agents left out.
	shown [][]*gamev1.SeatInfo
	// unbriefed[seat]: the seat's agent reads no briefing (Observing.skips_briefing), so it
	// is written none.
	unbriefed []bool
	faults    []bool           // faults[seat]: the seat's agent faulted at least once
	usage     []*agentv1.Usage // usage[seat]: summed over the actions the seat's agent sent
	budget    tokenBudget      // the match's shared token budget
	movers    int              // seats moving this turn, who share what is left of the budget
	shares    *shares          // what each seat has filled of the record and of others' views
	logger    *slog.Logger
	observed  ObservedMatch // what the observer is told the match is
	start     time.Time     // when MatchStarted was recorded
	begun     bool          // MatchStarted was recorded
	over      bool          // MatchEnded was recorded

	lastWasDefault bool // a default move was applied on the last turn played

	maxEvent int // the largest event the record carries, in bytes
}

// errVoid carries the reason a match is void because of something that is not an agent's
// fault (a rules panic, an inconsistent prefix, cancellation).
type errVoid struct{ reason string }

func (e *errVoid) Error() string { return e.reason }

// cancelled is the void ending of a match whose context ended: its cause when one was given
// (a time limit), else "cancelled".
func cancelled(ctx context.Context) *errVoid {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) && !errors.Is(cause, context.DeadlineExceeded) {
		return &errVoid{reason: cause.Error()}
	}
	return &errVoid{reason: "the match was cancelled"}
}

// errRecord wraps a Recorder failure: the match cannot be recorded, so Run returns it.
type errRecord struct{ err error }

func (e *errRecord) Error() string { return "match: record event: " + e.err.Error() }
func (e *errRecord) Unwrap() error { return e.err }

func (m *run) play(ctx context.Context, info *gamev1.GameInfo, params *matchv1.GameParams, seatNames, seatRoles []string) (*Result, error) {
	m.seats, m.unbriefed = m.describe(ctx, seatNames, seatRoles)
	m.shown = shownSeats(m.seats, m.limits.GetConcealAgents())
	m.whoPlays = sync.OnceValue(func() []string { return whoPlays(m.shown) })
	m.observed = ObservedMatch{ID: m.spec.ID, Game: info.GetName(), Agents: make([]string, len(m.seats))}
	for i, s := range m.seats {
		m.observed.Agents[i] = AgentKey(s)
	}
	defer func() {
		if m.begun && !m.over {
			// The record failed before its end: the match stops all the same.
			m.observer.MatchEnded(m.observed, nil, m.clock().Sub(m.start))
		}
	}()
	started := &eventsv1.MatchStarted{
		Game:          info.GetName(),
		RulesVersion:  info.GetRulesVersion(),
		Params:        params,
		Seed:          m.spec.Seed,
		Seats:         m.seats,
		Limits:        m.limits,
		TournamentId:  m.spec.TournamentID,
		RevealPrivate: m.spec.RevealPrivate,
	}
	if err := m.emit(ctx, 0, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: started}}); err != nil {
		var void *errVoid
		if errors.As(err, &void) {
			// Nothing is recorded yet: the spec (its parameters, labels) cannot be.
			return nil, fmt.Errorf("%w: %s", ErrBadSpec, void.reason)
		}
		return nil, err
	}
	err := m.loop(ctx)
	var rec *errRecord
	if errors.As(err, &rec) {
		return nil, err
	}
	var outcome *matchv1.Outcome
	var void *errVoid
	switch {
	case errors.As(err, &void):
		m.logger.Warn("match void", "reason", void.reason)
		outcome = &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_VOID, Summary: "Void: " + void.reason, FaultedSeats: m.faultedSeats()}
	case err != nil:
		return nil, err
	default:
		outcome = m.outcome()
	}
	// The ending is recorded even when ctx was cancelled, so the record is never left open.
	endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	end := &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: outcome, Usage: m.seatUsage()}}}
	err = m.emit(endCtx, m.turnSafe(), end)
	if errors.As(err, &void) {
		// The ending itself is too large for the record: end void, saying so.
		outcome = &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_VOID, Summary: "Void: " + void.reason, FaultedSeats: m.faultedSeats()}
		end = &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: outcome}}}
		err = m.emit(endCtx, m.turnSafe(), end)
	}
	if err != nil {
		return nil, err
	}
	return &Result{Events: m.events, Outcome: outcome}, nil
}

// describedAgent is an agent client that may know its agent's answer to Describe without a
// call (agentconn's): such an agent is not asked.
type describedAgent interface {
	KnownDescription() *agentv1.DescribeResponse // nil when not known; read-only
}

// describe asks every agent who it is, in parallel, and whether it reads the briefing. An
// agent that does not answer is recorded with an empty identity; its moves will fault and be
// defaulted.
func (m *run) describe(ctx context.Context, seatNames, seatRoles []string) (seats []*gamev1.SeatInfo, unbriefed []bool) {
	seats = make([]*gamev1.SeatInfo, len(m.spec.Agents))
	unbriefed = make([]bool, len(m.spec.Agents))
	var wg sync.WaitGroup
	for i, client := range m.spec.Agents {
		seats[i] = &gamev1.SeatInfo{Seat: int32(i), Name: seatNames[i], Agent: &gamev1.AgentInfo{}}
		if i < len(seatRoles) {
			seats[i].Role = seatRoles[i]
		}
		if i < len(m.spec.Labels) {
			seats[i].Label = m.spec.Labels[i]
		}
		if k, ok := client.(describedAgent); ok {
			if resp := k.KnownDescription(); resp != nil {
				if a := resp.GetAgent(); a != nil {
					seats[i].Agent = tidyAgent(a)
				}
				unbriefed[i] = resp.GetObserving().GetSkipsBriefing()
				continue
			}
		}
		ask := func() {
			cctx, cancel := context.WithTimeout(ctx, m.limits.GetMoveTimeout().AsDuration())
			defer cancel()
			resp, err := client.Describe(cctx, &agentv1.DescribeRequest{}, grpc.MaxCallRecvMsgSize(int(m.limits.GetMaxReplyBytes())))
			if err != nil {
				m.logger.Warn("describe failed", "seat", i, "err", err)
				return
			}
			if a := resp.GetAgent(); a != nil {
				seats[i].Agent = tidyAgent(a)
			}
			unbriefed[i] = resp.GetObserving().GetSkipsBriefing()
		}
		if i == len(m.spec.Agents)-1 {
			ask() // the last while the others are asked: a goroutine less per match
		} else {
			wg.Go(ask)
		}
	}
	wg.Wait()
	return seats, unbriefed
}

func (m *run) loop(ctx context.Context) (err error) {
	defer func() {
		if p := recover(); p != nil {
			m.logger.Error("rules panicked", "panic", p)
			err = &errVoid{reason: fmt.Sprintf("referee error: the rules failed (%v)", p)}
		}
	}()
	if o, ok := m.state.(games.Opener); ok {
		turn := m.state.Turn()
		for _, ev := range o.OpeningEvents() {
			if err := m.emit(ctx, turn, ev); err != nil {
				return err
			}
		}
	}
	if err := m.applyPrefix(ctx); err != nil {
		return err
	}
	for {
		if ctx.Err() != nil {
			return cancelled(ctx)
		}
		movers := m.state.ToMove()
		if len(movers) == 0 {
			return nil
		}
		if err := m.turn(ctx, movers); err != nil {
			return err
		}
	}
}

// applyPrefix replays the kept part of an earlier record.
func (m *run) applyPrefix(ctx context.Context) error {
	for _, ev := range m.spec.Prefix {
		taken := ev.GetActionTaken()
		if taken == nil || ev.GetTurn() >= m.spec.FromTurn {
			continue
		}
		seat := taken.GetSeat()
		if !slices.Contains(m.state.ToMove(), seat) {
			return &errVoid{reason: fmt.Sprintf("the earlier record does not fit the game: seat %d acts on turn %d out of turn", seat, ev.GetTurn())}
		}
		turn := m.state.Turn()
		taken = proto.CloneOf(taken) // the state keeps what it applies; the prefix is the caller's
		gameEvents, err := m.state.Apply(seat, taken.GetAction())
		if err != nil {
			return &errVoid{reason: fmt.Sprintf("the earlier record does not fit the game: turn %d: %v", ev.GetTurn(), err)}
		}
		m.lastWasDefault = taken.GetDefaultReason() != ""
		if err := m.emitTaken(ctx, turn, taken, gameEvents); err != nil {
			return err
		}
	}
	return nil
}

// decision is what asking one seat produced: the events to record before the action (refusals,
// faults) and the action to apply.
type decision struct {
	seat          games.Seat
	pending       []*eventsv1.MatchEvent
	action        *agentv1.Action
	attempt       int32
	defaultReason string
	gameEvents    []*eventsv1.MatchEvent // from the successful Apply on the validating state
	err           error                  // the seat could not be asked: the match is void
}

// turn asks the movers (in parallel when several move at once), then applies their actions in
// seat order so the record does not depend on which agent answered first.
func (m *run) turn(ctx context.Context, movers []games.Seat) error {
	turn := m.state.Turn()
	decisions := make([]*decision, len(movers))
	m.movers = len(movers)
	if len(movers) == 1 {
		// The only mover validates against the real state: Apply that succeeds is final.
		decisions[0] = m.ask(ctx, movers[0], m.state)
	} else {
		var wg sync.WaitGroup
		var panicked any
		var mu sync.Mutex
		for i, seat := range movers {
			validating := m.state.Clone()
			wg.Go(func() {
				defer func() {
					if p := recover(); p != nil {
						mu.Lock()
						panicked = p
						mu.Unlock()
					}
				}()
				decisions[i] = m.ask(ctx, seat, validating)
			})
		}
		wg.Wait()
		if panicked != nil {
			panic(panicked)
		}
	}
	if ctx.Err() != nil {
		return cancelled(ctx)
	}
	for _, d := range decisions {
		if d.err != nil {
			return d.err
		}
	}
	m.lastWasDefault = false
	for _, d := range decisions {
		for _, ev := range d.pending {
			if err := m.emit(ctx, turn, ev); err != nil {
				return err
			}
		}
		gameEvents := d.gameEvents
		if len(movers) > 1 {
			var err error
			gameEvents, err = m.state.Apply(d.seat, d.action)
			if err != nil {
				return &errVoid{reason: fmt.Sprintf("referee error: seat %d's validated action was refused when applied: %v", d.seat, err)}
			}
		}
		// Any seat's default counts, not only the last in seat order: simultaneous moves end a
		// match together.
		m.lastWasDefault = m.lastWasDefault || d.defaultReason != ""
		taken := &eventsv1.ActionTaken{Seat: d.seat, Action: d.action, Attempt: d.attempt, DefaultReason: d.defaultReason}
		if err := m.emitTaken(ctx, turn, taken, gameEvents); err != nil {
			return err
		}
	}
	for _, d := range decisions {
		u := d.action.GetUsage()
		var reason string
		switch u.GetFallbackCause() {
		case agentv1.FallbackCause_FALLBACK_CAUSE_PROVIDER:
			// The result would measure the model provider, not the agent.
			reason = fmt.Sprintf("%s's model provider kept failing, so its agent could not move", m.seats[d.seat].GetName())
		case agentv1.FallbackCause_FALLBACK_CAUSE_BUDGET:
			// The rest would be played by fallbacks, not by the model: the match is cut short
			// here (and would be at the same move again, so it is not rerun).
			reason = fmt.Sprintf("a budget cut the match short: %s's agent could not afford another model call", m.seats[d.seat].GetName())
		default:
			continue
		}
		if detail := u.GetFallbackDetail(); detail != "" {
			reason += " (" + detail + ")"
		}
		return &errVoid{reason: reason}
	}
	return nil
}

// ask gets one seat's action, validating each answer against st (which it mutates on
// success). Refused answers are retried up to the limit with the reason fed back; a fault or
// too many refusals gives the game's default move.
func (m *run) ask(ctx context.Context, seat games.Seat, st games.State) *decision {
	d := &decision{seat: seat}
	if why, tell := m.shares.cut(seat); why != "" {
		if tell {
			d.pending = append(d.pending, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_AgentFault{AgentFault: &eventsv1.AgentFault{
				Seat: seat, Kind: eventsv1.FaultKind_FAULT_KIND_OVERSIZED, Detail: Clip(why+"; it plays the default move from now on", maxTextBytes),
			}}})
		}
		return m.fallback(d, st, "its share of the match is used up", nil)
	}
	var lastRejection *gamev1.Rejection
	maxAttempts := m.limits.GetMaxRetries() + 1
	for attempt := int32(1); ; attempt++ {
		obs, err := m.observe(st, seat, attempt, lastRejection)
		if err != nil {
			d.err = err
			return d
		}
		action, rej, fault := m.call(ctx, seat, obs)
		if fault != nil {
			if ctx.Err() != nil {
				return d // cancelled: the caller voids the match
			}
			fault.Attempt = attempt
			d.pending = append(d.pending, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_AgentFault{AgentFault: fault}})
			return m.fallback(d, st, faultReason(fault), nil)
		}
		if rej == nil && action.GetUsage().GetFallback() {
			// The agent gave up on its own answers: the game's default stands in for whatever
			// move it sent, so a fallback never decides the game.
			return m.fallback(d, st, fallbackReason(m.seats[seat].GetName(), action.GetUsage()), action)
		}
		if rej == nil {
			rej = m.roomRefusal(st, seat, action)
		}
		if rej == nil {
			gameEvents, err := st.Apply(seat, action)
			if err == nil {
				d.action, d.attempt, d.gameEvents = action, attempt, gameEvents
				return d
			}
			var ok bool
			if rej, ok = games.AsRejection(err); !ok {
				panic(fmt.Sprintf("seat %d: rules returned a non-rejection error: %v", seat, err))
			}
		}
		lastRejection = &gamev1.Rejection{Code: rej.Code, Message: Clip(rej.Message, maxTextBytes)}
		d.pending = append(d.pending, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_ActionRefused{ActionRefused: &eventsv1.ActionRefused{
			Seat: seat, Attempt: attempt, Action: action, Rejection: lastRejection,
		}}})
		if attempt >= maxAttempts {
			d.pending = append(d.pending, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_AgentFault{AgentFault: &eventsv1.AgentFault{
				Seat: seat, Attempt: attempt, Kind: eventsv1.FaultKind_FAULT_KIND_RETRIES_EXHAUSTED,
				Detail: Clip(fmt.Sprintf("%d actions refused; last: %s", attempt, rej.Message), maxTextBytes),
			}}})
			return m.fallback(d, st, fmt.Sprintf("%d refused actions", attempt), nil)
		}
	}
}

// fallback applies the game's default move (its least decisive legal move) for a seat whose
// agent gave no usable answer. When the agent said so itself (gave, an action whose usage says
// fallback), the recorded action keeps what it reported (usage, private reasoning and notes)
// around the default's move and messages; the seat counts as faulted unless a provider or a
// budget was the cause, which voids the match instead.
func (m *run) fallback(d *decision, st games.State, reason string, gave *agentv1.Action) *decision {
	action := st.Default(d.seat)
	cause := gave.GetUsage().GetFallbackCause()
	if gave == nil || cause == agentv1.FallbackCause_FALLBACK_CAUSE_AGENT || cause == agentv1.FallbackCause_FALLBACK_CAUSE_UNSPECIFIED {
		m.faults[d.seat] = true
	}
	if gave != nil {
		action.PrivateReasoning, action.PrivateNotes, action.Usage = gave.GetPrivateReasoning(), gave.GetPrivateNotes(), gave.GetUsage()
	}
	gameEvents, err := st.Apply(d.seat, action)
	if err != nil {
		panic(fmt.Sprintf("seat %d: the game's default move was refused: %v", d.seat, err))
	}
	d.action, d.attempt, d.defaultReason, d.gameEvents = action, 0, reason, gameEvents
	return d
}

// shownSeats is, for each seat, what it is told of every seat: all of seats, or with conceal
// the other seats without their agents and labels.
func shownSeats(seats []*gamev1.SeatInfo, conceal bool) [][]*gamev1.SeatInfo {
	out := make([][]*gamev1.SeatInfo, len(seats))
	for i := range seats {
		out[i] = seats
		if !conceal {
			continue
		}
		out[i] = make([]*gamev1.SeatInfo, len(seats))
		for j, s := range seats {
			if j != i {
				s = proto.CloneOf(s)
				s.Agent, s.Label = nil, "" // a label may name the agent too
			}
			out[i][j] = s
		}
	}
	return out
}

// whoPlays writes, for each seat, the briefing's closing section naming the agent in every
// seat it is shown (told[seat], see shownSeats); a seat shown without its agent is "not told".
func whoPlays(told [][]*gamev1.SeatInfo) []string {
	out := make([]string, len(told))
	for i, seats := range told {
		var b strings.Builder
		b.WriteString("\nWho plays\n")
		for _, s := range seats {
			a := s.GetAgent()
			who := shown(a.GetName())
			if a == nil {
				who = "an agent you are not told"
			} else if a.GetName() == "" {
				who = "an agent that did not say who it is"
			} else if a.GetVersion() != "" {
				who += " version " + shown(a.GetVersion())
			}
			if a.GetAuthor() != "" {
				who += " by " + shown(a.GetAuthor())
			}
			you := ""
			if int(s.GetSeat()) == i {
				you = " (you)"
			}
			fmt.Fprintf(&b, "- %s%s: %s\n", s.GetName(), you, who)
		}
		out[i] = b.String()
	}
	return out
}

// fallbackReason is the default reason of a move whose agent played its fallback.
func fallbackReason(seat string, u *agentv1.Usage) string {
	var why string
	switch u.GetFallbackCause() {
	case agentv1.FallbackCause_FALLBACK_CAUSE_PROVIDER:
		why = "its agent's model provider kept failing"
	case agentv1.FallbackCause_FALLBACK_CAUSE_BUDGET:
		why = "its agent's budget is spent"
	default:
		why = "its agent could not use its model's answers"
	}
	if d := u.GetFallbackDetail(); d != "" {
		why += " (" + Clip(d, maxTextBytes) + ")"
	}
	return "fallback: " + why + ", so the game's default move stands for " + seat
}

func faultReason(f *eventsv1.AgentFault) string {
	switch f.GetKind() {
	case eventsv1.FaultKind_FAULT_KIND_TIMEOUT:
		return "the agent did not answer in time"
	case eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE:
		return "the agent could not be reached"
	case eventsv1.FaultKind_FAULT_KIND_MALFORMED:
		return "the agent's reply could not be decoded"
	case eventsv1.FaultKind_FAULT_KIND_OVERSIZED:
		return "the agent's reply was too large"
	default:
		return "the agent answered with an error"
	}
}

// observe builds seat's observation: the rules' part plus what the runner owns, within the
// observation's budget (games.MaxObservationBytes). One the budget cannot hold even without
// history and notes is a referee error (errVoid): it would recur on every rerun.
func (m *run) observe(st games.State, seat games.Seat, attempt int32, lastRejection *gamev1.Rejection) (*agentv1.Observation, error) {
	obs := observeFor(st, seat, m.unbriefed[seat])
	timeout := m.limits.GetMoveTimeout().AsDuration()
	obs.MatchId = m.spec.ID
	obs.Seat = seat
	obs.Seats = m.shown[seat]
	obs.TimeLimit = durationpb.New(timeout)
	obs.Deadline = timestamppb.New(m.clock().Add(timeout))
	obs.Attempt = attempt
	obs.MaxReplyBytes = m.limits.GetMaxReplyBytes()
	obs.LastRejection = lastRejection
	obs.Notes, obs.NotesOmitted = games.LatestNotes(m.notes[seat]) // only this seat's own notes
	obs.TokensLeft = m.budget.left(m.movers)
	if !m.unbriefed[seat] {
		obs.Briefing += m.whoPlays()[seat]
	}
	if !games.FitObservation(obs, games.MaxObservationBytes) {
		return nil, &errVoid{reason: fmt.Sprintf("referee error: %s's observation on turn %d is %d bytes without history or notes, over the %d-byte budget",
			m.seats[seat].GetName(), obs.GetTurn(), proto.Size(obs), games.MaxObservationBytes)}
	}
	return obs, nil
}

// observeFor is st's observation for seat, without its briefing when unbriefed.
func observeFor(st games.State, seat games.Seat, unbriefed bool) *agentv1.Observation {
	if !unbriefed {
		return st.Observe(seat)
	}
	if u, ok := st.(games.Unbriefed); ok {
		return u.ObserveUnbriefed(seat)
	}
	obs := st.Observe(seat)
	obs.Briefing = ""
	return obs
}

// call sends one request. It returns the action, or a refusal the runner makes itself (an
// answer to another turn), or the agent's fault.
func (m *run) call(ctx context.Context, seat games.Seat, obs *agentv1.Observation) (*agentv1.Action, *games.Rejection, *eventsv1.AgentFault) {
	cctx, cancel := context.WithTimeout(ctx, obs.GetTimeLimit().AsDuration())
	defer cancel()
	m.observer.AgentAsked(m.observed, seat, obs.GetTurn(), obs.GetAttempt(), obs.GetDeadline().AsTime())
	asked := time.Now()
	resp, err := m.spec.Agents[seat].Act(cctx, &agentv1.ActRequest{Observation: obs}, grpc.MaxCallRecvMsgSize(int(m.limits.GetMaxReplyBytes())))
	latency := time.Since(asked)
	if deadline, ok := cctx.Deadline(); ok && err == nil && !time.Now().Before(deadline) {
		// However it got through (timers fire a little late), an answer that comes once the
		// time is up is late.
		err = status.Error(codes.DeadlineExceeded, "the answer came after the move's deadline")
	}
	if err != nil {
		f := classify(err, m.limits.GetMaxReplyBytes())
		// An error that comes once the time is up is a timeout, whatever its code: an agent's
		// own copy of the deadline may fire first and answer, say, Internal "deadline exceeded".
		if deadline, ok := cctx.Deadline(); ok && ctx.Err() == nil && !time.Now().Before(deadline) {
			f.Kind = eventsv1.FaultKind_FAULT_KIND_TIMEOUT
		}
		if f.GetKind() == eventsv1.FaultKind_FAULT_KIND_TIMEOUT {
			// Said in words, for the person or author reading it, not as a status code.
			f.Detail = fmt.Sprintf("no answer within the %s a move allows", obs.GetTimeLimit().AsDuration())
			// The call that timed out stays named, as every fault names it (the connection puts
			// it at the head of the message).
			if call, _, ok := strings.Cut(status.Convert(err).Message(), ": "); ok && (call == "Play" || call == "Act") {
				f.Detail = call + ": " + f.Detail
			}
		}
		f.Seat = seat
		f.Detail = Clip(f.Detail, maxTextBytes)
		m.logger.Info("agent fault", "seat", seat, "turn", obs.GetTurn(), "kind", f.GetKind(), "detail", f.GetDetail())
		if ctx.Err() == nil {
			m.observer.AgentCalled(m.observed, seat, latency, f.GetKind())
		}
		return nil, nil, f
	}
	m.observer.AgentCalled(m.observed, seat, latency, eventsv1.FaultKind_FAULT_KIND_UNSPECIFIED)
	action := resp.GetAction()
	if action == nil {
		action = &agentv1.Action{}
	}
	m.addUsage(seat, action.GetUsage())
	if resp.GetTurn() != 0 && resp.GetTurn() != obs.GetTurn() {
		return action, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN,
			"the reply is for turn %d but this is turn %d", resp.GetTurn(), obs.GetTurn()), nil
	}
	return action, nil, nil
}

func classify(err error, maxReply int32) *eventsv1.AgentFault {
	st := status.Convert(err)
	f := &eventsv1.AgentFault{Kind: eventsv1.FaultKind_FAULT_KIND_ERROR, Detail: fmt.Sprintf("%s: %s", st.Code(), st.Message())}
	switch st.Code() {
	case codes.DeadlineExceeded:
		f.Kind = eventsv1.FaultKind_FAULT_KIND_TIMEOUT
	case codes.Unavailable:
		f.Kind = eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE
	case codes.ResourceExhausted:
		if strings.Contains(st.Message(), "larger than max") {
			f.Kind = eventsv1.FaultKind_FAULT_KIND_OVERSIZED
			f.Detail = fmt.Sprintf("reply larger than the %d-byte limit (%s)", maxReply, st.Message())
		}
	case codes.Internal:
		if strings.Contains(st.Message(), "unmarshal") {
			f.Kind = eventsv1.FaultKind_FAULT_KIND_MALFORMED
		}
	}
	return f
}

func (m *run) emitTaken(ctx context.Context, turn int32, taken *eventsv1.ActionTaken, gameEvents []*eventsv1.MatchEvent) error {
	if n := taken.GetAction().GetPrivateNotes(); n != "" {
		m.notes[taken.GetSeat()] = append(m.notes[taken.GetSeat()], n)
	}
	// The record words the move as the seats' histories do, shown to whom they show it.
	if w, ok := m.state.(games.MoveWorder); ok {
		if summary, to, ok := w.LastMove(taken.GetSeat(), turn); ok {
			taken.Summary, taken.SummaryVisibleTo = summary, to
		}
	}
	if err := m.emit(ctx, turn, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: taken}}); err != nil {
		return err
	}
	for _, ev := range gameEvents {
		if err := m.emit(ctx, turn, ev); err != nil {
			return err
		}
	}
	return nil
}

// emit stamps ev with the match id, the next sequence number and turn, and records it. An
// event the record cannot take (past maxEvents, or larger than maxEvent even once fitted) is
// not recorded: the match is void (errVoid), since running it again would meet it again.
func (m *run) emit(ctx context.Context, turn int32, ev *eventsv1.MatchEvent) error {
	if len(m.events) >= maxEvents && ev.GetMatchEnded() == nil {
		return &errVoid{reason: fmt.Sprintf("referee error: the match passed %d events without ending", maxEvents)}
	}
	ev.MatchId = m.spec.ID
	ev.Seq = uint64(len(m.events) + 1)
	ev.Turn = turn
	if m.timestamps {
		ev.Time = timestamppb.New(m.clock())
	}
	size, err := m.fit(ev)
	if err != nil {
		return err
	}
	m.shares.recordedEvent(ev, size)
	m.events = append(m.events, ev)
	if m.recorder != nil {
		if err := m.recorder.Record(ctx, ev); err != nil {
			return &errRecord{err: err}
		}
	}
	m.notify(ev)
	return nil
}

// fit keeps ev within maxEvent and returns its size: a refused action too large for the record
// is left out of it, its size kept (ActionRefused.action_omitted_bytes); any other event that
// large is a referee error.
func (m *run) fit(ev *eventsv1.MatchEvent) (int, error) {
	size := proto.Size(ev)
	if size <= m.maxEvent {
		return size, nil
	}
	if r := ev.GetActionRefused(); r != nil {
		r.ActionOmittedBytes = int32(proto.Size(r.GetAction()))
		r.Action = nil
		if size = proto.Size(ev); size <= m.maxEvent {
			return size, nil
		}
	}
	return 0, &errVoid{reason: fmt.Sprintf("referee error: event %d of the match would be %d bytes, over the %d bytes its record carries", ev.GetSeq(), size, m.maxEvent)}
}

// notify tells the observer about a recorded event.
func (m *run) notify(ev *eventsv1.MatchEvent) {
	switch p := ev.GetPayload().(type) {
	case *eventsv1.MatchEvent_MatchStarted:
		m.begun, m.start = true, m.clock()
		m.observer.MatchStarted(m.observed)
	case *eventsv1.MatchEvent_ActionTaken:
		m.observer.ActionTaken(m.observed, p.ActionTaken.GetSeat(), p.ActionTaken.GetDefaultReason() != "")
	case *eventsv1.MatchEvent_ActionRefused:
		m.observer.ActionRefused(m.observed, p.ActionRefused.GetSeat())
	case *eventsv1.MatchEvent_AgentFault:
		m.observer.AgentFaulted(m.observed, p.AgentFault.GetSeat(), p.AgentFault.GetKind())
	case *eventsv1.MatchEvent_MatchEnded:
		m.over = true
		m.observer.MatchEnded(m.observed, p.MatchEnded.GetOutcome(), m.clock().Sub(m.start))
	}
}

func (m *run) turnSafe() (turn int32) {
	defer func() {
		if recover() != nil {
			turn = 0
		}
	}()
	return m.state.Turn()
}

// addUsage adds one answer's reported usage to its seat's total. Seats answering at the same
// time each touch only their own entry.
func (m *run) addUsage(seat games.Seat, u *agentv1.Usage) {
	if u == nil {
		return
	}
	t := m.usage[seat]
	if t == nil {
		t = &agentv1.Usage{}
		m.usage[seat] = t
	}
	if u.GetModel() != "" {
		t.Model = Clip(u.GetModel(), maxTextBytes)
	}
	t.PromptTokens += u.GetPromptTokens()
	t.CompletionTokens += u.GetCompletionTokens()
	t.Retries += u.GetRetries()
	t.FormatFailures += u.GetFormatFailures()
	t.Calls += u.GetCalls()
	t.CacheHits += u.GetCacheHits()
	if u.GetFallback() {
		t.Fallback = true
	}
	addUsageExtras(t, u)
	m.budget.spend(u)
	if u.GetLatency() != nil {
		t.Latency = durationpb.New(t.GetLatency().AsDuration() + u.GetLatency().AsDuration())
	}
}

func (m *run) seatUsage() []*eventsv1.SeatUsage {
	var out []*eventsv1.SeatUsage
	for seat, u := range m.usage {
		if u != nil {
			out = append(out, &eventsv1.SeatUsage{Seat: int32(seat), Total: u})
		}
	}
	return out
}

func (m *run) faultedSeats() []int32 {
	var out []int32
	for seat, f := range m.faults {
		if f {
			out = append(out, int32(seat))
		}
	}
	return out
}

// outcome is the rules' outcome plus what only the runner knows: which seats faulted, and
// whether a default move ended the match.
func (m *run) outcome() (out *matchv1.Outcome) {
	defer func() {
		if p := recover(); p != nil {
			m.logger.Error("rules panicked", "panic", p)
			out = &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_VOID, Summary: fmt.Sprintf("Void: referee error: the rules failed (%v)", p), FaultedSeats: m.faultedSeats()}
		}
	}()
	out = proto.CloneOf(m.state.Outcome())
	out.FaultedSeats = m.faultedSeats()
	if m.lastWasDefault && out.GetCause() != matchv1.EndCause_END_CAUSE_AGREEMENT {
		out.Cause = matchv1.EndCause_END_CAUSE_AGENT_FAULT
		out.Summary = "An agent failed and its default move ended the match. " + out.GetSummary()
	}
	return out
}

// Tee returns a Recorder that records each event to every recorder in turn, stopping at the
// first error. It carries the smallest event any of them says it carries (EventSizer).
func Tee(recorders ...Recorder) Recorder { return tee(recorders) }

type tee []Recorder

func (t tee) Record(ctx context.Context, ev *eventsv1.MatchEvent) error {
	for _, r := range t {
		if err := r.Record(ctx, ev); err != nil {
			return err
		}
	}
	return nil
}

// MaxEventBytes is the smallest of the recorders' that say; 0 when none does.
func (t tee) MaxEventBytes() int {
	least := 0
	for _, r := range t {
		if s, ok := r.(EventSizer); ok && s.MaxEventBytes() > 0 && (least == 0 || s.MaxEventBytes() < least) {
			least = s.MaxEventBytes()
		}
	}
	return least
}
