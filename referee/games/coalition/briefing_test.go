package coalition_test

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestBriefingGolden pins the briefing texts, so that every change of wording shows up in
// review as a diff of testdata/. Run with -update to accept a change.
func TestBriefingGolden(t *testing.T) {
	// Phase 1 of the default game, seed 1: A writes to B (with an offer) and C; B and C reply.
	round1 := []step{
		{0, say(offer(msg("Let us split A+B: 450 for me, 300 for you.", 1), g(0, 450), g(1, 300)), msg("Hello C, what would you want?", 2))},
		{1, say(offer(msg("I want 375.", 0), g(0, 375), g(1, 375)))},
		{2, say(msg("250 with the three of us.", 0))},
	}
	quiet := func(seat games.Seat, to int32) step { return step{seat, say(msg("ok", to))} }
	round2 := []step{{1, say(msg("to A", 0), msg("to C", 2))}, quiet(0, 1), quiet(2, 1)}
	round3 := []step{{2, say(msg("to A", 0), msg("to B", 1))}, quiet(0, 2), quiet(1, 2)}
	talk := append(append(append([]step{}, round1...), round2...), round3...)
	// Seed 1's draws start C, B, ...: see TestProposerDraws.
	proposal := append(append([]step{}, talk...), step{2, propose(g(0, 500), g(2, 250))})
	rejected := append(append([]step{}, proposal...), step{0, reject()})
	agreed := append(append([]step{}, proposal...), step{0, accept(0)})

	tests := []struct {
		file   string
		params *matchv1.GameParams
		seed   uint64
		steps  []step
		seat   games.Seat
	}{
		{file: "a_round1_active", seat: 0},
		{file: "b_round1_waiting", seat: 1},
		{file: "b_round1_reply", steps: round1[:1], seat: 1},
		{file: "c_round1_reply_after_b", steps: round1[:2], seat: 2},
		{file: "b_round1_replied", steps: round1[:2], seat: 1},
		{file: "a_round1_waiting_replies", steps: round1[:2], seat: 0},
		{file: "b_round2_active", steps: round1, seat: 1},
		{file: "a_proposals_waiting", steps: talk, seat: 0},
		{file: "c_proposals_propose", steps: talk, seat: 2},
		{file: "a_vote", steps: proposal, seat: 0},
		{file: "b_not_in_coalition", steps: proposal, seat: 1},
		{file: "c_after_rejection", steps: rejected, seat: 2},
		{file: "b_over_agreement", steps: agreed, seat: 1},
		{file: "four_players_no_talk", params: params(t, "players=N,E,S,West", "values=N+E:60,S+West:40,N+E+S+West:100", "rounds=0", "max_proposals=1", "unit=points"), seat: 3},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			p := tc.params
			if p == nil {
				p = params(t)
			}
			seed := tc.seed
			if seed == 0 {
				seed = 1
			}
			st := newState(t, p, seed)
			play(t, st, tc.steps...)
			got := st.Observe(tc.seat).GetBriefing()
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
	st := newState(t, params(t), 1)
	skipTalk(t, st)
	first := st.Observe(0).GetBriefing()
	for range 50 {
		if got := st.Clone().Observe(0).GetBriefing(); got != first {
			t.Fatalf("briefing changed between calls:\n%s\n---\n%s", got, first)
		}
	}
}
