package equilibria

import (
	"fmt"
	"math/big"
)

// Mixed is a mixed strategy profile with the expected payoffs it gives.
type Mixed struct {
	// RowMix[i] is the probability that the row player plays row i; ColMix[j] likewise.
	RowMix, ColMix []*big.Rat
	// Payoffs are the expected payoffs.
	Payoffs Payoffs
}

// Pure reports whether both players play one action with probability 1.
func (x Mixed) Pure() bool {
	return supportSize(x.RowMix) == 1 && supportSize(x.ColMix) == 1
}

func supportSize(mix []*big.Rat) int {
	n := 0
	for _, p := range mix {
		if p.Sign() > 0 {
			n++
		}
	}
	return n
}

// Expected returns the expected payoffs of the row mix x against the column mix y.
func (m *Matrix) Expected(x, y []*big.Rat) Payoffs {
	out := Payoffs{new(big.Rat), new(big.Rat)}
	var t big.Rat
	for i := range m.Rows() {
		for j := range m.Cols() {
			if x[i].Sign() == 0 || y[j].Sign() == 0 {
				continue
			}
			w := new(big.Rat).Mul(x[i], y[j])
			for p := range 2 {
				out[p].Add(out[p], t.Mul(w, m.pay[i][j][p]))
			}
		}
	}
	return out
}

// IsMixedNash reports whether the mixed profile (x, y) is a Nash equilibrium: no pure
// deviation of either player pays it more than its expected payoff.
func (m *Matrix) IsMixedNash(x, y []*big.Rat) bool {
	v := m.Expected(x, y)
	for i := range m.Rows() {
		if m.Expected(unit(m.Rows(), i), y)[Row].Cmp(v[Row]) > 0 {
			return false
		}
	}
	for j := range m.Cols() {
		if m.Expected(x, unit(m.Cols(), j))[Col].Cmp(v[Col]) > 0 {
			return false
		}
	}
	return true
}

func unit(n, i int) []*big.Rat {
	out := make([]*big.Rat, n)
	for k := range out {
		out[k] = new(big.Rat)
	}
	out[i].SetInt64(1)
	return out
}

// SupportEquilibria returns the Nash equilibria found by support enumeration: for every pair
// of supports of equal size it solves the indifference equations exactly and keeps solutions
// with positive probabilities on the supports and no better reply outside them. In a
// nondegenerate game that is every Nash equilibrium; in a degenerate game (e.g. golden balls,
// where equilibria form a continuum, or a pair of supports whose equations have no single
// solution) some are missed, but every one returned is an equilibrium. Supports of size 1 give
// the pure equilibria, in row-major order; larger supports follow, smallest first. Matrices
// with more than MaxSupportActions actions per player are refused with ErrTooLarge.
func SupportEquilibria(m *Matrix) ([]Mixed, error) {
	if m.Rows() > MaxSupportActions || m.Cols() > MaxSupportActions {
		return nil, fmt.Errorf("%w: support enumeration takes at most %d actions per player, got %d x %d", ErrTooLarge, MaxSupportActions, m.Rows(), m.Cols())
	}
	var out []Mixed
	for k := 1; k <= min(m.Rows(), m.Cols()); k++ {
		for _, rows := range subsets(m.Rows(), k) {
			for _, cols := range subsets(m.Cols(), k) {
				if x, ok := m.solveSupport(rows, cols); ok {
					out = append(out, x)
				}
			}
		}
	}
	return out, nil
}

// Mixed2x2 returns the completely mixed equilibrium of a 2x2 game (both players mixing both
// actions with positive probability), when it has exactly one.
func Mixed2x2(m *Matrix) (Mixed, bool) {
	if m.Rows() != 2 || m.Cols() != 2 {
		return Mixed{}, false
	}
	return m.solveSupport([]int{0, 1}, []int{0, 1})
}

// solveSupport finds the equilibrium with exactly the given supports, when the indifference
// equations have one solution and it is an equilibrium.
func (m *Matrix) solveSupport(rows, cols []int) (Mixed, bool) {
	// The column mix y on cols makes every row of rows pay the row player the same.
	y, ok := indifferent(len(cols), len(rows), func(e, u int) *big.Rat { return m.pay[rows[e]][cols[u]][Row] })
	if !ok {
		return Mixed{}, false
	}
	// The row mix x on rows makes every column of cols pay the column player the same.
	x, ok := indifferent(len(rows), len(cols), func(e, u int) *big.Rat { return m.pay[rows[u]][cols[e]][Col] })
	if !ok {
		return Mixed{}, false
	}
	rowMix, colMix := make([]*big.Rat, m.Rows()), make([]*big.Rat, m.Cols())
	for i := range rowMix {
		rowMix[i] = new(big.Rat)
	}
	for j := range colMix {
		colMix[j] = new(big.Rat)
	}
	for k, i := range rows {
		if x[k].Sign() <= 0 {
			return Mixed{}, false
		}
		rowMix[i] = x[k]
	}
	for k, j := range cols {
		if y[k].Sign() <= 0 {
			return Mixed{}, false
		}
		colMix[j] = y[k]
	}
	if !m.IsMixedNash(rowMix, colMix) {
		return Mixed{}, false
	}
	return Mixed{RowMix: rowMix, ColMix: colMix, Payoffs: m.Expected(rowMix, colMix)}, true
}

// indifferent solves for a distribution p over n unknowns such that, for each of the n
// equations e, sum_u a(e, u) p_u is the same value v: n+1 equations (n indifference rows and
// sum p = 1) in n+1 unknowns (p and v). It reports false unless the system has exactly one
// solution.
func indifferent(n, eqs int, a func(e, u int) *big.Rat) ([]*big.Rat, bool) {
	if eqs != n {
		return nil, false
	}
	// Unknowns p_0..p_{n-1}, v; rows: sum_u a(e,u) p_u - v = 0, then sum p = 1.
	size := n + 1
	mat := make([][]*big.Rat, size)
	for e := range n {
		mat[e] = make([]*big.Rat, size+1)
		for u := range n {
			mat[e][u] = new(big.Rat).Set(a(e, u))
		}
		mat[e][n] = big.NewRat(-1, 1)
		mat[e][size] = new(big.Rat)
	}
	mat[n] = make([]*big.Rat, size+1)
	for u := range n {
		mat[n][u] = big.NewRat(1, 1)
	}
	mat[n][n] = new(big.Rat)
	mat[n][size] = big.NewRat(1, 1)
	sol, ok := solve(mat)
	if !ok {
		return nil, false
	}
	return sol[:n], true
}

// solve solves the augmented system mat (size rows, size+1 columns) by Gauss-Jordan
// elimination in exact arithmetic; false when it is singular.
func solve(mat [][]*big.Rat) ([]*big.Rat, bool) {
	size := len(mat)
	for col := range size {
		pivot := -1
		for r := col; r < size; r++ {
			if mat[r][col].Sign() != 0 {
				pivot = r
				break
			}
		}
		if pivot < 0 {
			return nil, false
		}
		mat[col], mat[pivot] = mat[pivot], mat[col]
		inv := new(big.Rat).Inv(mat[col][col])
		for c := col; c <= size; c++ {
			mat[col][c].Mul(mat[col][c], inv)
		}
		for r := range size {
			if r == col || mat[r][col].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Set(mat[r][col])
			var t big.Rat
			for c := col; c <= size; c++ {
				mat[r][c].Sub(mat[r][c], t.Mul(f, mat[col][c]))
			}
		}
	}
	out := make([]*big.Rat, size)
	for r := range size {
		out[r] = mat[r][size]
	}
	return out, true
}

// subsets returns every k-element subset of 0..n-1, each ascending, in lexicographic order.
func subsets(n, k int) [][]int {
	var out [][]int
	cur := make([]int, 0, k)
	var rec func(start int)
	rec = func(start int) {
		if len(cur) == k {
			out = append(out, append([]int(nil), cur...))
			return
		}
		for i := start; i <= n-(k-len(cur)); i++ {
			cur = append(cur, i)
			rec(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	rec(0)
	return out
}
