package match_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/match"
)

// garbageCodec decodes requests as protobuf but answers Act with bytes that are no ActResponse.
type garbageCodec struct{}

func (garbageCodec) Marshal(v any) ([]byte, error) {
	if _, ok := v.(*agentv1.ActResponse); ok {
		return []byte{0xff, 0xff, 0xff, 0xff, 0xff}, nil
	}
	return proto.Marshal(v.(proto.Message))
}

func (garbageCodec) Unmarshal(data []byte, v any) error {
	return proto.Unmarshal(data, v.(proto.Message))
}

func (garbageCodec) Name() string { return "proto" }

// downAddress returns a loopback address nothing listens on.
func downAddress(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// TestAgentFaults plays an agent that fails in one way against the fair agent, in either seat:
// the failure is recorded as a fault of its kind, the game's default move (reject) is applied
// with a reason, and the outcome blames the seat.
func TestAgentFaults(t *testing.T) {
	fairC := openConn(t, "builtin:fair").Client
	tests := []struct {
		name       string
		agent      func(t *testing.T) agentv1.AgentServiceClient
		limits     *matchv1.Limits
		kind       eventsv1.FaultKind
		detail     string // in the fault's detail
		describeOK bool   // the agent answers Describe
	}{
		{
			name:       "stalls past the deadline",
			agent:      func(t *testing.T) agentv1.AgentServiceClient { return sdktest.Client(t, sdk.AgentFunc(stall)) },
			limits:     withTimeout(shortTimeout),
			kind:       eventsv1.FaultKind_FAULT_KIND_TIMEOUT,
			detail:     fmt.Sprintf("no answer within the %s a move allows", shortTimeout),
			describeOK: true,
		},
		{
			name: "down from the start",
			agent: func(t *testing.T) agentv1.AgentServiceClient {
				return openConn(t, "grpc://"+downAddress(t)).Client
			},
			kind: eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE,
		},
		{
			name: "garbage reply",
			agent: func(t *testing.T) agentv1.AgentServiceClient {
				return sdktest.Client(t, patient(50), sdk.WithServerOptions(grpc.ForceServerCodec(garbageCodec{})))
			},
			kind:       eventsv1.FaultKind_FAULT_KIND_MALFORMED,
			detail:     "unmarshal",
			describeOK: true,
		},
		{
			name: "oversized reply",
			agent: func(t *testing.T) agentv1.AgentServiceClient {
				return sdktest.Client(t, sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
					a := propose(50)
					a.PrivateReasoning = strings.Repeat("x", 200<<10)
					return a, nil
				}))
			},
			kind:       eventsv1.FaultKind_FAULT_KIND_OVERSIZED,
			detail:     "65536-byte limit",
			describeOK: true,
		},
		{
			name: "error status",
			agent: func(t *testing.T) agentv1.AgentServiceClient {
				return sdktest.Client(t, sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
					return nil, status.Error(codes.FailedPrecondition, "out of budget")
				}))
			},
			kind:       eventsv1.FaultKind_FAULT_KIND_ERROR,
			detail:     "out of budget",
			describeOK: true,
		},
		{
			name: "plain error",
			agent: func(t *testing.T) agentv1.AgentServiceClient {
				return sdktest.Client(t, sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
					return nil, errors.New("model said no")
				}))
			},
			kind:       eventsv1.FaultKind_FAULT_KIND_ERROR,
			detail:     "model said no",
			describeOK: true,
		},
		{
			name: "panics in Act",
			agent: func(t *testing.T) agentv1.AgentServiceClient {
				return sdktest.Client(t, sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
					panic("boom")
				}))
			},
			kind:       eventsv1.FaultKind_FAULT_KIND_ERROR,
			detail:     "panicked: boom",
			describeOK: true,
		},
	}
	for _, tc := range tests {
		for _, seat := range []int32{0, 1} {
			t.Run(fmt.Sprintf("%s/seat %d", tc.name, seat), func(t *testing.T) {
				agents := []agentv1.AgentServiceClient{fairC, fairC}
				agents[seat] = tc.agent(t)
				spec := ultimatumSpec("fault", agents...)
				spec.Limits = tc.limits
				res := run(t, spec)
				checkFaultEnding(t, res, seat, tc.kind, tc.detail)
				if got := res.Events[0].GetMatchStarted().GetSeats()[seat].GetAgent().GetName() != ""; got != tc.describeOK {
					t.Errorf("seat %d's agent identity recorded: %v, want %v", seat, got, tc.describeOK)
				}
			})
		}
	}
}

// checkFaultEnding checks a ultimatum match in which seat faulted once, with kind, on its
// first move: the fault, then the default reject with its reason, and an outcome blaming seat.
func checkFaultEnding(t *testing.T, res *match.Result, seat int32, kind eventsv1.FaultKind, detail string) {
	t.Helper()
	var at int
	var fault *eventsv1.AgentFault
	for i, ev := range res.Events {
		if f := ev.GetAgentFault(); f != nil {
			if fault != nil {
				t.Fatalf("second fault %v", f)
			}
			at, fault = i, f
		}
	}
	if fault == nil {
		t.Fatalf("no fault in the record:\n%v", res.Events)
	}
	if fault.GetSeat() != seat || fault.GetKind() != kind || fault.GetAttempt() != 1 || !strings.Contains(fault.GetDetail(), detail) {
		t.Errorf("fault = %v, want seat %d kind %v attempt 1 detail containing %q", fault, seat, kind, detail)
	}
	next := res.Events[at+1]
	a := next.GetActionTaken()
	if a == nil || a.GetSeat() != seat || a.GetAttempt() != 0 || a.GetDefaultReason() == "" || a.GetAction().GetMove().GetReject() == nil {
		t.Errorf("after the fault: %v; want seat %d's default reject with a reason", next, seat)
	}
	if next.GetTurn() != res.Events[at].GetTurn() {
		t.Errorf("fault on turn %d, default on turn %d", res.Events[at].GetTurn(), next.GetTurn())
	}
	out := res.Outcome
	if out.GetCause() != matchv1.EndCause_END_CAUSE_AGENT_FAULT || !slices.Equal(out.GetFaultedSeats(), []int32{seat}) ||
		out.GetPayoffs()[0] != 0 || out.GetPayoffs()[1] != 0 {
		t.Errorf("outcome = %v, want agent fault of seat %d paying nothing", out, seat)
	}
}

// TestAgentCrash stops an agent's server while the runner waits for its move, after it has
// played some: the fault is UNAVAILABLE, and a later match with the dead agent ends too.
func TestAgentCrash(t *testing.T) {
	for _, crashOn := range []int32{1, 3} {
		t.Run(fmt.Sprint("on its call ", crashOn), func(t *testing.T) {
			var srv *grpc.Server
			var calls atomic.Int32
			crasher := sdk.AgentFunc(func(ctx context.Context, _ *agentv1.Observation) (*agentv1.Action, error) {
				if calls.Add(1) < crashOn {
					return propose(45), nil
				}
				go srv.Stop() // the process dies with the call in flight
				<-ctx.Done()
				return nil, ctx.Err()
			})
			srv = sdk.NewServer(crasher)
			client := dial(t, serve(t, srv))
			opponent := sdktest.Client(t, patient(60))

			res := run(t, ultimatumSpec("crash", client, opponent))
			checkFaultEnding(t, res, 0, eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE, "")
			for _, ev := range res.Events {
				if ev.GetAgentFault() != nil && ev.GetTurn() != 2*crashOn-1 {
					t.Errorf("fault on turn %d, want turn %d, P1's move number %d", ev.GetTurn(), 2*crashOn-1, crashOn)
				}
			}

			again := run(t, ultimatumSpec("after-crash", client, opponent))
			checkFaultEnding(t, again, 0, eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE, "")
		})
	}
}

// TestPanicKeepsServer: a panic inside Act is one fault of one match; the same server plays the
// next match normally.
func TestPanicKeepsServer(t *testing.T) {
	agent := sdktest.Client(t, sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		if obs.GetMatchId() == "panics" {
			panic("bad day")
		}
		return patient(50)(ctx, obs)
	}))
	res := run(t, ultimatumSpec("panics", agent, agent))
	checkFaultEnding(t, res, 0, eventsv1.FaultKind_FAULT_KIND_ERROR, "panicked")

	next := run(t, ultimatumSpec("calm", agent, agent))
	if next.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_AGREEMENT || len(faults(next.Events)) > 0 {
		t.Errorf("next match on the same server: %v with faults %v", next.Outcome, faults(next.Events))
	}
}

// TestRefusals plays an agent whose replies the runner or the rules refuse, as P1 against the
// fair agent: each refusal is recorded and fed back in the next observation, and too many end
// in RETRIES_EXHAUSTED and the default move.
func TestRefusals(t *testing.T) {
	fairC := openConn(t, "builtin:fair").Client
	const (
		invalid  = gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS
		missing  = gamev1.RejectionCode_REJECTION_CODE_MISSING_MOVE
		outOfTrn = gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN
		badMsg   = gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE
	)
	echo := func(obs *agentv1.Observation, a *agentv1.Action) *agentv1.ActResponse {
		return &agentv1.ActResponse{Action: a, Turn: obs.GetTurn()}
	}
	longReasoning := func() *agentv1.Action {
		a := propose(40)
		a.PrivateReasoning = strings.Repeat("y", 200<<10)
		return a
	}
	tests := []struct {
		name        string
		reply       func(obs *agentv1.Observation) *agentv1.ActResponse
		limits      *matchv1.Limits
		wantCodes   []gamev1.RejectionCode
		wantAttempt int32 // of the action taken; 0 for the default
	}{
		{
			name:        "offers more than the total",
			reply:       func(obs *agentv1.Observation) *agentv1.ActResponse { return echo(obs, propose(1000)) },
			wantCodes:   []gamev1.RejectionCode{invalid, invalid, invalid},
			wantAttempt: 0,
		},
		{
			name:        "offers more than the total with max_retries 4",
			reply:       func(obs *agentv1.Observation) *agentv1.ActResponse { return echo(obs, propose(1000)) },
			limits:      &matchv1.Limits{MaxRetries: proto.Int32(4)},
			wantCodes:   []gamev1.RejectionCode{invalid, invalid, invalid, invalid, invalid},
			wantAttempt: 0,
		},
		{
			name:        "offers more than the total with max_retries 0",
			reply:       func(obs *agentv1.Observation) *agentv1.ActResponse { return echo(obs, propose(1000)) },
			limits:      &matchv1.Limits{MaxRetries: proto.Int32(0)},
			wantCodes:   []gamev1.RejectionCode{invalid},
			wantAttempt: 0,
		},
		{
			name: "invalid once then valid",
			reply: func(obs *agentv1.Observation) *agentv1.ActResponse {
				if obs.GetAttempt() == 1 {
					return echo(obs, propose(1000))
				}
				return echo(obs, propose(40))
			},
			wantCodes:   []gamev1.RejectionCode{invalid},
			wantAttempt: 2,
		},
		{
			name: "echoes the wrong turn",
			reply: func(obs *agentv1.Observation) *agentv1.ActResponse {
				return &agentv1.ActResponse{Action: propose(40), Turn: obs.GetTurn() + 1}
			},
			wantCodes:   []gamev1.RejectionCode{outOfTrn, outOfTrn, outOfTrn},
			wantAttempt: 0,
		},
		{
			name: "wrong turn once then right",
			reply: func(obs *agentv1.Observation) *agentv1.ActResponse {
				if obs.GetAttempt() == 1 {
					return &agentv1.ActResponse{Action: propose(40), Turn: 7}
				}
				return echo(obs, propose(40))
			},
			wantCodes:   []gamev1.RejectionCode{outOfTrn},
			wantAttempt: 2,
		},
		{
			name:        "turn left unset",
			reply:       func(*agentv1.Observation) *agentv1.ActResponse { return &agentv1.ActResponse{Action: propose(40)} },
			wantAttempt: 1,
		},
		{
			name:        "nil action",
			reply:       func(obs *agentv1.Observation) *agentv1.ActResponse { return echo(obs, nil) },
			wantCodes:   []gamev1.RejectionCode{missing, missing, missing},
			wantAttempt: 0,
		},
		{
			name: "empty move",
			reply: func(obs *agentv1.Observation) *agentv1.ActResponse {
				return echo(obs, &agentv1.Action{Move: &gamev1.Move{}})
			},
			wantCodes:   []gamev1.RejectionCode{missing, missing, missing},
			wantAttempt: 0,
		},
		{
			name:        "reasoning too long for the rules, within the reply limit",
			reply:       func(obs *agentv1.Observation) *agentv1.ActResponse { return echo(obs, longReasoning()) },
			limits:      &matchv1.Limits{MaxReplyBytes: 1 << 20},
			wantCodes:   []gamev1.RejectionCode{badMsg, badMsg, badMsg},
			wantAttempt: 0,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				seen []*agentv1.Observation
				sent []*agentv1.Action
			)
			agent := serveRaw(t, &rawAgent{name: "scripted", act: func(ctx context.Context, req *agentv1.ActRequest) (*agentv1.ActResponse, error) {
				obs := req.GetObservation()
				if obs.GetTurn() != 1 {
					// Later turns are played plainly, so the record's refusals are turn 1's.
					a, err := patient(40)(ctx, obs)
					return &agentv1.ActResponse{Action: a, Turn: obs.GetTurn()}, err
				}
				resp := tc.reply(obs)
				mu.Lock()
				defer mu.Unlock()
				seen = append(seen, obs)
				sent = append(sent, resp.GetAction())
				return resp, nil
			}})
			spec := ultimatumSpec("refusals", agent, fairC)
			spec.Limits = tc.limits
			res := run(t, spec)

			refs := refused(res.Events)
			if len(refs) != len(tc.wantCodes) {
				t.Fatalf("%d refusals %v, want %d", len(refs), refs, len(tc.wantCodes))
			}
			mu.Lock()
			defer mu.Unlock()
			wantAsked := len(tc.wantCodes)
			if tc.wantAttempt != 0 {
				wantAsked++ // and answered well at last
			}
			if len(seen) != wantAsked {
				t.Fatalf("agent was asked %d times on turn 1, want %d", len(seen), wantAsked)
			}
			for i, r := range refs {
				sentAction := sent[i]
				if sentAction == nil {
					sentAction = &agentv1.Action{}
				}
				if r.GetSeat() != 0 || r.GetAttempt() != int32(i+1) || r.GetRejection().GetCode() != tc.wantCodes[i] ||
					r.GetRejection().GetMessage() == "" || !proto.Equal(r.GetAction(), sentAction) {
					t.Errorf("refusal %d = %v; want seat 0 attempt %d code %v with a message and the action sent", i, r, i+1, tc.wantCodes[i])
				}
			}
			// Each observation after a refusal carries it; the first carries none.
			for i, obs := range seen {
				if obs.GetAttempt() != int32(i+1) {
					t.Errorf("observation %d has attempt %d", i, obs.GetAttempt())
				}
				var want *gamev1.Rejection
				if i > 0 {
					want = refs[i-1].GetRejection()
				}
				if !proto.Equal(obs.GetLastRejection(), want) {
					t.Errorf("observation of attempt %d has last_rejection %v, want %v", i+1, obs.GetLastRejection(), want)
				}
			}

			first := taken(res.Events)[0]
			fs := faults(res.Events)
			if tc.wantAttempt == 0 {
				n := int32(len(tc.wantCodes))
				if len(fs) != 1 || fs[0].GetKind() != eventsv1.FaultKind_FAULT_KIND_RETRIES_EXHAUSTED || fs[0].GetAttempt() != n || fs[0].GetSeat() != 0 {
					t.Errorf("faults = %v, want one RETRIES_EXHAUSTED of seat 0 at attempt %d", fs, n)
				}
				if first.GetAttempt() != 0 || first.GetDefaultReason() == "" || first.GetAction().GetMove().GetReject() == nil {
					t.Errorf("action taken = %v, want the default reject with a reason", first)
				}
				if res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_AGENT_FAULT || !slices.Equal(res.Outcome.GetFaultedSeats(), []int32{0}) {
					t.Errorf("outcome = %v, want seat 0's fault", res.Outcome)
				}
				return
			}
			if len(fs) > 0 || len(res.Outcome.GetFaultedSeats()) > 0 {
				t.Errorf("faults %v, faulted seats %v; want none", fs, res.Outcome.GetFaultedSeats())
			}
			if first.GetAttempt() != tc.wantAttempt || first.GetDefaultReason() != "" || !proto.Equal(first.GetAction(), sent[len(sent)-1]) {
				t.Errorf("action taken = %v, want the agent's attempt %d", first, tc.wantAttempt)
			}
			if len(taken(res.Events)) < 2 {
				t.Errorf("the match ended after the first action: %v", res.Outcome)
			}
		})
	}
}

// TestRecorderFailure: a Recorder that fails stops the match, and Run says why.
func TestRecorderFailure(t *testing.T) {
	fairC := openConn(t, "builtin:fair").Client
	spec := ultimatumSpec("recorder", fairC, fairC)
	total := len(run(t, spec).Events)
	errDisk := errors.New("disk full")
	for _, failAt := range []int{1, 2, total / 2, total} {
		t.Run(fmt.Sprint("at event ", failAt), func(t *testing.T) {
			calls := 0
			rec := match.RecorderFunc(func(context.Context, *eventsv1.MatchEvent) error {
				calls++
				if calls >= failAt {
					return errDisk
				}
				return nil
			})
			res, err := match.NewRunner(rec).Run(t.Context(), spec)
			if err == nil || !errors.Is(err, errDisk) || !strings.Contains(err.Error(), "record") || errors.Is(err, match.ErrBadSpec) {
				t.Errorf("Run = %v, %v; want a record error wrapping %v", res, err, errDisk)
			}
			if res != nil {
				t.Errorf("Run returned a result with its error")
			}
			if calls != failAt {
				t.Errorf("recorder called %d times, want to stop at %d", calls, failAt)
			}
		})
	}
}

// TestCancelMidMatch: the match's context ends while an agent thinks; the match is void, and its
// ending is still recorded, with a context that is still live.
func TestCancelMidMatch(t *testing.T) {
	asked := make(chan struct{})
	released := make(chan struct{})
	var once sync.Once
	blocker := sdktest.Client(t, sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		if obs.GetTurn() < 4 {
			return patient(50)(ctx, obs)
		}
		once.Do(func() { close(asked) })
		<-ctx.Done()
		close(released)
		return nil, ctx.Err()
	}))
	var events []*eventsv1.MatchEvent
	rec := match.RecorderFunc(func(ctx context.Context, ev *eventsv1.MatchEvent) error {
		if err := ctx.Err(); err != nil {
			return err // a recorder that honours its context, as a real one would
		}
		events = append(events, ev)
		return nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	spec := ultimatumSpec("cancelled", blocker, blocker)
	spec.Limits = withTimeout(time.Hour)
	done := make(chan *match.Result, 1)
	go func() {
		res, err := match.NewRunner(rec).Run(ctx, spec)
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- res
	}()
	waitFor(t, asked, "the agent to be asked on turn 4")
	cancel()
	res := waitFor(t, done, "Run to return after cancellation")
	if res == nil {
		t.Fatal("no result")
	}
	checkRecord(t, spec.ID, res)
	if res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(res.Outcome.GetSummary(), "cancelled") {
		t.Errorf("outcome = %v, want void because cancelled", res.Outcome)
	}
	if len(events) != len(res.Events) || events[len(events)-1].GetMatchEnded() == nil {
		t.Errorf("recorder saw %d events ending with %v; want all %d, MatchEnded last", len(events), events[len(events)-1], len(res.Events))
	}
	if f := faults(res.Events); len(f) > 0 {
		t.Errorf("cancellation blamed on an agent: %v", f)
	}
	if n := len(taken(res.Events)); n != 3 {
		t.Errorf("%d actions recorded, want the 3 played before the cancel", n)
	}
	waitFor(t, released, "the agent's call to be cancelled")
}

// TestRulesPanic: rules that panic void the match, which is still recorded to its end, and Run
// neither panics nor returns an error.
func TestRulesPanic(t *testing.T) {
	healthy := sdktest.Client(t, sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		return pick("5"), nil
	}))
	failing := sdktest.Client(t, sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		return nil, status.Error(codes.Internal, "no")
	}))
	tests := []struct {
		name   string
		game   pickGame
		agents []agentv1.AgentServiceClient
	}{
		{"Apply, one mover", pickGame{rounds: 2, sequential: true, panicIn: "apply"}, nil},
		{"Apply, simultaneous movers", pickGame{rounds: 2, panicIn: "apply"}, nil},
		{"Observe", pickGame{rounds: 2, panicIn: "observe"}, nil},
		{"ToMove", pickGame{rounds: 2, panicIn: "tomove"}, nil},
		{"Clone", pickGame{rounds: 2, panicIn: "clone"}, nil},
		{"Default, one mover", pickGame{rounds: 2, sequential: true, panicIn: "default"}, []agentv1.AgentServiceClient{healthy, failing}},
		{"Default, simultaneous movers", pickGame{rounds: 2, panicIn: "default"}, []agentv1.AgentServiceClient{failing, healthy}},
		{"Outcome", pickGame{rounds: 2, panicIn: "outcome"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			agents := tc.agents
			if agents == nil {
				agents = []agentv1.AgentServiceClient{healthy, healthy}
			}
			spec := match.Spec{ID: "panicky", Game: tc.game, Agents: agents}
			var res *match.Result
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("Run panicked: %v", p)
					}
				}()
				res = run(t, spec)
			}()
			if res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(res.Outcome.GetSummary(), "pick: ") {
				t.Errorf("outcome = %v, want void naming the rules' failure", res.Outcome)
			}
		})
	}
}

// TestRulesPanicBeforeStart: rules that panic while a match is set up (describing the game,
// dealing the first state) make Run return an ErrBadSpec error that
// names the failure; nothing panics and nothing is recorded.
func TestRulesPanicBeforeStart(t *testing.T) {
	healthy := sdktest.Client(t, sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		return pick("5"), nil
	}))
	for _, method := range []string{"info", "newstate"} {
		t.Run(method, func(t *testing.T) {
			var recorded atomic.Int32
			runner := match.NewRunner(match.RecorderFunc(func(context.Context, *eventsv1.MatchEvent) error {
				recorded.Add(1)
				return nil
			}))
			var err error
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("Run panicked: %v", p)
					}
				}()
				_, err = runner.Run(context.Background(), match.Spec{ID: "panicky", Game: pickGame{rounds: 2, panicIn: method}, Agents: []agentv1.AgentServiceClient{healthy, healthy}})
			}()
			if !errors.Is(err, match.ErrBadSpec) || !strings.Contains(err.Error(), "pick: "+method+" failed") {
				t.Errorf("Run = %v, want ErrBadSpec naming the panic", err)
			}
			if n := recorded.Load(); n != 0 {
				t.Errorf("%d events recorded for a match that never started", n)
			}
		})
	}
}
