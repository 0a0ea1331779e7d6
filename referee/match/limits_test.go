package match_test

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/match"
)

// sizedLog is an eventLog whose transport carries events of at most max bytes.
type sizedLog struct {
	eventLog
	max int
}

func (l *sizedLog) MaxEventBytes() int { return l.max }

// runSized plays spec recording to a sizedLog of maxEvent (0: it does not say), checks the
// record, and returns it as the result and as recorded.
func runSized(t *testing.T, maxEvent int, spec match.Spec) (*match.Result, []*eventsv1.MatchEvent) {
	t.Helper()
	rec := &sizedLog{max: maxEvent}
	res, err := match.NewRunner(rec).Run(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	checkRecord(t, spec.ID, res)
	return res, rec.all()
}

// pickAgent serves an agent whose every answer is act(observation).
func pickAgent(t *testing.T, act func(obs *agentv1.Observation) *agentv1.Action) agentv1.AgentServiceClient {
	t.Helper()
	return serveRaw(t, &rawAgent{name: "picker", act: func(_ context.Context, req *agentv1.ActRequest) (*agentv1.ActResponse, error) {
		return &agentv1.ActResponse{Action: act(req.GetObservation())}, nil
	}})
}

// Whatever a spec's limits ask, the runner plays within its hard limits, records the limits
// it applied and tells the agents the reply limit.
func TestLimitsWithinHardLimits(t *testing.T) {
	const i32max = math.MaxInt32
	defaults := &matchv1.Limits{MoveTimeout: durationpb.New(match.DefaultMoveTimeout), MaxRetries: proto.Int32(match.DefaultMaxRetries), MaxReplyBytes: match.DefaultMaxReplyBytes}
	tests := []struct {
		name     string
		limits   *matchv1.Limits
		maxEvent int // the recorder's; 0: it does not say
		want     *matchv1.Limits
	}{
		{name: "none", want: defaults},
		{name: "in range", limits: &matchv1.Limits{MoveTimeout: durationpb.New(3 * time.Second), MaxRetries: proto.Int32(5), MaxReplyBytes: 100 << 10},
			want: &matchv1.Limits{MoveTimeout: durationpb.New(3 * time.Second), MaxRetries: proto.Int32(5), MaxReplyBytes: 100 << 10}},
		{name: "largest int32 everywhere", limits: &matchv1.Limits{MoveTimeout: durationpb.New(i32max * time.Second), MaxRetries: proto.Int32(i32max), MaxReplyBytes: i32max},
			want: &matchv1.Limits{MoveTimeout: durationpb.New(30 * time.Minute), MaxRetries: proto.Int32(10), MaxReplyBytes: 512 << 10}},
		{name: "a day to answer", limits: &matchv1.Limits{MoveTimeout: durationpb.New(24 * time.Hour)},
			want: &matchv1.Limits{MoveTimeout: durationpb.New(30 * time.Minute), MaxRetries: proto.Int32(2), MaxReplyBytes: 64 << 10}},
		{name: "negative and invalid", limits: &matchv1.Limits{MoveTimeout: &durationpb.Duration{Seconds: 5, Nanos: -3}, MaxRetries: proto.Int32(-7), MaxReplyBytes: -1},
			want: &matchv1.Limits{MoveTimeout: durationpb.New(match.DefaultMoveTimeout), MaxRetries: proto.Int32(0), MaxReplyBytes: 64 << 10}},
		{name: "a reply too small for any move", limits: &matchv1.Limits{MaxReplyBytes: 10},
			want: &matchv1.Limits{MoveTimeout: durationpb.New(match.DefaultMoveTimeout), MaxRetries: proto.Int32(2), MaxReplyBytes: 1 << 10}},
		// A bus carrying 100 KiB events: replies keep 4 KiB for the event around them.
		{name: "a small bus", limits: &matchv1.Limits{MaxReplyBytes: i32max}, maxEvent: 100 << 10,
			want: &matchv1.Limits{MoveTimeout: durationpb.New(match.DefaultMoveTimeout), MaxRetries: proto.Int32(2), MaxReplyBytes: 96 << 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu   sync.Mutex
				told []int32
			)
			agent := pickAgent(t, func(obs *agentv1.Observation) *agentv1.Action {
				mu.Lock()
				defer mu.Unlock()
				told = append(told, obs.GetMaxReplyBytes())
				return pick("1")
			})
			res, _ := runSized(t, tc.maxEvent, match.Spec{ID: "limits", Game: pickGame{rounds: 1}, Agents: []agentv1.AgentServiceClient{agent, agent}, Limits: tc.limits})
			if got := res.Events[0].GetMatchStarted().GetLimits(); !proto.Equal(got, tc.want) {
				t.Errorf("recorded limits %v, want %v", got, tc.want)
			}
			for _, n := range told {
				if n != tc.want.GetMaxReplyBytes() {
					t.Errorf("an agent was told max_reply_bytes %d, want %d", n, tc.want.GetMaxReplyBytes())
				}
			}
		})
	}
}

// max_retries 2147483647 does not wrap around into "no retries", nor let refusals pile up
// without end: an agent whose every answer is refused gets MaxMaxRetries more tries.
func TestRetriesBounded(t *testing.T) {
	agent := pickAgent(t, func(*agentv1.Observation) *agentv1.Action { return pick("ten") })
	good := pickAgent(t, func(*agentv1.Observation) *agentv1.Action { return pick("1") })
	res := run(t, match.Spec{ID: "retries", Game: pickGame{rounds: 2, sequential: true}, Agents: []agentv1.AgentServiceClient{agent, good},
		Limits: &matchv1.Limits{MaxRetries: proto.Int32(math.MaxInt32)}})
	perMove := map[int32]int{}
	for _, ev := range res.Events {
		if r := ev.GetActionRefused(); r != nil {
			perMove[ev.GetTurn()]++
		}
	}
	if len(perMove) != 2 || perMove[1] != match.MaxMaxRetries+1 || perMove[2] != match.MaxMaxRetries+1 {
		t.Errorf("refusals per turn %v, want %d on each of 2 turns", perMove, match.MaxMaxRetries+1)
	}
	fs := faults(res.Events)
	if len(fs) != 2 || fs[0].GetKind() != eventsv1.FaultKind_FAULT_KIND_RETRIES_EXHAUSTED || fs[0].GetSeat() != 0 {
		t.Errorf("faults %v, want seat 0's retries exhausted on each turn", fs)
	}
}

// On a transport that carries small events, a refused action too large for its event is
// recorded without it, its size and the refusal kept; an applied one that large voids the
// match once, saying why, and counts against nobody.
func TestEventsFitTheRecord(t *testing.T) {
	// Replies of up to 1 KiB (the smallest reply limit) in events of at most 1,050 bytes: an
	// action of about 1,000 bytes fits its reply but not its event, whose envelope holds the
	// long match id.
	const maxEvent = 1050
	long := strings.Repeat("x", 1000)
	id := "small-bus-" + strings.Repeat("i", 60)
	t.Run("refused action", func(t *testing.T) {
		agent := pickAgent(t, func(obs *agentv1.Observation) *agentv1.Action {
			if obs.GetAttempt() > 1 {
				return pick("1")
			}
			a := pick("eleven")
			a.PrivateReasoning = long
			return a
		})
		res, recorded := runSized(t, maxEvent, match.Spec{ID: id, Game: pickGame{rounds: 1}, Agents: []agentv1.AgentServiceClient{agent, agent}})
		rs := refused(res.Events)
		if len(rs) != 2 {
			t.Fatalf("%d refusals, want one per seat", len(rs))
		}
		for _, r := range rs {
			want := proto.Size(&agentv1.Action{Move: pick("eleven").GetMove(), PrivateReasoning: long})
			if r.GetAction() != nil || int(r.GetActionOmittedBytes()) != want || r.GetRejection().GetCode() != gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS {
				t.Errorf("refusal recorded as %v, want no action, %d bytes left out and the reason", r, want)
			}
		}
		if res.Outcome.GetCause() == matchv1.EndCause_END_CAUSE_VOID {
			t.Errorf("the match ended void: %s", res.Outcome.GetSummary())
		}
		for _, ev := range recorded {
			if n := proto.Size(ev); n > maxEvent {
				t.Errorf("event %d is %d bytes, over %d", ev.GetSeq(), n, maxEvent)
			}
		}
	})
	t.Run("applied action", func(t *testing.T) {
		agent := pickAgent(t, func(*agentv1.Observation) *agentv1.Action {
			a := pick("1")
			a.PrivateReasoning = long
			return a
		})
		res, _ := runSized(t, maxEvent, match.Spec{ID: id, Game: pickGame{rounds: 1}, Agents: []agentv1.AgentServiceClient{agent, agent}})
		if o := res.Outcome; o.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(o.GetSummary(), "over the 1050 bytes its record carries") || len(o.GetFaultedSeats()) != 0 {
			t.Errorf("outcome %v, want void for the event's size, against nobody", o)
		}
	})
}

// A game whose observation alone is over the budget, with no history or notes to leave out,
// ends the match void once, saying why, and faults nobody.
func TestObservationOverBudget(t *testing.T) {
	agent := pickAgent(t, func(*agentv1.Observation) *agentv1.Action { return pick("1") })
	res := run(t, match.Spec{ID: "huge-briefing", Game: pickGame{rounds: 3, hugeFrom: 2}, Agents: []agentv1.AgentServiceClient{agent, agent}})
	o := res.Outcome
	if o.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(o.GetSummary(), "over the 524288-byte budget") || len(o.GetFaultedSeats()) != 0 {
		t.Errorf("outcome %v, want void for the observation's size, against nobody", o)
	}
	if n := len(taken(res.Events)); n != 2 {
		t.Errorf("%d actions taken, want round 1's two", n)
	}
	if games.MaxObservationBytes != 524288 {
		t.Errorf("the budget is %d, the test reads 524288", games.MaxObservationBytes)
	}
}
