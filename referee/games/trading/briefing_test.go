package trading_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestBriefingGolden pins the briefing texts, so that every change of wording shows up in
// review as a diff of testdata/. Run with -update to accept a change.
func TestBriefingGolden(t *testing.T) {
	more := params(&tradingv1.Params{P2Holdings: bundle{"X": 5, "Y": 25, "Z": 10, "W": 7}})
	tests := []struct {
		file   string
		params *matchv1.GameParams
		moves  []*agentv1.Action
		seat   games.Seat
	}{
		{file: "p1_turn1_defaults", seat: 0},
		{file: "p2_turn2_standing_goal", params: goals15(), moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10})}, seat: 1},
		{file: "p1_waiting_goal", params: goals15(), moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10})}, seat: 0},
		{file: "p1_turn3_after_pass", moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 12}), pass()}, seat: 0},
		{file: "p2_turn4_declined_more_resources", params: more, moves: []*agentv1.Action{trade(bundle{"X": 4}, bundle{"Z": 2}), trade(bundle{"X": 6}, bundle{"W": 1}), trade(bundle{"X": 5}, bundle{"W": 2})}, seat: 1},
		{file: "p1_limit_reached", moves: []*agentv1.Action{trade(bundle{"X": 1}, nil), pass(), trade(bundle{"X": 2}, nil), pass(), trade(bundle{"X": 3}, nil), trade(nil, bundle{"Y": 3})}, seat: 0},
		{file: "p2_last_turn", params: params(&tradingv1.Params{MaxTurns: proto32(2)}), moves: []*agentv1.Action{trade(bundle{"X": 3}, bundle{"Y": 2})}, seat: 1},
		{file: "p1_over_agreement_goal", params: goals15(), moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10}), accept(0)}, seat: 0},
		{file: "p2_over_turn_limit", params: params(&tradingv1.Params{MaxTurns: proto32(2)}), moves: []*agentv1.Action{pass(), pass()}, seat: 1},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got := play(t, tc.params, tc.moves...).Observe(tc.seat).GetBriefing()
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

func proto32(n int32) *int32 { return &n }
