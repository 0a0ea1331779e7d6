// Package equilibria computes exact equilibria of games with complete information given as
// data, for any number of players:
//
//   - for a game in normal form (Matrix): every pure Nash equilibrium, Pareto optimality, the
//     equilibria no other equilibrium Pareto-dominates, iterated elimination of strictly
//     dominated actions and weakly dominated actions, and whether two games share their
//     pure-equilibrium set under a matching of their actions;
//   - for two players, every extreme mixed equilibrium, degenerate games included, and the
//     maximal Nash subsets (the convex sets of equilibria, each the product of the convex
//     hulls of its extreme strategies), by exact enumeration of the vertices of the players'
//     best-response polytopes (ExtremeEquilibria);
//   - for a game tree with perfect information: the subgame-perfect equilibria by backward
//     induction with every tie-break, every outcome a subgame-perfect equilibrium reaches, and
//     the outcomes of the pure Nash equilibria of its normal form, found without listing
//     strategies.
//
// Every number is an exact rational (math/big.Rat), so payoffs such as half a jackpot stay
// exact and no comparison is rounded. Mixed equilibria of games of three or more players are
// not computed: their probabilities can be irrational (roots of polynomial equations), so no
// method in rational arithmetic lists them all.
//
// It serves the matrix and sequential games' rules, the equilibrium agent, the metrics and
// `parley analyze equilibria` alike, and knows nothing of matches or seats.
package equilibria

import (
	"errors"
	"fmt"
	"math/big"
	"strings"
)

// ErrTooLarge is returned for games larger than a computation supports.
var ErrTooLarge = errors.New("equilibria: game too large")

// Payoffs are the players' payoffs of one outcome, one per player in seat order.
type Payoffs []*big.Rat

// String writes the payoffs as "(3, 5/2)".
func (p Payoffs) String() string {
	parts := make([]string, len(p))
	for i, x := range p {
		parts[i] = RatText(x)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// Equal reports whether p and q are the same payoffs.
func (p Payoffs) Equal(q Payoffs) bool {
	if len(p) != len(q) {
		return false
	}
	for i := range p {
		if p[i].Cmp(q[i]) != 0 {
			return false
		}
	}
	return true
}

// Dominates reports whether p Pareto-dominates q: at least as good for every player and
// strictly better for one.
func (p Payoffs) Dominates(q Payoffs) bool {
	strict := false
	for i := range p {
		switch p[i].Cmp(q[i]) {
		case -1:
			return false
		case 1:
			strict = true
		}
	}
	return strict
}

// clonePayoffs copies p, refusing missing entries.
func clonePayoffs(p Payoffs, players int, where string) (Payoffs, error) {
	if len(p) != players {
		return nil, fmt.Errorf("equilibria: %s has %d payoffs, want %d", where, len(p), players)
	}
	out := make(Payoffs, players)
	for i, x := range p {
		if x == nil {
			return nil, fmt.Errorf("equilibria: %s lacks a payoff", where)
		}
		out[i] = new(big.Rat).Set(x)
	}
	return out, nil
}

// RatText writes r as a whole number when it is one, else as "num/den".
func RatText(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	if r.IsInt() {
		return r.Num().String()
	}
	return r.RatString()
}
