package main

// End-to-end test of `parley import` and `parley reproduce --from-runs` on the published
// NegotiationArena games the repository ships (data/negotiationarena): a fresh clone runs it.

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// arenaSample is the repository's sample of NegotiationArena's published games.
var arenaSample, _ = filepath.Abs("../../data/negotiationarena/sample.tar.gz")

// sampleTrading is what the test reads by itself from the sample's resource-exchange logs, per
// ordered pair "P2 vs P1" of models: games, the second player's gains, its wins and losses.
type sampleTrading struct {
	games, wins, losses int
	gain                float64
}

func readSample(t *testing.T) (files int, trading map[string]*sampleTrading) {
	t.Helper()
	f, err := os.Open(arenaSample)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	trading = map[string]*sampleTrading{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, trading
		}
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(h.Name) != "game_state.json" {
			continue
		}
		files++
		var log struct {
			Class   string `json:"class"`
			Players []struct {
				Model string `json:"model"`
			} `json:"players"`
			GameState []struct {
				Summary struct {
					PlayerOutcome []any `json:"player_outcome"`
				} `json:"summary"`
			} `json:"game_state"`
		}
		if err := json.NewDecoder(tr).Decode(&log); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if log.Class != "TradingGame" {
			continue
		}
		// Each player's change in resources, summed over the resources ({"_value": {...}}).
		gain := func(v any) float64 {
			for {
				m, ok := v.(map[string]any)
				if !ok {
					t.Fatalf("%s: outcome %v", h.Name, v)
				}
				if inner, nested := m["_value"]; nested {
					v = inner
					continue
				}
				sum := 0.0
				for _, x := range m {
					sum += x.(float64)
				}
				return sum
			}
		}
		out := log.GameState[len(log.GameState)-1].Summary.PlayerOutcome
		key := log.Players[1].Model + " vs " + log.Players[0].Model
		if trading[key] == nil {
			trading[key] = &sampleTrading{}
		}
		s := trading[key]
		p1, p2 := gain(out[0]), gain(out[1])
		s.games++
		s.gain += p2
		if p2 > p1 {
			s.wins++
		} else if p2 < p1 {
			s.losses++
		}
	}
}

// TestImportAndReproduceShippedRuns imports the shipped sample twice (the second import stores
// nothing new) and prints Figure 3a's text cells from it, each checked against the test's own
// reading of the logs.
func TestImportAndReproduceShippedRuns(t *testing.T) {
	t.Parallel()
	files, trading := readSample(t)
	store := t.TempDir()
	r := runInProcess(t, nil, "import", "negotiationarena", arenaSample, "--store-dir", store)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("imported %d, already stored 0, void 0, refused 0", files)) {
		t.Fatalf("first import of %d games:\n%s", files, r)
	}
	r = runInProcess(t, nil, "import", "negotiationarena", arenaSample, "--store-dir", store)
	if r.code != 0 || !strings.Contains(r.stdout, fmt.Sprintf("imported 0, already stored %d", files)) {
		t.Fatalf("second import of the same %d games:\n%s", files, r)
	}
	r = runInProcess(t, nil, "reproduce", "negotiationarena", "--from-runs", "na", "--store-dir", store, "--table", "Figure 3a (text)")
	if r.code != 0 {
		t.Fatalf("reproduce --from-runs:\n%s", r)
	}
	rows := map[string][2]string{ // table row -> the pair's key in the logs, and its paper win rate
		"GPT-4 Claude-2.1": {"gpt-4-1106-preview vs claude-2.1", "76"},
		"Claude-2.1 GPT-4": {"claude-2.1 vs gpt-4-1106-preview", "72"},
	}
	for row, want := range rows {
		s := trading[want[0]]
		if s == nil || s.wins+s.losses == 0 {
			t.Fatalf("the sample has no decisive game of %s", want[0])
		}
		var line string
		for _, l := range strings.Split(r.stdout, "\n") {
			if strings.HasPrefix(strings.Join(strings.Fields(l), " "), row+" "+want[1]+" ") {
				line = l
			}
		}
		cells := []string{
			fmt.Sprintf("%.0f ±", 100*float64(s.wins)/float64(s.wins+s.losses)), fmt.Sprintf("(%d)", s.wins+s.losses),
			fmt.Sprintf("%.2f ±", s.gain/float64(s.games)), fmt.Sprintf("(%d)", s.games),
		}
		for _, c := range cells {
			if !strings.Contains(line, c) {
				t.Errorf("row %s: want %q in %q (win rate over decisive games, mean gain of all games)\n%s", row, c, line, r.stdout)
			}
		}
	}
}
