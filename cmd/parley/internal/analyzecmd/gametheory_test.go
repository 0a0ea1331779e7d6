package analyzecmd

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games/equilibria"
)

// TestEquilibriaFlags checks argument handling through runF.
func TestEquilibriaFlags(t *testing.T) {
	cases := []struct {
		args    []string
		games   []string
		compare bool
		bad     bool
	}{
		{args: []string{"stag_hunt"}, games: []string{"stag_hunt"}},
		{args: []string{"a.yaml", "b.yaml", "--compare"}, games: []string{"a.yaml", "b.yaml"}, compare: true},
		{args: []string{"--all"}},
		{args: []string{"a", "b"}, bad: true},
		{args: []string{"a", "--compare"}, bad: true},
		{args: []string{"a", "--all"}, bad: true},
		{args: nil, bad: true},
	}
	for _, tc := range cases {
		var got *equilibriaOptions
		deps := &cli.Deps{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Games: families.New(), Builtins: builtin.Agents{}}
		cmd := newEquilibriaCmd(deps, func(_ context.Context, o *equilibriaOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		switch {
		case tc.bad && err == nil:
			t.Errorf("%v: accepted", tc.args)
		case !tc.bad && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case !tc.bad && (strings.Join(got.games, ",") != strings.Join(tc.games, ",") || got.compare != tc.compare):
			t.Errorf("%v: options %+v", tc.args, got)
		}
	}
}

// TestEquilibriaFile analyzes a game file given in memory, compared with a shipped game.
func TestEquilibriaFile(t *testing.T) {
	files := map[string]string{"pd.yaml": "rows: [c, d]\ncols: [c, d]\npayoffs:\n  - [[30, 30], [0, 50]]\n  - [[50, 0], [10, 10]]\n"}
	var out bytes.Buffer
	o := &equilibriaOptions{games: []string{"pd.yaml", "prisoners_dilemma"}, compare: true, mixed: mixedOptions{pivotWork: equilibria.MaxPivotWork}, readFile: func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}}
	if err := runEquilibria(&out, o); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"pd.yaml: matrix game, 2 x 2; rows Alice, columns Bob",
		"  (d, d) paying (10, 10): not Pareto-optimal, dominated by (c, c)",
		"Compare (actions matched by position, as their names differ: Alice c = cooperate, d = defect; Bob c = cooperate, d = defect): the same pure-equilibrium set under this matching: pd.yaml has {(d, d)}, prisoners_dilemma has {(defect, defect)}.",
	} {
		if !strings.Contains(out.String(), line) {
			t.Errorf("output lacks %q:\n%s", line, out.String())
		}
	}
	o.games = []string{"missing.yaml"}
	o.compare = false
	var usage *cli.UsageError
	if err := runEquilibria(&out, o); !errors.As(err, &usage) {
		t.Errorf("a missing game: %v, want a usage error", err)
	}
}

// TestDondFlags checks the flags of `analyze dond` through runF.
func TestDondFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		bad  bool
	}{
		{args: []string{"--data", "x.txt", "--hardest", "50", "--require-ef", "--play", "builtin:bayes,builtin:dondgreedy"}},
		{args: []string{"--hardest", "5"}, bad: true},
		{args: []string{"--data", "x.txt", "--play", "builtin:bayes"}, bad: true},
		{args: []string{"--data", "x.txt", "--hardest", "-1"}, bad: true},
	} {
		var got *dondOptions
		deps := &cli.Deps{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}, Games: families.New(), Builtins: builtin.Agents{}}
		cmd := newDondCmd(deps, func(_ context.Context, o *dondOptions) error { got = o; return nil })
		cmd.SetArgs(tc.args)
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		err := cmd.Execute()
		if (err != nil) != tc.bad {
			t.Errorf("%v: %v", tc.args, err)
		}
		if !tc.bad && (got.data != "x.txt" || got.hardest != 50 || !got.requireEF || len(got.play) != 1) {
			t.Errorf("%v: %+v", tc.args, got)
		}
	}
}
