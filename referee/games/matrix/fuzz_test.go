package matrix_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"google.golang.org/protobuf/proto"
)

// fuzzStage is a state a fuzzed action is tried on: params, then moves by seat.
type fuzzStage struct {
	kvs   []string
	seats []games.Seat
	moves []*agentv1.Action
}

var fuzzStages = []fuzzStage{
	{},
	{kvs: []string{"talk_rounds=2"}},
	{kvs: []string{"talk_rounds=2", "talk_opener=1"}, seats: []games.Seat{1}, moves: []*agentv1.Action{say("hi")}},
	{kvs: []string{"game=duopoly", "rounds=2"}, seats: []games.Seat{1}, moves: []*agentv1.Action{choose("q3")}},
	{kvs: []string{"game=golden_balls", "neutral_labels=true", "scale=7/3"}},
	{kvs: []string{"rounds=1"}, seats: []games.Seat{0, 1}, moves: []*agentv1.Action{choose("defect"), choose("defect")}},
}

// FuzzApply feeds arbitrary bytes, read as an Action, to Apply at one of fuzzStages as one of
// the seats (or one that does not exist). Apply must not panic, must accept or refuse with a
// *games.Rejection, must change nothing when it refuses, and must never let a seat's
// observation change when the other seat chooses before it.
func FuzzApply(f *testing.F) {
	for i, a := range []*agentv1.Action{say("x"), pass("y"), choose("cooperate"), choose("choice_2"), choose("q3"), {},
		{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{}}}}} {
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
			apply(t, st, stage.seats[i], a)
		}
		before := []*agentv1.Observation{st.Observe(0), st.Observe(1)}
		choosing := len(st.ToMove()) == 2
		if _, err := st.Apply(seat, action); err != nil {
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
		if choosing && action.GetMove().GetChoose() != nil && len(action.GetMessages()) == 0 {
			if other := 1 - seat; !proto.Equal(st.Observe(other), before[other]) {
				t.Fatalf("seat %d's choice showed in seat %d's observation", seat, other)
			}
		}
		if len(st.ToMove()) == 0 && len(st.Outcome().GetPayoffs()) != 2 {
			t.Fatalf("outcome %v", st.Outcome())
		}
	})
}
