package matrix_test

import (
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/matrix"
)

// TestConformance runs the shared suite over shipped games and the parameters that change
// the flow: talk (either opener), neutral labels, repeated play with and without history,
// a 6x6 and a 3x3 table, a fractional scale, and three players (talk opened by the last
// seat, repeated play with and without history).
func TestConformance(t *testing.T) {
	gametest.Run(t, matrix.New(),
		nil,
		params(t, "game=stag_hunt", "talk_rounds=2"),
		params(t, "game=battle_of_the_sexes", "talk_rounds=2", "talk_opener=1", "neutral_labels=true"),
		params(t, "game=duopoly", "rounds=2"),
		params(t, "game=rock_paper_scissors", "rounds=2", "show_history=false", "talk_rounds=1"),
		params(t, "game=golden_balls", "scale=27.5"),
		params(t, "game=volunteer_dilemma", "talk_rounds=2", "talk_opener=2", "rounds=2"),
		params(t, "game=volunteer_dilemma", "rounds=3", "show_history=false", "neutral_labels=true"),
	)
}

func params(t testing.TB, kvs ...string) *matchv1.GameParams {
	t.Helper()
	gp, err := games.ParseParams(matrix.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	return gp
}
