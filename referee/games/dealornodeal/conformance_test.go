package dealornodeal_test

import (
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/gametest"
)

// TestConformance runs the shared suite, which also varies each seat's values (private, as
// dealornodeal.proto declares them) and checks that the other seat's observation never changes.
func TestConformance(t *testing.T) {
	gametest.Run(t, dealornodeal.New(),
		nil,
		params(t, "counts=1,4,1", "alice_values=4,1,2", "bob_values=2,1,4", "max_turns=6"),
		params(t, "items=apple,pear", "counts=3,2", "alice_values=2,2", "bob_values=0,5", "max_turns=9"),
		params(t, "counts=1,1", "items=gem,coin", "alice_values=777,0", "bob_values=0,777", "max_turns=8"),
		params(t, "counts=2,1,1", "alice_values=0,6,4", "bob_values=3,2,2"), // Alice's first value at its least
	)
}

func params(t testing.TB, kvs ...string) *matchv1.GameParams {
	t.Helper()
	gp, err := games.ParseParams(dealornodeal.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	return gp
}
