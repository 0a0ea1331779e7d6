package trading_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/trading"
	"google.golang.org/protobuf/proto"
)

// fuzzStages are the states a fuzzed action is tried on: fresh, with a standing trade, after a
// pass, with the proposal limit reached, on the last turn, after the end, with goals and with
// more resources.
var fuzzStages = []struct {
	params *matchv1.GameParams
	moves  []*agentv1.Action
}{
	{params: nil},
	{params: nil, moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10})}},
	{params: nil, moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10}), pass()}},
	{params: nil, moves: []*agentv1.Action{trade(bundle{"X": 1}, nil), pass(), trade(bundle{"X": 2}, nil), pass(), trade(bundle{"X": 3}, nil), trade(nil, bundle{"Y": 3})}},
	{params: params(&tradingv1.Params{MaxTurns: proto.Int32(2)}), moves: []*agentv1.Action{trade(bundle{"X": 1}, bundle{"Y": 1})}},
	{params: nil, moves: []*agentv1.Action{trade(nil, nil), accept(0)}},
	{params: goals15(), moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10})}},
	{params: params(&tradingv1.Params{P2Holdings: bundle{"X": 5, "Y": 25, "Z": 10, "W": 7}, P1Goal: bundle{"W": 3}})},
}

// FuzzApply feeds arbitrary bytes, read as an Action, to Apply at one of fuzzStages, as one of
// the seats (or a seat that does not exist). Apply must not panic, must accept or refuse with
// a *games.Rejection, must change nothing when it refuses, and must keep the resources: no
// holding ever goes negative, and a finished match holds exactly what it started with.
func FuzzApply(f *testing.F) {
	seeds := []*agentv1.Action{
		trade(bundle{"X": 10}, bundle{"Y": 10}), trade(bundle{"X": 26}, nil), trade(nil, bundle{"X": 6}), trade(bundle{"X": -1}, nil),
		trade(bundle{"Q": 1}, nil), accept(0), accept(1), reject(), pass(), {},
		proposeShares(&gamev1.SeatShare{Seat: 1, Receives: bundle{"X": 1}}),
		{Move: pass().Move, Messages: []*gamev1.Message{{To: []int32{1}, Text: "hi"}}, PrivateReasoning: "r", PrivateNotes: "n"},
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
		st := play(t, stage.params, stage.moves...)
		resolved, err := trading.New().Resolve(stage.params)
		if err != nil {
			t.Fatal(err)
		}
		start := map[string]int64{}
		for _, h := range []map[string]int64{resolved.GetTrading().GetP1Holdings(), resolved.GetTrading().GetP2Holdings()} {
			for k, v := range h {
				start[k] += v
			}
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
		end := map[string]int64{}
		for s := range games.Seat(2) {
			for k, v := range st.Observe(s).GetTrading().GetHoldings() {
				if v < 0 {
					t.Fatalf("seat %d holds %d %s after %v", s, v, k, action)
				}
				end[k] += v
			}
		}
		for k, v := range start {
			if end[k] != v {
				t.Fatalf("after %v the players hold %d %s in all, not %d", action, end[k], k, v)
			}
		}
		if len(st.ToMove()) == 0 && len(st.Outcome().GetPayoffs()) != 2 {
			t.Fatalf("outcome %v", st.Outcome())
		}
	})
}
