package deliberation_test

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/deliberation"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// TestBriefingGolden pins the briefing texts, so that every change of wording shows up in
// review as a diff of testdata/. Run with -update to accept a change.
func TestBriefingGolden(t *testing.T) {
	const seed = 4
	s := setup(t)
	order := deliberation.Schedule(s, seed)
	// play runs the opening and the first k talk turns; the speaker of talk turn 2 attaches a
	// deal.
	play := func(k int, kvs ...string) games.State {
		st := newState(t, seed, kvs...)
		mustApply(t, st, 0, propose("A1,B1,C4,D1,E5", "Welcome. We propose a park on the water with a full federal loan."))
		for i := range k {
			seat := st.ToMove()[0]
			attached := ""
			if i == 1 {
				attached = "A2,B2,C2,D2,E3"
			}
			mustApply(t, st, seat, say("Message of talk turn "+string(rune('1'+i))+".", attached))
		}
		return st
	}
	lastOf := func(seat int) int {
		for i := len(order) - 1; i >= 0; i-- {
			if order[i] == seat {
				return i
			}
		}
		return -1
	}
	final := play(24)
	tests := []struct {
		file string
		st   games.State
		seat games.Seat
	}{
		{"p1_opening", newState(t, seed), 0},
		{"p2_waiting_opening", newState(t, seed), 1},
		{"speaker_turn1", play(0), games.Seat(order[0])},
		{"waiting_after_deal", play(2), 0},
		{"mayor_last_turn", play(lastOf(2)), 2},
		{"p1_final", final, 0},
		{"union_over", func() games.State {
			st := play(24)
			mustApply(t, st, 0, propose("A2,B3,C3,D2,E3", "This is our final deal."))
			return st
		}(), 4},
		{"solo_p1", play(1, "solo_turns=2"), 0},
		{"game3_france", newState(t, seed, "game=game3"), 4},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			got := tc.st.Observe(tc.seat).GetBriefing()
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
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("briefing differs from %s (run with -update to accept):\n%s", path, got)
			}
		})
	}
}

// TestBriefingHoldsOnlyOwnNumbers: each seat's briefing names its own minimum and none of the
// other parties' score-sheet lines; only p1's mentions the bonus.
func TestBriefingHoldsOnlyOwnNumbers(t *testing.T) {
	st := newState(t, 1)
	resolved, _ := newGame().Resolve(params(t))
	secrets := sheetSecrets(resolved, 0)
	for seat := range games.Seat(6) {
		b := st.Observe(seat).GetBriefing()
		for owner, ss := range secrets {
			for _, sec := range ss {
				if has := strings.Contains(b, sec); has != (owner == int(seat)) {
					t.Errorf("seat %d's briefing: contains %q of seat %d = %v", seat, sec, owner, has)
				}
			}
		}
		if has := strings.Contains(b, "bonus of 10"); has != (seat == 0) {
			t.Errorf("seat %d's briefing mentions the bonus: %v", seat, has)
		}
	}
}

// sheetSecrets declares each party's score-sheet lines, as its briefing writes them, as its
// secrets, and its minimum-score sentence: those no other party shares.
func sheetSecrets(p *matchv1.GameParams, _ uint64) [][]string {
	s, err := deliberation.NewSetup(p)
	if err != nil {
		panic(err)
	}
	lines := make([][]string, s.N())
	count := map[string]int{}
	for seat, party := range s.Parties {
		for i, is := range s.Issues {
			pts := make([]string, len(is.Options))
			for k := range is.Options {
				pts[k] = fmt.Sprintf("%s %d", is.OptionID(k), party.Points[i][k])
			}
			lines[seat] = append(lines[seat], fmt.Sprintf("%s: %s (best", is.Label, strings.Join(pts, ", ")))
		}
		lines[seat] = append(lines[seat], fmt.Sprintf("Your minimum score is %d:", party.Threshold))
		for _, l := range lines[seat] {
			count[l]++
		}
	}
	out := make([][]string, s.N())
	for seat := range lines {
		for _, l := range lines[seat] {
			if count[l] == 1 {
				out[seat] = append(out[seat], l)
			}
		}
	}
	return out
}
