package buysell_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/referee/games/gametest"
	"google.golang.org/protobuf/proto"
)

// fuzzSeed is the match seed of every fuzzed state.
const fuzzSeed = 7

// fuzzStages are the states a fuzzed action is tried on: fresh, with a standing price, with
// the proposal limit reached, on the last turn, after the end, scaled and drawn.
var fuzzStages = []gametest.FuzzStage{
	{},
	{Moves: []*agentv1.Action{propose(80)}},
	{Moves: []*agentv1.Action{propose(80), propose(30)}},
	{Params: params(&buysellv1.Params{MaxTurns: proto.Int32(6)}), Moves: []*agentv1.Action{propose(90), propose(10), propose(80), propose(20)}},
	{Params: params(&buysellv1.Params{MaxTurns: proto.Int32(2)}), Moves: []*agentv1.Action{propose(50)}},
	{Moves: []*agentv1.Action{propose(55), accept(0)}},
	{Moves: []*agentv1.Action{reject()}},
	{Params: params(&buysellv1.Params{Scale: proto.Int64(1 << 40), Budget: proto.Int64(100), Cost: proto.Int64(40), Willingness: proto.Int64(60)})},
	{Params: params(&buysellv1.Params{Draw: proto.Bool(true)})},
}

// FuzzApply runs the shared harness (gametest.Fuzz) at fuzzStages; on top, an accepted
// proposal must be a price within the budget, and a finished match must pay p - cost and
// willingness - p, or 0 and 0.
func FuzzApply(f *testing.F) {
	gametest.Fuzz{Game: buysell.New(), Seed: fuzzSeed, Stages: fuzzStages, Check: checkPrice, Corpus: []*agentv1.Action{
		propose(40), propose(-1), propose(1 << 62), accept(0), accept(1), reject(), pass(), {},
		proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 2}}),
		proposeShares(&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"X": 1}}),
		{Move: reject().Move, Messages: []*gamev1.Message{{To: []int32{1}, Text: "hi"}}, PrivateReasoning: "r", PrivateNotes: "n"},
	}}.Run(f)
}

func checkPrice(t *testing.T, a gametest.Accepted) {
	p := a.Params.GetBuysell()
	budget := p.GetBudget() * p.GetScale()
	if len(a.State.ToMove()) > 0 {
		if a.Action.GetMove().GetPropose() != nil {
			price := a.State.Observe(a.Seat).GetBuysell().GetOwnPrice()
			if price < 0 || price > budget {
				t.Fatalf("accepted price %d outside [0, %d]", price, budget)
			}
		}
		return
	}
	cost, willingness, err := buysell.Values(a.Params, fuzzSeed)
	if err != nil {
		t.Fatal(err)
	}
	out := a.State.Outcome()
	pay := out.GetPayoffs()
	if !out.GetAgreement() {
		if pay[0] != 0 || pay[1] != 0 {
			t.Fatalf("no sale but payoffs %v", pay)
		}
		return
	}
	price := pay[0] + float64(cost)
	if price < 0 || price > float64(budget) || pay[1] != float64(willingness)-price {
		t.Fatalf("payoffs %v do not come from one price in [0, %d] (cost %d, willingness %d)", pay, budget, cost, willingness)
	}
}

// proposeAs proposes price with other item and currency names.
func proposeAs(item, currency string, price int64) *agentv1.Action {
	return proposeShares(
		&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{item: 1}},
		&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{currency: price}})
}
