package gametest_test

import (
	"os"
	"os/exec"
	"strings"
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
// reach the bugs, it fails a game whose refusal changes the state,
// that refuses with a plain error, that panics, or that ends with a payoff missing, and passes
// the unbroken game.
func TestFuzzCatchesBrokenGames(t *testing.T) {
	tests := []struct {
		mutant string
		want   string // in the child's output; "" means the child must pass
	}{
		{"none", ""},
		{"refusal-changes-state", "changed seat 0's observation"},
		{"plain-error", "want *games.Rejection"},
		{"panics-in-observe", "no state to observe"},
		{"wrong-payoff-count", "the match is over with payoffs"},
	}
	for _, tc := range tests {
		t.Run(tc.mutant, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestFuzzMutantChild$", "-test.v")
			cmd.Env = append(os.Environ(), envFuzzMutant+"="+tc.mutant)
			out, err := cmd.CombinedOutput()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("the harness fails on an unbroken game: %v\n%s", err, tail(out))
			case tc.want == "":
				if !strings.Contains(string(out), "--- PASS: TestFuzzMutantChild") {
					t.Fatalf("the child did not run:\n%s", tail(out))
				}
			case err == nil:
				t.Fatalf("the harness passes a game that is broken (%s)", tc.mutant)
			case !strings.Contains(string(out), tc.want):
				t.Fatalf("the harness fails, but not with %q:\n%s", tc.want, tail(out))
			}
		})
	}
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
