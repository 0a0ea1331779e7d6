package solution_test

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/parley-arena/parley/referee/games/coalition/solution"
)

// The reference values below are derived in the tests by hand-written formulas or by other
// methods than the package's, never by calling the code under test.

// byName builds the values of an n-player game from "AB=750"-style entries, players named A,
// B, C, ... in order; coalitions not listed are worth 0.
func byName(t *testing.T, n int, entries ...string) []int64 {
	t.Helper()
	v := make([]int64, 1<<n)
	for _, e := range entries {
		name, val, _ := strings.Cut(e, "=")
		var c int
		for _, r := range name {
			c |= 1 << (r - 'A')
		}
		if _, err := fmt.Sscan(val, &v[c]); err != nil {
			t.Fatal(err)
		}
	}
	return v
}

func mustGame(t *testing.T, n int, v []int64) *solution.Game {
	t.Helper()
	g, err := solution.NewInt(n, v)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic(s)
	}
	return r
}

func rats(ss ...string) []*big.Rat {
	out := make([]*big.Rat, len(ss))
	for i, s := range ss {
		out[i] = rat(s)
	}
	return out
}

func vecString(x []*big.Rat) string {
	parts := make([]string, len(x))
	for i, v := range x {
		parts[i] = v.RatString()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

func verticesString(vs [][]*big.Rat) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = vecString(v)
	}
	return strings.Join(parts, " ")
}

func equalVec(a, b []*big.Rat) bool {
	return slices.EqualFunc(a, b, func(x, y *big.Rat) bool { return x.Cmp(y) == 0 })
}

// sameVertices compares vertex sets, in any order.
func sameVertices(got, want [][]*big.Rat) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.ContainsFunc(got, func(g []*big.Rat) bool { return equalVec(g, w) }) {
			return false
		}
	}
	return true
}

// shapleyByPermutations is the textbook definition: each player's marginal contribution
// averaged over all n! orders of arrival. An independent method from the package's subset
// formula.
func shapleyByPermutations(n int, v []int64) []*big.Rat {
	sum := make([]*big.Rat, n)
	for i := range sum {
		sum[i] = new(big.Rat)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	count := 0
	var permute func(k int)
	permute = func(k int) {
		if k == n {
			count++
			c := 0
			for _, p := range order {
				sum[p].Add(sum[p], new(big.Rat).SetInt64(v[c|1<<p]-v[c]))
				c |= 1 << p
			}
			return
		}
		for i := k; i < n; i++ {
			order[k], order[i] = order[i], order[k]
			permute(k + 1)
			order[k], order[i] = order[i], order[k]
		}
	}
	permute(0)
	for i := range sum {
		sum[i].Quo(sum[i], new(big.Rat).SetInt64(int64(count)))
	}
	return sum
}

// TestDefaultGame is the spec's ice-cream game: AB=750, AC=750, BC=500, ABC=1000.
func TestDefaultGame(t *testing.T) {
	v := byName(t, 3, "AB=750", "AC=750", "BC=500", "ABC=1000")
	g := mustGame(t, 3, v)
	const a, b, c, ab, ac, bc, abc = 0, 0, 0, 750, 750, 500, 1000

	// Shapley by the three-player formula: weight 1/3 for joining alone or last, 1/6 for
	// joining one other player.
	third, sixth := big.NewRat(1, 3), big.NewRat(1, 6)
	shapley := func(alone, withX, x, withY, y, last, others int64) *big.Rat {
		s := new(big.Rat).Mul(third, big.NewRat(alone, 1))
		s.Add(s, new(big.Rat).Mul(sixth, big.NewRat(withX-x, 1)))
		s.Add(s, new(big.Rat).Mul(sixth, big.NewRat(withY-y, 1)))
		return s.Add(s, new(big.Rat).Mul(third, big.NewRat(last-others, 1)))
	}
	want := []*big.Rat{
		shapley(a, ab, b, ac, c, abc, bc),
		shapley(b, ab, a, bc, c, abc, ac),
		shapley(c, ac, a, bc, b, abc, ab),
	}
	got := g.Shapley()
	if !equalVec(got, want) {
		t.Errorf("Shapley = %s, want %s", vecString(got), vecString(want))
	}
	// The spec's decimals: A=416.67, B=C=291.67.
	for i, w := range []string{"416.67", "291.67", "291.67"} {
		if s := got[i].FloatString(2); s != w {
			t.Errorf("Shapley[%d] = %s, want %s", i, s, w)
		}
	}
	if !equalVec(got, shapleyByPermutations(3, v)) {
		t.Errorf("Shapley differs from the permutation definition")
	}

	// Core by hand: xA+xB >= 750 and xC = 1000-xA-xB give xC <= 250; likewise xB <= 250, and
	// xB+xC >= 500 forces both to 250, so xA = 500. A single point.
	core, err := g.Core()
	if err != nil {
		t.Fatal(err)
	}
	point := rats(fmt.Sprint(abc-2*250), "250", "250")
	if !sameVertices(core.Vertices, [][]*big.Rat{point}) {
		t.Errorf("core = %s, want the single point %s", verticesString(core.Vertices), vecString(point))
	}
	if !g.InCore(point) {
		t.Errorf("InCore(%s) = false", vecString(point))
	}
	for _, x := range [][]*big.Rat{rats("501", "249", "250"), rats("500", "250", "249"), rats("500", "250"), g.Shapley()} {
		if g.InCore(x) {
			t.Errorf("InCore(%s) = true", vecString(x))
		}
	}
}

func TestMajorityGameHasEmptyCore(t *testing.T) {
	// Any two of three players win 1: each pair needs at least 1, so 2(xA+xB+xC) >= 3, but the
	// grand coalition only has 1.
	v := byName(t, 3, "AB=1", "AC=1", "BC=1", "ABC=1")
	g := mustGame(t, 3, v)
	core, err := g.Core()
	if err != nil {
		t.Fatal(err)
	}
	if !core.Empty() || core.Centroid() != nil {
		t.Errorf("core = %s, want empty", verticesString(core.Vertices))
	}
	// Symmetry and efficiency: 1/3 each.
	if got := g.Shapley(); !equalVec(got, rats("1/3", "1/3", "1/3")) {
		t.Errorf("Shapley = %s, want 1/3 each", vecString(got))
	}
	if g.InCore(rats("1/3", "1/3", "1/3")) {
		t.Error("InCore(1/3 each) = true in a game with an empty core")
	}
}

func TestAdditiveGame(t *testing.T) {
	// v(S) = sum of a_i over S: the core is the single point a, and so is the Shapley value
	// (every marginal contribution of i is a_i).
	a := []int64{3, 0, 11, 7}
	n := len(a)
	v := make([]int64, 1<<n)
	for c := range v {
		for i := range n {
			if c&(1<<i) != 0 {
				v[c] += a[i]
			}
		}
	}
	g := mustGame(t, n, v)
	want := rats("3", "0", "11", "7")
	if got := g.Shapley(); !equalVec(got, want) {
		t.Errorf("Shapley = %s, want %s", vecString(got), vecString(want))
	}
	core, err := g.Core()
	if err != nil {
		t.Fatal(err)
	}
	if !sameVertices(core.Vertices, [][]*big.Rat{want}) {
		t.Errorf("core = %s, want the single point %s", verticesString(core.Vertices), vecString(want))
	}
}

func TestGloveMarket(t *testing.T) {
	// Players A, B hold left gloves, C, D right gloves; a coalition is worth its pairs,
	// min(#left, #right). Core by hand: the pairs A+C and B+D each need 1 and the four share
	// 2, so xA+xC = xB+xD = 1; likewise xA+xD = xB+xC = 1. Hence xA = xB = t and
	// xC = xD = 1-t, with 0 <= t <= 1 (every single player needs 0): a segment with ends
	// (0,0,1,1) and (1,1,0,0). Left and right play symmetric roles: Shapley 1/2 each.
	n := 4
	v := make([]int64, 1<<n)
	for c := range v {
		left := c&1 + c>>1&1
		right := c>>2&1 + c>>3&1
		v[c] = int64(min(left, right))
	}
	g := mustGame(t, n, v)
	if got := g.Shapley(); !equalVec(got, rats("1/2", "1/2", "1/2", "1/2")) || !equalVec(got, shapleyByPermutations(n, v)) {
		t.Errorf("Shapley = %s, want 1/2 each", vecString(got))
	}
	core, err := g.Core()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]*big.Rat{rats("0", "0", "1", "1"), rats("1", "1", "0", "0")}
	if !sameVertices(core.Vertices, want) {
		t.Errorf("core = %s, want %s", verticesString(core.Vertices), verticesString(want))
	}
	if c := core.Centroid(); !equalVec(c, rats("1/2", "1/2", "1/2", "1/2")) {
		t.Errorf("centroid = %s", vecString(c))
	}
	for _, tc := range []struct {
		x    []*big.Rat
		want bool
	}{
		{rats("1/4", "1/4", "3/4", "3/4"), true},
		{rats("1/4", "1/3", "3/4", "2/3"), false}, // sums to 2, but A+D gets 1/4+2/3 < 1
		{rats("-1", "-1", "2", "2"), false},
		{rats("1", "1", "0", "1"), false}, // more than there is
	} {
		if got := g.InCore(tc.x); got != tc.want {
			t.Errorf("InCore(%s) = %v, want %v", vecString(tc.x), got, tc.want)
		}
	}
}

func TestUnanimityGame(t *testing.T) {
	// u_T with T = {A, B, C} among 4 players: a coalition is worth 1 when it contains all of
	// T. Shapley: the carriers share equally, 1/3 each, D (a null player) 0. Core: x(S) >= 1
	// for every S containing T means D and any split of 1 among T; its vertices are the unit
	// vectors of A, B and C.
	n := 4
	v := make([]int64, 1<<n)
	for c := range v {
		if c&0b0111 == 0b0111 {
			v[c] = 1
		}
	}
	g := mustGame(t, n, v)
	if got := g.Shapley(); !equalVec(got, rats("1/3", "1/3", "1/3", "0")) {
		t.Errorf("Shapley = %s", vecString(got))
	}
	core, err := g.Core()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]*big.Rat{rats("1", "0", "0", "0"), rats("0", "1", "0", "0"), rats("0", "0", "1", "0")}
	if !sameVertices(core.Vertices, want) {
		t.Errorf("core = %s, want %s", verticesString(core.Vertices), verticesString(want))
	}
}

func TestConvexGameVerticesAreMarginalVectors(t *testing.T) {
	// v(S) = |S|^2 is strictly convex, so the core's vertices are exactly the n! marginal
	// vectors: the k-th player to arrive adds k^2 - (k-1)^2 = 2k-1. For 5 players, every
	// ordering of (1, 3, 5, 7, 9); Shapley 5 each.
	n := 5
	v := make([]int64, 1<<n)
	for c := range v {
		k := 0
		for i := range n {
			k += c >> i & 1
		}
		v[c] = int64(k * k)
	}
	g := mustGame(t, n, v)
	if got := g.Shapley(); !equalVec(got, rats("5", "5", "5", "5", "5")) {
		t.Errorf("Shapley = %s", vecString(got))
	}
	var want [][]*big.Rat
	var permute func(p []int64, k int)
	permute = func(p []int64, k int) {
		if k == len(p) {
			x := make([]*big.Rat, len(p))
			for i, a := range p {
				x[i] = big.NewRat(a, 1)
			}
			want = append(want, x)
			return
		}
		for i := k; i < len(p); i++ {
			p[k], p[i] = p[i], p[k]
			permute(p, k+1)
			p[k], p[i] = p[i], p[k]
		}
	}
	permute([]int64{1, 3, 5, 7, 9}, 0)
	core, err := g.Core()
	if err != nil {
		t.Fatal(err)
	}
	if len(core.Vertices) != 120 || !sameVertices(core.Vertices, want) {
		t.Errorf("core has %d vertices, want the 120 orderings of (1,3,5,7,9): %s", len(core.Vertices), verticesString(core.Vertices))
	}
	for i := 1; i < len(core.Vertices); i++ {
		if slices.CompareFunc(core.Vertices[i-1], core.Vertices[i], func(a, b *big.Rat) int { return a.Cmp(b) }) >= 0 {
			t.Fatalf("vertices are not sorted and distinct at %d", i)
		}
	}
}

// TestFourPlayerBruteForce checks a lopsided 4-player game without linear programming: brute
// force lists every whole-number split of 12 that meets all 15 constraints. Every vertex found
// must be one of them (this game's vertices are whole), must be tight on constraints of full
// rank (so it is a vertex), and the vertices must be all of them: for many objectives, the best
// whole core point scores no more than the best vertex (a linear objective is maximised over a
// polytope at a vertex, and a missing vertex would be the unique best for some objective).
func TestFourPlayerBruteForce(t *testing.T) {
	v := byName(t, 4, "A=1", "AB=6", "AC=5", "BC=4", "BD=2", "ABC=10", "ABD=8", "BCD=6", "ACD=7", "ABCD=12")
	n := 4
	g := mustGame(t, n, v)
	if got, want := g.Shapley(), shapleyByPermutations(n, v); !equalVec(got, want) {
		t.Errorf("Shapley = %s, want %s", vecString(got), vecString(want))
	}
	core, err := g.Core()
	if err != nil {
		t.Fatal(err)
	}
	inCore := func(x []int64) bool {
		for c := 1; c < 1<<n; c++ {
			var s int64
			for i := range n {
				if c&(1<<i) != 0 {
					s += x[i]
				}
			}
			if s < v[c] || (c == 1<<n-1 && s != v[c]) {
				return false
			}
		}
		return true
	}
	var points [][]int64
	for a := int64(0); a <= 12; a++ {
		for b := int64(0); a+b <= 12; b++ {
			for c := int64(0); a+b+c <= 12; c++ {
				x := []int64{a, b, c, 12 - a - b - c}
				if inCore(x) {
					points = append(points, x)
				}
			}
		}
	}
	if len(points) == 0 || len(core.Vertices) == 0 {
		t.Fatalf("the test game should have a core: %d whole points, vertices %s", len(points), verticesString(core.Vertices))
	}
	var whole [][]int64
	for _, vx := range core.Vertices {
		p := make([]int64, n)
		for i := range vx {
			if !vx[i].IsInt() {
				t.Fatalf("vertex %s is not whole; the test relies on whole vertices", vecString(vx))
			}
			p[i] = vx[i].Num().Int64()
		}
		if !slices.ContainsFunc(points, func(q []int64) bool { return slices.Equal(p, q) }) {
			t.Errorf("vertex %v is not a brute-force core point", p)
		}
		whole = append(whole, p)
	}
	for _, p := range points {
		x := make([]*big.Rat, n)
		for i := range p {
			x[i] = big.NewRat(p[i], 1)
		}
		if !g.InCore(x) {
			t.Errorf("InCore(%v) = false, brute force says true", p)
		}
	}
	best := func(set [][]int64, obj []int64) int64 {
		top := int64(-1 << 62)
		for _, x := range set {
			var s int64
			for i := range x {
				s += obj[i] * x[i]
			}
			top = max(top, s)
		}
		return top
	}
	// Every objective with coordinates from -3 to 3.
	for k := range 7 * 7 * 7 * 7 {
		obj := []int64{int64(k%7) - 3, int64(k/7%7) - 3, int64(k/49%7) - 3, int64(k/343) - 3}
		if b, bv := best(points, obj), best(whole, obj); b != bv {
			t.Fatalf("objective %v: best whole core point scores %d, best vertex %d: a vertex is missing", obj, b, bv)
		}
	}
	t.Logf("core vertices: %s; %d whole core points", verticesString(core.Vertices), len(points))
}

// rank is Gaussian elimination over the rationals, the test's own.
func rank(rows [][]*big.Rat) int {
	m := make([][]*big.Rat, len(rows))
	for i, r := range rows {
		m[i] = make([]*big.Rat, len(r))
		for j := range r {
			m[i][j] = new(big.Rat).Set(r[j])
		}
	}
	rk := 0
	for col := 0; len(m) > 0 && col < len(m[0]); col++ {
		p := -1
		for i := rk; i < len(m); i++ {
			if m[i][col].Sign() != 0 {
				p = i
				break
			}
		}
		if p < 0 {
			continue
		}
		m[rk], m[p] = m[p], m[rk]
		for i := range m {
			if i == rk || m[i][col].Sign() == 0 {
				continue
			}
			f := new(big.Rat).Quo(m[i][col], m[rk][col])
			for j := col; j < len(m[i]); j++ {
				m[i][j].Sub(m[i][j], new(big.Rat).Mul(f, m[rk][j]))
			}
		}
		rk++
	}
	return rk
}

func TestOnePlayer(t *testing.T) {
	g := mustGame(t, 1, []int64{0, 42})
	core, err := g.Core()
	if err != nil {
		t.Fatal(err)
	}
	if !sameVertices(core.Vertices, [][]*big.Rat{rats("42")}) || !equalVec(g.Shapley(), rats("42")) {
		t.Errorf("core %s, Shapley %s; want 42 for the only player", verticesString(core.Vertices), vecString(g.Shapley()))
	}
}

func TestLimitsAndErrors(t *testing.T) {
	if _, err := solution.NewInt(0, []int64{0}); err == nil {
		t.Error("a game of 0 players was accepted")
	}
	if _, err := solution.NewInt(2, []int64{0, 1, 2}); err == nil {
		t.Error("a game with too few values was accepted")
	}
	if _, err := solution.NewInt(1, []int64{5, 1}); err == nil {
		t.Error("a nonzero empty coalition was accepted")
	}
	if _, err := solution.NewInt(solution.MaxPlayers+1, make([]int64, 1<<(solution.MaxPlayers+1))); err == nil {
		t.Error("too many players accepted")
	}
	big6 := mustGame(t, solution.MaxCorePlayers+1, make([]int64, 1<<(solution.MaxCorePlayers+1)))
	if _, err := big6.Core(); !errors.Is(err, solution.ErrTooManyPlayers) {
		t.Errorf("Core of %d players: %v, want ErrTooManyPlayers", solution.MaxCorePlayers+1, err)
	}
	if len(big6.Shapley()) != solution.MaxCorePlayers+1 {
		t.Error("Shapley works for any size up to MaxPlayers")
	}
}

func TestCoalition(t *testing.T) {
	c := solution.CoalitionOf(0, 2, 3)
	if !c.Has(0) || c.Has(1) || !c.Has(3) || c.Has(-1) || c.Has(40) || c.Size() != 3 || !slices.Equal(c.Members(), []int{0, 2, 3}) {
		t.Errorf("coalition %b: wrong members", c)
	}
	if got := c.Name([]string{"A", "B", "C"}); got != "A+C+3" {
		t.Errorf("Name = %q", got)
	}
	if solution.Grand(3) != solution.CoalitionOf(0, 1, 2) {
		t.Error("Grand(3)")
	}
}

func TestRound(t *testing.T) {
	tests := []struct {
		x       []*big.Rat
		total   int64
		want    []int64
		wantErr bool
	}{
		{x: rats("1250/3", "875/3", "875/3"), total: 1000, want: []int64{417, 292, 291}},
		{x: rats("500", "250", "250"), total: 1000, want: []int64{500, 250, 250}},
		{x: rats("1/3", "1/3", "1/3"), total: 1, want: []int64{1, 0, 0}},
		{x: rats("2/3", "2/3", "2/3"), total: 2, want: []int64{1, 1, 0}},
		{x: rats("-10", "30", "10"), total: 30, want: []int64{0, 23, 7}}, // 30 and 10 scaled by 3/4
		{x: rats("0", "0"), total: 0, want: []int64{0, 0}},
		{x: rats("1", "1"), total: 3, wantErr: true},
		{x: rats("-1", "0"), total: -1, wantErr: true},
	}
	for _, tc := range tests {
		got, err := solution.Round(tc.x, tc.total)
		if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
			t.Errorf("Round(%s, %d) = %v, %v; want %v (error %v)", vecString(tc.x), tc.total, got, err, tc.want, tc.wantErr)
		}
	}
}

func BenchmarkCoreFivePlayers(b *testing.B) {
	n := 5
	v := make([]int64, 1<<n)
	for c := range v {
		k := 0
		for i := range n {
			k += c >> i & 1
		}
		v[c] = int64(k * k)
	}
	g, _ := solution.NewInt(n, v)
	for b.Loop() {
		if _, err := g.Core(); err != nil {
			b.Fatal(err)
		}
	}
}
