package dealornodeal_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/gametest"
)

// FuzzApply runs the shared harness (gametest.Fuzz) at the start, with a standing proposal, on
// the last turn and with a two-type pool; on top, a finished match must score a division of
// the pool (at most the pool's worth to each, 0 each without a deal).
func FuzzApply(f *testing.F) {
	stages := []gametest.FuzzStage{
		{},
		{Moves: []*agentv1.Action{propose(0, 2, 2)}},
		{Params: params(f, "max_turns=2"), Moves: []*agentv1.Action{propose(1, 0, 0)}},
		{Params: params(f, "items=gem,coin", "counts=2,3", "alice_values=2,2", "bob_values=5,0")},
	}
	gametest.Fuzz{Game: dealornodeal.New(), Seed: 1, Stages: stages, Check: checkDivision, Corpus: []*agentv1.Action{
		propose(0, 2, 2), propose(1, 1, 1), accept(), pass(), {},
		shares(&gamev1.SeatShare{Seat: 0, Receives: map[string]int64{"book": 1 << 40}}),
		shares(&gamev1.SeatShare{Seat: 1, Receives: map[string]int64{"gem": 2, "coin": 3}}),
	}}.Run(f)
}

func checkDivision(t *testing.T, a gametest.Accepted) {
	if len(a.State.ToMove()) > 0 {
		return
	}
	out := a.State.Outcome()
	pool := float64(a.Before[0].GetDealornodeal().GetPoolValue())
	for _, x := range out.GetPayoffs() {
		if x < 0 || x > pool || (!out.GetAgreement() && x != 0) {
			t.Fatalf("outcome %v with a pool worth %v", out, pool)
		}
	}
}
