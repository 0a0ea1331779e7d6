package equilibria

import (
	"fmt"
	"math/big"
	"strings"
)

// MaxPivotWork is the default bound on the exact arithmetic of one ExtremeEquilibria call: the
// number of tableau entries updated over all pivots of both polytopes (ExtremeEquilibriaWithin
// takes another). It keeps a hostile game file from tying up a process: measured on one core,
// random games up to 10 x 10 take about 0.3 s (see BenchmarkExtremeEquilibria), a random
// 12 x 12 game with payoffs from 0..999 or a 64 x 64 one reaches the bound after 2.5 to 5 s,
// and past it ExtremeEquilibria returns ErrTooLarge rather than a partial list (a degenerate
// 12 x 12 one with payoffs from 0..2 still fits).
const MaxPivotWork = 4_000_000

// labelSet is a set of labels 0..127 (a game of two players has m + n <= 128 labels).
type labelSet [2]uint64

func (s *labelSet) add(l int)                { s[l/64] |= 1 << (l % 64) }
func (s labelSet) union(t labelSet) labelSet { return labelSet{s[0] | t[0], s[1] | t[1]} }

// vertex is a vertex of a polytope {z >= 0 : M z <= 1}: its coordinates and the variables
// that are zero there (z_c for c < d, then slack r of row r as d + r).
type vertex struct {
	z    []*big.Rat
	zero []int
}

// tableau is a feasible basis of {z >= 0, K M z + s = K 1} (each row scaled by a positive
// whole number so that every entry is whole) in integer form, as in lrs: the true tableau is
// a / det, every entry of a is an integer and every basic column is det times a unit column.
// Pivoting divides exactly (Edmonds), so no fraction is ever reduced. det stays positive since
// pivots are on positive true entries.
type tableau struct {
	basis []int
	a     [][]*big.Int // k rows of vars+1 entries, the last the right-hand side
	det   *big.Int
}

func (t *tableau) clone() *tableau {
	c := &tableau{basis: append([]int(nil), t.basis...), a: make([][]*big.Int, len(t.a)), det: new(big.Int).Set(t.det)}
	for r, row := range t.a {
		c.a[r] = make([]*big.Int, len(row))
		for j, x := range row {
			c.a[r][j] = new(big.Int).Set(x)
		}
	}
	return c
}

// pivot makes variable e basic in row r.
func (t *tableau) pivot(r, e int) {
	p := t.a[r][e]
	var x, y big.Int
	for q, row := range t.a {
		if q == r {
			continue
		}
		f := new(big.Int).Set(row[e])
		for j := range row {
			// row[j] = (row[j] * p - f * a[r][j]) / det, exactly.
			x.Mul(row[j], p)
			y.Mul(f, t.a[r][j])
			x.Sub(&x, &y)
			row[j].Quo(&x, t.det)
		}
	}
	t.det = new(big.Int).Set(p)
	t.basis[r] = e
}

// lexLess reports whether row r comes before row q in the lexicographic ratio test for
// entering variable e (both with a positive entry there): the right-hand side, then the slack
// columns d, d+1, ..., each divided by the row's entry in column e. Two rows never tie on all.
func (t *tableau) lexLess(r, q, e, d int) bool {
	var x, y big.Int
	cols := len(t.a[r]) - 1
	for _, c := range append([]int{cols}, seq(d, cols)...) {
		x.Mul(t.a[r][c], t.a[q][e])
		y.Mul(t.a[q][c], t.a[r][e])
		if cmp := x.Cmp(&y); cmp != 0 {
			return cmp < 0
		}
	}
	return false
}

func seq(from, to int) []int {
	out := make([]int, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, i)
	}
	return out
}

func basisKey(basis []int, vars int) string {
	b := make([]byte, vars)
	for _, v := range basis {
		b[v] = 1
	}
	return string(b)
}

// wholeRow returns row (rationals) and the right-hand side 1 scaled by the lowest common
// multiple of the denominators, as integers.
func wholeRow(row []*big.Rat) ([]*big.Int, *big.Int) {
	lcm := big.NewInt(1)
	var g big.Int
	for _, x := range row {
		d := x.Denom()
		g.GCD(nil, nil, lcm, d)
		lcm.Mul(lcm, new(big.Int).Quo(d, &g))
	}
	out := make([]*big.Int, len(row))
	for c, x := range row {
		v := new(big.Int).Mul(x.Num(), lcm)
		out[c] = v.Quo(v, x.Denom())
	}
	return out, lcm
}

// budget counts tableau updates against a bound.
type budget struct{ used, limit int }

// spend counts n more updates of what, and refuses past the bound with ErrTooLarge.
func (b *budget) spend(n int, what string) error {
	b.used += n
	if b.used > b.limit {
		return fmt.Errorf("%w: %s takes more than %d steps of exact arithmetic (tableau entries updated)", ErrTooLarge, what, b.limit)
	}
	return nil
}

// originTableau is the basis of {z >= 0, M z <= 1} at the origin: every slack basic, slack r
// (variable d + r) in row r.
func originTableau(M [][]*big.Rat) *tableau {
	k, d := len(M), len(M[0])
	vars := d + k
	t := &tableau{basis: make([]int, k), a: make([][]*big.Int, k), det: big.NewInt(1)}
	for r := range k {
		whole, rhs := wholeRow(M[r])
		row := make([]*big.Int, vars+1)
		copy(row, whole)
		for c := d; c < vars; c++ {
			row[c] = new(big.Int)
		}
		row[d+r].SetInt64(1)
		row[vars] = rhs
		t.a[r] = row
		t.basis[r] = d + r
	}
	return t
}

// leaving is the row that leaves the basis when e enters by the lexicographic ratio test (see
// polytopeVertices), -1 when no entry of column e is positive.
func (t *tableau) leaving(e, d int) int {
	best := -1
	for r := range t.a {
		if t.a[r][e].Sign() <= 0 {
			continue
		}
		if best < 0 || t.lexLess(r, best, e, d) {
			best = r
		}
	}
	return best
}

// polytopeVertices returns every vertex of {z in R^d : z >= 0, M z <= 1}, M being k x d with
// every entry positive (so the polytope is bounded and the origin a nondegenerate vertex). It
// walks the graph of lexicographically feasible bases from the origin's (the vertices of the
// perturbed polytope, which is simple and connected), one pivot per entering variable, and
// reads each basis's vertex and its zero variables from the unperturbed values, so a
// degenerate vertex gets all its labels whichever of its bases finds it. work counts tableau
// updates against its bound.
func polytopeVertices(M [][]*big.Rat, work *budget) ([]vertex, error) {
	k, d := len(M), len(M[0])
	vars := d + k
	start := originTableau(M)
	seen := map[string]bool{basisKey(start.basis, vars): true}
	found := map[string]bool{}
	var out []vertex
	queue := []*tableau{start}
	inBasis := make([]bool, vars)
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		// The vertex of this basis: z_c = rhs / det in the row where z_c is basic.
		z := make([]*big.Rat, d)
		for c := range z {
			z[c] = new(big.Rat)
		}
		for c := range inBasis {
			inBasis[c] = false
		}
		for r, v := range t.basis {
			inBasis[v] = true
			if v < d {
				z[v].SetFrac(t.a[r][vars], t.det)
			}
		}
		var key strings.Builder
		for _, x := range z {
			key.WriteString(x.RatString())
			key.WriteByte(' ')
		}
		if !found[key.String()] {
			found[key.String()] = true
			var zero []int
			for v := range vars {
				if !inBasis[v] {
					zero = append(zero, v)
				}
			}
			for r, v := range t.basis {
				if t.a[r][vars].Sign() == 0 {
					zero = append(zero, v)
				}
			}
			out = append(out, vertex{z: z, zero: zero})
		}
		// Every lexicographically feasible pivot: entering e, leaving the row of least ratio
		// rhs / a[r][e], ties broken by the least row of the basis inverse (the slack columns)
		// divided the same way. This is the simplex method on the polytope with its
		// right-hand sides perturbed by (eps, eps^2, ...), which is nondegenerate and whose
		// vertices tend to the vertices of the original, each original vertex being the limit
		// of at least one: walking it visits every vertex, a degenerate vertex through a few
		// of its bases instead of all of them.
		for e := range vars {
			if inBasis[e] {
				continue
			}
			best := t.leaving(e, d)
			if best < 0 {
				continue
			}
			old := t.basis[best]
			t.basis[best] = e
			key := basisKey(t.basis, vars)
			t.basis[best] = old
			if seen[key] {
				continue
			}
			seen[key] = true
			if err := work.spend(k*(vars+1), "enumerating the vertices of a best-response polytope"); err != nil {
				return nil, err
			}
			next := t.clone()
			next.pivot(best, e)
			queue = append(queue, next)
		}
	}
	return out, nil
}
