package gametest_test

import (
	"os"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"google.golang.org/protobuf/proto"
)

// envFuzzMutant names the mutant TestFuzzMutantChild runs the harness on.
const envFuzzMutant = "GAMETEST_FUZZ_MUTANT"

// TestFuzzCatchesBrokenGames proves the shared fuzz harness's checks can fail: on inputs that
// reach the bugs, it fails a game whose refusal changes the state, that refuses with a plain
// error, that panics, or that ends with a payoff missing, and passes the unbroken game.
func TestFuzzCatchesBrokenGames(t *testing.T) {
	checkMutants(t, "TestFuzzMutantChild", envFuzzMutant, []mutant{
		{"none", ""},
		{"refusal-changes-state", "changed seat 0's observation"},
		{"plain-error", "want *games.Rejection"},
		{"panics-in-observe", "no state to observe"},
		{"wrong-payoff-count", "the match is over with payoffs"},
	})
}

// TestFuzzMutantChild runs the harness on the mutant named in the environment, with an empty
// action at the start (refused) and an acceptance that ends the match; it is the child of
// TestFuzzCatchesBrokenGames and does nothing on its own.
func TestFuzzMutantChild(t *testing.T) {
	name := os.Getenv(envFuzzMutant)
	if name == "" {
		t.Skip("run by TestFuzzCatchesBrokenGames")
	}
	offer := &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"Dollars": 40}}}}},
	}}}}}
	accept := &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{ProposalTurn: 1}}}}
	fz := gametest.Fuzz{
		Game:   &mutantGame{Game: ultimatum.New(), mut: name},
		Stages: []gametest.FuzzStage{{}, {Moves: []*agentv1.Action{offer}}},
	}
	// Choice 0: stage 0, the seat to move; choice 1: stage 1, the seat to move.
	for choice, a := range []*agentv1.Action{{}, accept} {
		b, err := proto.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		fz.Input(t, uint8(choice), b)
	}
}
