package dealornodeal_test

import (
	"fmt"
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/gametest"
)

// TestConformance runs the shared suite, then once more with each seat's values declared
// secret, written as its briefing words them ("a gem is worth 777"): a value no play produces
// by chance must never reach the other seat.
func TestConformance(t *testing.T) {
	gametest.Run(t, dealornodeal.New(),
		nil,
		params(t, "counts=1,4,1", "alice_values=4,1,2", "bob_values=2,1,4", "max_turns=6"),
		params(t, "items=apple,pear", "counts=3,2", "alice_values=2,2", "bob_values=0,5", "max_turns=9"),
	)
	secret := gametest.Suite{Secrets: func(p *matchv1.GameParams, _ uint64) [][]string {
		v := p.GetDealornodeal()
		return [][]string{{fmt.Sprintf("gem is worth %d", v.GetAliceValues()[0])}, {fmt.Sprintf("coin is worth %d", v.GetBobValues()[1])}}
	}}
	secret.Run(t, dealornodeal.New(), params(t, "counts=1,1", "items=gem,coin", "alice_values=777,0", "bob_values=0,777", "max_turns=8"))
}

func params(t testing.TB, kvs ...string) *matchv1.GameParams {
	t.Helper()
	gp, err := games.ParseParams(dealornodeal.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	return gp
}
