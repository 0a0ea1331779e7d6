package match_test

import (
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// TestBriefingNamesEveryAgent checks each seat's briefing says which agent sits in every seat,
// marking the reader's own, as the coalition seed made the models common knowledge.
func TestBriefingNamesEveryAgent(t *testing.T) {
	var logs [2]obsLog
	a := sdktest.Client(t, logged(&logs[0], patient(40)), sdk.WithInfo(&gamev1.AgentInfo{Name: "alpha-bot", Version: "3", Author: "team-a"}))
	b := sdktest.Client(t, logged(&logs[1], accepter(30)), sdk.WithInfo(&gamev1.AgentInfo{Name: "beta-bot"}))
	run(t, ultimatumSpec("who-plays", a, b))
	want := [2][]string{
		{"- P1 (you): alpha-bot version 3 by team-a", "- P2: beta-bot"},
		{"- P1: alpha-bot version 3 by team-a", "- P2 (you): beta-bot"},
	}
	for seat := range logs {
		seen := logs[seat].all()
		if len(seen) == 0 {
			t.Fatalf("seat %d was never asked", seat)
		}
		for _, obs := range seen {
			for _, line := range want[seat] {
				if !strings.Contains(obs.GetBriefing(), line+"\n") {
					t.Fatalf("seat %d turn %d: briefing lacks %q:\n%s", seat, obs.GetTurn(), line, obs.GetBriefing())
				}
			}
		}
	}
}
