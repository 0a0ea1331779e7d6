package sequential_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/sequential"
	"google.golang.org/protobuf/proto"
)

type fuzzStage struct {
	kvs   []string
	seats []games.Seat
	moves []*agentv1.Action
}

var fuzzStages = []fuzzStage{
	{},
	{kvs: []string{"game=trigame"}, seats: []games.Seat{0, 1}, moves: []*agentv1.Action{choose("a2"), choose("b1")}},
	{kvs: []string{"game=monopoly", "talk_rounds=1"}},
	{kvs: []string{"game=draco", "talk_rounds=2", "talk_opener=1"}, seats: []games.Seat{1}, moves: []*agentv1.Action{say("hi")}},
	{kvs: []string{"game=hot_cold", "neutral_labels=true"}, seats: []games.Seat{0}, moves: []*agentv1.Action{choose("choice_2")}},
}

// FuzzApply feeds arbitrary bytes, read as an Action, to Apply at one of fuzzStages as one of
// the seats (or one that does not exist): no panic, a *games.Rejection or success, nothing
// changed by a refusal, and a leaf's payoffs at the end.
func FuzzApply(f *testing.F) {
	for i, a := range []*agentv1.Action{say("x"), pass("y"), choose("a1"), choose("b2"), choose("choice_1"), {}} {
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
		st, err := sequential.New().NewState(params(t, stage.kvs...), 1)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range stage.moves {
			if _, err := st.Apply(stage.seats[i], a); err != nil {
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
		if len(st.ToMove()) == 0 && len(st.Outcome().GetPayoffs()) != 2 {
			t.Fatalf("outcome %v", st.Outcome())
		}
	})
}

func say(text string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, Messages: []*gamev1.Message{{Text: text}}}
}

func pass(text string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}, Messages: []*gamev1.Message{{Text: text}}}
}

func choose(id string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: id}}}}
}
