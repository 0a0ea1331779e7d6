package bayes

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"slices"

	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// Belief is a probability distribution over the opponent's possible value vectors, exact.
type Belief struct {
	// Vectors are the prior support (every vector under which the pool is worth its total), in
	// lexicographic order; P[i] is the probability of Vectors[i] (0 once dropped).
	Vectors [][]int
	P       []*big.Rat
}

// uniform returns the uniform belief over vectors.
func uniform(vectors [][]int) Belief {
	b := Belief{Vectors: vectors, P: make([]*big.Rat, len(vectors))}
	for i := range vectors {
		b.P[i] = big.NewRat(1, int64(len(vectors)))
	}
	return b
}

// Support returns the vectors with positive probability.
func (b Belief) Support() [][]int {
	var out [][]int
	for i, v := range b.Vectors {
		if b.P[i].Sign() > 0 {
			out = append(out, v)
		}
	}
	return out
}

// normalize divides by the total mass; false when the mass is 0.
func normalize(p []*big.Rat) bool {
	sum := new(big.Rat)
	for _, x := range p {
		sum.Add(sum, x)
	}
	if sum.Sign() == 0 {
		return false
	}
	for _, x := range p {
		x.Quo(x, sum)
	}
	return true
}

// maxWork bounds what one move weighs: the opponent's possible value vectors times the
// allocations (about 2 s of work at the bound). The corpus' set-ups need a few thousand; the
// largest the rules allow (100,000 allocations, items worth up to 1000 each) would need more
// than 10^15, which no move has time for.
const maxWork = 1 << 22

// checkSize refuses a set-up whose belief would be too large to weigh in one move: the agent
// then says so instead of computing until long after its time is up.
func checkSize(g solution.Game, me int) error {
	allocs := 1
	for _, c := range g.Counts {
		allocs *= c + 1
	}
	total := solution.Score(g.Counts, g.Values[me])
	// ways[t]: the value vectors of the types seen so far worth t in all, saturating.
	ways := make([]int, total+1)
	ways[0] = 1
	for _, c := range g.Counts {
		for t := c; t <= total; t++ {
			ways[t] = min(ways[t]+ways[t-c], maxWork+1)
		}
	}
	if ways[total] > maxWork || ways[total]*allocs > maxWork {
		return fmt.Errorf("bayes: this set-up gives the opponent more possible value vectors (%d or more, over %d allocations) than one move can weigh (at most %d pairs)", ways[total], allocs, maxWork)
	}
	return nil
}

// model is what the agent knows: the pool, its seat and its own values, plus the settings.
type model struct {
	// ctx, when set, is the move's: the loops over vectors and allocations stop once it ends,
	// leaving err set.
	ctx   context.Context
	ticks int
	err   error

	g      solution.Game // Values[me] set; Values[opp] unknown
	me     int
	gamma  *big.Rat
	lambda *big.Rat
	prior  [][]int
	allocs []solution.Alloc // every allocation, in the agent's order (own counts ascending)
	efSelf []solution.Alloc // those EF for the agent
}

func newModel(g solution.Game, me int, gamma, lambda *big.Rat) *model {
	m := &model{g: g, me: me, gamma: gamma, lambda: lambda}
	m.prior = solution.Vectors(g.Counts, solution.Score(g.Counts, g.Values[me]))
	m.allocs = solution.Allocations(g.Counts)
	// The agent's own enumeration order: its own counts ascending, the first type slowest.
	slices.SortStableFunc(m.allocs, func(a, b solution.Alloc) int {
		return slices.Compare(a.Bundle(me, g.Counts), b.Bundle(me, g.Counts))
	})
	for _, a := range m.allocs {
		if m.efSelf2(a) {
			m.efSelf = append(m.efSelf, a)
		}
	}
	return m
}

// stopped reports whether the move's time is up (looking at ctx every 1024 calls only).
func (m *model) stopped() bool {
	if m.err != nil || m.ctx == nil {
		return m.err != nil
	}
	if m.ticks++; m.ticks%1024 == 0 {
		m.err = m.ctx.Err()
	}
	return m.err != nil
}

func (m *model) opp() int { return 1 - m.me }

func (m *model) own(a solution.Alloc) int {
	return solution.Score(a.Bundle(m.me, m.g.Counts), m.g.Values[m.me])
}

func (m *model) oppScore(a solution.Alloc, v []int) int {
	return solution.Score(a.Bundle(m.opp(), m.g.Counts), v)
}

func (m *model) efSelf2(a solution.Alloc) bool {
	return solution.EFFor(m.g.Counts, a, m.me, m.g.Values[m.me])
}

func (m *model) efOpp(a solution.Alloc, v []int) bool {
	return solution.EFFor(m.g.Counts, a, m.opp(), v)
}

// likelihood of the opponent rejecting l under v (step 3 of the workflow): 1 when l is not EF
// for it; gamma when it is, but some allocation EF for the agent gives it more; else 0.
func (m *model) likelihood(l solution.Alloc, v []int) *big.Rat {
	if !m.efOpp(l, v) {
		return big.NewRat(1, 1)
	}
	mine := m.oppScore(l, v)
	for _, a := range m.efSelf {
		if m.stopped() {
			break
		}
		if m.oppScore(a, v) > mine {
			return new(big.Rat).Set(m.gamma)
		}
	}
	return new(big.Rat)
}

// rejected updates b after the opponent rejected l (step 3): Bayes' rule mixed with the old
// belief by lambda, zero-probability vectors dropped; when every vector has likelihood 0 the
// belief restarts from the uniform prior and applies this rejection alone. It reports whether
// it restarted.
func (m *model) rejected(b Belief, l solution.Alloc) (Belief, bool) {
	post, ok := m.bayes(b, l)
	restarted := false
	if !ok {
		restarted = true
		b = uniform(m.prior)
		if post, ok = m.bayes(b, l); !ok {
			return b, true // no vector explains it even from scratch: keep the prior
		}
	}
	one := big.NewRat(1, 1)
	keep := new(big.Rat).Sub(one, m.lambda)
	out := Belief{Vectors: b.Vectors, P: make([]*big.Rat, len(b.P))}
	for i := range b.P {
		x := new(big.Rat).Mul(keep, b.P[i])
		out.P[i] = x.Add(x, new(big.Rat).Mul(m.lambda, post[i]))
	}
	normalize(out.P)
	return out, restarted
}

// bayes returns the normalized posterior of b after a rejection of l; false when its mass is
// 0.
func (m *model) bayes(b Belief, l solution.Alloc) ([]*big.Rat, bool) {
	post := make([]*big.Rat, len(b.P))
	for i, v := range b.Vectors {
		post[i] = new(big.Rat)
		if b.P[i].Sign() > 0 && !m.stopped() {
			post[i].Mul(b.P[i], m.likelihood(l, v))
		}
	}
	return post, normalize(post)
}

// proposed updates b after the opponent proposed a (step 4): vectors under which a is not EF
// for the opponent are dropped, unless that drops all of them.
func (m *model) proposed(b Belief, a solution.Alloc) Belief {
	out := Belief{Vectors: b.Vectors, P: make([]*big.Rat, len(b.P))}
	for i, v := range b.Vectors {
		out.P[i] = new(big.Rat)
		if b.P[i].Sign() > 0 && !m.stopped() && m.efOpp(a, v) {
			out.P[i].Set(b.P[i])
		}
	}
	if !normalize(out.P) {
		return b
	}
	return out
}

// candidate is an allocation the agent may propose, with its ranking keys.
type candidate struct {
	a      solution.Alloc
	own    int
	efMass *big.Rat // belief mass of the vectors under which a is EF for the opponent
	expOpp *big.Rat // expected opponent score under the belief
	order  int      // position in the agent's enumeration order
}

// candidates lists the allocations EF for the agent, EF for the opponent under some vector of
// the support, and not rejected, best first (step 2): own score, then EF mass, then expected
// opponent score, then enumeration order.
func (m *model) candidates(b Belief, rejected []solution.Alloc) []candidate {
	var out []candidate
	for k, a := range m.allocs {
		if !m.efSelf2(a) || solution.Index(rejected, a) >= 0 {
			continue
		}
		c := candidate{a: a, own: m.own(a), efMass: new(big.Rat), expOpp: new(big.Rat), order: k}
		possible := false
		for i, v := range b.Vectors {
			if m.stopped() {
				return nil
			}
			if b.P[i].Sign() == 0 {
				continue
			}
			if m.efOpp(a, v) {
				possible = true
				c.efMass.Add(c.efMass, b.P[i])
			}
			c.expOpp.Add(c.expOpp, new(big.Rat).Mul(b.P[i], big.NewRat(int64(m.oppScore(a, v)), 1)))
		}
		if possible {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(x, y candidate) int {
		return cmp.Or(
			cmp.Compare(y.own, x.own),
			y.efMass.Cmp(x.efMass),
			y.expOpp.Cmp(x.expOpp),
			cmp.Compare(x.order, y.order),
		)
	})
	return out
}

// fallback is the proposal with no candidate left: the best allocation EF for the agent not
// yet rejected, ignoring the belief; if all were rejected, the best EF one.
func (m *model) fallback(rejected []solution.Alloc) solution.Alloc {
	pick := func(skipRejected bool) solution.Alloc {
		var best solution.Alloc
		for _, a := range m.efSelf {
			if skipRejected && solution.Index(rejected, a) >= 0 {
				continue
			}
			if best == nil || m.own(a) > m.own(best) {
				best = a
			}
		}
		return best
	}
	if a := pick(true); a != nil {
		return a
	}
	return pick(false)
}
