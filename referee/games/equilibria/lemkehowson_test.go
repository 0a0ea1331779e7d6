package equilibria_test

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/parley-arena/parley/referee/games/equilibria"
)

// lemkeHowson runs LemkeHowson on (a, b) dropping label and checks its answer against the
// test's own arithmetic: two distributions, neither player gaining by any pure deviation
// (isNash), and the payoffs they give.
func lemkeHowson(t *testing.T, a, b [][]*big.Rat, label int) (x, y []*big.Rat) {
	t.Helper()
	one, err := equilibria.LemkeHowson(bimatrix(t, a, b), label, equilibria.MaxPivotWork)
	if err != nil {
		t.Fatalf("A=%v B=%v, label %d dropped: %v", a, b, label, err)
	}
	x, y = one.RowMix, one.ColMix
	if !isDistribution(x) || !isDistribution(y) {
		t.Fatalf("A=%v B=%v, label %d dropped: (%v, %v) are not distributions", a, b, label, x, y)
	}
	if !isNash(a, b, x, y) {
		t.Fatalf("A=%v B=%v, label %d dropped: (%s; %s) is not an equilibrium", a, b, label, key(x), key(y))
	}
	if one.Payoffs[0].Cmp(payoff(a, x, y)) != 0 || one.Payoffs[1].Cmp(payoff(b, x, y)) != 0 {
		t.Fatalf("label %d dropped: payoffs %v, want %s and %s", label, one.Payoffs, payoff(a, x, y).RatString(), payoff(b, x, y).RatString())
	}
	if one.Dropped != label || one.Pivots < 2 {
		t.Fatalf("label %d dropped: says it dropped %d after %d pivots (a path has at least one pivot in each polytope)", label, one.Dropped, one.Pivots)
	}
	return x, y
}

// Games worked out by hand, every label dropped.
func TestLemkeHowsonKnown(t *testing.T) {
	rat := whole
	mix := func(ps ...*big.Rat) string { return key(ps) }
	for _, c := range []struct {
		name string
		a, b [][]*big.Rat
		// want[label] is "x;y". Battle of the sexes, payoffs shifted to 4 1 / 1 3 and 3 1 / 1 4:
		// dropping row 1 (x_1 enters P) the ratios 1/3 < 1/1 make column 1's slack leave, so
		// y_1 enters Q, where 1/4 < 1 makes row 1's slack leave: label 0 again, (R1, C1).
		// Dropping row 2, x_2's ratios 1/1 and 1/4 give column 2's slack, y_2's 1 and 1/3 row
		// 2's slack: (R2, C2); dropping a column mirrors this. The other two games have one
		// equilibrium, which every path must end at: matching pennies (1/2 each), and A = 2 0
		// / 0 1 against B = 0 1 / 1 0, where y makes the row player indifferent (2 y1 = y2: y =
		// 1/3, 2/3) and x the column player (x2 = x1).
		want []string
	}{
		{"battle of the sexes", rat([]int64{3, 0}, []int64{0, 2}), rat([]int64{2, 0}, []int64{0, 3}),
			[]string{"1,0;1,0", "0,1;0,1", "1,0;1,0", "0,1;0,1"}},
		{"matching pennies", rat([]int64{1, -1}, []int64{-1, 1}), rat([]int64{-1, 1}, []int64{1, -1}),
			[]string{"1/2,1/2;1/2,1/2", "1/2,1/2;1/2,1/2", "1/2,1/2;1/2,1/2", "1/2,1/2;1/2,1/2"}},
		{"one mixed equilibrium", rat([]int64{2, 0}, []int64{0, 1}), rat([]int64{0, 1}, []int64{1, 0}),
			[]string{mix(r(1, 2), r(1, 2)) + ";" + mix(r(1, 3), r(2, 3)), "1/2,1/2;1/3,2/3", "1/2,1/2;1/3,2/3", "1/2,1/2;1/3,2/3"}},
	} {
		for label, want := range c.want {
			x, y := lemkeHowson(t, c.a, c.b, label)
			if got := key(x) + ";" + key(y); got != want {
				t.Errorf("%s, label %d dropped: %s, want %s", c.name, label, got, want)
			}
		}
	}
}

// In small random games, generic and degenerate, every path ends at an extreme equilibrium
// the brute-force oracle finds (every choice of tight constraints, no pivoting).
func TestLemkeHowsonSmallAgainstOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 1))
	for n := range iterations() / 2 {
		rows, cols := 1+rng.IntN(4), 1+rng.IntN(4)
		span := []int{3, 1000}[n%2]
		a, b := randomBimatrix(rng, rows, cols, span)
		extreme := oracleExtreme(a, b)
		for label := range rows + cols {
			x, y := lemkeHowson(t, a, b, label)
			if !extreme[key(x)+";"+key(y)] {
				t.Fatalf("A=%v B=%v, label %d dropped: (%s; %s) is not among the extreme equilibria %v", a, b, label, key(x), key(y), extreme)
			}
		}
	}
}

// Games too large to enumerate: the answer is an equilibrium all the same.
func TestLemkeHowsonLarge(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 2))
	for _, c := range []struct{ rows, cols, span int }{{15, 15, 1000}, {20, 13, 1000}, {24, 24, 3}, {40, 40, 1000}} {
		t.Run(fmt.Sprintf("%dx%d/span%d", c.rows, c.cols, c.span), func(t *testing.T) {
			a, b := randomBimatrix(rng, c.rows, c.cols, c.span)
			lemkeHowson(t, a, b, 0)
			lemkeHowson(t, a, b, c.rows+c.cols-1)
		})
	}
}

func TestLemkeHowsonRefuses(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 3))
	a, b := randomBimatrix(rng, 6, 6, 1000)
	m := bimatrix(t, a, b)
	for _, label := range []int{-1, 12} {
		if _, err := equilibria.LemkeHowson(m, label, equilibria.MaxPivotWork); err == nil {
			t.Errorf("label %d of a 6 x 6 game was accepted", label)
		}
	}
	if _, err := equilibria.LemkeHowson(m, 0, 10); !errors.Is(err, equilibria.ErrTooLarge) {
		t.Errorf("a path over a budget of 10 tableau updates: %v, want ErrTooLarge", err)
	}
	three, err := equilibria.NewGame([]int{1, 1, 1}, []equilibria.Payoffs{{r(1, 1), r(1, 1), r(1, 1)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := equilibria.LemkeHowson(three, 0, equilibria.MaxPivotWork); err == nil {
		t.Error("a three-player game was accepted")
	}
}
