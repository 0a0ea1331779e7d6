package sequential_test

import (
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/sequential"
)

// TestConformance runs the shared suite over every shipped tree, with talk (either opener),
// neutral labels and a scale, and a tree of three players with talk opened by the last seat.
func TestConformance(t *testing.T) {
	gametest.Run(t, sequential.New(),
		nil,
		params(t, "game=monopoly", "talk_rounds=2"),
		params(t, "game=hot_cold", "talk_rounds=1", "talk_opener=1", "neutral_labels=true"),
		params(t, "game=draco"),
		params(t, "game=trigame", "scale=1/2"),
		params(t, "game=trust_chain", "talk_rounds=2", "talk_opener=2"),
		params(t, "game=trust_chain", "neutral_labels=true"),
	)
}

func params(t testing.TB, kvs ...string) *matchv1.GameParams {
	t.Helper()
	gp, err := games.ParseParams(sequential.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	return gp
}
