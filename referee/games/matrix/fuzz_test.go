package matrix_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/matrix"
	"google.golang.org/protobuf/proto"
)

// FuzzApply runs the shared harness (gametest.Fuzz) at the start, in talk, with one choice of a
// round made (of two players and of three), with neutral labels and a scale, and after the end;
// on top, no other seat's observation may change when a seat chooses before the others.
func FuzzApply(f *testing.F) {
	stages := []gametest.FuzzStage{
		{},
		{Params: params(f, "talk_rounds=2")},
		{Params: params(f, "talk_rounds=2", "talk_opener=1"), Seats: []games.Seat{1}, Moves: []*agentv1.Action{say("hi")}},
		{Params: params(f, "game=duopoly", "rounds=2"), Seats: []games.Seat{1}, Moves: []*agentv1.Action{choose("q3")}},
		{Params: params(f, "game=golden_balls", "neutral_labels=true", "scale=7/3")},
		{Params: params(f, "rounds=1"), Seats: []games.Seat{0, 1}, Moves: []*agentv1.Action{choose("defect"), choose("defect")}},
		{Params: params(f, "game=volunteer_dilemma"), Seats: []games.Seat{2}, Moves: []*agentv1.Action{choose("volunteer")}},
	}
	gametest.Fuzz{Game: matrix.New(), Seed: 1, Stages: stages, Check: checkChoiceHidden, Corpus: []*agentv1.Action{
		say("x"), pass("y"), choose("cooperate"), choose("choice_2"), choose("q3"), {},
		{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{}}}},
	}}.Run(f)
}

func checkChoiceHidden(t *testing.T, a gametest.Accepted) {
	if len(a.ToMove) < 2 || a.Action.GetMove().GetChoose() == nil || len(a.Action.GetMessages()) > 0 {
		return
	}
	for other := range games.Seat(len(a.Before)) {
		if other != a.Seat && !proto.Equal(a.State.Observe(other), a.Before[other]) {
			t.Fatalf("seat %d's choice showed in seat %d's observation", a.Seat, other)
		}
	}
}
