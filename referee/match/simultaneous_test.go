package match_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/match"
)

// barrierLimit is how long an agent waits for the other seat's request to arrive too. A runner
// that asks the seats one after the other makes the first agent give up and fault, so the test
// fails instead of hanging.
const barrierLimit = time.Minute

// rendezvous lets agents of different seats wait for each other, by key.
type rendezvous struct {
	mu    sync.Mutex
	count map[string]int
	ready map[string]chan struct{}
}

// arrive counts one arrival at key and returns a channel closed once n have arrived.
func (r *rendezvous) arrive(key string, n int) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	ch := r.channel(key)
	r.count[key]++
	if r.count[key] == n {
		close(ch)
	}
	return ch
}

// signal closes key's channel; done returns it.
func (r *rendezvous) signal(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	close(r.channel(key))
}

func (r *rendezvous) done(key string) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.channel(key)
}

func (r *rendezvous) channel(key string) chan struct{} {
	if r.count == nil {
		r.count, r.ready = map[string]int{}, map[string]chan struct{}{}
	}
	if r.ready[key] == nil {
		r.ready[key] = make(chan struct{})
	}
	return r.ready[key]
}

// await waits for ch within barrierLimit; giving up is an error status, so the runner records
// a fault the test then reports.
func await(ctx context.Context, ch <-chan struct{}, what string) error {
	ctx, cancel := context.WithTimeout(ctx, barrierLimit)
	defer cancel()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return status.Errorf(codes.DeadlineExceeded, "gave up waiting for %s", what)
	}
}

// TestSimultaneousMoves: seats that move at once are asked in parallel, their actions are
// recorded in seat order whoever answers first, and one seat's retries leave the other alone.
func TestSimultaneousMoves(t *testing.T) {
	var meet rendezvous
	// picks[seat][turn-1][attempt-1]
	picks := [2][][]string{
		{{"x", "7"}, {"2"}},
		{{"3"}, {"5"}},
	}
	// On turn 1 seat 1 answers first, on turn 2 seat 0.
	firstToAnswer := map[int32]int32{1: 1, 2: 0}
	logs := [2]*obsLog{{}, {}}
	agents := make([]agentv1.AgentServiceClient, 2)
	for seat := range int32(2) {
		agents[seat] = sdktest.Client(t, sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
			logs[seat].add(obs)
			turn, attempt := obs.GetTurn(), obs.GetAttempt()
			if attempt == 1 {
				key := fmt.Sprintf("%s/%d", obs.GetMatchId(), turn)
				if err := await(ctx, meet.arrive("asked/"+key, 2), "the other seat to be asked"); err != nil {
					return nil, err
				}
				if first := firstToAnswer[turn]; seat == first {
					defer meet.signal("answered/" + key)
				} else if err := await(ctx, meet.done("answered/"+key), "the other seat to answer"); err != nil {
					return nil, err
				}
			}
			return pick(picks[seat][turn-1][attempt-1]), nil
		}))
	}
	spec := match.Spec{ID: "simultaneous", Game: pickGame{rounds: 2}, Agents: agents}
	res := run(t, spec)

	if f := faults(res.Events); len(f) > 0 {
		t.Fatalf("faults %v; were the seats asked in parallel?", f)
	}
	type step struct {
		kind          string
		turn          int32
		seat, attempt int32
	}
	var got []step
	for _, ev := range res.Events {
		switch {
		case ev.GetActionRefused() != nil:
			got = append(got, step{"refused", ev.GetTurn(), ev.GetActionRefused().GetSeat(), ev.GetActionRefused().GetAttempt()})
		case ev.GetActionTaken() != nil:
			got = append(got, step{"taken", ev.GetTurn(), ev.GetActionTaken().GetSeat(), ev.GetActionTaken().GetAttempt()})
		}
	}
	want := []step{
		{"refused", 1, 0, 1}, {"taken", 1, 0, 2}, {"taken", 1, 1, 1},
		{"taken", 2, 0, 1}, {"taken", 2, 1, 1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("record steps = %v, want %v", got, want)
	}
	if r := refused(res.Events); len(r) != 1 || r[0].GetRejection().GetCode() != gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS {
		t.Errorf("refusals = %v, want seat 0's bad digit", r)
	}

	// Seat 1 was asked once a turn; seat 0's retry saw its own rejection and nothing of seat 1's
	// pick, which its validating state did not hold.
	if n := len(logs[1].all()); n != 2 {
		t.Errorf("seat 1 was asked %d times, want 2", n)
	}
	seat0 := logs[0].all()
	if len(seat0) != 3 || seat0[1].GetAttempt() != 2 || seat0[1].GetLastRejection().GetCode() != gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS {
		t.Fatalf("seat 0's observations = %v, want 3 with a retry on turn 1", seat0)
	}
	for seat, l := range logs {
		for _, obs := range l.all() {
			if !strings.Contains(obs.GetBriefing(), "picked this round: [].") {
				t.Errorf("seat %d on turn %d attempt %d saw a pick of this round: %q", seat, obs.GetTurn(), obs.GetAttempt(), obs.GetBriefing())
			}
			if seat == 1 && obs.GetLastRejection() != nil {
				t.Errorf("seat 1 got seat 0's rejection: %v", obs.GetLastRejection())
			}
			for _, h := range obs.GetHistory() {
				if h.GetTurn() >= obs.GetTurn() {
					t.Errorf("seat %d on turn %d sees history of turn %d", seat, obs.GetTurn(), h.GetTurn())
				}
			}
		}
	}
	if !slices.Equal(res.Outcome.GetPayoffs(), []float64{1, 0}) || res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_TURN_LIMIT {
		t.Errorf("outcome = %v, want seat 0 winning 9 to 8", res.Outcome)
	}
}

// TestSimultaneousDefault: a seat whose agent fails on the last simultaneous turn gets the
// default move, and the outcome blames it the same way whichever seat it sits in.
func TestSimultaneousDefault(t *testing.T) {
	for _, failing := range []int32{0, 1} {
		t.Run(fmt.Sprintf("seat %d fails", failing), func(t *testing.T) {
			agents := make([]agentv1.AgentServiceClient, 2)
			for seat := range int32(2) {
				agents[seat] = sdktest.Client(t, sdk.AgentFunc(func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
					if seat == failing && obs.GetTurn() == 2 {
						return nil, status.Error(codes.Unavailable, "model provider down")
					}
					return pick("4"), nil
				}))
			}
			res := run(t, match.Spec{ID: "sim-default", Game: pickGame{rounds: 2}, Agents: agents})
			f := faults(res.Events)
			if len(f) != 1 || f[0].GetSeat() != failing || f[0].GetKind() != eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE {
				t.Fatalf("faults = %v, want seat %d unavailable", f, failing)
			}
			for _, ev := range takenEvents(res.Events) {
				a := ev.GetActionTaken()
				if want := a.GetSeat() == failing && ev.GetTurn() == 2; (a.GetDefaultReason() != "") != want {
					t.Errorf("turn %d: %v; want a default move: %v", ev.GetTurn(), a, want)
				}
			}
			out := res.Outcome
			if out.GetCause() != matchv1.EndCause_END_CAUSE_AGENT_FAULT || !slices.Equal(out.GetFaultedSeats(), []int32{failing}) {
				t.Errorf("outcome = %v, want an agent fault of seat %d", out, failing)
			}
		})
	}
}

// TestSimultaneousBudgetShare: seats that move at once share what is left of the match's token
// budget evenly, so that together they cannot pass it; a seat moving alone would be told all.
func TestSimultaneousBudgetShare(t *testing.T) {
	const budget, perMove = 1000, 100
	logs := [2]*obsLog{{}, {}}
	agents := make([]agentv1.AgentServiceClient, 2)
	for seat := range 2 {
		agents[seat] = sdktest.Client(t, sdk.AgentFunc(func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
			logs[seat].add(obs)
			a := pick("4")
			a.Usage = &agentv1.Usage{Model: "m", PromptTokens: perMove / 2, CompletionTokens: perMove / 2}
			return a, nil
		}))
	}
	spec := match.Spec{ID: "sim-budget", Game: pickGame{rounds: 2}, Agents: agents,
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(waitLimit), TokenBudget: budget}}
	run(t, spec)
	for seat, l := range logs {
		for _, obs := range l.all() {
			// Before turn k both seats have spent perMove on each earlier turn.
			want := (budget - 2*perMove*int64(obs.GetTurn()-1)) / 2
			if obs.TokensLeft == nil || obs.GetTokensLeft() != want {
				t.Errorf("seat %d turn %d: tokens_left %v, want half of what is left, %d", seat, obs.GetTurn(), obs.TokensLeft, want)
			}
		}
	}
}
