package dealornodeal_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"google.golang.org/protobuf/proto"
)

// fuzzStages are states a fuzzed action is tried on: the start, a standing proposal, the last
// turn, a two-type pool.
var fuzzStages = []struct {
	kvs   []string
	moves []*agentv1.Action
}{
	{},
	{moves: []*agentv1.Action{propose(0, 2, 2)}},
	{kvs: []string{"max_turns=2"}, moves: []*agentv1.Action{propose(1, 0, 0)}},
	{kvs: []string{"items=gem,coin", "counts=2,3", "alice_values=2,2", "bob_values=5,0"}},
}

// FuzzApply feeds arbitrary bytes, read as an Action, to Apply at one of fuzzStages as one of
// the seats (or one that does not exist): no panic, a *games.Rejection or success, nothing
// changed by a refusal, and at the end scores that are those of a division of the pool (at
// most the pool's worth to each, 0 each without a deal).
func FuzzApply(f *testing.F) {
	for i, a := range []*agentv1.Action{propose(0, 2, 2), propose(1, 1, 1), accept(), pass(), {},
		shares(&gamev1.SeatShare{Seat: 0, Receives: map[string]int64{"book": 1 << 40}}),
		shares(&gamev1.SeatShare{Seat: 1, Receives: map[string]int64{"gem": 2, "coin": 3}})} {
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
		seat := games.Seat(int(choice/uint8(len(fuzzStages))) % 3)
		st := newState(t, stage.kvs...)
		for i, a := range stage.moves {
			if _, err := st.Apply(games.Seat(i%2), a); err != nil {
				t.Fatal(err)
			}
		}
		before := []*agentv1.Observation{st.Observe(0), st.Observe(1)}
		if _, err := st.Apply(seat, action); err != nil {
			if _, ok := games.AsRejection(err); !ok {
				t.Fatalf("Apply returned %T %v", err, err)
			}
			for s, b := range before {
				if !proto.Equal(st.Observe(games.Seat(s)), b) {
					t.Fatalf("refused action %v changed seat %d's observation", action, s)
				}
			}
			return
		}
		if len(st.ToMove()) > 0 {
			return
		}
		out := st.Outcome()
		pool := float64(before[0].GetDealornodeal().GetPoolValue())
		for _, x := range out.GetPayoffs() {
			if x < 0 || x > pool || (!out.GetAgreement() && x != 0) {
				t.Fatalf("outcome %v with a pool worth %v", out, pool)
			}
		}
	})
}
