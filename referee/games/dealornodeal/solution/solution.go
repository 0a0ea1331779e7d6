// Package solution computes the exact reference points of Deal or No Deal
// (specs/deal-or-no-deal.md) for a pool of items and the two players' values: every
// allocation in the spec's enumeration order, envy-freeness (EF), Pareto optimality (PO), the
// Best allocation (largest total among EF ones), a datapoint's difficulty, the prior support a
// belief-tracking player starts from, and the estimation metrics of a final belief support.
// Everything is integer arithmetic, so nothing is rounded.
//
// It serves the game's rules, the bayes and greedy agents, the metrics and `parley analyze
// dond` alike, and knows nothing of matches or seats beyond "Alice" (seat 0) and "Bob".
package solution

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Limits keep enumerations small: at most MaxTypes item types of at most MaxCount items each,
// and at most MaxAllocations allocations.
const (
	MaxTypes       = 6
	MaxCount       = 10
	MaxAllocations = 100_000
	// MaxValue bounds one item's value.
	MaxValue = 1000
)

// Alloc is an allocation, written as what Alice (seat 0) receives of each item type; Bob
// receives the rest of the pool.
type Alloc []int

// Bundle returns what seat receives under a from a pool of counts.
func (a Alloc) Bundle(seat int, counts []int) []int {
	out := make([]int, len(counts))
	for i, c := range counts {
		if seat == 0 {
			out[i] = a[i]
		} else {
			out[i] = c - a[i]
		}
	}
	return out
}

// String writes the allocation as Alice's counts, "1,0,2".
func (a Alloc) String() string { return Ints(a) }

// Ints writes whole numbers separated by commas.
func Ints(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

// Game is a pool and both players' values.
type Game struct {
	// Counts of each item type.
	Counts []int
	// Values[seat][type] is seat's value of one item of the type.
	Values [2][]int
}

// Check validates the game: 1 to MaxTypes types, counts 1 to MaxCount, values 0 to MaxValue,
// the same number of each, the pool worth the same to both and more than 0, and at most
// MaxAllocations allocations.
func (g Game) Check() error {
	n := len(g.Counts)
	if n == 0 || n > MaxTypes {
		return fmt.Errorf("%d item types; 1 to %d are allowed", n, MaxTypes)
	}
	allocs := 1
	for i, c := range g.Counts {
		if c < 1 || c > MaxCount {
			return fmt.Errorf("count of type %d is %d; counts are 1 to %d", i+1, c, MaxCount)
		}
		allocs *= c + 1
	}
	if allocs > MaxAllocations {
		return fmt.Errorf("the pool has %d allocations, at most %d are allowed", allocs, MaxAllocations)
	}
	for seat, v := range g.Values {
		if len(v) != n {
			return fmt.Errorf("player %d has %d values for %d item types", seat+1, len(v), n)
		}
		for i, x := range v {
			if x < 0 || x > MaxValue {
				return fmt.Errorf("player %d's value of type %d is %d; values are 0 to %d", seat+1, i+1, x, MaxValue)
			}
		}
	}
	t0, t1 := Score(g.Counts, g.Values[0]), Score(g.Counts, g.Values[1])
	switch {
	case t0 != t1:
		return fmt.Errorf("the pool is worth %d to the first player and %d to the second; it must be worth the same to both", t0, t1)
	case t0 <= 0:
		return errors.New("the pool is worth nothing; it must be worth more than 0")
	}
	return nil
}

// Total is what the whole pool is worth to each player.
func (g Game) Total() int { return Score(g.Counts, g.Values[0]) }

// Score is the value of a bundle under values.
func Score(bundle, values []int) int {
	s := 0
	for i, x := range bundle {
		s += x * values[i]
	}
	return s
}

// Allocations returns every allocation of a pool of counts, in the spec's enumeration order:
// Alice's counts ascending, the first type slowest and the last fastest: (0,0,0), (0,0,1),
// ..., (0,1,0), ... .
func Allocations(counts []int) []Alloc {
	total := 1
	for _, c := range counts {
		total *= c + 1
	}
	out := make([]Alloc, 0, total)
	cur := make(Alloc, len(counts))
	for range total {
		out = append(out, slices.Clone(cur))
		for i := len(cur) - 1; i >= 0; i-- {
			cur[i]++
			if cur[i] <= counts[i] {
				break
			}
			cur[i] = 0
		}
	}
	return out
}

// Payoffs returns both players' scores under a.
func (g Game) Payoffs(a Alloc) [2]int {
	return [2]int{Score(a.Bundle(0, g.Counts), g.Values[0]), Score(a.Bundle(1, g.Counts), g.Values[1])}
}

// EFFor reports whether seat does not envy the other under a: it values its own bundle at
// least as much as the other's, by its own values. (With the pool worth T to it, that is
// "my bundle is worth at least T/2 to me".)
func EFFor(counts []int, a Alloc, seat int, values []int) bool {
	return Score(a.Bundle(seat, counts), values) >= Score(a.Bundle(1-seat, counts), values)
}

// EnvyFree reports whether neither player envies the other under a.
func (g Game) EnvyFree(a Alloc) bool {
	return EFFor(g.Counts, a, 0, g.Values[0]) && EFFor(g.Counts, a, 1, g.Values[1])
}

// ParetoOptimal reports whether no allocation is at least as good for both and strictly
// better for one.
func (g Game) ParetoOptimal(a Alloc) bool { return len(g.Dominators(a)) == 0 }

// Dominators returns every allocation that Pareto-dominates a, in enumeration order.
func (g Game) Dominators(a Alloc) []Alloc {
	p := g.Payoffs(a)
	var out []Alloc
	for _, b := range Allocations(g.Counts) {
		q := g.Payoffs(b)
		if q[0] >= p[0] && q[1] >= p[1] && (q[0] > p[0] || q[1] > p[1]) {
			out = append(out, b)
		}
	}
	return out
}

// Best returns the allocations that are envy-free with the largest total score (which are
// also Pareto-optimal), in enumeration order; none when no allocation is envy-free. The
// spec's per-player Best scores use the first.
func (g Game) Best() []Alloc {
	best := -1
	var out []Alloc
	for _, a := range Allocations(g.Counts) {
		if !g.EnvyFree(a) {
			continue
		}
		p := g.Payoffs(a)
		switch t := p[0] + p[1]; {
		case t > best:
			best, out = t, []Alloc{a}
		case t == best:
			out = append(out, a)
		}
	}
	return out
}

// HasEF reports whether some allocation is envy-free.
func (g Game) HasEF() bool {
	for _, a := range Allocations(g.Counts) {
		if g.EnvyFree(a) {
			return true
		}
	}
	return false
}

// Distance is the L1 distance between the two value vectors.
func (g Game) Distance() int {
	d := 0
	for i := range g.Counts {
		x := g.Values[0][i] - g.Values[1][i]
		if x < 0 {
			x = -x
		}
		d += x
	}
	return d
}

// Difficulty is minus the L1 distance between the value vectors: closer values, harder.
func (g Game) Difficulty() int { return -g.Distance() }

// Vectors returns every value vector (non-negative whole values per type) under which a pool
// of counts is worth total, in lexicographic order: the prior support of a player who knows
// only that the opponent's values add up like its own.
func Vectors(counts []int, total int) [][]int {
	var out [][]int
	cur := make([]int, len(counts))
	var rec func(i, left int)
	rec = func(i, left int) {
		if i == len(counts) {
			if left == 0 {
				out = append(out, slices.Clone(cur))
			}
			return
		}
		for v := 0; v*counts[i] <= left; v++ {
			cur[i] = v
			rec(i+1, left-v*counts[i])
		}
		cur[i] = 0
	}
	rec(0, total)
	return out
}

// Index returns the position of a in allocs, or -1.
func Index(allocs []Alloc, a Alloc) int {
	return slices.IndexFunc(allocs, func(b Alloc) bool { return slices.Equal(a, b) })
}
