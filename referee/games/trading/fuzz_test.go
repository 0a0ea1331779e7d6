package trading_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/trading"
	"google.golang.org/protobuf/proto"
)

// fuzzStages are the states a fuzzed action is tried on: fresh, with a standing trade, after a
// pass, with the proposal limit reached, on the last turn, after the end, with goals and with
// more resources.
var fuzzStages = []gametest.FuzzStage{
	{},
	{Moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10})}},
	{Moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10}), pass()}},
	{Moves: []*agentv1.Action{trade(bundle{"X": 1}, nil), pass(), trade(bundle{"X": 2}, nil), pass(), trade(bundle{"X": 3}, nil), trade(nil, bundle{"Y": 3})}},
	{Params: params(&tradingv1.Params{MaxTurns: proto.Int32(2)}), Moves: []*agentv1.Action{trade(bundle{"X": 1}, bundle{"Y": 1})}},
	{Moves: []*agentv1.Action{trade(nil, nil), accept(0)}},
	{Params: goals15(), Moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10})}},
	{Params: params(&tradingv1.Params{P2Holdings: bundle{"X": 5, "Y": 25, "Z": 10, "W": 7}, P1Goal: bundle{"W": 3}})},
}

// FuzzApply runs the shared harness (gametest.Fuzz) at fuzzStages; on top, an accepted action
// must keep the resources: no holding ever goes negative, and the players hold exactly what
// they started with, in all.
func FuzzApply(f *testing.F) {
	gametest.Fuzz{Game: trading.New(), Seed: 1, Stages: fuzzStages, Check: checkResourcesKept, Corpus: []*agentv1.Action{
		trade(bundle{"X": 10}, bundle{"Y": 10}), trade(bundle{"X": 26}, nil), trade(nil, bundle{"X": 6}), trade(bundle{"X": -1}, nil),
		trade(bundle{"Q": 1}, nil), accept(0), accept(1), reject(), pass(), {},
		proposeShares(&gamev1.SeatShare{Seat: 1, Receives: bundle{"X": 1}}),
		{Move: pass().Move, Messages: []*gamev1.Message{{To: []int32{1}, Text: "hi"}}, PrivateReasoning: "r", PrivateNotes: "n"},
	}}.Run(f)
}

func checkResourcesKept(t *testing.T, a gametest.Accepted) {
	start := map[string]int64{}
	for _, h := range []map[string]int64{a.Params.GetTrading().GetP1Holdings(), a.Params.GetTrading().GetP2Holdings()} {
		for k, v := range h {
			start[k] += v
		}
	}
	end := map[string]int64{}
	for s := range games.Seat(2) {
		for k, v := range a.State.Observe(s).GetTrading().GetHoldings() {
			if v < 0 {
				t.Fatalf("seat %d holds %d %s after %v", s, v, k, a.Action)
			}
			end[k] += v
		}
	}
	for k, v := range start {
		if end[k] != v {
			t.Fatalf("after %v the players hold %d %s in all, not %d", a.Action, end[k], k, v)
		}
	}
}
