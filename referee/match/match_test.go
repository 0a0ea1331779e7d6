package match_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/fair"
	"github.com/parley-arena/parley/agents/random"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/referee/match"
)

// TestUltimatumBuiltins plays whole ultimatum matches between the built-in agents, reached over
// gRPC like any other, and checks the record against the rules.
func TestUltimatumBuiltins(t *testing.T) {
	fairConn := openConn(t, "builtin:fair")
	randomConns := map[string]*agentconn.Conn{}
	for _, seed := range []string{"1", "2", "3", "4"} {
		randomConns[seed] = openConn(t, "builtin:random?seed="+seed)
	}
	tests := []struct {
		name  string
		seats [2]*agentconn.Conn
	}{
		{"fair vs fair", [2]*agentconn.Conn{fairConn, fairConn}},
		{"fair vs random 1", [2]*agentconn.Conn{fairConn, randomConns["1"]}},
		{"random 2 vs fair", [2]*agentconn.Conn{randomConns["2"], fairConn}},
		{"fair vs random 3", [2]*agentconn.Conn{fairConn, randomConns["3"]}},
		{"random 4 vs fair", [2]*agentconn.Conn{randomConns["4"], fairConn}},
	}
	causes := map[matchv1.EndCause]int{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id := "builtins-" + strings.ReplaceAll(tc.name, " ", "-")
			res := run(t, ultimatumSpec(id, tc.seats[0].Client, tc.seats[1].Client))

			started := res.Events[0].GetMatchStarted()
			if started.GetGame() != ultimatum.Name || started.GetRulesVersion() != ultimatum.RulesVersion {
				t.Errorf("MatchStarted names %s v%s", started.GetGame(), started.GetRulesVersion())
			}
			for i, c := range tc.seats {
				info, err := c.Describe(t.Context(), waitLimit)
				if err != nil {
					t.Fatal(err)
				}
				seat := started.GetSeats()[i]
				if seat.GetSeat() != int32(i) || seat.GetName() != []string{"P1", "P2"}[i] || !proto.Equal(seat.GetAgent(), info) {
					t.Errorf("seat %d = %v, want seat %d named %s with agent %v", i, seat, i, []string{"P1", "P2"}[i], info)
				}
			}

			if f := faults(res.Events); len(f) > 0 {
				t.Errorf("builtin agents faulted: %v", f)
			}
			if r := refused(res.Events); len(r) > 0 {
				t.Errorf("builtin agents' actions were refused: %v", r)
			}
			for i, ev := range takenEvents(res.Events) {
				a := ev.GetActionTaken()
				if want := int32(i + 1); ev.GetTurn() != want || a.GetSeat() != (want+1)%2 || a.GetAttempt() != 1 || a.GetDefaultReason() != "" {
					t.Errorf("action %d = turn %d seat %d attempt %d default %q; want turn %d seat %d attempt 1, no default",
						i, ev.GetTurn(), a.GetSeat(), a.GetAttempt(), a.GetDefaultReason(), want, (want+1)%2)
				}
			}

			out := res.Outcome
			if want := ultimatumPayoffs(t, res.Events, specTotal); !slices.Equal(out.GetPayoffs(), want) {
				t.Errorf("payoffs = %v, the rules give %v", out.GetPayoffs(), want)
			}
			switch out.GetCause() {
			case matchv1.EndCause_END_CAUSE_AGREEMENT:
				if sum := out.GetPayoffs()[0] + out.GetPayoffs()[1]; sum != float64(specTotal) || !out.GetAgreement() {
					t.Errorf("agreement pays %v in all (agreement=%v), want %d", sum, out.GetAgreement(), specTotal)
				}
			case matchv1.EndCause_END_CAUSE_REJECTED:
				if out.GetAgreement() {
					t.Errorf("rejection marked as agreement")
				}
			default:
				t.Errorf("cause = %v, want agreement or rejection", out.GetCause())
			}
			if len(out.GetFaultedSeats()) > 0 {
				t.Errorf("faulted seats = %v, want none", out.GetFaultedSeats())
			}
			causes[out.GetCause()]++
		})
	}
	// The seeds are picked so that the whole table sees both endings (a filtered run may not).
	if n := causes[matchv1.EndCause_END_CAUSE_AGREEMENT] + causes[matchv1.EndCause_END_CAUSE_REJECTED]; n == len(tests) &&
		(causes[matchv1.EndCause_END_CAUSE_AGREEMENT] == 0 || causes[matchv1.EndCause_END_CAUSE_REJECTED] == 0) {
		t.Errorf("the cases ended only in %v; want agreements and rejections", causes)
	}
}

// TestDeterminism runs the same spec twice and gets the same record, field for field; with
// timestamps on, the times come from the injected clock.
func TestDeterminism(t *testing.T) {
	fairC := openConn(t, "builtin:fair").Client
	randomC := openConn(t, "builtin:random?seed=42").Client
	for _, id := range []string{"det-a", "det-b", "det-c"} {
		t.Run(id, func(t *testing.T) {
			spec := ultimatumSpec(id, randomC, fairC)
			first, second := run(t, spec), run(t, spec)
			if len(first.Events) != len(second.Events) {
				t.Fatalf("runs recorded %d and %d events", len(first.Events), len(second.Events))
			}
			for i := range first.Events {
				if !proto.Equal(first.Events[i], second.Events[i]) {
					t.Errorf("event %d differs:\n%v\n%v", i, first.Events[i], second.Events[i])
				}
				if first.Events[i].GetTime() != nil {
					t.Errorf("event %d has a time without WithTimestamps: %v", i, first.Events[i].GetTime())
				}
			}
		})
	}

	t.Run("timestamps from the clock", func(t *testing.T) {
		base := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
		var seen obsLog
		agent := sdktest.Client(t, logged(&seen, patient(50)))
		spec := ultimatumSpec("det-clock", agent, agent)
		spec.Limits = withTimeout(3 * time.Second)

		var results []*match.Result
		for range 2 {
			clock := &fakeClock{base: base}
			results = append(results, run(t, spec, match.WithTimestamps(true), match.WithClock(clock.now)))
			last := base.Add(time.Duration(clock.calls) * time.Second)
			var prev time.Time
			for i, ev := range results[len(results)-1].Events {
				if ev.GetTime() == nil {
					t.Fatalf("event %d has no time", i)
				}
				got := ev.GetTime().AsTime()
				if !got.After(prev) || got.Before(base) || got.After(last) || got.Sub(base)%time.Second != 0 {
					t.Errorf("event %d time %v is not a fresh reading of the fake clock (base %v, last %v)", i, got, base, last)
				}
				prev = got
			}
		}
		if len(results[0].Events) != len(results[1].Events) {
			t.Fatalf("runs recorded %d and %d events", len(results[0].Events), len(results[1].Events))
		}
		for i := range results[0].Events {
			if !proto.Equal(results[0].Events[i], results[1].Events[i]) {
				t.Errorf("with the same clock, event %d differs:\n%v\n%v", i, results[0].Events[i], results[1].Events[i])
			}
		}
		// Deadlines in observations are the injected clock's time plus the move timeout.
		for _, obs := range seen.all() {
			d := obs.GetDeadline().AsTime().Sub(base) - 3*time.Second
			if d <= 0 || d%time.Second != 0 || obs.GetTimeLimit().AsDuration() != 3*time.Second {
				t.Errorf("observation of turn %d: deadline %v, time limit %v; want fake clock + 3s", obs.GetTurn(), obs.GetDeadline().AsTime(), obs.GetTimeLimit().AsDuration())
			}
		}
	})
}

// TestConcurrentMatches runs healthy matches beside matches whose agent stalls; the healthy ones
// finish normally while a stalled match still waits for its agent.
func TestConcurrentMatches(t *testing.T) {
	fairC := openConn(t, "builtin:fair").Client
	stalled := make(chan struct{}, 8)
	staller := sdktest.Client(t, sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		stalled <- struct{}{}
		return stall(ctx, obs)
	}))

	// One match whose staller has all the time in the world: it cannot end before the test
	// cancels it, so the healthy matches provably run while it waits.
	hangCtx, cancelHang := context.WithCancel(t.Context())
	defer cancelHang()
	hangSpec := ultimatumSpec("concurrent-hang", fairC, staller)
	hangSpec.Limits = withTimeout(time.Hour)
	hangDone := make(chan *match.Result, 1)
	go func() {
		res, err := match.NewRunner(nil).Run(hangCtx, hangSpec)
		if err != nil {
			t.Errorf("hanging match: %v", err)
		}
		hangDone <- res
	}()
	waitFor(t, stalled, "the staller to be asked")

	const healthy = 4
	type result struct {
		id  string
		res *match.Result
	}
	results := make(chan result, healthy+1)
	specs := []match.Spec{}
	for i := range healthy {
		specs = append(specs, ultimatumSpec(fmt.Sprintf("concurrent-%d", i), fairC, fairC))
	}
	// And one more stalled match that times out the ordinary way, at the same time.
	timeoutSpec := ultimatumSpec("concurrent-timeout", staller, fairC)
	timeoutSpec.Limits = withTimeout(shortTimeout)
	specs = append(specs, timeoutSpec)
	runner := match.NewRunner(nil) // one Runner, shared by concurrent Runs
	var wg sync.WaitGroup
	for _, spec := range specs {
		wg.Go(func() {
			res, err := runner.Run(t.Context(), spec)
			if err != nil {
				t.Errorf("%s: %v", spec.ID, err)
			}
			results <- result{spec.ID, res}
		})
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()
	waitFor(t, allDone, "the healthy matches")
	close(results)

	for r := range results {
		if r.res == nil {
			continue
		}
		checkRecord(t, r.id, r.res)
		if r.id == "concurrent-timeout" {
			if f := faults(r.res.Events); len(f) != 1 || f[0].GetKind() != eventsv1.FaultKind_FAULT_KIND_TIMEOUT {
				t.Errorf("%s: faults %v, want one timeout", r.id, f)
			}
			continue
		}
		if r.res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_AGREEMENT || len(faults(r.res.Events)) > 0 {
			t.Errorf("%s ended %v with faults %v; fair vs fair should agree", r.id, r.res.Outcome, faults(r.res.Events))
		}
	}
	select {
	case <-hangDone:
		t.Fatalf("the stalled match ended before it was cancelled")
	default:
	}
	cancelHang()
	res := waitFor(t, hangDone, "the cancelled match")
	if res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_VOID {
		t.Errorf("cancelled match ended %v, want void", res.Outcome)
	}
}

// TestPrivateNotes checks that each seat sees its own earlier notes, exactly, and nothing private
// of any other seat, over whole matches between several kinds of agents.
func TestPrivateNotes(t *testing.T) {
	type planted struct {
		match string
		seat  int32
		text  string
	}
	var (
		mu     sync.Mutex
		secret []planted
		logs   = map[string]*obsLog{} // by "match/seat"
	)
	logFor := func(matchID string, seat int32) *obsLog {
		mu.Lock()
		defer mu.Unlock()
		key := fmt.Sprintf("%s/%d", matchID, seat)
		if logs[key] == nil {
			logs[key] = &obsLog{}
		}
		return logs[key]
	}
	// secretive wraps an agent: it plants unique markers in its private reasoning and notes,
	// and checks that its observations carry exactly its own earlier notes.
	secretive := func(name string, inner sdk.Agent) agentv1.AgentServiceClient {
		var wrote sync.Map // "match/seat" -> []string of notes written so far
		return sdktest.Client(t, sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
			key := fmt.Sprintf("%s/%d", obs.GetMatchId(), obs.GetSeat())
			logFor(obs.GetMatchId(), obs.GetSeat()).add(obs)
			loaded, _ := wrote.Load(key)
			prev, _ := loaded.([]string)
			if !slices.Equal(obs.GetNotes(), prev) {
				t.Errorf("%s on turn %d got notes %q, want its own %q", key, obs.GetTurn(), obs.GetNotes(), prev)
			}
			action, err := inner.Act(ctx, obs)
			if err != nil || action == nil {
				return action, err
			}
			reason := fmt.Sprintf("SECRET-REASON-%s-seat%d-turn%d", obs.GetMatchId(), obs.GetSeat(), obs.GetTurn())
			note := fmt.Sprintf("SECRET-NOTE-%s-seat%d-turn%d", obs.GetMatchId(), obs.GetSeat(), obs.GetTurn())
			action.PrivateReasoning += " " + reason
			action.PrivateNotes = note
			mu.Lock()
			secret = append(secret, planted{obs.GetMatchId(), obs.GetSeat(), reason}, planted{obs.GetMatchId(), obs.GetSeat(), note})
			mu.Unlock()
			wrote.Store(key, append(slices.Clone(prev), note))
			return action, nil
		}), sdk.WithInfo(&gamev1.AgentInfo{Name: name}))
	}
	fairAgent, err := fair.New(fair.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	agents := map[string]agentv1.AgentServiceClient{
		"fair":    secretive("fair", fairAgent),
		"random":  secretive("random", random.New(7)),
		"patient": secretive("patient", patient(50)),
	}
	pairs := [][2]string{
		{"fair", "random"}, {"random", "fair"}, {"patient", "patient"},
		{"fair", "patient"}, {"patient", "random"}, {"random", "patient"},
	}
	for _, p := range pairs {
		id := "notes-" + p[0] + "-" + p[1]
		t.Run(id, func(t *testing.T) {
			res := run(t, ultimatumSpec(id, agents[p[0]], agents[p[1]]))
			if f, r := faults(res.Events), refused(res.Events); len(f)+len(r) > 0 {
				t.Errorf("faults %v, refusals %v; want clean play", f, r)
			}
			// The record keeps each seat's notes with its actions.
			for _, a := range taken(res.Events) {
				if !strings.HasPrefix(a.GetAction().GetPrivateNotes(), "SECRET-NOTE-"+id) {
					t.Errorf("recorded action of seat %d has notes %q", a.GetSeat(), a.GetAction().GetPrivateNotes())
				}
			}
		})
	}

	// No observation anyone received holds another seat's (or match's) secrets, and the later
	// observations of a seat that wrote notes hold its own: the scan can see what it looks for.
	ownSeen := 0
	for key, l := range logs {
		for _, obs := range l.all() {
			text := prototext.Format(obs)
			for _, s := range secret {
				mine := s.match == obs.GetMatchId() && s.seat == obs.GetSeat()
				if !mine && strings.Contains(text, s.text) {
					t.Errorf("%s on turn %d received %q, planted by %s seat %d", key, obs.GetTurn(), s.text, s.match, s.seat)
				}
				if mine && strings.Contains(s.text, "-NOTE-") && strings.Contains(text, s.text) {
					ownSeen++
				}
			}
		}
	}
	if ownSeen == 0 {
		t.Errorf("no observation carried its own seat's notes; the leak scan proves nothing")
	}
	patientLog := logs["notes-patient-patient/0"].all()
	if last := patientLog[len(patientLog)-1]; len(last.GetNotes()) != 3 {
		t.Errorf("patient P1's last observation (turn %d) has notes %q, want its 3 earlier notes", last.GetTurn(), last.GetNotes())
	}
}

// TestCounterfactual replays a match up to turn K and lets other agents play on from there.
func TestCounterfactual(t *testing.T) {
	fairC := openConn(t, "builtin:fair").Client
	original := run(t, ultimatumSpec("original", fairC, fairC))
	if n := len(taken(original.Events)); n != int(specMaxTurns) {
		t.Fatalf("fair vs fair took %d actions, want all %d turns", n, specMaxTurns)
	}
	origTaken := takenEvents(original.Events)

	for _, k := range []int32{1, 2, 5, 8} {
		t.Run(fmt.Sprintf("from turn %d", k), func(t *testing.T) {
			var seen obsLog
			newAgent := sdktest.Client(t, logged(&seen, accepter(10)), sdk.WithInfo(&gamev1.AgentInfo{Name: "accepter"}))
			spec := ultimatumSpec("counterfactual", newAgent, newAgent)
			spec.Prefix, spec.FromTurn = original.Events, k
			res := run(t, spec)

			got := takenEvents(res.Events)
			for i, ev := range got {
				if ev.GetTurn() >= k {
					break
				}
				want := origTaken[i]
				if ev.GetTurn() != want.GetTurn() || !proto.Equal(ev.GetActionTaken(), want.GetActionTaken()) {
					t.Errorf("replayed turn %d: %v, original %v", ev.GetTurn(), ev.GetActionTaken(), want.GetActionTaken())
				}
			}
			obs := seen.all()
			if len(obs) == 0 || obs[0].GetTurn() != k {
				t.Fatalf("new agents were first asked on turn %v, want %d", obs, k)
			}
			if len(obs[0].GetHistory()) != int(k-1) {
				t.Errorf("first new observation shows %d history entries, want the %d replayed turns", len(obs[0].GetHistory()), k-1)
			}
			// The continuation is the new agents' play: the accepter takes the offer standing on
			// turn K; from turn 1 it proposes 10, which the other seat's accepter takes.
			var wantPay []float64
			if k == 1 {
				wantPay = []float64{90, 10}
			} else {
				x := proposedX(t, origTaken[k-2].GetActionTaken())
				wantPay = []float64{float64(specTotal - x), float64(x)}
			}
			if !slices.Equal(res.Outcome.GetPayoffs(), wantPay) || res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_AGREEMENT {
				t.Errorf("outcome %v, want agreement paying %v", res.Outcome, wantPay)
			}
			for _, ev := range got {
				if ev.GetTurn() >= k && ev.GetActionTaken().GetAttempt() != 1 {
					t.Errorf("continuation action on turn %d: %v", ev.GetTurn(), ev.GetActionTaken())
				}
			}
			if name := res.Events[0].GetMatchStarted().GetSeats()[0].GetAgent().GetName(); name != "accepter" {
				t.Errorf("counterfactual seats the %q agent, want the new one", name)
			}

			again := run(t, spec)
			if len(again.Events) != len(res.Events) {
				t.Fatalf("the same counterfactual recorded %d then %d events", len(res.Events), len(again.Events))
			}
			for i := range res.Events {
				if !proto.Equal(res.Events[i], again.Events[i]) {
					t.Errorf("the same counterfactual differs at event %d:\n%v\n%v", i, res.Events[i], again.Events[i])
				}
			}
		})
	}

	t.Run("prefix that does not fit", func(t *testing.T) {
		spec := ultimatumSpec("misfit", fairC, fairC)
		// Proposals of 40-odd Dollars cannot be made in a game of 10.
		spec.Params = gametest.Resolve(t, ultimatum.New(), &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: ultimatumParams(10)}})
		spec.Prefix, spec.FromTurn = original.Events, 5
		res := run(t, spec)
		if res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(res.Outcome.GetSummary(), "does not fit") {
			t.Errorf("outcome %v, want void because the record does not fit", res.Outcome)
		}
	})
}

func proposedX(t *testing.T, a *eventsv1.ActionTaken) int64 {
	t.Helper()
	p := a.GetAction().GetMove().GetPropose()
	if p == nil {
		t.Fatalf("action %v is not a proposal", a)
	}
	return p.GetProposal().GetAllocation().GetShares()[0].GetGives()[specCurrency]
}

// knownAgent knows its description without being asked, and cannot be asked.
type knownAgent struct {
	agentv1.AgentServiceClient
	info *gamev1.AgentInfo
}

func (k knownAgent) KnownDescription() *agentv1.DescribeResponse {
	return &agentv1.DescribeResponse{Agent: k.info}
}

func (knownAgent) Describe(context.Context, *agentv1.DescribeRequest, ...grpc.CallOption) (*agentv1.DescribeResponse, error) {
	return nil, status.Error(codes.Unavailable, "not to be asked")
}

// An agent whose description is known is recorded with it, tidied as any answer is, unasked.
func TestKnownDescriptionIsUsed(t *testing.T) {
	client := openConn(t, "builtin:fair").Client
	known := knownAgent{AgentServiceClient: client, info: &gamev1.AgentInfo{Name: "known\nagent", Version: "1"}}
	res := run(t, ultimatumSpec("known-description", known, client))
	got := res.Events[0].GetMatchStarted().GetSeats()[0].GetAgent()
	if want := (&gamev1.AgentInfo{Name: "known agent", Version: "1"}); !proto.Equal(got, want) {
		t.Errorf("seat 0 is recorded as %v, want %v", got, want)
	}
}
