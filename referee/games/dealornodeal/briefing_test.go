package dealornodeal_test

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
		moves []*agentv1.Action
		seat  games.Seat
	}{
		{file: "alice_turn1", seat: 0},
		{file: "bob_waiting", seat: 1},
		{file: "alice_standing", moves: []*agentv1.Action{propose(1, 2, 1), propose(0, 2, 2)}, seat: 0},
		{file: "bob_over", moves: []*agentv1.Action{propose(0, 2, 2), accept()}, seat: 1},
		{file: "alice_last_turn", kvs: []string{"max_turns=3"}, moves: []*agentv1.Action{propose(1, 2, 2), pass()}, seat: 0},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			st := newState(t, tc.kvs...)
			for i, a := range tc.moves {
				if _, err := st.Apply(games.Seat(i%2), a); err != nil {
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
