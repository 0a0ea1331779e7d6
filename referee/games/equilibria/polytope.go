package equilibria

import (
	"fmt"
	"math/big"
	"strings"
)

// MaxPivotWork bounds the exact arithmetic of one vertex enumeration: the number of tableau
// entries updated over all pivots. It keeps a hostile game file from tying up a process (a
// random 10 x 10 game takes a few hundred thousand); past it, ExtremeEquilibria returns
// ErrTooLarge rather than a partial list.
const MaxPivotWork = 40_000_000

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

// tableau is a feasible basis of {z >= 0, M z + s = 1}: row r says the basic variable
// basis[r] plus sum over nonbasic c of a[r][c] times variable c equals a[r][len-1].
type tableau struct {
	basis []int
	a     [][]*big.Rat
}

func (t *tableau) clone() *tableau {
	c := &tableau{basis: append([]int(nil), t.basis...), a: make([][]*big.Rat, len(t.a))}
	for r, row := range t.a {
		c.a[r] = make([]*big.Rat, len(row))
		for j, x := range row {
			c.a[r][j] = new(big.Rat).Set(x)
		}
	}
	return c
}

// pivot makes variable e basic in row r.
func (t *tableau) pivot(r, e int) {
	inv := new(big.Rat).Inv(t.a[r][e])
	for j := range t.a[r] {
		if t.a[r][j].Sign() != 0 {
			t.a[r][j].Mul(t.a[r][j], inv)
		}
	}
	var tmp big.Rat
	for q, row := range t.a {
		if q == r || row[e].Sign() == 0 {
			continue
		}
		f := new(big.Rat).Set(row[e])
		for j, x := range t.a[r] {
			if x.Sign() != 0 {
				row[j].Sub(row[j], tmp.Mul(f, x))
			}
		}
	}
	t.basis[r] = e
}

func basisKey(basis []int, vars int) string {
	b := make([]byte, vars)
	for _, v := range basis {
		b[v] = 1
	}
	return string(b)
}

// polytopeVertices returns every vertex of {z in R^d : z >= 0, M z <= 1}, M being k x d with
// every entry positive (so the polytope is bounded and the origin a nondegenerate vertex). It
// walks the graph of feasible bases from the origin's, taking at every basis every pivot that
// keeps the basis feasible, ties in the ratio test included: every feasible basis is reached
// (Bland's rule leads from any feasible basis back to the origin's, whose basis is unique, and
// each pivot can be undone), so degenerate vertices, which have several bases, are found like
// any other. work counts tableau updates against MaxPivotWork.
func polytopeVertices(M [][]*big.Rat, work *int) ([]vertex, error) {
	k, d := len(M), len(M[0])
	vars := d + k
	start := &tableau{basis: make([]int, k), a: make([][]*big.Rat, k)}
	for r := range k {
		row := make([]*big.Rat, vars+1)
		for c := range d {
			row[c] = new(big.Rat).Set(M[r][c])
		}
		for c := d; c < vars; c++ {
			row[c] = new(big.Rat)
		}
		row[d+r].SetInt64(1)
		row[vars] = big.NewRat(1, 1)
		start.a[r] = row
		start.basis[r] = d + r
	}
	seen := map[string]bool{basisKey(start.basis, vars): true}
	found := map[string]bool{}
	var out []vertex
	queue := []*tableau{start}
	inBasis := make([]bool, vars)
	ratio, best := new(big.Rat), new(big.Rat)
	for len(queue) > 0 {
		t := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		// The vertex of this basis.
		z := make([]*big.Rat, d)
		for c := range z {
			z[c] = new(big.Rat)
		}
		for c := range inBasis {
			inBasis[c] = false
		}
		var zero []int
		for r, v := range t.basis {
			inBasis[v] = true
			if v < d {
				z[v].Set(t.a[r][vars])
			}
		}
		var key strings.Builder
		for _, x := range z {
			key.WriteString(x.RatString())
			key.WriteByte(' ')
		}
		if !found[key.String()] {
			found[key.String()] = true
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
		// Every feasible pivot.
		for e := range vars {
			if inBasis[e] {
				continue
			}
			var rows []int
			for r := range k {
				if t.a[r][e].Sign() <= 0 {
					continue
				}
				ratio.Quo(t.a[r][vars], t.a[r][e])
				switch {
				case rows == nil || ratio.Cmp(best) < 0:
					best.Set(ratio)
					rows = append(rows[:0], r)
				case ratio.Cmp(best) == 0:
					rows = append(rows, r)
				}
			}
			for _, r := range rows {
				old := t.basis[r]
				t.basis[r] = e
				key := basisKey(t.basis, vars)
				t.basis[r] = old
				if seen[key] {
					continue
				}
				seen[key] = true
				*work += k * (vars + 1)
				if *work > MaxPivotWork {
					return nil, fmt.Errorf("%w: enumerating the vertices of a best-response polytope takes more than %d steps of exact arithmetic", ErrTooLarge, MaxPivotWork)
				}
				next := t.clone()
				next.pivot(r, e)
				queue = append(queue, next)
			}
		}
	}
	return out, nil
}
