package equilibria_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parley-arena/parley/referee/games/equilibria"
)

// TestHandWorkedMatrices checks small games whose pure equilibria are worked out in comments.
func TestHandWorkedMatrices(t *testing.T) {
	cases := []struct {
		name string
		pay  [][][2]int64
		// pure: every profile where neither player can gain alone, found by hand.
		pure []P
		// undominated: the pure equilibria no other pure equilibrium Pareto-dominates.
		undominated []P
	}{
		{
			// Matching pennies: every cell has a player who gains by switching.
			name: "matching pennies", pay: [][][2]int64{{{1, -1}, {-1, 1}}, {{-1, 1}, {1, -1}}},
		},
		{
			// Chicken: (swerve, straight) and (straight, swerve); neither dominates the other.
			name: "chicken", pay: [][][2]int64{{{3, 3}, {1, 4}}, {{4, 1}, {0, 0}}},
			pure: []P{{0, 1}, {1, 0}}, undominated: []P{{0, 1}, {1, 0}},
		},
		{
			// A 3x2 game: (0,0) pays (4,3): column's best reply to row 0 is col 0 (3 > 1), row's
			// best reply to col 0 is row 0 (4 > 2, 0). (1,1) pays (3,2): column's best reply to
			// row 1 is col 1 (2 > 1), row's to col 1 is row 1 (3 > 1, 0). (0,0) dominates (1,1).
			name: "3x2 two equilibria", pay: [][][2]int64{{{4, 3}, {1, 1}}, {{2, 1}, {3, 2}}, {{0, 0}, {0, 5}}},
			pure: []P{{0, 0}, {1, 1}}, undominated: []P{{0, 0}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mat(t, tc.pay)
			if got := equilibria.PureNash(m); !slices.EqualFunc(got, tc.pure, slices.Equal) {
				t.Errorf("PureNash = %v, want %v", got, tc.pure)
			}
			if got := equilibria.Undominated(m, equilibria.PureNash(m)); !slices.EqualFunc(got, tc.undominated, slices.Equal) {
				t.Errorf("Undominated = %v, want %v", got, tc.undominated)
			}
		})
	}
}

// TestCompare matches actions by position or by a given matching.
func TestCompare(t *testing.T) {
	pd := mat(t, [][][2]int64{{{3, 3}, {0, 5}}, {{5, 0}, {1, 1}}})
	pd2 := mat(t, [][][2]int64{{{3, 3}, {-300, 5}}, {{5, -300}, {-299, -299}}})
	harmony := mat(t, [][][2]int64{{{3, 3}, {2, 1}}, {{1, 2}, {0, 0}}})
	rps := mat(t, [][][2]int64{{{0, 0}, {-1, 1}, {1, -1}}, {{1, -1}, {0, 0}, {-1, 1}}, {{-1, 1}, {1, -1}, {0, 0}}})
	// The prisoner's dilemma with its actions listed the other way round: (defect, defect) is
	// now (0, 0).
	pdSwapped := mat(t, [][][2]int64{{{1, 1}, {5, 0}}, {{0, 5}, {3, 3}}})
	if c := equilibria.ComparePureNash(pd, pd2, nil); !c.Same || !slices.EqualFunc(c.A, []P{{1, 1}}, slices.Equal) {
		t.Errorf("PD vs PD-2: %+v, want the same {(1,1)}", c)
	}
	if c := equilibria.ComparePureNash(pd, harmony, nil); c.Same || !slices.EqualFunc(c.OnlyA, []P{{1, 1}}, slices.Equal) || !slices.EqualFunc(c.OnlyB, []P{{0, 0}}, slices.Equal) {
		t.Errorf("PD vs harmony: %+v", c)
	}
	if c := equilibria.ComparePureNash(pd, rps, nil); c.Same || c.SameShape {
		t.Errorf("2x2 vs 3x3: %+v, want not comparable", c)
	}
	if c := equilibria.ComparePureNash(pd, pdSwapped, nil); c.Same {
		t.Errorf("PD vs PD swapped, by position: %+v, want different", c)
	}
	swap := [][]int{{1, 0}, {1, 0}}
	if c := equilibria.ComparePureNash(pd, pdSwapped, swap); !c.Same || !slices.EqualFunc(c.B, []P{{0, 0}}, slices.Equal) {
		t.Errorf("PD vs PD swapped, matched: %+v, want the same", c)
	}
}

// randomGame draws a game of 2 to 4 players with 1 to 3 actions each and payoffs from a small
// range, so ties are common.
func randomGame(t testing.TB, rng *rand.Rand) (*equilibria.Matrix, []int, []equilibria.Payoffs) {
	n := 2 + rng.IntN(3)
	sizes := make([]int, n)
	cells := 1
	for p := range sizes {
		sizes[p] = 1 + rng.IntN(3)
		cells *= sizes[p]
	}
	pay := make([]equilibria.Payoffs, cells)
	for k := range pay {
		for range n {
			pay[k] = append(pay[k], r(int64(rng.IntN(5)-2), int64(1+rng.IntN(2))))
		}
	}
	m, err := equilibria.NewGame(sizes, pay)
	if err != nil {
		t.Fatal(err)
	}
	return m, sizes, pay
}

// decode is the profile of row-major index k, worked out here from sizes.
func decode(k int, sizes []int) P {
	p := make(P, len(sizes))
	for i := len(sizes) - 1; i >= 0; i-- {
		p[i] = k % sizes[i]
		k /= sizes[i]
	}
	return p
}

func encode(p P, sizes []int) int {
	k := 0
	for i, a := range p {
		k = k*sizes[i] + a
	}
	return k
}

// TestPureNashBruteForce: on random games of 2 to 4 players, a profile is returned exactly
// when no player has a strictly better action against the others', and Pareto optimality and
// dominance agree with comparisons written out here.
func TestPureNashBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range iterations() {
		m, sizes, pay := randomGame(t, rng)
		var want []P
		for k := range pay {
			p := decode(k, sizes)
			stable := true
			for player := range sizes {
				for a := range sizes[player] {
					q := slices.Clone(p)
					q[player] = a
					if pay[encode(q, sizes)][player].Cmp(pay[k][player]) > 0 {
						stable = false
					}
				}
			}
			if stable {
				want = append(want, p)
			}
			dominated := false
			for k2 := range pay {
				ge, gt := true, false
				for player := range sizes {
					c := pay[k2][player].Cmp(pay[k][player])
					ge = ge && c >= 0
					gt = gt || c > 0
				}
				dominated = dominated || (ge && gt)
			}
			if equilibria.ParetoOptimal(m, p) == dominated {
				t.Fatalf("ParetoOptimal(%v) = %v, brute force dominated = %v", p, !dominated, dominated)
			}
		}
		if got := equilibria.PureNash(m); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("PureNash = %v, brute force %v, sizes %v payoffs %v", got, want, sizes, pay)
		}
		checkDominance(t, m, sizes, pay)
	}
}

// checkDominance: every elimination step is a strict domination among the actions left at
// that point, nothing left is strictly dominated among what is left, and the weakly dominated
// actions are exactly those some other action never does worse than and once does better.
func checkDominance(t *testing.T, m *equilibria.Matrix, sizes []int, pay []equilibria.Payoffs) {
	t.Helper()
	alive := make([][]bool, len(sizes))
	for p := range sizes {
		alive[p] = make([]bool, sizes[p])
		for a := range alive[p] {
			alive[p][a] = true
		}
	}
	// beats reports (strictly, weakly) whether b beats a for player against alive profiles.
	beats := func(player, a, b int, alive [][]bool) (bool, bool) {
		strict, never, once := true, true, false
		for k := range pay {
			p := decode(k, sizes)
			if p[player] != a {
				continue
			}
			ok := true
			for q := range sizes {
				if q != player && !alive[q][p[q]] {
					ok = false
				}
			}
			if !ok {
				continue
			}
			p[player] = b
			c := pay[encode(p, sizes)][player].Cmp(pay[k][player])
			strict = strict && c > 0
			never = never && c >= 0
			once = once || c > 0
		}
		return strict, never && once
	}
	d := equilibria.Dominated(m)
	for _, s := range d.Steps {
		if !alive[s.Player][s.Action] || !alive[s.Player][s.By] {
			t.Fatalf("step %+v uses an eliminated action", s)
		}
		if strict, _ := beats(s.Player, s.Action, s.By, alive); !strict {
			t.Fatalf("step %+v: not a strict domination", s)
		}
		alive[s.Player][s.Action] = false
	}
	full := make([][]bool, len(sizes))
	for p := range sizes {
		full[p] = make([]bool, sizes[p])
		for a := range full[p] {
			full[p][a] = true
		}
	}
	for p := range sizes {
		var left, weak []int
		for a := range sizes[p] {
			if alive[p][a] {
				left = append(left, a)
			}
		}
		if !slices.Equal(left, d.Remaining[p]) {
			t.Fatalf("player %d: remaining %v, steps leave %v", p, d.Remaining[p], left)
		}
		for _, a := range left {
			for _, b := range left {
				if strict, _ := beats(p, a, b, alive); a != b && strict {
					t.Fatalf("player %d: %d is still strictly dominated by %d", p, a, b)
				}
			}
		}
		for a := range sizes[p] {
			for b := range sizes[p] {
				if _, w := beats(p, a, b, full); a != b && w {
					weak = append(weak, a)
					break
				}
			}
		}
		if !slices.Equal(weak, d.Weak[p]) {
			t.Fatalf("player %d: weakly dominated %v, brute force %v", p, d.Weak[p], weak)
		}
	}
}

// TestGoldenBallsDominance: against split, steal pays J > J/2; against steal both pay 0. So
// steal weakly dominates split for both and nothing is strictly dominated. In the prisoner's
// dilemma defect pays more against both actions, so cooperate goes for both.
func TestGoldenBallsDominance(t *testing.T) {
	m := mat(t, [][][2]int64{{{50, 50}, {0, 100}}, {{100, 0}, {0, 0}}})
	d := equilibria.Dominated(m)
	if len(d.Steps) != 0 || !slices.Equal(d.Weak[0], []int{0}) || !slices.Equal(d.Weak[1], []int{0}) {
		t.Errorf("golden balls: %+v, want split weakly dominated for both and no elimination", d)
	}
	pd := mat(t, [][][2]int64{{{3, 3}, {0, 5}}, {{5, 0}, {1, 1}}})
	d = equilibria.Dominated(pd)
	if len(d.Steps) != 2 || !slices.Equal(d.Remaining[0], []int{1}) || !slices.Equal(d.Remaining[1], []int{1}) {
		t.Errorf("prisoner's dilemma: %+v, want cooperate eliminated for both", d)
	}
}

// TestNewGameRefuses malformed or oversized games.
func TestNewGameRefuses(t *testing.T) {
	one := equilibria.Payoffs{r(1, 1), r(1, 1)}
	for name, tc := range map[string]struct {
		sizes []int
		pay   []equilibria.Payoffs
	}{
		"one player":     {[]int{2}, []equilibria.Payoffs{{r(1, 1)}, {r(1, 1)}}},
		"no actions":     {[]int{0, 1}, nil},
		"cells missing":  {[]int{2, 2}, []equilibria.Payoffs{one, one, one}},
		"payoff missing": {[]int{1, 2}, []equilibria.Payoffs{one, {r(1, 1), nil}}},
		"short payoffs":  {[]int{1, 1}, []equilibria.Payoffs{{r(1, 1)}}},
		"too many cells": {[]int{64, 65}, nil},
	} {
		if _, err := equilibria.NewGame(tc.sizes, tc.pay); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
