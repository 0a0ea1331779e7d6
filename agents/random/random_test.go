package random_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/random"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

func newState(t *testing.T, total int64, maxTurns int32) games.State {
	t.Helper()
	st, err := games.Start(ultimatum.New(), &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{
		Total: proto.Int64(total), MaxTurns: proto.Int32(maxTurns),
	}}}, 0)
	if err != nil {
		t.Fatalf("NewState: %v", err)
	}
	return st
}

func act(t *testing.T, a *random.Agent, obs *agentv1.Observation) *agentv1.Action {
	t.Helper()
	action, err := a.Act(context.Background(), obs)
	if err != nil {
		t.Fatalf("Act: %v", err)
	}
	return action
}

// observations returns observations of the seat to move in ultimatum games of a billion
// dollars (so two random proposals almost never agree), reached by random play.
func observations(t *testing.T, n int) []*agentv1.Observation {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	var out []*agentv1.Observation
	for len(out) < n {
		st := newState(t, 1_000_000_000, 10)
		for len(st.ToMove()) > 0 && len(out) < n {
			obs := st.Observe(st.ToMove()[0])
			obs.MatchId = fmt.Sprintf("m-%d", len(out))
			out = append(out, obs)
			// Keep the game going with proposals, so later turns are reached too.
			action := games.RandomAction(obs, rng)
			if action.GetMove().GetPropose() == nil && !isLast(obs) {
				action = &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
					Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"Dollars": 1}}}}},
				}}}}}
			}
			if _, err := st.Apply(st.ToMove()[0], action); err != nil {
				t.Fatalf("Apply: %v", err)
			}
		}
	}
	return out
}

func isLast(obs *agentv1.Observation) bool { return obs.GetTurn() == obs.GetMaxTurns() }

func TestSameObservationSameAction(t *testing.T) {
	for i, obs := range observations(t, 40) {
		t.Run(fmt.Sprintf("obs %d turn %d", i, obs.GetTurn()), func(t *testing.T) {
			a, b := random.New(3), random.New(3)
			first := act(t, a, obs)
			if again := act(t, a, obs); !proto.Equal(first, again) {
				t.Errorf("the same agent answered %v, then %v", first, again)
			}
			if other := act(t, b, proto.CloneOf(obs)); !proto.Equal(first, other) {
				t.Errorf("two agents with the same seed answered %v and %v", first, other)
			}
		})
	}
}

// TestInputsChangeTheAction checks each input of the agent's draw matters: changing it gives a
// different action for most observations. Two draws of a billion-dollar game agree only when
// both pick reject, or both accept: 1/4 on turn 1 (propose or reject), 2/9 later. About three
// quarters should differ; the test asks for half.
func TestInputsChangeTheAction(t *testing.T) {
	tests := []struct {
		name   string
		seed   uint64
		change func(*agentv1.Observation)
	}{
		{"attempt", 1, func(o *agentv1.Observation) { o.Attempt++ }},
		{"seat", 1, func(o *agentv1.Observation) { o.Seat = 1 - o.Seat }},
		{"match id", 1, func(o *agentv1.Observation) { o.MatchId += "x" }},
		{"turn", 1, func(o *agentv1.Observation) { o.Turn += 2 }},
		{"seed", 2, func(*agentv1.Observation) {}},
	}
	obs := observations(t, 200)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, changed := random.New(1), random.New(tc.seed)
			differ := 0
			for _, o := range obs {
				o2 := proto.CloneOf(o)
				tc.change(o2)
				if !proto.Equal(act(t, base, o), act(t, changed, o2)) {
					differ++
				}
			}
			if differ < len(obs)/2 {
				t.Errorf("only %d of %d actions changed with the %s", differ, len(obs), tc.name)
			}
		})
	}
}

// TestAlwaysLegal lets the agent play both seats of many ultimatum games; the game must accept
// every action, and every game must end by its turn limit.
func TestAlwaysLegal(t *testing.T) {
	totals := []int64{1, 2, 100, bargain.MaxAmount}
	turns := []int32{1, 2, 3, 8, 25}
	for _, total := range totals {
		for _, maxTurns := range turns {
			t.Run(fmt.Sprintf("total=%d/turns=%d", total, maxTurns), func(t *testing.T) {
				kinds := map[string]int{}
				for seed := range uint64(60) {
					agents := [2]*random.Agent{random.New(seed), random.New(seed + 1000)}
					st := newState(t, total, maxTurns)
					for attempt := 1; len(st.ToMove()) > 0; attempt++ {
						seat := st.ToMove()[0]
						obs := st.Observe(seat)
						obs.MatchId = fmt.Sprintf("legal-%d", seed)
						obs.Attempt = 1
						action := act(t, agents[seat], obs)
						kinds[fmt.Sprintf("%T", action.GetMove().GetKind())]++
						if _, err := st.Apply(seat, action); err != nil {
							t.Fatalf("seed %d turn %d: the game refused %v: %v", seed, obs.GetTurn(), action, err)
						}
						if attempt > int(maxTurns) {
							t.Fatalf("seed %d: the game did not end within %d turns", seed, maxTurns)
						}
					}
				}
				if maxTurns > 1 && len(kinds) < 2 {
					t.Errorf("only %v were played over 60 games", kinds)
				}
			})
		}
	}
}

func TestNoLegalMove(t *testing.T) {
	st := newState(t, 10, 2)
	// Seat 1 is not to move on turn 1: it has no legal moves.
	if a := act(t, random.New(0), st.Observe(1)); a != nil {
		t.Errorf("Act with no legal moves = %v, want nil", a)
	}
}

func TestDescribe(t *testing.T) {
	if info := random.New(9).Describe(); info.GetName() != "random" || info.GetVersion() == "" {
		t.Errorf("Describe = %v", info)
	}
}
