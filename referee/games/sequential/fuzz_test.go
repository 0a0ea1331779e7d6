package sequential_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/sequential"
)

// FuzzApply runs the shared harness (gametest.Fuzz) at the root, deeper in a tree (of two
// players and of three), in talk and with neutral labels.
func FuzzApply(f *testing.F) {
	stages := []gametest.FuzzStage{
		{},
		{Params: params(f, "game=trigame"), Seats: []games.Seat{0, 1}, Moves: []*agentv1.Action{choose("a2"), choose("b1")}},
		{Params: params(f, "game=monopoly", "talk_rounds=1")},
		{Params: params(f, "game=draco", "talk_rounds=2", "talk_opener=1"), Seats: []games.Seat{1}, Moves: []*agentv1.Action{say("hi")}},
		{Params: params(f, "game=hot_cold", "neutral_labels=true"), Seats: []games.Seat{0}, Moves: []*agentv1.Action{choose("choice_2")}},
		{Params: params(f, "game=trust_chain"), Moves: []*agentv1.Action{choose("invest")}},
	}
	gametest.Fuzz{Game: sequential.New(), Seed: 1, Stages: stages, Corpus: []*agentv1.Action{
		say("x"), pass("y"), choose("a1"), choose("b2"), choose("choice_1"), {},
	}}.Run(f)
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
