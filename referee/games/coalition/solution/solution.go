// Package solution computes exact solution concepts of coalition games with transferable utility,
// given as data: n players and a value for every coalition (the characteristic function). It
// gives the Shapley value, the core as its set of vertices, and a test of core membership, all
// in exact rational arithmetic (math/big.Rat), plus the integer rounding agents need to turn a
// split into whole units.
//
// It serves the coalition game's rules, its built-in agent, `parley analyze coalition` and the
// metrics alike, and knows nothing of matches or seats.
package solution

import (
	"errors"
	"fmt"
	"math/big"
	"math/bits"
	"slices"
	"strings"
)

// Limits on the size of games.
const (
	// MaxPlayers bounds the players of a Game: its values take 2^n entries, and the Shapley
	// value O(n 2^n) steps.
	MaxPlayers = 16
	// MaxCorePlayers bounds the players of a game whose core Core computes. The core's
	// vertices are found by trying every set of n-1 coalitions whose constraints could be tight
	// together; there are C(2^n-2, n-1) of them: 27,405 for 5 players, millions for 6.
	MaxCorePlayers = 5
)

// ErrTooManyPlayers is returned for games larger than a computation supports.
var ErrTooManyPlayers = errors.New("solution: too many players")

// Coalition is a set of players: bit i is set when player i (0-based) is a member.
type Coalition uint32

// CoalitionOf returns the coalition of the given players.
func CoalitionOf(players ...int) Coalition {
	var c Coalition
	for _, p := range players {
		c |= 1 << p
	}
	return c
}

// Grand returns the coalition of all n players.
func Grand(n int) Coalition { return Coalition(1)<<n - 1 }

// Has reports whether player i is a member.
func (c Coalition) Has(i int) bool { return i >= 0 && i < 32 && c&(1<<i) != 0 }

// Size returns the number of members.
func (c Coalition) Size() int { return bits.OnesCount32(uint32(c)) }

// Members returns the members in increasing order.
func (c Coalition) Members() []int {
	out := make([]int, 0, c.Size())
	for i := range 32 {
		if c.Has(i) {
			out = append(out, i)
		}
	}
	return out
}

// Name writes the coalition with the players' names joined by "+", e.g. "A+B"; players
// without a name are written as their index.
func (c Coalition) Name(names []string) string {
	parts := make([]string, 0, c.Size())
	for _, i := range c.Members() {
		if i < len(names) {
			parts = append(parts, names[i])
		} else {
			parts = append(parts, fmt.Sprint(i))
		}
	}
	return strings.Join(parts, "+")
}

// Game is a coalition game with transferable utility: n players and the value of every
// coalition. The empty coalition is worth 0. A Game is immutable.
type Game struct {
	n int
	v []*big.Rat // v[c] is the value of coalition c; len 1<<n
}

// New returns the game of n players (1 to MaxPlayers) in which coalition c is worth values[c]
// (len(values) must be 2^n; values[0], the empty coalition, must be nil or 0; other nil
// entries are worth 0). The values are copied.
func New(n int, values []*big.Rat) (*Game, error) {
	if n < 1 || n > MaxPlayers {
		return nil, fmt.Errorf("solution: a game has 1 to %d players, got %d", MaxPlayers, n)
	}
	if len(values) != 1<<n {
		return nil, fmt.Errorf("solution: a game of %d players needs %d values (one per coalition, the empty one included), got %d", n, 1<<n, len(values))
	}
	if values[0] != nil && values[0].Sign() != 0 {
		return nil, fmt.Errorf("solution: the empty coalition must be worth 0, got %s", values[0].RatString())
	}
	g := &Game{n: n, v: make([]*big.Rat, len(values))}
	for c, x := range values {
		g.v[c] = new(big.Rat)
		if x != nil {
			g.v[c].Set(x)
		}
	}
	return g, nil
}

// NewInt is New with whole-number values.
func NewInt(n int, values []int64) (*Game, error) {
	rats := make([]*big.Rat, len(values))
	for i, x := range values {
		rats[i] = new(big.Rat).SetInt64(x)
	}
	return New(n, rats)
}

// Players returns n.
func (g *Game) Players() int { return g.n }

// Value returns a copy of the value of coalition c.
func (g *Game) Value(c Coalition) *big.Rat { return new(big.Rat).Set(g.v[c]) }

// Shapley returns the Shapley value: player i gets the sum, over coalitions S without i, of
// |S|! (n-|S|-1)! / n! times i's marginal contribution v(S+i) - v(S).
func (g *Game) Shapley() []*big.Rat {
	n := g.n
	// weight[s] = s! (n-s-1)! / n!
	weight := make([]*big.Rat, n)
	for s := range n {
		num := new(big.Int).Mul(factorial(s), factorial(n-s-1))
		weight[s] = new(big.Rat).SetFrac(num, factorial(n))
	}
	phi := make([]*big.Rat, n)
	diff := new(big.Rat)
	term := new(big.Rat)
	for i := range n {
		phi[i] = new(big.Rat)
		bit := Coalition(1) << i
		for s := Coalition(0); s < Coalition(1)<<n; s++ {
			if s&bit != 0 {
				continue
			}
			diff.Sub(g.v[s|bit], g.v[s])
			phi[i].Add(phi[i], term.Mul(weight[s.Size()], diff))
		}
	}
	return phi
}

func factorial(k int) *big.Int {
	f := big.NewInt(1)
	for i := 2; i <= k; i++ {
		f.Mul(f, big.NewInt(int64(i)))
	}
	return f
}

// InCore reports whether x (one amount per player) is in the core: the amounts add up to the
// grand coalition's value, and every coalition gets at least its value.
func (g *Game) InCore(x []*big.Rat) bool {
	if len(x) != g.n {
		return false
	}
	sums := g.coalitionSums(x)
	grand := Grand(g.n)
	if sums[grand].Cmp(g.v[grand]) != 0 {
		return false
	}
	for c := Coalition(1); c < grand; c++ {
		if sums[c].Cmp(g.v[c]) < 0 {
			return false
		}
	}
	return true
}

// coalitionSums returns x(c), the sum of x over the members of c, for every coalition c.
func (g *Game) coalitionSums(x []*big.Rat) []*big.Rat {
	sums := make([]*big.Rat, 1<<g.n)
	sums[0] = new(big.Rat)
	for c := Coalition(1); c < Coalition(1)<<g.n; c++ {
		low := bits.TrailingZeros32(uint32(c))
		sums[c] = new(big.Rat).Add(sums[c&(c-1)], x[low])
	}
	return sums
}

// Core is the core of a game: the splits of the grand coalition's value that give every
// coalition at least its value. It is a bounded convex polytope, given by its vertices.
type Core struct {
	// Vertices of the core, each one amount per player, sorted, without duplicates. Empty when
	// the core is empty; one vertex when the core is a single point.
	Vertices [][]*big.Rat
}

// Empty reports whether the core is empty.
func (c *Core) Empty() bool { return len(c.Vertices) == 0 }

// Centroid returns the average of the vertices, a point of the core, or nil when the core is
// empty.
func (c *Core) Centroid() []*big.Rat {
	if c.Empty() {
		return nil
	}
	n := len(c.Vertices[0])
	out := make([]*big.Rat, n)
	k := new(big.Rat).SetInt64(int64(len(c.Vertices)))
	for i := range n {
		out[i] = new(big.Rat)
		for _, v := range c.Vertices {
			out[i].Add(out[i], v[i])
		}
		out[i].Quo(out[i], k)
	}
	return out
}

// Core returns the core of the game as its vertices, or ErrTooManyPlayers for games of more
// than MaxCorePlayers players.
//
// The core is {x : x(N) = v(N), x(S) >= v(S) for every coalition S}. Each vertex is the
// unique solution of x(N) = v(N) and x(S) = v(S) for some n-1 coalitions S whose constraints
// are independent. Core tries every such set of n-1 proper coalitions (a depth-first search
// that keeps the rows chosen so far in echelon form and skips a coalition whose row depends
// on them), solves the system exactly, keeps the solutions that satisfy every constraint, and
// removes duplicates.
func (g *Game) Core() (*Core, error) {
	if g.n > MaxCorePlayers {
		return nil, fmt.Errorf("%w: the core is computed for at most %d players, not %d", ErrTooManyPlayers, MaxCorePlayers, g.n)
	}
	e := &coreSearch{g: g, seen: make(map[string]bool)}
	grand := Grand(g.n)
	e.push(e.reduce(grand, g.v[grand]))
	e.search(1)
	slices.SortFunc(e.vertices, compareVectors)
	return &Core{Vertices: e.vertices}, nil
}

// row is one equation a.x = b in echelon form: a's first nonzero entry is 1, at column pivot.
type row struct {
	a     []*big.Rat
	b     *big.Rat
	pivot int
}

type coreSearch struct {
	g        *Game
	rows     []row // the equations chosen so far, in echelon form (each reduced by the earlier ones)
	vertices [][]*big.Rat
	seen     map[string]bool
}

// reduce returns coalition c's equation x(c) = value reduced by the rows chosen so far, or
// false when it depends on them.
func (e *coreSearch) reduce(c Coalition, value *big.Rat) (row, bool) {
	n := e.g.n
	r := row{a: make([]*big.Rat, n), b: new(big.Rat).Set(value)}
	for i := range n {
		r.a[i] = new(big.Rat)
		if c.Has(i) {
			r.a[i].SetInt64(1)
		}
	}
	t := new(big.Rat)
	for _, q := range e.rows {
		f := new(big.Rat).Set(r.a[q.pivot])
		if f.Sign() == 0 {
			continue
		}
		for j := q.pivot; j < n; j++ {
			r.a[j].Sub(r.a[j], t.Mul(f, q.a[j]))
		}
		r.b.Sub(r.b, t.Mul(f, q.b))
	}
	r.pivot = -1
	for j := range n {
		if r.a[j].Sign() != 0 {
			r.pivot = j
			break
		}
	}
	if r.pivot < 0 {
		return r, false
	}
	inv := new(big.Rat).Inv(r.a[r.pivot])
	for j := r.pivot; j < n; j++ {
		r.a[j].Mul(r.a[j], inv)
	}
	r.b.Mul(r.b, inv)
	return r, true
}

func (e *coreSearch) push(r row, ok bool) {
	if !ok {
		panic("solution: the grand coalition's equation is dependent") // impossible: no rows yet
	}
	e.rows = append(e.rows, r)
}

// search extends the chosen rows with proper coalitions from first on.
func (e *coreSearch) search(first Coalition) {
	n := e.g.n
	if len(e.rows) == n {
		e.solve()
		return
	}
	grand := Grand(n)
	// Leave enough coalitions for the rows still needed.
	need := Coalition(n - len(e.rows))
	for c := first; c+need <= grand; c++ {
		r, ok := e.reduce(c, e.g.v[c])
		if !ok {
			continue
		}
		e.rows = append(e.rows, r)
		e.search(c + 1)
		e.rows = e.rows[:len(e.rows)-1]
	}
}

// solve finds the unique solution of the chosen rows and keeps it if it is in the core.
func (e *coreSearch) solve() {
	n := e.g.n
	// The rows are in echelon form with distinct pivots; sort them by pivot to back-substitute.
	rows := slices.Clone(e.rows)
	slices.SortFunc(rows, func(p, q row) int { return p.pivot - q.pivot })
	x := make([]*big.Rat, n)
	t := new(big.Rat)
	for k := n - 1; k >= 0; k-- {
		r := rows[k]
		v := new(big.Rat).Set(r.b)
		for j := r.pivot + 1; j < n; j++ {
			v.Sub(v, t.Mul(r.a[j], x[j]))
		}
		x[r.pivot] = v // r.a[pivot] is 1
	}
	if !e.g.InCore(x) {
		return
	}
	key := vectorKey(x)
	if e.seen[key] {
		return
	}
	e.seen[key] = true
	e.vertices = append(e.vertices, x)
}

func vectorKey(x []*big.Rat) string {
	parts := make([]string, len(x))
	for i, v := range x {
		parts[i] = v.RatString()
	}
	return strings.Join(parts, ",")
}

func compareVectors(a, b []*big.Rat) int {
	for i := range a {
		if c := a[i].Cmp(b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// Round turns x, amounts that add up to total, into whole numbers that add up to total
// exactly, by largest remainders: each amount is rounded down, and the units left over go one
// each to the amounts with the largest fractional parts (ties to the lower index). Negative
// amounts are first raised to 0 and the others scaled down in proportion so the sum is kept,
// so every result is at least 0. It returns an error when x does not add up to total or when
// total is negative.
func Round(x []*big.Rat, total int64) ([]int64, error) {
	if total < 0 {
		return nil, fmt.Errorf("solution: cannot split a negative total %d into amounts of at least 0", total)
	}
	sum := new(big.Rat)
	for _, v := range x {
		sum.Add(sum, v)
	}
	want := new(big.Rat).SetInt64(total)
	if sum.Cmp(want) != 0 {
		return nil, fmt.Errorf("solution: the amounts add up to %s, not %d", sum.RatString(), total)
	}
	y := make([]*big.Rat, len(x))
	pos := new(big.Rat)
	for i, v := range x {
		y[i] = new(big.Rat).Set(v)
		if y[i].Sign() < 0 {
			y[i].SetInt64(0)
		}
		pos.Add(pos, y[i])
	}
	if pos.Cmp(want) != 0 { // some amounts were negative: scale the rest back to total
		scale := new(big.Rat).Quo(want, pos) // pos > total >= 0, so pos > 0
		for _, v := range y {
			v.Mul(v, scale)
		}
	}
	out := make([]int64, len(y))
	type rem struct {
		i    int
		frac *big.Rat
	}
	rems := make([]rem, len(y))
	left := total
	for i, v := range y {
		fl := new(big.Int).Quo(v.Num(), v.Denom()) // v >= 0: truncation is the floor
		out[i] = fl.Int64()
		left -= out[i]
		rems[i] = rem{i, new(big.Rat).Sub(v, new(big.Rat).SetInt(fl))}
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return b.frac.Cmp(a.frac) })
	for k := 0; left > 0; k++ {
		out[rems[k%len(rems)].i]++
		left--
	}
	return out, nil
}

// Float returns x as float64 values, for display and distances.
func Float(x []*big.Rat) []float64 {
	out := make([]float64, len(x))
	for i, v := range x {
		out[i], _ = v.Float64()
	}
	return out
}
