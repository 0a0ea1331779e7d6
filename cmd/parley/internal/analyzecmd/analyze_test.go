package analyzecmd

import (
	"bytes"
	"context"
	"errors"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/referee/families"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	deps := &cli.Deps{Out: &out, Err: &out, Games: families.New(), Builtins: builtin.Agents{}, Getenv: func(string) string { return "" }}
	cmd := NewCmd(deps)
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestCoalitionDefault(t *testing.T) {
	got, err := run(t, "coalition")
	if err != nil {
		t.Fatal(err)
	}
	const want = `Coalition game: players A, B, C; values in g

Values
  A      0
  B      0
  C      0
  A+B    750
  A+C    750
  B+C    500
  A+B+C  1000

Shapley value (each player's average marginal contribution; sums to 1000 g)
  A  1250/3  416.67
  B  875/3   291.67
  C  875/3   291.67

Core: a single point
    A    B    C
    500  250  250
`
	if got != want {
		t.Errorf("output:\n%s\nwant:\n%s", got, want)
	}
}

func TestCoalitionOther(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{name: "core with two vertices", args: []string{"-p", "players=N,E,S,W", "-p", "values=N+E:60,S+W:40,N+S:50,E+W:50,N+E+S+W:100"},
			want: []string{"N  80/3  26.67", "Core: 2 vertices", "  1  10  50  40  0\n", "  2  50  10  0   40\n"}},
		{name: "empty core", args: []string{"--param", "values=AB:1,AC:1,BC:1,ABC:1"},
			want: []string{"A  1/3  0.33", "Core: empty. No split of A+B+C's 1 g gives every coalition at least its value."}},
		{name: "pairs squeeze the core to one point", args: []string{"-p", "values=AB:2,AC:2,BC:2,ABC:3"},
			want: []string{"Core: a single point", "    1  1  1\n"}},
		{name: "core too large to compute", args: []string{"-p", "players=A,B,C,D,E,F", "-p", "values=ABCDEF:6"},
			want: []string{"F  1  1.00", "Core: not computed", "at most 5 players"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := run(t, append([]string{"coalition"}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("output does not contain %q:\n%s", w, got)
				}
			}
		})
	}
}

func TestAmounts(t *testing.T) {
	got := amounts([]*big.Rat{big.NewRat(1, 3), big.NewRat(2, 1), big.NewRat(-5, 2)})
	if want := []string{"1/3 (0.33)", "2", "-5/2 (-2.50)"}; !slices.Equal(got, want) {
		t.Errorf("amounts = %q, want %q", got, want)
	}
}

func TestCoalitionErrors(t *testing.T) {
	for _, args := range [][]string{
		{"coalition", "-p", "values=AD:3"},
		{"coalition", "-p", "rounds=x"},
		{"coalition", "-p", "nope=1"},
		{"coalition", "-p", "players=X,Y"},
	} {
		_, err := run(t, args...)
		var u *cli.UsageError
		if !errors.As(err, &u) {
			t.Errorf("%v: error %v, want a usage error", args, err)
		}
	}
}

func TestCoalitionFlags(t *testing.T) {
	var got *coalitionOptions
	cmd := newCoalitionCmd(&cli.Deps{}, func(_ context.Context, o *coalitionOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"-p", "rounds=1", "--param", "values=AB:1,AC:2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"rounds=1", "values=AB:1,AC:2"}; !slices.Equal(got.params, want) {
		t.Errorf("params %q, want %q", got.params, want)
	}
}
