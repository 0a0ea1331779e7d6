package match_test

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/referee/match"
)

// The ultimatum's defaults as the spec gives them (specs/negotiationarena.md): P1 holds 100
// Dollars, and the players have 8 turns together.
const (
	specTotal    = 100
	specMaxTurns = 8
	specCurrency = "Dollars"
)

// waitLimit bounds every wait of these tests, so that a runner that hangs fails a test instead
// of hanging it. Nothing healthy comes close to it.
const waitLimit = time.Minute

// shortTimeout is the move timeout of the cases that wait for an agent to time out: short, yet
// long enough for an honest agent on a loaded machine (a test waits it out once or twice).
const shortTimeout = 2 * time.Second

// serve runs srv on a loopback port until the test ends and returns its address.
func serve(t *testing.T, srv *grpc.Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	t.Cleanup(func() {
		srv.Stop()
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("serve: %v", err)
		}
	})
	return lis.Addr().String()
}

// dial returns a client of the agent at addr, closed when the test ends.
func dial(t *testing.T, addr string) agentv1.AgentServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return agentv1.NewAgentServiceClient(conn)
}

// openConn opens an agent address with agentconn, closed when the test ends.
func openConn(t testing.TB, spec string) *agentconn.Conn {
	t.Helper()
	c, err := (&agentconn.Resolver{Builtins: builtin.Agents{}}).Open(t.Context(), spec)
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// rawAgent is an AgentService written against the generated server interface, for replies the
// SDK would never send (a wrong turn, say).
type rawAgent struct {
	agentv1.UnimplementedAgentServiceServer
	name string
	act  func(ctx context.Context, req *agentv1.ActRequest) (*agentv1.ActResponse, error)
}

func (a *rawAgent) Act(ctx context.Context, req *agentv1.ActRequest) (*agentv1.ActResponse, error) {
	return a.act(ctx, req)
}

func (a *rawAgent) Describe(context.Context, *agentv1.DescribeRequest) (*agentv1.DescribeResponse, error) {
	return &agentv1.DescribeResponse{Agent: &gamev1.AgentInfo{Name: a.name, Version: "test"}}, nil
}

// serveRaw serves a raw agent on a loopback port and returns a client of it.
func serveRaw(t *testing.T, a *rawAgent) agentv1.AgentServiceClient {
	t.Helper()
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, a)
	return dial(t, serve(t, srv))
}

// obsLog keeps every observation an agent received, in arrival order.
type obsLog struct {
	mu  sync.Mutex
	obs []*agentv1.Observation
}

func (l *obsLog) add(o *agentv1.Observation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.obs = append(l.obs, proto.CloneOf(o))
}

func (l *obsLog) all() []*agentv1.Observation {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.obs)
}

// logged wraps a so that every observation it receives is kept in l.
func logged(l *obsLog, a sdk.Agent) sdk.Agent {
	return sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		l.add(obs)
		return a.Act(ctx, obs)
	})
}

// Ultimatum moves.

func propose(x int64) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
			{Seat: ultimatum.P1, Gives: map[string]int64{specCurrency: x}},
		}}},
	}}}}}
}

func accept() *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}}
}

func canPropose(obs *agentv1.Observation) bool {
	return slices.Contains(obs.GetLegalMoves(), gamev1.MoveKind_MOVE_KIND_PROPOSE)
}

// patient proposes x on every turn that allows it and accepts on the last one, so two patient
// agents play every turn of a match.
func patient(x int64) sdk.AgentFunc {
	return func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		if canPropose(obs) {
			return propose(x), nil
		}
		return accept(), nil
	}
}

// accepter accepts any standing offer and proposes x when there is none.
func accepter(x int64) sdk.AgentFunc {
	return func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		if slices.Contains(obs.GetLegalMoves(), gamev1.MoveKind_MOVE_KIND_ACCEPT) {
			return accept(), nil
		}
		return propose(x), nil
	}
}

// stall never answers: it waits until the call is given up.
func stall(ctx context.Context, _ *agentv1.Observation) (*agentv1.Action, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// ultimatumDefaults are the default ultimatum game's parameters, resolved.
var ultimatumDefaults, _ = ultimatum.New().Resolve(nil)

// ultimatumSpec is a match of the default ultimatum game between agents.
func ultimatumSpec(id string, agents ...agentv1.AgentServiceClient) match.Spec {
	return match.Spec{ID: id, Game: ultimatum.New(), Params: ultimatumDefaults, Seed: 1, Agents: agents}
}

// withTimeout returns limits with move timeout d and the other defaults.
func withTimeout(d time.Duration) *matchv1.Limits {
	return &matchv1.Limits{MoveTimeout: durationpb.New(d)}
}

// run plays spec with a fresh Runner (plus opts), checks the invariants every record must
// keep, and returns the result.
func run(t *testing.T, spec match.Spec, opts ...match.Option) *match.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	return runCtx(t, ctx, spec, opts...)
}

func runCtx(t *testing.T, ctx context.Context, spec match.Spec, opts ...match.Option) *match.Result {
	t.Helper()
	var rec eventLog
	res, err := match.NewRunner(&rec, opts...).Run(ctx, spec)
	if err != nil {
		t.Fatalf("Run(%s): %v", spec.ID, err)
	}
	checkRecord(t, spec.ID, res)
	recorded := rec.all()
	if len(recorded) != len(res.Events) {
		t.Fatalf("recorder saw %d events, result holds %d", len(recorded), len(res.Events))
	}
	for i := range recorded {
		if !proto.Equal(recorded[i], res.Events[i]) {
			t.Fatalf("recorded event %d differs from the result's:\n%v\n%v", i, recorded[i], res.Events[i])
		}
	}
	return res
}

// eventLog is a Recorder keeping every event.
type eventLog struct {
	mu     sync.Mutex
	events []*eventsv1.MatchEvent
}

func (l *eventLog) Record(_ context.Context, ev *eventsv1.MatchEvent) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, proto.CloneOf(ev))
	return nil
}

func (l *eventLog) all() []*eventsv1.MatchEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// checkRecord checks what every record must be: MatchStarted first, MatchEnded last and
// nowhere else, sequence numbers 1..N without gaps, every event stamped with the match id, turns
// that never go back, and the result's outcome being the one recorded.
func checkRecord(t *testing.T, id string, res *match.Result) {
	t.Helper()
	evs := res.Events
	if len(evs) < 2 {
		t.Fatalf("record has %d events; want at least MatchStarted and MatchEnded", len(evs))
	}
	if evs[0].GetMatchStarted() == nil {
		t.Errorf("first event is %v, want MatchStarted", evs[0])
	}
	var lastTurn int32
	for i, ev := range evs {
		if ev.GetSeq() != uint64(i+1) {
			t.Errorf("event %d has seq %d, want %d", i, ev.GetSeq(), i+1)
		}
		if ev.GetMatchId() != id {
			t.Errorf("event %d has match id %q, want %q", i, ev.GetMatchId(), id)
		}
		if ev.GetTurn() < lastTurn && ev.GetMatchEnded() == nil {
			t.Errorf("event %d is on turn %d, after turn %d", i, ev.GetTurn(), lastTurn)
		}
		lastTurn = max(lastTurn, ev.GetTurn())
		if i > 0 && ev.GetMatchStarted() != nil {
			t.Errorf("event %d is a second MatchStarted", i)
		}
		if i < len(evs)-1 && ev.GetMatchEnded() != nil {
			t.Errorf("event %d is MatchEnded but not last", i)
		}
	}
	end := evs[len(evs)-1].GetMatchEnded()
	if end == nil {
		t.Fatalf("last event is %v, want MatchEnded", evs[len(evs)-1])
	}
	if !proto.Equal(end.GetOutcome(), res.Outcome) {
		t.Errorf("Result.Outcome = %v, recorded outcome = %v", res.Outcome, end.GetOutcome())
	}
	if end.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_UNSPECIFIED || end.GetOutcome().GetSummary() == "" {
		t.Errorf("outcome %v does not name and explain its cause", end.GetOutcome())
	}
}

// Record accessors.

func taken(evs []*eventsv1.MatchEvent) []*eventsv1.ActionTaken {
	var out []*eventsv1.ActionTaken
	for _, ev := range evs {
		if a := ev.GetActionTaken(); a != nil {
			out = append(out, a)
		}
	}
	return out
}

func refused(evs []*eventsv1.MatchEvent) []*eventsv1.ActionRefused {
	var out []*eventsv1.ActionRefused
	for _, ev := range evs {
		if a := ev.GetActionRefused(); a != nil {
			out = append(out, a)
		}
	}
	return out
}

func faults(evs []*eventsv1.MatchEvent) []*eventsv1.AgentFault {
	var out []*eventsv1.AgentFault
	for _, ev := range evs {
		if f := ev.GetAgentFault(); f != nil {
			out = append(out, f)
		}
	}
	return out
}

// takenEvents returns the ActionTaken events with their envelopes (for the turn).
func takenEvents(evs []*eventsv1.MatchEvent) []*eventsv1.MatchEvent {
	var out []*eventsv1.MatchEvent
	for _, ev := range evs {
		if ev.GetActionTaken() != nil {
			out = append(out, ev)
		}
	}
	return out
}

// ultimatumPayoffs works out, from the record alone, what the ultimatum rules pay: the split of
// the proposal accepted, or nothing after a rejection.
func ultimatumPayoffs(t *testing.T, evs []*eventsv1.MatchEvent, total int64) []float64 {
	t.Helper()
	var x int64
	for _, a := range taken(evs) {
		switch k := a.GetAction().GetMove().GetKind().(type) {
		case *gamev1.Move_Propose:
			x = 0
			for _, sh := range k.Propose.GetProposal().GetAllocation().GetShares() {
				x += sh.GetGives()[specCurrency]
			}
		case *gamev1.Move_Accept:
			return []float64{float64(total - x), float64(x)}
		case *gamev1.Move_Reject:
			return []float64{0, 0}
		}
	}
	t.Fatalf("the record has no accept or reject")
	return nil
}

// fakeClock returns base, base+1s, base+2s, ... on successive calls and remembers them.
type fakeClock struct {
	mu    sync.Mutex
	base  time.Time
	calls int
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	return c.base.Add(time.Duration(c.calls) * time.Second)
}

// waitFor waits for ch to be closed or to yield, failing the test after waitLimit.
func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero
}

// ultimatumParams are the default parameters but for the total.
func ultimatumParams(total int64) *ultimatumv1.Params {
	return &ultimatumv1.Params{Total: proto.Int64(total)}
}
