package equilibria_test

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/parley-arena/parley/referee/games/equilibria"
)

// The oracle of this file is written independently of the package: exact expected payoffs, an
// equilibrium test by pure deviations, the vertices of the best-response polytopes found by
// trying every choice of tight constraints (no pivoting), and membership in a convex hull by
// Caratheodory (some affinely independent subset of the points holds it with nonnegative
// weights).

// payoff is player's expected payoff of x against y.
func payoff(pay [][]*big.Rat, x, y []*big.Rat) *big.Rat {
	s := new(big.Rat)
	for i := range x {
		for j := range y {
			s.Add(s, new(big.Rat).Mul(new(big.Rat).Mul(x[i], y[j]), pay[i][j]))
		}
	}
	return s
}

func pure(n, i int) []*big.Rat {
	out := make([]*big.Rat, n)
	for k := range out {
		out[k] = new(big.Rat)
	}
	out[i].SetInt64(1)
	return out
}

// isNash checks (x, y) against every pure deviation of both players.
func isNash(a, b [][]*big.Rat, x, y []*big.Rat) bool {
	va, vb := payoff(a, x, y), payoff(b, x, y)
	for i := range x {
		if payoff(a, pure(len(x), i), y).Cmp(va) > 0 {
			return false
		}
	}
	for j := range y {
		if payoff(b, x, pure(len(y), j)).Cmp(vb) > 0 {
			return false
		}
	}
	return true
}

func isDistribution(x []*big.Rat) bool {
	s := new(big.Rat)
	for _, p := range x {
		if p.Sign() < 0 {
			return false
		}
		s.Add(s, p)
	}
	return s.Cmp(big.NewRat(1, 1)) == 0
}

func key(x []*big.Rat) string {
	var parts []string
	for _, p := range x {
		parts = append(parts, p.RatString())
	}
	return strings.Join(parts, ",")
}

// solveUnique solves the (rows x cols) system M z = rhs; nil unless it has exactly one
// solution.
func solveUnique(M [][]*big.Rat, rhs []*big.Rat) []*big.Rat {
	rows, cols := len(M), len(M[0])
	aug := make([][]*big.Rat, rows)
	for i := range M {
		for j := range cols {
			aug[i] = append(aug[i], new(big.Rat).Set(M[i][j]))
		}
		aug[i] = append(aug[i], new(big.Rat).Set(rhs[i]))
	}
	row := 0
	pivots := make([]int, 0, cols)
	for c := 0; c < cols && row < rows; c++ {
		p := -1
		for i := row; i < rows; i++ {
			if aug[i][c].Sign() != 0 {
				p = i
				break
			}
		}
		if p < 0 {
			return nil // a free variable
		}
		aug[row], aug[p] = aug[p], aug[row]
		for i := range rows {
			if i == row || aug[i][c].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Quo(aug[i][c], aug[row][c])
			for j := c; j <= cols; j++ {
				aug[i][j].Sub(aug[i][j], new(big.Rat).Mul(f, aug[row][j]))
			}
		}
		pivots = append(pivots, c)
		row++
	}
	if len(pivots) < cols {
		return nil
	}
	for i := row; i < rows; i++ {
		if aug[i][cols].Sign() != 0 {
			return nil // inconsistent
		}
	}
	z := make([]*big.Rat, cols)
	for k, c := range pivots {
		z[c] = new(big.Rat).Quo(aug[k][cols], aug[k][c])
	}
	return z
}

// choose calls f with every k-subset of 0..n-1.
func choose(n, k int, f func([]int)) {
	cur := make([]int, 0, k)
	var rec func(start int)
	rec = func(start int) {
		if len(cur) == k {
			f(cur)
			return
		}
		for i := start; i < n; i++ {
			cur = append(cur, i)
			rec(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	rec(0)
}

// oracleVertices returns the normalized nonzero vertices of {z >= 0 : M z <= 1} (M is k x d,
// positive) with their tight constraints (0..d-1: z_c = 0; d+r: row r tight), by solving every
// choice of d tight constraints.
func oracleVertices(M [][]*big.Rat) (mixes [][]*big.Rat, tight [][]bool) {
	k, d := len(M), len(M[0])
	seen := map[string]bool{}
	choose(d+k, d, func(set []int) {
		sys := make([][]*big.Rat, d)
		rhs := make([]*big.Rat, d)
		for q, c := range set {
			sys[q] = make([]*big.Rat, d)
			for j := range d {
				sys[q][j] = new(big.Rat)
			}
			if c < d {
				sys[q][c].SetInt64(1)
				rhs[q] = new(big.Rat)
			} else {
				copy(sys[q], M[c-d])
				rhs[q] = big.NewRat(1, 1)
			}
		}
		z := solveUnique(sys, rhs)
		if z == nil {
			return
		}
		sum := new(big.Rat)
		for _, x := range z {
			if x.Sign() < 0 {
				return
			}
			sum.Add(sum, x)
		}
		tt := make([]bool, d+k)
		for r := range k {
			s := new(big.Rat)
			for c := range d {
				s.Add(s, new(big.Rat).Mul(M[r][c], z[c]))
			}
			if s.Cmp(big.NewRat(1, 1)) > 0 {
				return
			}
			tt[d+r] = s.Cmp(big.NewRat(1, 1)) == 0
		}
		if sum.Sign() == 0 || seen[key(z)] {
			return
		}
		seen[key(z)] = true
		for c := range d {
			tt[c] = z[c].Sign() == 0
			z[c].Quo(z[c], sum)
		}
		mixes, tight = append(mixes, z), append(tight, tt)
	})
	return mixes, tight
}

// oracleExtreme returns the extreme equilibria "x;y" of (a, b): pairs of polytope vertices
// that together have every label.
func oracleExtreme(a, b [][]*big.Rat) map[string]bool {
	rows, cols := len(a), len(a[0])
	shift := func(pay [][]*big.Rat) func(i, j int) *big.Rat {
		low := pay[0][0]
		for _, row := range pay {
			for _, x := range row {
				if x.Cmp(low) < 0 {
					low = x
				}
			}
		}
		return func(i, j int) *big.Rat { return new(big.Rat).Add(new(big.Rat).Sub(pay[i][j], low), big.NewRat(1, 1)) }
	}
	sa, sb := shift(a), shift(b)
	mp := make([][]*big.Rat, cols)
	for j := range cols {
		for i := range rows {
			mp[j] = append(mp[j], sb(i, j))
		}
	}
	mq := make([][]*big.Rat, rows)
	for i := range rows {
		for j := range cols {
			mq[i] = append(mq[i], sa(i, j))
		}
	}
	xs, tx := oracleVertices(mp) // tight: x_i = 0 (row label i), column j best (label rows+j)
	ys, ty := oracleVertices(mq) // tight: y_j = 0 (label rows+j), row i best (label i)
	out := map[string]bool{}
	for p, x := range xs {
		for q, y := range ys {
			ok := true
			for i := range rows {
				ok = ok && (tx[p][i] || ty[q][cols+i])
			}
			for j := range cols {
				ok = ok && (tx[p][rows+j] || ty[q][j])
			}
			if ok {
				out[key(x)+";"+key(y)] = true
			}
		}
	}
	return out
}

// inHull reports whether x is a convex combination of points.
func inHull(x []*big.Rat, points [][]*big.Rat) bool {
	for k := 1; k <= min(len(points), len(x)); k++ {
		found := false
		choose(len(points), k, func(set []int) {
			if found {
				return
			}
			sys := make([][]*big.Rat, len(x)+1)
			rhs := make([]*big.Rat, len(x)+1)
			for i := range x {
				for _, s := range set {
					sys[i] = append(sys[i], points[s][i])
				}
				rhs[i] = x[i]
			}
			for range set {
				sys[len(x)] = append(sys[len(x)], big.NewRat(1, 1))
			}
			rhs[len(x)] = big.NewRat(1, 1)
			lambda := solveUnique(sys, rhs)
			if lambda == nil {
				return
			}
			for _, l := range lambda {
				if l.Sign() < 0 {
					return
				}
			}
			found = true
		})
		if found {
			return true
		}
	}
	return false
}

// grid returns every distribution over n actions whose probabilities are multiples of 1/den.
func grid(n, den int) [][]*big.Rat {
	var out [][]*big.Rat
	cur := make([]int, n)
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == n-1 {
			cur[i] = left
			x := make([]*big.Rat, n)
			for k, c := range cur {
				x[k] = big.NewRat(int64(c), int64(den))
			}
			out = append(out, x)
			return
		}
		for c := 0; c <= left; c++ {
			cur[i] = c
			rec(i+1, left-c)
		}
	}
	rec(0, den)
	return out
}

// checkExtreme holds ExtremeEquilibria's answer for (a, b) against the oracle: the same set
// of extreme equilibria, each an equilibrium; every pair of strategies within a maximal Nash
// subset an equilibrium (and their midpoint too); no subset extendable by another strategy;
// every equilibrium on a grid (small games) inside some subset's hulls.
func checkExtreme(t *testing.T, a, b [][]*big.Rat, gridDen int) *equilibria.Extreme {
	t.Helper()
	m := bimatrix(t, a, b)
	e, err := equilibria.ExtremeEquilibria(m)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for k, eq := range e.Equilibria {
		x, y := e.RowStrategies[eq[0]], e.ColStrategies[eq[1]]
		if !isDistribution(x) || !isDistribution(y) || !isNash(a, b, x, y) {
			t.Fatalf("A=%v B=%v: extreme %d (%v, %v) is not an equilibrium", a, b, k, x, y)
		}
		mx := e.Mixed(k)
		if mx.Payoffs[0].Cmp(payoff(a, x, y)) != 0 || mx.Payoffs[1].Cmp(payoff(b, x, y)) != 0 {
			t.Fatalf("extreme %d pays %v", k, mx.Payoffs)
		}
		got[key(x)+";"+key(y)] = true
	}
	want := oracleExtreme(a, b)
	for k := range want {
		if !got[k] {
			t.Fatalf("A=%v B=%v: the oracle's extreme equilibrium %s is missing; got %v", a, b, k, got)
		}
	}
	for k := range got {
		if !want[k] {
			t.Fatalf("A=%v B=%v: %s is not an extreme equilibrium by the oracle %v", a, b, k, want)
		}
	}
	if len(got) != len(e.Equilibria) {
		t.Fatalf("an extreme equilibrium listed twice: %v", e.Equilibria)
	}
	half := big.NewRat(1, 2)
	mid := func(p, q []*big.Rat) []*big.Rat {
		out := make([]*big.Rat, len(p))
		for i := range p {
			out[i] = new(big.Rat).Mul(new(big.Rat).Add(p[i], q[i]), half)
		}
		return out
	}
	if len(e.Equilibria) > 0 && len(e.Subsets) == 0 {
		t.Fatal("equilibria but no maximal Nash subset")
	}
	for _, s := range e.Subsets {
		for _, i := range s.Rows {
			for _, j := range s.Cols {
				if !isNash(a, b, e.RowStrategies[i], e.ColStrategies[j]) {
					t.Fatalf("subset %+v: (%d, %d) is not an equilibrium", s, i, j)
				}
			}
		}
		x := mid(e.RowStrategies[s.Rows[0]], e.RowStrategies[s.Rows[len(s.Rows)-1]])
		y := mid(e.ColStrategies[s.Cols[0]], e.ColStrategies[s.Cols[len(s.Cols)-1]])
		if !isNash(a, b, x, y) {
			t.Fatalf("subset %+v: the midpoint (%v, %v) is not an equilibrium", s, x, y)
		}
		// No other strategy of either side is an equilibrium against all of the other side's.
		fits := func(own [][]*big.Rat, in, other []int, pair func(mine, theirs int) bool) int {
			for k := range own {
				ok := !slices.Contains(in, k)
				for _, o := range other {
					ok = ok && pair(k, o)
				}
				if ok {
					return k
				}
			}
			return -1
		}
		nash := func(i, j int) bool { return isNash(a, b, e.RowStrategies[i], e.ColStrategies[j]) }
		if k := fits(e.RowStrategies, s.Rows, s.Cols, nash); k >= 0 {
			t.Fatalf("subset %+v is not maximal: row strategy %d fits", s, k)
		}
		if k := fits(e.ColStrategies, s.Cols, s.Rows, func(j, i int) bool { return nash(i, j) }); k >= 0 {
			t.Fatalf("subset %+v is not maximal: column strategy %d fits", s, k)
		}
	}
	if gridDen == 0 {
		return e
	}
	hull := func(strats [][]*big.Rat, idx []int) [][]*big.Rat {
		var out [][]*big.Rat
		for _, k := range idx {
			out = append(out, strats[k])
		}
		return out
	}
	for _, x := range grid(len(a), gridDen) {
		for _, y := range grid(len(a[0]), gridDen) {
			if !isNash(a, b, x, y) {
				continue
			}
			if !slices.ContainsFunc(e.Subsets, func(s equilibria.NashSubset) bool {
				return inHull(x, hull(e.RowStrategies, s.Rows)) && inHull(y, hull(e.ColStrategies, s.Cols))
			}) {
				t.Fatalf("A=%v B=%v: the equilibrium (%v, %v) lies in no maximal Nash subset %+v", a, b, x, y, e.Subsets)
			}
		}
	}
	return e
}

// TestExtremeEquilibriaRandomDegenerate holds the solver against the oracle on random games of
// up to 4 x 4 actions, most with payoffs in 0..2 (so degenerate), some with wider ones.
func TestExtremeEquilibriaRandomDegenerate(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	degenerate := 0
	for it := range iterations() {
		rows, cols := 1+rng.IntN(4), 1+rng.IntN(4)
		span := []int{2, 3, 3, 5, 40}[it%5]
		a, b := randomBimatrix(rng, rows, cols, span)
		den := 0
		if rows <= 3 && cols <= 3 {
			den = 6
		}
		e := checkExtreme(t, a, b, den)
		if len(e.Subsets) < len(e.Equilibria) {
			degenerate++ // a continuum of equilibria
		}
	}
	t.Logf("%d games had a continuum of equilibria", degenerate)
	if degenerate == 0 {
		t.Error("no random game had a continuum: the test does not reach degenerate games")
	}
}

// TestExtremeEquilibriaKnown: games whose equilibria are worked out in the comments.
func TestExtremeEquilibriaKnown(t *testing.T) {
	q := whole
	t.Run("issue example: a continuum of completely mixed equilibria", func(t *testing.T) {
		// Cells (Alice, Bob): row 1 (0,1) (2,1); row 2 (2,0) (1,0). Bob gets x1 from either
		// column whatever Alice does, so he is always indifferent. Alice is indifferent when
		// 2 y2 = 2 y1 + y2, i.e. y1 = 1/3; she plays row 1 for y1 < 1/3, row 2 for y1 > 1/3.
		// Equilibria: (row 1, y1 <= 1/3), (row 2, y1 >= 1/3) and (any x, y1 = 1/3), among them
		// Alice (1/2, 1/2) against Bob (1/3, 2/3), paying (4/3, 1/2).
		a, b := q([]int64{0, 2}, []int64{2, 1}), q([]int64{1, 1}, []int64{0, 0})
		e := checkExtreme(t, a, b, 12)
		if !e.CompletelyMixed() {
			t.Error("CompletelyMixed = false; Alice (1/2, 1/2) against Bob (1/3, 2/3) is an equilibrium")
		}
		x, y := []*big.Rat{r(1, 2), r(1, 2)}, []*big.Rat{r(1, 3), r(2, 3)}
		if !isNash(a, b, x, y) || payoff(a, x, y).Cmp(r(4, 3)) != 0 || payoff(b, x, y).Cmp(r(1, 2)) != 0 {
			t.Fatal("the worked example is wrong")
		}
	})
	t.Run("matching pennies: one equilibrium, completely mixed", func(t *testing.T) {
		e := checkExtreme(t, q([]int64{1, -1}, []int64{-1, 1}), q([]int64{-1, 1}, []int64{1, -1}), 12)
		if !e.Unique() || !e.CompletelyMixed() || key(e.RowStrategies[0]) != "1/2,1/2" {
			t.Errorf("matching pennies: %+v", e)
		}
	})
	t.Run("stag hunt: two pure, one mixed with stag 1/3", func(t *testing.T) {
		// Row: stag pays 3y, hare pays 1: indifferent at y = 1/3; symmetric.
		e := checkExtreme(t, q([]int64{3, 0}, []int64{1, 1}), q([]int64{3, 1}, []int64{0, 1}), 12)
		if len(e.Equilibria) != 3 || len(e.Subsets) != 3 || key(e.Mixed(2).RowMix) != "1/3,2/3" {
			t.Errorf("stag hunt: %+v", e)
		}
	})
	t.Run("golden balls: a continuum where one steals", func(t *testing.T) {
		// (split, split) 1/2 each, (split, steal) 0,1, (steal, split) 1,0, (steal, steal) 0,0.
		// Against steal every strategy pays 0, so (any x, steal) with... the column player
		// needs steal to be a best reply: it pays x1 against split's x1/2, always. So (x,
		// steal) for every x, and (steal, y) for every y: two segments meeting at (steal, steal).
		a, b := q([]int64{1, 0}, []int64{2, 0}), q([]int64{1, 2}, []int64{0, 0})
		e := checkExtreme(t, a, b, 12)
		if len(e.Subsets) != 2 || len(e.Equilibria) != 3 || e.CompletelyMixed() {
			t.Errorf("golden balls: %d subsets %+v, %d extreme", len(e.Subsets), e.Subsets, len(e.Equilibria))
		}
	})
	t.Run("all payoffs equal: everything is an equilibrium", func(t *testing.T) {
		e := checkExtreme(t, q([]int64{0, 0, 0}, []int64{0, 0, 0}), q([]int64{0, 0, 0}, []int64{0, 0, 0}), 6)
		if len(e.Subsets) != 1 || len(e.Equilibria) != 6 || !e.CompletelyMixed() {
			t.Errorf("constant game: %+v", e)
		}
	})
}

// TestExtremeEquilibriaRefuses games of more than two players.
func TestExtremeEquilibriaRefuses(t *testing.T) {
	one := equilibria.Payoffs{r(1, 1), r(1, 1), r(1, 1)}
	m, err := equilibria.NewGame([]int{1, 1, 1}, []equilibria.Payoffs{one})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := equilibria.ExtremeEquilibria(m); err == nil {
		t.Error("a three-player game was accepted")
	}
}
