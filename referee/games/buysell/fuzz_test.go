package buysell_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
	"google.golang.org/protobuf/proto"
)

// proposeAs proposes price with other item and currency names.
func proposeAs(item, currency string, price int64) *agentv1.Action {
	return proposeShares(
		&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{item: 1}},
		&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{currency: price}})
}

// fuzzStages are the states a fuzzed action is tried on: fresh, with a standing price, with
// the proposal limit reached, on the last turn, after the end, scaled and drawn.
var fuzzStages = []struct {
	params *matchv1.GameParams
	moves  []*agentv1.Action
}{
	{params: nil},
	{params: nil, moves: []*agentv1.Action{propose(80)}},
	{params: nil, moves: []*agentv1.Action{propose(80), propose(30)}},
	{params: params(&buysellv1.Params{MaxTurns: proto.Int32(6)}), moves: []*agentv1.Action{propose(90), propose(10), propose(80), propose(20)}},
	{params: params(&buysellv1.Params{MaxTurns: proto.Int32(2)}), moves: []*agentv1.Action{propose(50)}},
	{params: nil, moves: []*agentv1.Action{propose(55), accept(0)}},
	{params: nil, moves: []*agentv1.Action{reject()}},
	{params: params(&buysellv1.Params{Scale: proto.Int64(1 << 40), Budget: proto.Int64(100), Cost: proto.Int64(40), Willingness: proto.Int64(60)})},
	{params: params(&buysellv1.Params{Draw: proto.Bool(true), Cost: nil})},
}

// FuzzApply feeds arbitrary bytes, read as an Action, to Apply at one of fuzzStages, as one of
// the seats (or a seat that does not exist). Apply must not panic, must accept or refuse with
// a *games.Rejection, must change nothing when it refuses, and an accepted proposal must be a
// price within the budget; a finished match must pay p - cost and willingness - p, or 0 and 0.
func FuzzApply(f *testing.F) {
	seeds := []*agentv1.Action{
		propose(40), propose(-1), propose(1 << 62), accept(0), accept(1), reject(), pass(), {},
		proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 2}}),
		proposeShares(&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"X": 1}}),
		{Move: reject().Move, Messages: []*gamev1.Message{{To: []int32{1}, Text: "hi"}}, PrivateReasoning: "r", PrivateNotes: "n"},
	}
	for i, a := range seeds {
		b, err := proto.Marshal(a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Fuzz(func(t *testing.T, choice uint8, data []byte) {
		action := &agentv1.Action{}
		if err := proto.Unmarshal(data, action); err != nil {
			return
		}
		stage := fuzzStages[int(choice)%len(fuzzStages)]
		seat := games.Seat(choice/uint8(len(fuzzStages))) % 3 // 2 does not play
		const seed = 7
		st := play(t, stage.params, seed, stage.moves...)
		resolved, err := buysell.New().Resolve(stage.params)
		if err != nil {
			t.Fatal(err)
		}
		budget := resolved.GetBuysell().GetBudget() * resolved.GetBuysell().GetScale()
		cost, willingness, err := buysell.Values(stage.params, seed)
		if err != nil {
			t.Fatal(err)
		}
		before := []*agentv1.Observation{st.Observe(0), st.Observe(1)}
		_, err = st.Apply(seat, action)
		if err != nil {
			if _, ok := games.AsRejection(err); !ok {
				t.Fatalf("Apply returned %T %v, want *games.Rejection", err, err)
			}
			for s, b := range before {
				if !proto.Equal(st.Observe(games.Seat(s)), b) {
					t.Fatalf("refused action %v changed seat %d's observation", action, s)
				}
			}
			return
		}
		if len(st.ToMove()) > 0 {
			if action.GetMove().GetPropose() != nil {
				price := st.Observe(seat).GetBuysell().GetOwnPrice()
				if price < 0 || price > budget {
					t.Fatalf("accepted price %d outside [0, %d]", price, budget)
				}
			}
			return
		}
		out := st.Outcome()
		pay := out.GetPayoffs()
		if len(pay) != 2 {
			t.Fatalf("payoffs %v", pay)
		}
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
	})
}
