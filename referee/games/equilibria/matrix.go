package equilibria

import (
	"fmt"
	"slices"
)

// Players of a two-player game.
const (
	Row = 0 // the row player (seat 0)
	Col = 1 // the column player (seat 1)
)

// Limits on the size of games in normal form.
const (
	// MaxPlayers bounds the players of a Matrix (and of a Tree).
	MaxPlayers = 16
	// MaxActions bounds each player's actions in a Matrix.
	MaxActions = 64
	// MaxProfiles bounds the pure profiles (cells) of a Matrix: 64 x 64 for two players,
	// 2^12 for twelve players of two actions each.
	MaxProfiles = 4096
)

// Matrix is a game in normal form of any number of players: every player picks one of its
// actions at the same time, and each profile of actions has one payoff per player. A Matrix is
// never changed once built.
type Matrix struct {
	sizes   []int     // actions per player
	strides []int     // profile index = sum of action * stride; the last player's stride is 1
	pay     []Payoffs // by profile index
}

// Profile is a pure strategy profile: one action index per player, in seat order.
type Profile []int

// Action returns player's action in the profile.
func (p Profile) Action(player int) int { return p[player] }

// String writes the profile as "(0, 1)".
func (p Profile) String() string { return fmt.Sprint([]int(p)) }

// NewMatrix returns the two-player game whose payoffs are pay[row][col], which it copies.
// Every row must have the same number of cells, at least one row and one column and at most
// MaxActions of each, and every payoff must be set.
func NewMatrix(pay [][]Payoffs) (*Matrix, error) {
	if len(pay) == 0 || len(pay[0]) == 0 {
		return nil, fmt.Errorf("equilibria: a matrix needs at least one row and one column")
	}
	var flat []Payoffs
	for i, row := range pay {
		if len(row) != len(pay[0]) {
			return nil, fmt.Errorf("equilibria: row %d has %d cells, row 1 has %d", i+1, len(row), len(pay[0]))
		}
		flat = append(flat, row...)
	}
	return NewGame([]int{len(pay), len(pay[0])}, flat)
}

// NewGame returns the game in which player p has sizes[p] actions and pay[k] are the payoffs
// of the profile of index k: profiles in row-major order, the first player's action changing
// slowest and the last player's fastest (for two players, pay[i*cols+j] is row i against
// column j). It copies pay.
func NewGame(sizes []int, pay []Payoffs) (*Matrix, error) {
	if len(sizes) < 2 || len(sizes) > MaxPlayers {
		return nil, fmt.Errorf("%w: %d players; 2 to %d are allowed", ErrTooLarge, len(sizes), MaxPlayers)
	}
	cells := 1
	for p, n := range sizes {
		if n < 1 || n > MaxActions {
			return nil, fmt.Errorf("%w: player %d has %d actions; 1 to %d are allowed", ErrTooLarge, p+1, n, MaxActions)
		}
		cells *= n
		if cells > MaxProfiles {
			return nil, fmt.Errorf("%w: more than %d profiles", ErrTooLarge, MaxProfiles)
		}
	}
	if len(pay) != cells {
		return nil, fmt.Errorf("equilibria: %d cells for %d profiles", len(pay), cells)
	}
	m := &Matrix{sizes: slices.Clone(sizes), strides: make([]int, len(sizes)), pay: make([]Payoffs, cells)}
	stride := 1
	for p := len(sizes) - 1; p >= 0; p-- {
		m.strides[p] = stride
		stride *= sizes[p]
	}
	for k, c := range pay {
		cp, err := clonePayoffs(c, len(sizes), fmt.Sprintf("profile %v", m.profile(k)))
		if err != nil {
			return nil, err
		}
		m.pay[k] = cp
	}
	return m, nil
}

// Players returns the number of players.
func (m *Matrix) Players() int { return len(m.sizes) }

// Actions returns player's number of actions.
func (m *Matrix) Actions(player int) int { return m.sizes[player] }

// Rows returns the first player's number of actions.
func (m *Matrix) Rows() int { return m.sizes[0] }

// Cols returns the second player's number of actions.
func (m *Matrix) Cols() int { return m.sizes[1] }

// Len returns the number of pure profiles.
func (m *Matrix) Len() int { return len(m.pay) }

// Index returns the index of profile p in row-major order.
func (m *Matrix) Index(p Profile) int {
	k := 0
	for i, a := range p {
		k += a * m.strides[i]
	}
	return k
}

func (m *Matrix) profile(k int) Profile {
	p := make(Profile, len(m.sizes))
	for i, s := range m.strides {
		p[i] = k / s % m.sizes[i]
	}
	return p
}

// ProfileAt returns the profile of index k (0 <= k < Len()).
func (m *Matrix) ProfileAt(k int) Profile { return m.profile(k) }

// Payoffs returns the payoffs of profile p (shared: callers must not change them).
func (m *Matrix) Payoffs(p Profile) Payoffs { return m.pay[m.Index(p)] }

// Profiles returns every profile in row-major order.
func (m *Matrix) Profiles() []Profile {
	out := make([]Profile, len(m.pay))
	for k := range out {
		out[k] = m.profile(k)
	}
	return out
}

// BestReply reports whether player's action in p is a best reply to the others': no other
// action of player pays it strictly more against theirs.
func (m *Matrix) BestReply(p Profile, player int) bool {
	k := m.Index(p)
	own := m.pay[k][player]
	base := k - p[player]*m.strides[player]
	for a := range m.sizes[player] {
		if m.pay[base+a*m.strides[player]][player].Cmp(own) > 0 {
			return false
		}
	}
	return true
}

// IsNash reports whether p is a pure Nash equilibrium: no player gains by deviating alone.
func (m *Matrix) IsNash(p Profile) bool {
	for player := range m.sizes {
		if !m.BestReply(p, player) {
			return false
		}
	}
	return true
}

// PureNash returns every pure Nash equilibrium, in row-major order.
func PureNash(m *Matrix) []Profile {
	var out []Profile
	for k := range m.pay {
		if p := m.profile(k); m.IsNash(p) {
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
	own := m.Payoffs(p)
	for k, q := range m.pay {
		if q.Dominates(own) {
			out = append(out, m.profile(k))
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

// ContainsProfile reports whether set holds p.
func ContainsProfile(set []Profile, p Profile) bool {
	return slices.ContainsFunc(set, func(q Profile) bool { return slices.Equal(q, p) })
}

// Comparison says whether two games have the same pure-equilibrium set under a matching of
// their actions.
type Comparison struct {
	// Same is true when both games have the same shape and the matching maps the first
	// game's pure equilibria onto exactly the second's.
	Same bool
	// SameShape is false when the games differ in their numbers of players or actions; their
	// equilibria are then not comparable and Same is false.
	SameShape bool
	// A and B are the pure equilibria of each game, each in its own actions; OnlyA and OnlyB
	// those with no counterpart in the other game.
	A, B, OnlyA, OnlyB []Profile
}

// ComparePureNash compares the pure-equilibrium sets of a and b. match[p][i] is the action of
// player p in b that corresponds to action i in a (a permutation of each player's actions);
// nil matches actions by position.
func ComparePureNash(a, b *Matrix, match [][]int) Comparison {
	c := Comparison{A: PureNash(a), B: PureNash(b)}
	c.SameShape = slices.Equal(a.sizes, b.sizes)
	if !c.SameShape {
		return c
	}
	toB := func(p Profile) Profile {
		q := slices.Clone(p)
		if match != nil {
			for i, x := range p {
				q[i] = match[i][x]
			}
		}
		return q
	}
	var mapped []Profile
	for _, p := range c.A {
		q := toB(p)
		mapped = append(mapped, q)
		if !ContainsProfile(c.B, q) {
			c.OnlyA = append(c.OnlyA, p)
		}
	}
	for _, q := range c.B {
		if !ContainsProfile(mapped, q) {
			c.OnlyB = append(c.OnlyB, q)
		}
	}
	c.Same = len(c.OnlyA) == 0 && len(c.OnlyB) == 0
	return c
}
