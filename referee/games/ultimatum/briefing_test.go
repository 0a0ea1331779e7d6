package ultimatum_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestBriefingGolden pins the briefing texts, so that every change of wording shows up in
// review as a diff of testdata/. Run with -update to accept a change.
func TestBriefingGolden(t *testing.T) {
	tests := []struct {
		file   string
		params *matchv1.GameParams
		moves  []*agentv1.Action
		seat   games.Seat
	}{
		{file: "p1_turn1_defaults", seat: 0},
		{file: "p2_turn2_standing_offer", moves: []*agentv1.Action{propose(40)}, seat: 1},
		{file: "p1_waiting", moves: []*agentv1.Action{propose(40)}, seat: 0},
		{file: "p1_turn3_own_offer_declined", moves: []*agentv1.Action{propose(40), propose(70)}, seat: 0},
		{file: "p2_last_turn", moves: []*agentv1.Action{propose(40), propose(70), propose(45), propose(60), propose(50), propose(55), propose(52)}, seat: 1},
		{file: "p1_over_agreement", moves: []*agentv1.Action{propose(40), accept(0)}, seat: 0},
		{file: "p2_over_rejected", moves: []*agentv1.Action{propose(1), reject()}, seat: 1},
		{file: "p1_single_turn_euros", params: params(10_000_000_000, 1, "Euros"), seat: 0},
		{file: "p1_three_turns_last", params: params(10, 3, ""), moves: []*agentv1.Action{propose(1), propose(9)}, seat: 0},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got := play(t, tc.params, tc.moves...).Observe(tc.seat).GetBriefing()
			path := filepath.Join("testdata", tc.file+".golden")
			if *update {
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

// TestBriefingIsDeterministic guards against map order or other hidden state leaking into
// the text.
func TestBriefingIsDeterministic(t *testing.T) {
	st := play(t, nil, propose(40), propose(70))
	first := st.Observe(0).GetBriefing()
	for range 50 {
		if got := st.Clone().Observe(0).GetBriefing(); got != first {
			t.Fatalf("briefing changed between calls:\n%s\n---\n%s", got, first)
		}
	}
}

// BenchmarkObserve measures the observation of the seat to move mid-match: most of it is
// writing the briefing's per-move lines, which cost a benchmark match (internal/bench) about
// a tenth of a bare round trip's time per move.
func BenchmarkObserve(b *testing.B) {
	st := play(b, nil, propose(40), propose(70))
	b.ReportAllocs()
	for b.Loop() {
		if st.Observe(0).GetBriefing() == "" {
			b.Fatal("no briefing")
		}
	}
}
