package equilibria

import (
	"errors"
	"fmt"
	"math/big"
)

// OneEquilibrium is an equilibrium found by LemkeHowson and how.
type OneEquilibrium struct {
	Mixed
	// Dropped is the label the path started by dropping: a row (0..rows-1) or a column
	// (rows + j).
	Dropped int
	// Pivots counts the complementary pivots of the path, both polytopes together.
	Pivots int
}

// LemkeHowson returns one equilibrium of a two-player game, exactly, by the Lemke–Howson
// algorithm (Lemke and Howson, 1964, as in von Stengel's "Computing equilibria for two-person
// games", 2002), for a game of any size the enumeration cannot list. It walks the best-response
// polytopes P and Q of ExtremeEquilibria from the artificial equilibrium (0, 0), every label
// present: dropping label dropped (the row player's action dropped, or for dropped >= rows the
// column player's action dropped - rows) makes the variable with that label enter its
// polytope's basis; the variable that leaves has a label the pair now carries twice, so the
// variable with that label in the other polytope enters next, and so on until the dropped
// label is picked up again: the pair then carries every label, an equilibrium, normalized.
// Each pivot leaves by the lexicographic ratio test (the right-hand sides perturbed), so a
// degenerate game cannot make the path cycle. The path can be long (exponentially in rare
// games), so its pivots update at most pivotWork tableau entries in all; past that it returns
// ErrTooLarge.
func LemkeHowson(m *Matrix, dropped, pivotWork int) (OneEquilibrium, error) {
	if m.Players() != 2 {
		return OneEquilibrium{}, errors.New("equilibria: Lemke–Howson is for two players only")
	}
	rows, cols := m.Rows(), m.Cols()
	if dropped < 0 || dropped >= rows+cols {
		return OneEquilibrium{}, fmt.Errorf("equilibria: label %d to drop: the labels are 0..%d (rows, then columns)", dropped, rows+cols-1)
	}
	mp, mq := bestResponseConstraints(m)
	// In P the variables are x_i (i < rows) and the slack of column j (rows + j): a variable's
	// label is its index. In Q they are y_j (j < cols, label rows + j) and the slack of row i
	// (cols + i, label i).
	p, q := originTableau(mp), originTableau(mq)
	labelQ := func(v int) int {
		if v < cols {
			return rows + v
		}
		return v - cols
	}
	varQ := func(l int) int {
		if l < rows {
			return cols + l
		}
		return l - rows
	}
	work := &budget{limit: pivotWork}
	one := OneEquilibrium{Dropped: dropped}
	inP, enter := dropped < rows, dropped
	if !inP {
		enter = varQ(dropped)
	}
	for {
		t, d := q, cols
		if inP {
			t, d = p, rows
		}
		r := t.leaving(enter, d)
		if r < 0 {
			// The polytopes are bounded (every constraint's entries are positive), so a
			// column always has a positive entry.
			return OneEquilibrium{}, errors.New("equilibria: Lemke–Howson met an unbounded edge")
		}
		if err := work.spend(len(t.a)*len(t.a[0]), "the Lemke–Howson path"); err != nil {
			return OneEquilibrium{}, err
		}
		left := t.basis[r]
		t.pivot(r, enter)
		one.Pivots++
		label := left
		if !inP {
			label = labelQ(left)
		}
		if label == dropped {
			break
		}
		inP = !inP
		if inP {
			enter = label
		} else {
			enter = varQ(label)
		}
	}
	var ok bool
	if one.RowMix, ok = basicMix(p, rows); ok {
		one.ColMix, ok = basicMix(q, cols)
	}
	if !ok {
		// A completely labelled pair other than (0, 0) has both points nonzero.
		return OneEquilibrium{}, errors.New("equilibria: Lemke–Howson ended at the origin")
	}
	one.Payoffs = m.Expected(one.RowMix, one.ColMix)
	return one, nil
}

// basicMix is the point of t's basis in its first d variables, normalized to sum to 1; false
// when it is the origin.
func basicMix(t *tableau, d int) ([]*big.Rat, bool) {
	z := make([]*big.Rat, d)
	for c := range z {
		z[c] = new(big.Rat)
	}
	vars := len(t.a[0]) - 1
	sum := new(big.Rat)
	for r, v := range t.basis {
		if v < d {
			z[v].SetFrac(t.a[r][vars], t.det)
			sum.Add(sum, z[v])
		}
	}
	if sum.Sign() == 0 {
		return nil, false
	}
	for _, x := range z {
		x.Quo(x, sum)
	}
	return z, true
}
