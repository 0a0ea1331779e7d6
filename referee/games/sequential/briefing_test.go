package sequential_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/sequential"
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
		{file: "escalation_start", kvs: []string{"game=escalation"}, seat: 0},
		{file: "monopoly_bob_talk", kvs: []string{"game=monopoly", "talk_rounds=1"}, seats: []games.Seat{0, 1, 0}, moves: []*agentv1.Action{say("I will enter"), pass("then I accommodate"), choose("a2")}, seat: 1},
		{file: "trigame_neutral_over", kvs: []string{"game=trigame", "neutral_labels=true"}, seats: []games.Seat{0, 1, 0}, moves: []*agentv1.Action{choose("choice_2"), choose("choice_1"), choose("choice_2")}, seat: 0},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			gp := params(t, tc.kvs...)
			st, err := games.Start(sequential.New(), gp, 1)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range tc.moves {
				if _, err := st.Apply(tc.seats[i], a); err != nil {
					t.Fatal(err)
				}
			}
			got := st.Observe(tc.seat).GetBriefing()
			path := filepath.Join("testdata", tc.file+".golden")
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
		})
	}
}
