package equilibria_test

import (
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/parley-arena/parley/referee/games/equilibria"
)

// r is a rational from a fraction.
func r(num, den int64) *big.Rat { return big.NewRat(num, den) }

// mat builds a two-player matrix from whole-number payoffs [row][col] = {row's, column's}.
func mat(t testing.TB, pay [][][2]int64) *equilibria.Matrix {
	t.Helper()
	rows := make([][]equilibria.Payoffs, len(pay))
	for i, row := range pay {
		for _, c := range row {
			rows[i] = append(rows[i], equilibria.Payoffs{r(c[0], 1), r(c[1], 1)})
		}
	}
	m, err := equilibria.NewMatrix(rows)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type P = equilibria.Profile

// whole is a payoff matrix of whole numbers, by rows.
func whole(rows ...[]int64) [][]*big.Rat {
	var out [][]*big.Rat
	for _, row := range rows {
		var rr []*big.Rat
		for _, x := range row {
			rr = append(rr, r(x, 1))
		}
		out = append(out, rr)
	}
	return out
}

func iterations() int {
	if testing.Short() {
		return 100
	}
	return 500
}

// randomBimatrix draws payoffs A (row player's) and B (column player's) of a rows x cols game
// from 0..span-1: with a small span ties, and so degenerate games, are common.
func randomBimatrix(rng *rand.Rand, rows, cols, span int) (a, b [][]*big.Rat) {
	a, b = make([][]*big.Rat, rows), make([][]*big.Rat, rows)
	for i := range rows {
		for range cols {
			a[i] = append(a[i], r(int64(rng.IntN(span)), 1))
			b[i] = append(b[i], r(int64(rng.IntN(span)), 1))
		}
	}
	return a, b
}

func bimatrix(t testing.TB, a, b [][]*big.Rat) *equilibria.Matrix {
	t.Helper()
	pay := make([][]equilibria.Payoffs, len(a))
	for i := range a {
		for j := range a[i] {
			pay[i] = append(pay[i], equilibria.Payoffs{a[i][j], b[i][j]})
		}
	}
	m, err := equilibria.NewMatrix(pay)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
