package bayes

import (
	"math/big"
	"slices"
	"testing"

	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// The set-up of these tests, worked by hand: one gem and one coin; Alice (the agent, seat 0)
// values them 6 and 4. Bob's possible vectors (v0, v1) with v0 + v1 = 10: 11 of them.
// Allocations are Alice's (gem, coin): (1,0) and (1,1) are EF for her (6 and 10 >= 5).
var small = solution.Game{Counts: []int{1, 1}, Values: [2][]int{{6, 4}, nil}}

func one() *big.Rat { return big.NewRat(1, 1) }

func support(b Belief) [][]int { return b.Support() }

// TestWorkflowByHand follows the steps on the small set-up.
func TestWorkflowByHand(t *testing.T) {
	m := newModel(small, 0, one(), one())
	b := uniform(m.prior)
	if len(m.prior) != 11 {
		t.Fatalf("prior of %d vectors, want 11", len(m.prior))
	}
	// Step 2: (1,1) leaves Bob nothing, EF for no vector; (1,0) gives Bob the coin, EF for him
	// when v1 >= 5: 6 vectors of 11. So (1,0) is the only candidate, with mass 6/11.
	c := m.candidates(b, nil)
	if len(c) != 1 || !slices.Equal(c[0].a, solution.Alloc{1, 0}) || c[0].efMass.Cmp(big.NewRat(6, 11)) != 0 {
		t.Fatalf("candidates %+v", c)
	}
	// Step 3: Bob rejects (1,0). Under v1 < 5 it was not EF for him: likelihood 1. Under
	// v1 >= 5 it was, and no allocation EF for Alice gives him more than the coin: 0. The
	// support becomes v0 >= 6: 5 vectors, 1/5 each.
	b, restarted := m.rejected(b, solution.Alloc{1, 0})
	want := [][]int{{6, 4}, {7, 3}, {8, 2}, {9, 1}, {10, 0}}
	if restarted || !slices.EqualFunc(support(b), want, slices.Equal) {
		t.Fatalf("after the rejection: %v (restarted %v), want %v", support(b), restarted, want)
	}
	for i, p := range b.P {
		if p.Sign() > 0 && p.Cmp(big.NewRat(1, 5)) != 0 {
			t.Errorf("P(%v) = %v, want 1/5", b.Vectors[i], p)
		}
	}
	// Step 4: Bob proposes (0,1), taking the gem: EF for him when v0 >= 5: all 5 remain.
	b = m.proposed(b, solution.Alloc{0, 1})
	if len(support(b)) != 5 {
		t.Fatalf("after Bob's proposal: %v", support(b))
	}
	// A proposal EF for none of the support is ignored rather than emptying it.
	if got := m.proposed(b, solution.Alloc{1, 1}); len(support(got)) != 5 {
		t.Errorf("an impossible proposal emptied the support: %v", support(got))
	}
	// Step 5: no candidate is left ((1,0) rejected, (1,1) EF for nobody); the standing (0,1)
	// gives Alice the coin, 4 < 5, not EF for her: she falls back to the best EF allocation
	// not rejected, (1,1).
	if c := m.candidates(b, []solution.Alloc{{1, 0}}); len(c) != 0 {
		t.Errorf("candidates %+v, want none", c)
	}
	if got := m.fallback([]solution.Alloc{{1, 0}}); !slices.Equal(got, solution.Alloc{1, 1}) {
		t.Errorf("fallback %v, want (1,1)", got)
	}
	if got := m.fallback([]solution.Alloc{{1, 0}, {1, 1}}); !slices.Equal(got, solution.Alloc{1, 1}) {
		t.Errorf("fallback with all rejected %v, want the best EF one, (1,1)", got)
	}
}

// TestGammaLambda: gamma weighs rejections of offers EF for the opponent when a better one
// existed; lambda < 1 keeps some of the old belief, so no vector drops out.
func TestGammaLambda(t *testing.T) {
	// Three types, so that "a better allocation EF for Alice" exists: 1 gem, 1 coin, 1 pin;
	// Alice values 5, 3, 2.
	g := solution.Game{Counts: []int{1, 1, 1}, Values: [2][]int{{5, 3, 2}, nil}}
	half := big.NewRat(1, 2)
	m := newModel(g, 0, half, one())
	// L = (1,1,0): Bob gets the pin. Under v = (0,0,10) it is EF for Bob (10 >= 0) and no EF
	// allocation for Alice gives him more than 10: likelihood 0. Under v = (0,10,0): not EF
	// (0 < 10): 1. Under v = (2,2,6): EF (6 >= 4); (1,0,0) is EF for Alice (5 >= 5) and gives
	// Bob 8 > 6: gamma.
	l := solution.Alloc{1, 1, 0}
	for v, want := range map[[3]int]*big.Rat{{0, 0, 10}: new(big.Rat), {0, 10, 0}: one(), {2, 2, 6}: half} {
		if got := m.likelihood(l, v[:]); got.Cmp(want) != 0 {
			t.Errorf("likelihood under %v = %v, want %v", v, got, want)
		}
	}
	m = newModel(g, 0, one(), half)
	b, _ := m.rejected(uniform(m.prior), l)
	if n := len(support(b)); n != len(m.prior) {
		t.Errorf("with lambda 1/2, %d of %d vectors remain", n, len(m.prior))
	}
}

// TestRestart: when no vector explains a rejection, the belief restarts from the prior and
// applies that rejection alone.
func TestRestart(t *testing.T) {
	m := newModel(small, 0, one(), one())
	// A belief on (0,10) alone: Bob values only the coin. Rejecting (1,0) (he gets the coin,
	// all he wants) has likelihood 0 there.
	b := uniform(m.prior)
	for i := range b.P {
		b.P[i] = new(big.Rat)
	}
	b.P[0] = one()
	got, restarted := m.rejected(b, solution.Alloc{1, 0})
	if !restarted || len(support(got)) != 5 {
		t.Errorf("restarted %v, support %v; want a restart to the 5 vectors with v0 >= 6", restarted, support(got))
	}
}
