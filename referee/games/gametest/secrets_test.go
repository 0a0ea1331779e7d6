package gametest_test

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/referee/games/gametest"
	"google.golang.org/protobuf/proto"
)

// envSecretsMutant names the mutant TestSecretsMutantChild runs the suite on.
const envSecretsMutant = "GAMETEST_SECRETS_MUTANT"

// TestSecretsCatchLeaks proves Suite.Secrets can fail: a buyer/seller game that leaks one
// side's private value to the other, at once or only late in a match, fails the suite, and so
// does a secret declared in a form its owner never sees. The unbroken game passes.
func TestSecretsCatchLeaks(t *testing.T) {
	tests := []struct {
		mutant string
		want   string // in the child's output; "" means the child must pass
	}{
		{"none", ""},
		{"leaks-cost", `leaks secret "4321" of seat 0`},
		{"leaks-willingness-at-the-end", `leaks secret "8765" of seat 1`},
		{"leaks-in-the-view", `leaks secret "4321" of seat 0`},
		{"misdeclared", `secret "4,321" of seat 0 never appears in its own first observation`},
	}
	for _, tc := range tests {
		t.Run(tc.mutant, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSecretsMutantChild$", "-test.short", "-test.v")
			cmd.Env = append(os.Environ(), envSecretsMutant+"="+tc.mutant)
			out, err := cmd.CombinedOutput()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("the suite fails on an unbroken game: %v\n%s", err, tail(out))
			case tc.want == "":
				if !strings.Contains(string(out), "--- PASS: TestSecretsMutantChild") {
					t.Fatalf("the child did not run:\n%s", tail(out))
				}
			case err == nil:
				t.Fatalf("the suite passes a game that is broken (%s)", tc.mutant)
			case !strings.Contains(string(out), tc.want):
				t.Fatalf("the suite fails, but not with %q:\n%s", tc.want, tail(out))
			}
		})
	}
}

// TestSecretsMutantChild runs the suite with secrets on the mutant named in the environment;
// it is the child of TestSecretsCatchLeaks and does nothing on its own.
func TestSecretsMutantChild(t *testing.T) {
	name := os.Getenv(envSecretsMutant)
	if name == "" {
		t.Skip("run by TestSecretsCatchLeaks")
	}
	secrets := func(p *matchv1.GameParams, seed uint64) [][]string {
		cost, willingness, err := buysell.Values(p, seed)
		if err != nil {
			t.Fatal(err)
		}
		if name == "misdeclared" {
			return [][]string{{"4,321"}, {fmt.Sprint(willingness)}}
		}
		return [][]string{{fmt.Sprint(cost)}, {fmt.Sprint(willingness)}}
	}
	p := &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{
		Cost: proto.Int64(4321), Willingness: proto.Int64(8765), Budget: proto.Int64(1000),
	}}}
	gametest.Suite{Secrets: secrets}.Run(t, &leakyGame{Game: buysell.New(), mut: name}, p)
}

// leakyGame wraps the buyer/seller game and leaks a private value in the way mut names.
type leakyGame struct {
	games.Game
	mut string
}

func (g *leakyGame) NewState(p *matchv1.GameParams, seed uint64) (games.State, error) {
	st, err := g.Game.NewState(p, seed)
	if err != nil {
		return nil, err
	}
	return &leakyState{State: st, mut: g.mut}, nil
}

type leakyState struct {
	games.State
	mut string
}

func (s *leakyState) Observe(seat games.Seat) *agentv1.Observation {
	o := s.State.Observe(seat)
	other := s.State.Observe(1 - seat).GetBuysell().GetPrivateValue()
	switch {
	case s.mut == "leaks-cost" && seat == buysell.Buyer:
		o.Briefing += fmt.Sprintf("(The seller's cost is %d.)\n", other)
	case s.mut == "leaks-willingness-at-the-end" && seat == buysell.Seller && len(s.ToMove()) == 0:
		o.Briefing += fmt.Sprintf("The buyer would have paid up to %d.\n", other)
	case s.mut == "leaks-in-the-view" && seat == buysell.Buyer:
		o.GetBuysell().StandingPrice = proto.Int64(other)
	}
	return o
}

func (s *leakyState) Clone() games.State {
	return &leakyState{State: s.State.Clone(), mut: s.mut}
}
