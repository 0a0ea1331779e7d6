package analyzecmd

import (
	"bytes"
	"io/fs"
	"strings"
	"testing"

	"github.com/parley-arena/parley/referee/games/equilibria"
)

// analyze runs `analyze equilibria` on games given in memory or shipped.
func analyze(t *testing.T, files map[string]string, compare bool, games ...string) string {
	t.Helper()
	return analyzeMixed(t, files, compare, mixedOptions{pivotWork: equilibria.MaxPivotWork}, games...)
}

// analyzeMixed is analyze with the mixed equilibria computed as mixed says.
func analyzeMixed(t *testing.T, files map[string]string, compare bool, mixed mixedOptions, games ...string) string {
	t.Helper()
	var out bytes.Buffer
	o := &equilibriaOptions{games: games, compare: compare, mixed: mixed, readFile: func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}}
	if err := runEquilibria(&out, o); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func wantLines(t *testing.T, out string, lines ...string) {
	t.Helper()
	for _, line := range lines {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
}

// TestEquilibriaContinuum: the 2x2 game of the issue has a continuum of completely mixed
// equilibria. Worked out by hand: Bob gets Alice's probability of r1 from either column, so he
// is always indifferent; Alice is indifferent exactly when Bob plays c1 with 1/3 (2 y2 = 2 y1
// + y2). So Alice plays r1 against y1 <= 1/3, r2 against y1 >= 1/3, anything against 1/3:
// three segments, among them Alice (1/2, 1/2) against Bob (1/3, 2/3).
func TestEquilibriaContinuum(t *testing.T) {
	out := analyze(t, map[string]string{"g.yaml": "rows: [r1, r2]\ncols: [c1, c2]\npayoffs:\n  - [[0, 1], [2, 1]]\n  - [[2, 0], [1, 0]]\n"}, false, "g.yaml")
	wantLines(t, out,
		"y3 = c1 1/3, c2 2/3",
		"Maximal Nash subsets: 3",
		"  Alice {x1, x2} against Bob {y3}",
		"Completely mixed equilibria (every action played): yes",
	)
	if strings.Contains(out, "may miss") || strings.Contains(out, "no completely mixed") {
		t.Errorf("output hedges:\n%s", out)
	}
}

// TestEquilibriaCompareLabels: games with different action names are matched by position, and
// said to be; each game's equilibria are named in its own labels. The same game with its
// actions listed in another order is matched by name.
func TestEquilibriaCompareLabels(t *testing.T) {
	out := analyze(t, nil, true, "stag_hunt", "battle_of_the_sexes")
	wantLines(t, out, "Compare (actions matched by position, as their names differ: Alice stag = opera, hare = football; Bob stag = opera, hare = football): the same pure-equilibrium set under this matching: stag_hunt has {(stag, stag), (hare, hare)}, battle_of_the_sexes has {(opera, opera), (football, football)}.")
	swapped := "rows: [hare, stag]\ncols: [hare, stag]\npayoffs:\n  - [[1, 1], [1, 0]]\n  - [[0, 1], [3, 3]]\n"
	out = analyze(t, map[string]string{"swapped.yaml": swapped}, true, "stag_hunt", "swapped.yaml")
	wantLines(t, out, "Compare (actions matched by name): the same pure-equilibrium set: stag_hunt has {(stag, stag), (hare, hare)}, swapped.yaml has {(hare, hare), (stag, stag)}.")
	// By position defect is hare, so (defect, defect) is (hare, hare): only (stag, stag) differs.
	out = analyze(t, nil, true, "prisoners_dilemma", "stag_hunt")
	wantLines(t, out, "different pure-equilibrium sets: prisoners_dilemma has {(defect, defect)}, stag_hunt has {(stag, stag), (hare, hare)}; only stag_hunt has {(stag, stag)}.")
}

// TestEquilibriaThreePlayers: a three-player matrix game says plainly that its mixed
// equilibria are not computed; a three-player tree lists its subgame-perfect and Nash outcomes
// (worked out in the shipped game's test).
func TestEquilibriaThreePlayers(t *testing.T) {
	out := analyze(t, nil, false, "volunteer_dilemma", "trust_chain")
	wantLines(t, out,
		"matrix game of 3 players, 2 x 2 x 2 actions; players Ann, Ben, Cat",
		"  (wait, wait, volunteer) paying (2, 2, 1): Pareto-optimal",
		"Mixed equilibria: not computed: in games of 3 players",
		"game tree, 7 nodes; players Ann, Ben, Cat",
		"  Ann invest, Ben forward, Cat share -> (2, 2, 2) (subgame-perfect)",
	)
}

// TestEquilibriaAll: every shipped game is analyzed, none with a hedge.
func TestEquilibriaAll(t *testing.T) {
	var out bytes.Buffer
	notFile := func(string) ([]byte, error) { return nil, fs.ErrNotExist }
	if err := runEquilibria(&out, &equilibriaOptions{all: true, mixed: mixedOptions{pivotWork: equilibria.MaxPivotWork}, readFile: notFile}); err != nil {
		t.Fatal(err)
	}
	for _, hedge := range []string{"may miss", "not computed (", "no completely mixed"} {
		if strings.Contains(out.String(), hedge) {
			t.Errorf("output has %q:\n%s", hedge, out.String())
		}
	}
}

// TestEquilibriaOne: --one prints the equilibrium Lemke–Howson finds. The game has one
// equilibrium, worked out by hand: Bob's mix makes Alice indifferent when 2 y1 = y2 (y = 1/3,
// 2/3), Alice's makes Bob indifferent when x2 = x1; no cell is an equilibrium (each has a
// player who gains by switching).
func TestEquilibriaOne(t *testing.T) {
	game := map[string]string{"g.yaml": "rows: [r1, r2]\ncols: [c1, c2]\npayoffs:\n  - [[2, 0], [0, 1]]\n  - [[0, 1], [1, 0]]\n"}
	out := analyzeMixed(t, game, false, mixedOptions{pivotWork: equilibria.MaxPivotWork, one: true}, "g.yaml")
	wantLines(t, out, "One equilibrium (Lemke–Howson, exact: the path from dropping Alice's r1, ",
		"Alice: r1 1/2, r2 1/2; Bob: c1 1/3, c2 2/3; expected payoffs (2/3, 1/2)")
	if strings.Contains(out, "Extreme equilibria") {
		t.Errorf("--one listed every equilibrium:\n%s", out)
	}
}

// TestEquilibriaPivotWork: a game over the bound is refused with what raises it, and the same
// game within a larger one is solved.
func TestEquilibriaPivotWork(t *testing.T) {
	out := analyzeMixed(t, nil, false, mixedOptions{pivotWork: 10}, "rock_paper_scissors")
	wantLines(t, out, "Mixed equilibria: not computed (", "more than 10 steps", "a --pivot-work above 10 lets it go further, --one finds one equilibrium by Lemke–Howson")
	out = analyzeMixed(t, nil, false, mixedOptions{pivotWork: 10, one: true}, "rock_paper_scissors")
	wantLines(t, out, "One equilibrium (Lemke–Howson): not found (", "a --pivot-work above 10 lets the path go further")
	out = analyzeMixed(t, nil, false, mixedOptions{pivotWork: 1000}, "rock_paper_scissors")
	wantLines(t, out, "Extreme equilibria (all of them, exact): 1")
}
