package gametest

import (
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Resolve returns params resolved by g, failing t when g refuses them: the parameters a test
// hands the runner or NewState itself, which take them resolved (launch.Preparer resolves them
// once for every match played through it).
func Resolve(t testing.TB, g games.Game, params *matchv1.GameParams) *matchv1.GameParams {
	t.Helper()
	resolved, err := g.Resolve(params)
	if err != nil {
		t.Fatalf("%s: resolve %v: %v", g.Info().GetName(), params, err)
	}
	return resolved
}
