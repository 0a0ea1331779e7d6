package matrix_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/referee/games"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestBriefingGolden pins the briefing texts; run with -update to accept a change.
func TestBriefingGolden(t *testing.T) {
	tests := []struct {
		file  string
		kvs   []string
		seats []games.Seat
		moves []*agentv1.Action
		seat  games.Seat
	}{
		{file: "pd_row_choice", seat: 0},
		{file: "stag_column_talk", kvs: []string{"game=stag_hunt", "talk_rounds=2"}, seats: []games.Seat{0}, moves: []*agentv1.Action{say("stag?")}, seat: 1},
		{file: "bos_neutral_chosen", kvs: []string{"game=battle_of_the_sexes", "neutral_labels=true"}, seats: []games.Seat{1}, moves: []*agentv1.Action{choose("choice_2")}, seat: 1},
		{file: "golden_balls_round2", kvs: []string{"game=golden_balls", "scale=1000", "rounds=2"}, seats: []games.Seat{0, 1}, moves: []*agentv1.Action{choose("split"), choose("steal")}, seat: 0},
		{file: "rps_hidden_over", kvs: []string{"game=rock_paper_scissors", "rounds=2", "show_history=false"}, seats: []games.Seat{0, 1, 1, 0},
			moves: []*agentv1.Action{choose("rock"), choose("paper"), choose("rock"), choose("scissors")}, seat: 1},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			st := newState(t, tc.kvs...)
			for i, a := range tc.moves {
				apply(t, st, tc.seats[i], a)
			}
			golden(t, tc.file, st.Observe(tc.seat).GetBriefing())
		})
	}
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	path := filepath.Join("testdata", file+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("briefing differs from %s (run go test -update to accept):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}
