// Package equilibria computes exact equilibria of two-player games with complete information
// given as data: for a payoff matrix, every pure Nash equilibrium, Pareto optimality, the
// equilibria that no other equilibrium Pareto-dominates, mixed equilibria by support
// enumeration (the 2x2 mixed equilibrium among them) and whether two matrices share their
// pure-equilibrium set; for a game tree, the subgame-perfect equilibria by backward induction
// with ties reported, and the tree's normal form. Every number is an exact rational
// (math/big.Rat), so payoffs such as half a jackpot stay exact and no comparison is rounded.
//
// It serves the matrix and sequential games' rules, the equilibrium agent, the metrics and
// `parley analyze equilibria` alike, and knows nothing of matches or seats.
package equilibria

import (
	"errors"
	"fmt"
	"math/big"
)

// Players of a two-player game.
const (
	Row = 0 // the row player, who moves first in a tree's seat order
	Col = 1 // the column player
)

// Limits on the size of games.
const (
	// MaxActions bounds each player's actions in a Matrix.
	MaxActions = 64
	// MaxSupportActions bounds the actions per player of a matrix whose mixed equilibria
	// SupportEquilibria enumerates: it solves a linear system for every pair of equal-size
	// supports, C(2n, n) of them for n actions each (924 for 6, 12,870 for 8).
	MaxSupportActions = 8
)

// ErrTooLarge is returned for games larger than a computation supports.
var ErrTooLarge = errors.New("equilibria: game too large")

// Payoffs are the two players' payoffs of one outcome, row player (seat 0) first.
type Payoffs [2]*big.Rat

// String writes the payoffs as "(3, 5/2)".
func (p Payoffs) String() string {
	return fmt.Sprintf("(%s, %s)", RatText(p[0]), RatText(p[1]))
}

// Equal reports whether p and q are the same payoffs.
func (p Payoffs) Equal(q Payoffs) bool { return p[0].Cmp(q[0]) == 0 && p[1].Cmp(q[1]) == 0 }

// Dominates reports whether p Pareto-dominates q: at least as good for both players and
// strictly better for one.
func (p Payoffs) Dominates(q Payoffs) bool {
	a, b := p[0].Cmp(q[0]), p[1].Cmp(q[1])
	return a >= 0 && b >= 0 && (a > 0 || b > 0)
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

// Matrix is a two-player game in normal form: Pay[i][j] are the payoffs when the row player
// plays row i and the column player column j. A Matrix is never changed once built.
type Matrix struct {
	pay [][]Payoffs
}

// NewMatrix returns the matrix with the given payoffs, which it copies. Every row must have
// the same number of cells, at least one row and one column and at most MaxActions of each,
// and every payoff must be set.
func NewMatrix(pay [][]Payoffs) (*Matrix, error) {
	if len(pay) == 0 || len(pay[0]) == 0 {
		return nil, errors.New("equilibria: a matrix needs at least one row and one column")
	}
	if len(pay) > MaxActions || len(pay[0]) > MaxActions {
		return nil, fmt.Errorf("%w: %d x %d actions, at most %d each", ErrTooLarge, len(pay), len(pay[0]), MaxActions)
	}
	m := &Matrix{pay: make([][]Payoffs, len(pay))}
	for i, row := range pay {
		if len(row) != len(pay[0]) {
			return nil, fmt.Errorf("equilibria: row %d has %d cells, row 1 has %d", i+1, len(row), len(pay[0]))
		}
		m.pay[i] = make([]Payoffs, len(row))
		for j, p := range row {
			if p[0] == nil || p[1] == nil {
				return nil, fmt.Errorf("equilibria: cell (%d, %d) lacks a payoff", i+1, j+1)
			}
			m.pay[i][j] = Payoffs{new(big.Rat).Set(p[0]), new(big.Rat).Set(p[1])}
		}
	}
	return m, nil
}

// Rows returns the row player's number of actions.
func (m *Matrix) Rows() int { return len(m.pay) }

// Cols returns the column player's number of actions.
func (m *Matrix) Cols() int { return len(m.pay[0]) }

// Payoffs returns the payoffs of profile p (shared: callers must not change them).
func (m *Matrix) Payoffs(p Profile) Payoffs { return m.pay[p.Row][p.Col] }

// Profile is a pure strategy profile: the row player's action and the column player's.
type Profile struct{ Row, Col int }

// Action returns player's action in the profile.
func (p Profile) Action(player int) int {
	if player == Row {
		return p.Row
	}
	return p.Col
}

// Profiles returns every profile in row-major order.
func (m *Matrix) Profiles() []Profile {
	out := make([]Profile, 0, m.Rows()*m.Cols())
	for i := range m.Rows() {
		for j := range m.Cols() {
			out = append(out, Profile{i, j})
		}
	}
	return out
}

// BestReply reports whether player's action in p is a best reply to the other's: no other
// action of player pays it strictly more against the other's action.
func (m *Matrix) BestReply(p Profile, player int) bool {
	own := m.pay[p.Row][p.Col][player]
	if player == Row {
		for i := range m.Rows() {
			if m.pay[i][p.Col][Row].Cmp(own) > 0 {
				return false
			}
		}
		return true
	}
	for j := range m.Cols() {
		if m.pay[p.Row][j][Col].Cmp(own) > 0 {
			return false
		}
	}
	return true
}

// IsNash reports whether p is a pure Nash equilibrium: neither player gains by deviating
// alone.
func (m *Matrix) IsNash(p Profile) bool { return m.BestReply(p, Row) && m.BestReply(p, Col) }

// PureNash returns every pure Nash equilibrium, in row-major order.
func PureNash(m *Matrix) []Profile {
	var out []Profile
	for _, p := range m.Profiles() {
		if m.IsNash(p) {
			out = append(out, p)
		}
	}
	return out
}

// ParetoOptimal reports whether no profile Pareto-dominates p.
func ParetoOptimal(m *Matrix, p Profile) bool { return len(ParetoDominators(m, p)) == 0 }

// ParetoDominators returns every profile that Pareto-dominates p, in row-major order.
func ParetoDominators(m *Matrix, p Profile) []Profile {
	var out []Profile
	for _, q := range m.Profiles() {
		if m.Payoffs(q).Dominates(m.Payoffs(p)) {
			out = append(out, q)
		}
	}
	return out
}

// Undominated returns the profiles of set that no other profile of set Pareto-dominates, in
// the order of set. Applied to the pure equilibria it gives the "Pareto-optimal equilibria"
// of the published tables: in the prisoner's dilemma (defect, defect) counts, being the only
// equilibrium, though (cooperate, cooperate) dominates it; in the stag hunt only (stag, stag).
func Undominated(m *Matrix, set []Profile) []Profile {
	var out []Profile
	for _, p := range set {
		dominated := false
		for _, q := range set {
			if m.Payoffs(q).Dominates(m.Payoffs(p)) {
				dominated = true
				break
			}
		}
		if !dominated {
			out = append(out, p)
		}
	}
	return out
}

// Comparison says whether two matrices have the same pure-equilibrium set.
type Comparison struct {
	// Same is true when both matrices have the same shape and the same pure equilibria (as
	// profiles of action indices).
	Same bool
	// SameShape is false when the matrices differ in their numbers of actions; their
	// equilibria are then not comparable and Same is false.
	SameShape bool
	// A and B are the pure equilibria of each matrix; OnlyA and OnlyB those of one only.
	A, B, OnlyA, OnlyB []Profile
}

// ComparePureNash compares the pure-equilibrium sets of a and b, action by action index.
func ComparePureNash(a, b *Matrix) Comparison {
	c := Comparison{A: PureNash(a), B: PureNash(b)}
	c.SameShape = a.Rows() == b.Rows() && a.Cols() == b.Cols()
	in := func(set []Profile, p Profile) bool {
		for _, q := range set {
			if q == p {
				return true
			}
		}
		return false
	}
	for _, p := range c.A {
		if !in(c.B, p) {
			c.OnlyA = append(c.OnlyA, p)
		}
	}
	for _, p := range c.B {
		if !in(c.A, p) {
			c.OnlyB = append(c.OnlyB, p)
		}
	}
	c.Same = c.SameShape && len(c.OnlyA) == 0 && len(c.OnlyB) == 0
	return c
}
