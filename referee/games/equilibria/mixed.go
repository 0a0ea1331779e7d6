package equilibria

import (
	"cmp"
	"errors"
	"math/big"
	"slices"
	"strings"
)

// Mixed is a mixed strategy profile of a two-player game with the expected payoffs it gives.
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

// Expected returns the expected payoffs of the row mix x against the column mix y in a
// two-player game.
func (m *Matrix) Expected(x, y []*big.Rat) Payoffs {
	out := Payoffs{new(big.Rat), new(big.Rat)}
	var t, w big.Rat
	for i := range m.Rows() {
		if x[i].Sign() == 0 {
			continue
		}
		for j := range m.Cols() {
			if y[j].Sign() == 0 {
				continue
			}
			w.Mul(x[i], y[j])
			for p := range 2 {
				out[p].Add(out[p], t.Mul(&w, m.pay[i*m.strides[0]+j][p]))
			}
		}
	}
	return out
}

// IsMixedNash reports whether the mixed profile (x, y) of a two-player game is a Nash
// equilibrium: no pure deviation of either player pays it more than its expected payoff.
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

// Extreme is every extreme equilibrium of a two-player game and how they form the set of all
// equilibria.
type Extreme struct {
	// RowStrategies and ColStrategies are the players' distinct strategies that occur in
	// extreme equilibria: pure ones first (in action order), then by support size, then by
	// the probabilities of the first actions, largest first.
	RowStrategies, ColStrategies [][]*big.Rat
	// Equilibria are the extreme equilibria, each a pair of indices into RowStrategies and
	// ColStrategies, ordered by support sizes, then row, then column.
	Equilibria [][2]int
	// Subsets are the maximal Nash subsets: sets of row and column strategies (indices,
	// ascending) every pair of which is an extreme equilibrium, and that no larger such set
	// contains. Every mix of a subset's row strategies against every mix of its column
	// strategies is an equilibrium, and every equilibrium of the game lies in some subset;
	// a game whose equilibria are isolated has one subset per equilibrium.
	Subsets []NashSubset
	m       *Matrix
}

// NashSubset is a maximal Nash subset, by its extreme strategies.
type NashSubset struct {
	Rows, Cols []int
}

// Mixed returns extreme equilibrium k as a profile with its payoffs.
func (e *Extreme) Mixed(k int) Mixed {
	x, y := e.RowStrategies[e.Equilibria[k][0]], e.ColStrategies[e.Equilibria[k][1]]
	return Mixed{RowMix: x, ColMix: y, Payoffs: e.m.Expected(x, y)}
}

// CompletelyMixed reports whether some equilibrium gives every action of both players a
// positive probability: some maximal Nash subset's strategies, mixed evenly, cover every
// action.
func (e *Extreme) CompletelyMixed() bool {
	for _, s := range e.Subsets {
		if covers(e.RowStrategies, s.Rows) && covers(e.ColStrategies, s.Cols) {
			return true
		}
	}
	return false
}

func covers(strats [][]*big.Rat, idx []int) bool {
	for a := range strats[0] {
		if !slices.ContainsFunc(idx, func(k int) bool { return strats[k][a].Sign() > 0 }) {
			return false
		}
	}
	return true
}

// Unique reports whether the game has exactly one equilibrium.
func (e *Extreme) Unique() bool { return len(e.Equilibria) == 1 }

// ExtremeEquilibria returns every extreme equilibrium of a two-player game and its maximal
// Nash subsets, exactly, whether the game is degenerate or not (after Avis, Rosenberg, Savani
// and von Stengel, "Enumeration of Nash equilibria for two-player games", 2010). With payoffs
// shifted to be positive, the players' best-response polytopes are
//
//	P = {x >= 0 : x^T B <= 1}    (labels: x_i = 0, or column j a best reply to x)
//	Q = {y >= 0 : A y <= 1}      (labels: row i a best reply to y, or y_j = 0)
//
// and the extreme equilibria are the pairs of nonzero vertices (x, y), normalized, that
// together carry every label. All vertices of both polytopes are enumerated by pivoting over
// every feasible basis (polytopeVertices), so vertices with more labels than dimensions —
// degenerate ones — are found with all their pairings. The maximal Nash subsets are the
// maximal bicliques of the bipartite graph of those pairings. Games whose polytopes take more
// than MaxPivotWork are refused with ErrTooLarge.
func ExtremeEquilibria(m *Matrix) (*Extreme, error) { return ExtremeEquilibriaWithin(m, MaxPivotWork) }

// ExtremeEquilibriaWithin is ExtremeEquilibria with pivotWork, the most tableau entries its
// pivots may update in all, in place of MaxPivotWork.
func ExtremeEquilibriaWithin(m *Matrix, pivotWork int) (*Extreme, error) {
	if m.Players() != 2 {
		return nil, errors.New("equilibria: extreme mixed equilibria are computed for two players only")
	}
	rows, cols := m.Rows(), m.Cols()
	mp, mq := bestResponseConstraints(m)
	work := &budget{limit: pivotWork}
	vp, err := polytopeVertices(mp, work)
	if err != nil {
		return nil, err
	}
	vq, err := polytopeVertices(mq, work)
	if err != nil {
		return nil, err
	}
	all := labelSet{}
	for l := range rows + cols {
		all.add(l)
	}
	// Labels: 0..rows-1 are the rows, rows..rows+cols-1 the columns.
	type side struct {
		mix    []*big.Rat
		labels labelSet
	}
	norm := func(vs []vertex, label func(v int) int) []side {
		var out []side
		for _, v := range vs {
			sum := new(big.Rat)
			for _, x := range v.z {
				sum.Add(sum, x)
			}
			if sum.Sign() == 0 {
				continue // the origin
			}
			s := side{mix: make([]*big.Rat, len(v.z))}
			for c, x := range v.z {
				s.mix[c] = new(big.Rat).Quo(x, sum)
			}
			for _, z := range v.zero {
				s.labels.add(label(z))
			}
			out = append(out, s)
		}
		return out
	}
	xs := norm(vp, func(v int) int { return v }) // x_i -> i, slack of column j -> rows+j
	ys := norm(vq, func(v int) int {             // y_j -> rows+j, slack of row i -> i
		if v < cols {
			return rows + v
		}
		return v - cols
	})
	var pairs [][2]int
	usedX, usedY := make([]bool, len(xs)), make([]bool, len(ys))
	for i, x := range xs {
		for j, y := range ys {
			if x.labels.union(y.labels) == all {
				pairs = append(pairs, [2]int{i, j})
				usedX[i], usedY[j] = true, true
			}
		}
	}
	// Keep the strategies that occur, in a stable order.
	order := func(mixes []side, used []bool) ([][]*big.Rat, []int) {
		var idx []int
		for k, u := range used {
			if u {
				idx = append(idx, k)
			}
		}
		slices.SortFunc(idx, func(p, q int) int { return compareMix(mixes[p].mix, mixes[q].mix) })
		newIdx := make([]int, len(mixes))
		out := make([][]*big.Rat, len(idx))
		for n, k := range idx {
			newIdx[k] = n
			out[n] = mixes[k].mix
		}
		return out, newIdx
	}
	e := &Extreme{m: m}
	var mapX, mapY []int
	e.RowStrategies, mapX = order(xs, usedX)
	e.ColStrategies, mapY = order(ys, usedY)
	for _, p := range pairs {
		e.Equilibria = append(e.Equilibria, [2]int{mapX[p[0]], mapY[p[1]]})
	}
	slices.SortFunc(e.Equilibria, func(p, q [2]int) int {
		sp := supportSize(e.RowStrategies[p[0]]) + supportSize(e.ColStrategies[p[1]])
		sq := supportSize(e.RowStrategies[q[0]]) + supportSize(e.ColStrategies[q[1]])
		return cmp.Or(cmp.Compare(sp, sq), cmp.Compare(p[0], q[0]), cmp.Compare(p[1], q[1]))
	})
	e.Subsets = maximalBicliques(len(e.RowStrategies), len(e.ColStrategies), e.Equilibria)
	return e, nil
}

// bestResponseConstraints are the constraint matrices of the best-response polytopes of a
// two-player game, payoffs shifted to be at least 1: P's (one row per column j, over x: the
// column player's payoffs B[i][j]) and Q's (one row per row i, over y: the row player's A[i][j]).
func bestResponseConstraints(m *Matrix) (mp, mq [][]*big.Rat) {
	rows, cols := m.Rows(), m.Cols()
	shifted := func(player int) func(i, j int) *big.Rat {
		low := m.pay[0][player]
		for _, p := range m.pay {
			if p[player].Cmp(low) < 0 {
				low = p[player]
			}
		}
		one := big.NewRat(1, 1)
		return func(i, j int) *big.Rat {
			v := new(big.Rat).Sub(m.pay[i*cols+j][player], low)
			return v.Add(v, one)
		}
	}
	a, b := shifted(Row), shifted(Col)
	mp = make([][]*big.Rat, cols)
	for j := range cols {
		mp[j] = make([]*big.Rat, rows)
		for i := range rows {
			mp[j][i] = b(i, j)
		}
	}
	mq = make([][]*big.Rat, rows)
	for i := range rows {
		mq[i] = make([]*big.Rat, cols)
		for j := range cols {
			mq[i][j] = a(i, j)
		}
	}
	return mp, mq
}

// compareMix orders strategies: smaller support first, then larger probabilities of the first
// actions first (so pure strategies come in action order).
func compareMix(x, y []*big.Rat) int {
	if c := cmp.Compare(supportSize(x), supportSize(y)); c != 0 {
		return c
	}
	for i := range x {
		if c := y[i].Cmp(x[i]); c != 0 {
			return c
		}
	}
	return 0
}

// maximalBicliques returns the maximal bicliques (U, W) with U, W nonempty of the bipartite
// graph with edges, U among nu left nodes and W among nw right ones. The right sides of the
// maximal bicliques are exactly the nonempty intersections of left nodes' neighbourhoods, so
// it closes the neighbourhoods under intersection and takes for each such set W every left
// node adjacent to all of W.
func maximalBicliques(nu, nw int, edges [][2]int) []NashSubset {
	nbr := make([]bitset, nu)
	for u := range nbr {
		nbr[u] = newBitset(nw)
	}
	for _, e := range edges {
		nbr[e[0]].set(e[1])
	}
	family := map[string]bitset{}
	var queue []bitset
	for _, n := range nbr {
		if !n.empty() && family[n.key()] == nil {
			family[n.key()] = n
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		w := queue[0]
		queue = queue[1:]
		for _, n := range nbr {
			x := w.and(n)
			if !x.empty() && family[x.key()] == nil {
				family[x.key()] = x
				queue = append(queue, x)
			}
		}
	}
	var out []NashSubset
	for _, w := range family {
		var s NashSubset
		for u, n := range nbr {
			if w.subsetOf(n) {
				s.Rows = append(s.Rows, u)
			}
		}
		s.Cols = w.members()
		out = append(out, s)
	}
	slices.SortFunc(out, func(a, b NashSubset) int {
		return cmp.Or(slices.Compare(a.Rows, b.Rows), slices.Compare(a.Cols, b.Cols))
	})
	return out
}

type bitset []uint64

func newBitset(n int) bitset    { return make(bitset, (n+63)/64) }
func (b bitset) set(i int)      { b[i/64] |= 1 << (i % 64) }
func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

func (b bitset) and(c bitset) bitset {
	out := make(bitset, len(b))
	for i := range b {
		out[i] = b[i] & c[i]
	}
	return out
}

func (b bitset) empty() bool {
	for _, w := range b {
		if w != 0 {
			return false
		}
	}
	return true
}

func (b bitset) subsetOf(c bitset) bool {
	for i := range b {
		if b[i]&^c[i] != 0 {
			return false
		}
	}
	return true
}

func (b bitset) members() []int {
	var out []int
	for i := range len(b) * 64 {
		if b.has(i) {
			out = append(out, i)
		}
	}
	return out
}

func (b bitset) key() string {
	var s strings.Builder
	for _, w := range b {
		for k := range 8 {
			s.WriteByte(byte(w >> (8 * k)))
		}
	}
	return s.String()
}
