package ultimatum_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// fuzzStages are the states a fuzzed action is tried on: fresh, mid-game with a standing
// offer, the last turn, after the end, and small and huge totals.
var fuzzStages = []gametest.FuzzStage{
	{},
	{Moves: []*agentv1.Action{propose(40)}},
	{Moves: []*agentv1.Action{propose(40), propose(70)}},
	{Moves: []*agentv1.Action{propose(1), propose(2), propose(3), propose(4), propose(5), propose(6), propose(7)}},
	{Moves: []*agentv1.Action{propose(40), accept(0)}},
	{Moves: []*agentv1.Action{reject()}},
	{Params: params(1, 1, "")},
	{Params: params(10, 2, ""), Moves: []*agentv1.Action{propose(0)}},
	{Params: params(bargain.MaxAmount, 3, ""), Moves: []*agentv1.Action{propose(bargain.MaxAmount)}},
}

// FuzzApply runs the shared harness (gametest.Fuzz) at fuzzStages; on top, a finished match
// must pay amounts within the total that add up to it with a deal, and to 0 without.
func FuzzApply(f *testing.F) {
	gametest.Fuzz{Game: ultimatum.New(), Seed: 1, Stages: fuzzStages, Check: checkSplit, Corpus: []*agentv1.Action{
		propose(40), propose(-1), propose(1 << 62), accept(0), accept(1), reject(), pass(), choose(), {},
		proposeShares(&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"Dollars": 5}}),
		{Move: reject().Move, Messages: []*gamev1.Message{{To: []int32{1}, Text: "hi"}}, PrivateReasoning: "r", PrivateNotes: "n"},
	}}.Run(f)
}

func checkSplit(t *testing.T, a gametest.Accepted) {
	if len(a.State.ToMove()) > 0 {
		return // a proposal: checked by the next move's bounds and the rule tests
	}
	total := a.Params.GetUltimatum().GetTotal()
	out := a.State.Outcome()
	var sum float64
	for _, p := range out.GetPayoffs() {
		if p < 0 || p > float64(total) {
			t.Fatalf("payoff %v outside [0, %d]: %v", p, total, out)
		}
		sum += p
	}
	if (out.GetAgreement() && sum != float64(total)) || (!out.GetAgreement() && sum != 0) {
		t.Fatalf("payoffs %v do not add up (total %d): %v", out.GetPayoffs(), total, out)
	}
}
