package ultimatum_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"google.golang.org/protobuf/proto"
)

// fuzzStages are the states a fuzzed action is tried on: fresh, mid-game with a standing
// offer, the last turn, after the end, and small and huge totals.
var fuzzStages = []struct {
	params *matchv1.GameParams
	moves  []*agentv1.Action
}{
	{params: nil},
	{params: nil, moves: []*agentv1.Action{propose(40)}},
	{params: nil, moves: []*agentv1.Action{propose(40), propose(70)}},
	{params: nil, moves: []*agentv1.Action{propose(1), propose(2), propose(3), propose(4), propose(5), propose(6), propose(7)}},
	{params: nil, moves: []*agentv1.Action{propose(40), accept(0)}},
	{params: nil, moves: []*agentv1.Action{reject()}},
	{params: params(1, 1, "")},
	{params: params(10, 2, ""), moves: []*agentv1.Action{propose(0)}},
	{params: params(ultimatum.MaxTotal, 3, ""), moves: []*agentv1.Action{propose(ultimatum.MaxTotal)}},
}

// FuzzApply feeds arbitrary bytes, read as an Action, to Apply at one of fuzzStages, as one of
// the seats (or a seat that does not exist). Apply must not panic, must accept or refuse with
// a *games.Rejection, must change nothing when it refuses, and must keep the payoffs sane
// when it accepts.
func FuzzApply(f *testing.F) {
	seeds := []*agentv1.Action{
		propose(40), propose(-1), propose(1 << 62), accept(0), accept(1), reject(), pass(), choose(), {},
		proposeShares(&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"Dollars": 5}}),
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
		st := play(t, stage.params, stage.moves...)
		total := int64(100)
		if p, err := ultimatum.New().Resolve(stage.params); err == nil {
			total = p.GetUltimatum().GetTotal()
		}
		before := []*agentv1.Observation{st.Observe(0), st.Observe(1)}
		_, err := st.Apply(seat, action)
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
			return // a proposal: checked by the next move's bounds and the rule tests
		}
		out := st.Outcome()
		var sum float64
		for _, p := range out.GetPayoffs() {
			if p < 0 || p > float64(total) {
				t.Fatalf("payoff %v outside [0, %d]: %v", p, total, out)
			}
			sum += p
		}
		if len(out.GetPayoffs()) != 2 || (out.GetAgreement() && sum != float64(total)) || (!out.GetAgreement() && sum != 0) {
			t.Fatalf("payoffs %v do not add up (total %d): %v", out.GetPayoffs(), total, out)
		}
	})
}
