package analyzecmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
)

// dataDir is the authors' folders, from this package: the repository root is four levels up.
var dataDir = filepath.Join("..", "..", "..", "..", "data", "deliberation")

// TestDeliberationShippedGames pins the deal-space numbers of the four shipped games under both
// bonus rules.
func TestDeliberationShippedGames(t *testing.T) {
	tests := []struct {
		args []string
		want []string
	}{
		{nil, []string{
			"Deliberation deal space: Harbour sports park (game base), 6 parties, 5 issues",
			"Vote rule: quorum 5 of 6, vetoes SportCo, Department of Tourism; p1 bonus 10 (ge: when every party says yes)",
			"All deals                                           720",
			"Acceptable deals (pass the vote)                    77 / 720            10.7%",
			"Unanimous deals                                     34 / 77 acceptable  44.2%",
			"Pareto front among acceptable deals                 61 / 77 acceptable  79.2%",
			"front over all deals (failing deal = thresholds)  61                  the same deals",
			"Raw-score Pareto front over all deals               481 / 720           66.8%",
			"Mean party score over acceptable deals              min 51.50           mean 59.85  max 69.83",
			"Gini over acceptable deals                          min 0.041           mean 0.135  max 0.256",
			"A1,B3,C1,D2,E3  63       66                     72     50            83                  55                    64.83  0.094  unanimous",
		}},
		{[]string{"--param", "bonus_unanimity=gt"}, []string{"(gt: when every party but p1 is strictly above its threshold)", "Pareto front among acceptable deals                 62 / 77"}},
		{[]string{"--param", "game=game1"}, []string{"57 / 720", "21 / 57 acceptable", "46 / 57 acceptable", "241 / 720", "min 56.33", "mean 67.69", "max 72.50", "min 0.054"}},
		{[]string{"--param", "game=game1", "--param", "bonus_unanimity=gt"}, []string{"47 / 57 acceptable"}},
		{[]string{"--param", "game=game2"}, []string{"66 / 720", "27 / 66 acceptable", "51 / 66 acceptable", "454 / 720", "min 46.50", "mean 57.37", "max 66.33", "max 0.270"}},
		{[]string{"--param", "game=game2", "-p", "bonus_unanimity=gt"}, []string{"50 / 66 acceptable"}},
		{[]string{"--param", "game=game3"}, []string{"89 / 720", "69 / 89 acceptable", "40 / 89 acceptable", "141 / 720", "min 54.17", "mean 70.43", "max 85.67", "min 0.026"}},
		{[]string{"--param", "game=game3", "--param", "bonus_unanimity=gt"}, []string{"34 / 89 acceptable"}},
		{[]string{"--param", "game=" + filepath.Join(dataDir, "game3"), "--param", "bonus_unanimity=gt"}, []string{"34 / 89 acceptable", "141 / 720"}},
	}
	for _, tc := range tests {
		got, err := run(t, append([]string{"deliberation"}, tc.args...)...)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: output lacks %q:\n%s", tc.args, w, got)
			}
		}
	}
}

func TestDeliberationJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "front.json")
	if _, err := run(t, "deliberation", "--param", "game=game3", "--json", path); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Parties []string `json:"parties"`
		Front   []struct {
			Deal    string   `json:"deal"`
			Options []string `json:"options"`
			Scores  []int    `json:"scores"`
			Passed  bool     `json:"passed"`
		} `json:"front"`
		RawFront []json.RawMessage `json:"raw_front"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Parties) != 6 || len(doc.Front) != 40 || len(doc.RawFront) != 141 || len(doc.Front[0].Options) != 5 || len(doc.Front[0].Scores) != 6 || !doc.Front[0].Passed {
		t.Fatalf("json: %d parties, %d front, %d raw; first %+v", len(doc.Parties), len(doc.Front), len(doc.RawFront), doc.Front[0])
	}
}

func TestDeliberationErrors(t *testing.T) {
	broken := t.TempDir()
	for _, f := range []string{"config.txt", "initial_deal.txt"} {
		b, err := os.ReadFile(filepath.Join(dataDir, "base", f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "config.txt" {
			b = []byte(strings.Replace(string(b), "player", "playa", 1))
		}
		if err := os.WriteFile(filepath.Join(broken, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--param", "bonus_unanimity=always"}, `bonus_unanimity="always": want ge or gt`},
		{[]string{"--param", "game=nowhere"}, `game "nowhere" is not one of base, game1, game2, game3`},
		{[]string{"--param", "game=" + broken}, "config.txt:1: role \"playa\" is not one of p1, p2, player, target"},
		{[]string{"--param", "quorum=9"}, "quorum must be from 1 to 6"},
	}
	for _, tc := range tests {
		_, err := run(t, append([]string{"deliberation"}, tc.args...)...)
		var u *cli.UsageError
		if !errors.As(err, &u) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error containing %q", tc.args, err, tc.want)
		}
	}
}
