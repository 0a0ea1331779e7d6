package games_test

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/referee/games"
)

func TestLatestNotes(t *testing.T) {
	note := strings.Repeat("n", games.MaxTextBytes)
	tests := []struct {
		name     string
		notes    []string
		wantKept int
	}{
		{name: "none", wantKept: 0},
		{name: "a few short ones", notes: []string{"a", "b", "c"}, wantKept: 3},
		// Each longest note takes MaxTextBytes plus its tag and length (4 bytes).
		{name: "many of the longest", notes: repeat(note, 100), wantKept: games.MaxNotesBytes / (games.MaxTextBytes + 4)},
		{name: "short ones after long ones", notes: append(repeat(note, 20), "x", "y"), wantKept: 2 + (games.MaxNotesBytes-2*3)/(games.MaxTextBytes+4)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			kept, omitted := games.LatestNotes(tc.notes)
			if len(kept) != tc.wantKept || int(omitted) != len(tc.notes)-tc.wantKept {
				t.Fatalf("kept %d, omitted %d; want %d and %d", len(kept), omitted, tc.wantKept, len(tc.notes)-tc.wantKept)
			}
			for i, n := range kept {
				if n != tc.notes[len(tc.notes)-len(kept)+i] {
					t.Fatalf("kept note %d is not the latest notes in order", i)
				}
			}
			if size := proto.Size(&agentv1.Observation{Notes: kept}); size > games.MaxNotesBytes {
				t.Errorf("kept notes encode in %d bytes, over %d", size, games.MaxNotesBytes)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestFitObservation(t *testing.T) {
	// Counts of omitted elements that start at 0 grow the observation when they first count
	// something; counts that start above 0 may not.
	for _, omitted := range [][2]int32{{3, 1}, {0, 0}} {
		t.Run(fmt.Sprintf("omitted %d and %d", omitted[0], omitted[1]), func(t *testing.T) { testFitObservation(t, omitted[0], omitted[1]) })
	}
}

func testFitObservation(t *testing.T, historyOmitted, notesOmitted int32) {
	entry := func(turn int32, text string) *agentv1.HistoryEntry {
		return &agentv1.HistoryEntry{Turn: turn, Summary: text}
	}
	kib := strings.Repeat("k", 1024)
	build := func() *agentv1.Observation {
		obs := &agentv1.Observation{Briefing: strings.Repeat("b", 10<<10)}
		for i := range int32(40) {
			obs.History = append(obs.History, entry(i, kib))
		}
		obs.Notes = repeat(kib, 20)
		obs.HistoryOmitted, obs.NotesOmitted = historyOmitted, notesOmitted
		return obs
	}
	// want finds by brute force how many of the latest entries and notes fit the budget, the
	// history going first: the largest h with every note, else the largest n with no history.
	want := func(budget int) (fit bool, h, n int) {
		try := func(h, n int) bool {
			obs := build()
			obs.History, obs.Notes = obs.History[40-h:], obs.Notes[20-n:]
			obs.HistoryOmitted += int32(40 - h)
			obs.NotesOmitted += int32(20 - n)
			return proto.Size(obs) <= budget
		}
		for h := 40; h >= 0; h-- {
			if try(h, 20) {
				return true, h, 20
			}
		}
		for n := 20; n >= 0; n-- {
			if try(0, n) {
				return true, 0, n
			}
		}
		return false, 0, 0
	}
	tests := []struct {
		name   string
		budget int
	}{
		{name: "fits already", budget: 1 << 20},
		{name: "older history goes first", budget: 40 << 10},
		{name: "by the byte", budget: 40<<10 + 1},
		{name: "then older notes", budget: 20 << 10},
		{name: "nothing but the rest", budget: 10<<10 + 12},
		{name: "the rest alone is over", budget: 5 << 10},
	}
	// Budgets at and around the exact size of an observation keeping h entries and n notes.
	for _, hn := range [][2]int{{39, 20}, {20, 20}, {1, 20}, {0, 20}, {0, 19}, {0, 1}, {0, 0}} {
		h, n := hn[0], hn[1]
		obs := build()
		obs.History, obs.Notes = obs.History[40-h:], obs.Notes[20-n:]
		obs.HistoryOmitted += int32(40 - h)
		obs.NotesOmitted += int32(20 - n)
		size := proto.Size(obs)
		for d := -3; d <= 3; d++ {
			tests = append(tests, struct {
				name   string
				budget int
			}{name: fmt.Sprintf("%d entries and %d notes, %+d bytes", h, n, d), budget: size + d})
		}
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantFit, wantHistory, wantNotes := want(tc.budget)
			obs := build()
			last := obs.History[len(obs.History)-1]
			fit := games.FitObservation(obs, tc.budget)
			if fit != wantFit || (fit && (len(obs.History) != wantHistory || len(obs.Notes) != wantNotes)) {
				t.Fatalf("fit %v with %d entries and %d notes; want %v, %d and %d", fit, len(obs.History), len(obs.Notes), wantFit, wantHistory, wantNotes)
			}
			if !fit {
				return
			}
			if proto.Size(obs) > tc.budget {
				t.Errorf("size %d over the budget %d", proto.Size(obs), tc.budget)
			}
			if obs.HistoryOmitted != historyOmitted+int32(40-wantHistory) || obs.NotesOmitted != notesOmitted+int32(20-wantNotes) {
				t.Errorf("omitted %d entries and %d notes, want %d and %d", obs.HistoryOmitted, obs.NotesOmitted, historyOmitted+int32(40-wantHistory), notesOmitted+int32(20-wantNotes))
			}
			if len(obs.History) > 0 && obs.History[len(obs.History)-1] != last {
				t.Error("the newest entry was left out")
			}
		})
	}
}
