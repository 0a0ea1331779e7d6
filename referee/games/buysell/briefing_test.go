package buysell_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"google.golang.org/protobuf/proto"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestBriefingGolden pins the briefing texts, so that every change of wording shows up in
// review as a diff of testdata/. Run with -update to accept a change.
func TestBriefingGolden(t *testing.T) {
	six := params(&buysellv1.Params{MaxTurns: proto.Int32(6)})
	tests := []struct {
		file   string
		params *matchv1.GameParams
		moves  []*agentv1.Action
		seat   games.Seat
	}{
		{file: "seller_turn1_defaults", seat: 0},
		{file: "buyer_waiting_defaults", seat: 1},
		{file: "buyer_turn2_standing", moves: []*agentv1.Action{propose(80)}, seat: 1},
		{file: "seller_turn3_declined", moves: []*agentv1.Action{propose(80), propose(35)}, seat: 0},
		{file: "seller_waiting", moves: []*agentv1.Action{propose(80)}, seat: 0},
		{file: "seller_limit_reached", params: six, moves: []*agentv1.Action{propose(90), propose(10), propose(80), propose(20)}, seat: 0},
		{file: "buyer_over_sale", moves: []*agentv1.Action{propose(55), accept(0)}, seat: 1},
		{file: "seller_over_rejected", moves: []*agentv1.Action{propose(80), reject()}, seat: 0},
		{file: "buyer_self_interested_overvaluing", params: params(&buysellv1.Params{Willingness: proto.Int64(400), SelfInterestedBuyer: proto.Bool(true)}), moves: []*agentv1.Action{propose(95)}, seat: 1},
		{file: "seller_scaled_last_turn", params: params(&buysellv1.Params{Scale: proto.Int64(1000), MaxTurns: proto.Int32(3), Item: proto.String("Widget"), Currency: proto.String("Euro")}),
			moves: []*agentv1.Action{proposeAs("Widget", "Euro", 70_000), proposeAs("Widget", "Euro", 50_000)}, seat: 0},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got := play(t, tc.params, 0, tc.moves...).Observe(tc.seat).GetBriefing()
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
