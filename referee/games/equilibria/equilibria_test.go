package equilibria_test

import (
	"errors"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parley-arena/parley/referee/games/equilibria"
)

// r is a rational from a fraction.
func r(num, den int64) *big.Rat { return big.NewRat(num, den) }

// mat builds a matrix from whole-number payoffs [row][col] = {row player's, column player's}.
func mat(t testing.TB, pay [][][2]int64) *equilibria.Matrix {
	t.Helper()
	rows := make([][]equilibria.Payoffs, len(pay))
	for i, row := range pay {
		for _, c := range row {
			rows[i] = append(rows[i], equilibria.Payoffs{r(c[0], 1), r(c[1], 1)})
		}
	}
	m, err := equilibria.NewMatrix(rows)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type P = equilibria.Profile

// TestHandWorkedMatrices checks small games whose equilibria are worked out in the comments.
func TestHandWorkedMatrices(t *testing.T) {
	cases := []struct {
		name string
		pay  [][][2]int64
		// pure: every profile where neither player can gain alone, found by hand.
		pure []P
		// undominated: the pure equilibria no other pure equilibrium Pareto-dominates.
		undominated []P
		// mixed: the completely mixed 2x2 equilibrium as (P(row 0), P(col 0)), or nil.
		mixed *[2]*big.Rat
	}{
		{
			// Matching pennies: every cell has a player who gains by switching; mixing 1/2
			// makes each indifferent.
			name: "matching pennies", pay: [][][2]int64{{{1, -1}, {-1, 1}}, {{-1, 1}, {1, -1}}},
			pure: nil, undominated: nil, mixed: &[2]*big.Rat{r(1, 2), r(1, 2)},
		},
		{
			// Chicken: (0,1) and (1,0) are the swerve/straight pairs. Column indifferent when
			// 3p + 2(1-p)... see the comment below for the mixed one.
			// Row payoffs: (S,S)=3, (S,T)=1, (T,S)=4, (T,T)=0; column symmetric.
			// Column indifferent between S and T: 3p + 1(1-p) = 4p + 0(1-p) -> p = 1/2.
			name: "chicken", pay: [][][2]int64{{{3, 3}, {1, 4}}, {{4, 1}, {0, 0}}},
			pure: []P{{0, 1}, {1, 0}}, undominated: []P{{0, 1}, {1, 0}}, mixed: &[2]*big.Rat{r(1, 2), r(1, 2)},
		},
		{
			// A 3x2 game: row 2 is strictly dominated by row 0; (0,0) pays (4,3): column's
			// best reply to row 0 is col 0 (3 > 1), row's best reply to col 0 is row 0 (4 > 2,0).
			// (1,1) pays (3,2): column's best reply to row 1 is col 1 (2 > 1), row's best reply
			// to col 1 is row 1 (3 > 1, 0). Both equilibria; (0,0) dominates (1,1).
			name: "3x2 two equilibria", pay: [][][2]int64{{{4, 3}, {1, 1}}, {{2, 1}, {3, 2}}, {{0, 0}, {0, 5}}},
			pure: []P{{0, 0}, {1, 1}}, undominated: []P{{0, 0}}, mixed: nil,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := mat(t, tc.pay)
			if got := equilibria.PureNash(m); !slices.Equal(got, tc.pure) {
				t.Errorf("PureNash = %v, want %v", got, tc.pure)
			}
			if got := equilibria.Undominated(m, equilibria.PureNash(m)); !slices.Equal(got, tc.undominated) {
				t.Errorf("Undominated = %v, want %v", got, tc.undominated)
			}
			x, ok := equilibria.Mixed2x2(m)
			switch {
			case tc.mixed == nil && ok && m.Rows() == 2:
				t.Errorf("Mixed2x2 = %v, want none", x)
			case tc.mixed != nil && !ok:
				t.Errorf("Mixed2x2 found none, want %v", tc.mixed)
			case tc.mixed != nil && (x.RowMix[0].Cmp(tc.mixed[0]) != 0 || x.ColMix[0].Cmp(tc.mixed[1]) != 0):
				t.Errorf("Mixed2x2 = row %v col %v, want %v", x.RowMix, x.ColMix, tc.mixed)
			}
		})
	}
}

// TestCompare: two tables with the same best-reply structure have the same pure equilibria;
// a changed cell that creates a profitable deviation changes them; shapes must match.
func TestCompare(t *testing.T) {
	pd := mat(t, [][][2]int64{{{3, 3}, {0, 5}}, {{5, 0}, {1, 1}}})
	pd2 := mat(t, [][][2]int64{{{3, 3}, {-300, 5}}, {{5, -300}, {-299, -299}}})
	harmony := mat(t, [][][2]int64{{{3, 3}, {2, 1}}, {{1, 2}, {0, 0}}})
	rps := mat(t, [][][2]int64{{{0, 0}, {-1, 1}, {1, -1}}, {{1, -1}, {0, 0}, {-1, 1}}, {{-1, 1}, {1, -1}, {0, 0}}})
	if c := equilibria.ComparePureNash(pd, pd2); !c.Same || !slices.Equal(c.A, []P{{1, 1}}) {
		t.Errorf("PD vs PD-2: %+v, want the same {(1,1)}", c)
	}
	if c := equilibria.ComparePureNash(pd, harmony); c.Same || !slices.Equal(c.OnlyA, []P{{1, 1}}) || !slices.Equal(c.OnlyB, []P{{0, 0}}) {
		t.Errorf("PD vs harmony: %+v", c)
	}
	if c := equilibria.ComparePureNash(pd, rps); c.Same || c.SameShape {
		t.Errorf("2x2 vs 3x3: %+v, want not comparable", c)
	}
}

// randomMatrix draws a small matrix with payoffs from a small range (so ties and degenerate
// games are common), some of them halves.
func randomMatrix(rng *rand.Rand) (*equilibria.Matrix, [][]equilibria.Payoffs) {
	rows, cols := 1+rng.IntN(4), 1+rng.IntN(4)
	pay := make([][]equilibria.Payoffs, rows)
	for i := range pay {
		pay[i] = make([]equilibria.Payoffs, cols)
		for j := range pay[i] {
			pay[i][j] = equilibria.Payoffs{r(int64(rng.IntN(7)-3), int64(1+rng.IntN(2))), r(int64(rng.IntN(7)-3), int64(1+rng.IntN(2)))}
		}
	}
	m, err := equilibria.NewMatrix(pay)
	if err != nil {
		panic(err)
	}
	return m, pay
}

func iterations() int {
	if testing.Short() {
		return 100
	}
	return 600
}

// TestPureNashBruteForce: on random small games, a profile is returned exactly when no player
// has a strictly better action against the other's, checked cell by cell here.
func TestPureNashBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range iterations() {
		m, pay := randomMatrix(rng)
		got := equilibria.PureNash(m)
		var want []P
		for i := range pay {
			for j := range pay[i] {
				stable := true
				for i2 := range pay {
					if pay[i2][j][0].Cmp(pay[i][j][0]) > 0 {
						stable = false
					}
				}
				for j2 := range pay[i] {
					if pay[i][j2][1].Cmp(pay[i][j][1]) > 0 {
						stable = false
					}
				}
				if stable {
					want = append(want, P{i, j})
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("PureNash = %v, brute force %v, payoffs %v", got, want, pay)
		}
		// Pareto optimality against every profile, by brute force.
		for _, p := range m.Profiles() {
			dominated := false
			for _, q := range m.Profiles() {
				a, b := pay[q.Row][q.Col], pay[p.Row][p.Col]
				if a[0].Cmp(b[0]) >= 0 && a[1].Cmp(b[1]) >= 0 && (a[0].Cmp(b[0]) > 0 || a[1].Cmp(b[1]) > 0) {
					dominated = true
				}
			}
			if equilibria.ParetoOptimal(m, p) == dominated {
				t.Fatalf("ParetoOptimal(%v) = %v, brute force dominated = %v", p, !dominated, dominated)
			}
		}
	}
}

// TestSupportEquilibriaAreEquilibria: every mixed profile support enumeration returns is a
// distribution, gives no pure deviation more than its value (checked here by expected
// payoffs), and includes every pure equilibrium; on a nondegenerate 2x2 game with no pure
// equilibrium there is exactly one, completely mixed.
func TestSupportEquilibriaAreEquilibria(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range iterations() / 2 {
		m, pay := randomMatrix(rng)
		eqs, err := equilibria.SupportEquilibria(m)
		if err != nil {
			t.Fatal(err)
		}
		expected := func(x, y []*big.Rat, p int) *big.Rat {
			s := new(big.Rat)
			for i := range x {
				for j := range y {
					s.Add(s, new(big.Rat).Mul(new(big.Rat).Mul(x[i], y[j]), pay[i][j][p]))
				}
			}
			return s
		}
		for _, e := range eqs {
			for _, mix := range [][]*big.Rat{e.RowMix, e.ColMix} {
				sum := new(big.Rat)
				for _, p := range mix {
					if p.Sign() < 0 {
						t.Fatalf("negative probability in %v", mix)
					}
					sum.Add(sum, p)
				}
				if sum.Cmp(r(1, 1)) != 0 {
					t.Fatalf("mix %v sums to %v", mix, sum)
				}
			}
			vr, vc := expected(e.RowMix, e.ColMix, 0), expected(e.RowMix, e.ColMix, 1)
			for i := range pay {
				unit := make([]*big.Rat, len(pay))
				for k := range unit {
					unit[k] = new(big.Rat)
				}
				unit[i] = r(1, 1)
				if expected(unit, e.ColMix, 0).Cmp(vr) > 0 {
					t.Fatalf("row gains by deviating to %d from %v / %v in %v", i, e.RowMix, e.ColMix, pay)
				}
			}
			for j := range pay[0] {
				unit := make([]*big.Rat, len(pay[0]))
				for k := range unit {
					unit[k] = new(big.Rat)
				}
				unit[j] = r(1, 1)
				if expected(e.RowMix, unit, 1).Cmp(vc) > 0 {
					t.Fatalf("column gains by deviating to %d", j)
				}
			}
		}
		var pure []P
		for _, e := range eqs {
			if e.Pure() {
				pure = append(pure, P{slices.IndexFunc(e.RowMix, func(x *big.Rat) bool { return x.Sign() > 0 }), slices.IndexFunc(e.ColMix, func(x *big.Rat) bool { return x.Sign() > 0 })})
			}
		}
		if want := equilibria.PureNash(m); !slices.Equal(pure, want) {
			t.Fatalf("pure profiles among SupportEquilibria %v, PureNash %v", pure, want)
		}
	}
}

// TestMixed2x2Formula compares Mixed2x2 with the textbook formula on random 2x2 games: the
// column mix q makes the row player indifferent, q = (d - b) / (a - b - c + d) on the row
// player's payoffs [[a b] [c d]], and likewise for p on the column player's.
func TestMixed2x2Formula(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range iterations() {
		pay := make([][]equilibria.Payoffs, 2)
		for i := range pay {
			for range 2 {
				pay[i] = append(pay[i], equilibria.Payoffs{r(int64(rng.IntN(9)-4), 1), r(int64(rng.IntN(9)-4), 1)})
			}
		}
		m, _ := equilibria.NewMatrix(pay)
		x, ok := equilibria.Mixed2x2(m)
		a, b, c, d := pay[0][0][0], pay[0][1][0], pay[1][0][0], pay[1][1][0]
		den := new(big.Rat).Sub(new(big.Rat).Sub(a, b), new(big.Rat).Sub(c, d))
		e, f, g, h := pay[0][0][1], pay[0][1][1], pay[1][0][1], pay[1][1][1]
		den2 := new(big.Rat).Sub(new(big.Rat).Sub(e, g), new(big.Rat).Sub(f, h))
		if den.Sign() == 0 || den2.Sign() == 0 {
			continue // degenerate: no single solution
		}
		q := new(big.Rat).Quo(new(big.Rat).Sub(d, b), den)
		p := new(big.Rat).Quo(new(big.Rat).Sub(h, g), den2)
		inside := func(z *big.Rat) bool { return z.Sign() > 0 && z.Cmp(r(1, 1)) < 0 }
		want := inside(p) && inside(q)
		if ok != want {
			t.Fatalf("Mixed2x2 ok=%v, formula p=%v q=%v in %v", ok, p, q, pay)
		}
		if ok && (x.RowMix[0].Cmp(p) != 0 || x.ColMix[0].Cmp(q) != 0) {
			t.Fatalf("Mixed2x2 = %v/%v, formula p=%v q=%v", x.RowMix[0], x.ColMix[0], p, q)
		}
	}
}

// tree builds a tree from nodes written compactly.
func tree(t testing.TB, nodes []equilibria.Node) *equilibria.Tree {
	t.Helper()
	tr, err := equilibria.NewTree(nodes)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func leaf(a, b int64) equilibria.Node {
	return equilibria.Node{Payoffs: equilibria.Payoffs{r(a, 1), r(b, 1)}}
}

// TestHandWorkedTrees: a centipede-like tree, and one with a tie that changes the path.
func TestHandWorkedTrees(t *testing.T) {
	// 0: Alice: take (1,0) or pass to 2; 2: Bob: take (0,2) or pass to 4; 4: Alice: take (3,1)
	// or pass (2,4). Backward: at 4 Alice takes (3 > 2); at 2 Bob takes (2 > 1); at 0 Alice
	// takes (1 > 0). Path [0] -> (1, 0), unique.
	centipede := tree(t, []equilibria.Node{
		{Player: 0, Children: []int{1, 2}}, leaf(1, 0),
		{Player: 1, Children: []int{3, 4}}, leaf(0, 2),
		{Player: 0, Children: []int{5, 6}}, leaf(3, 1), leaf(2, 4),
	})
	s := equilibria.BackwardInduction(centipede)
	if !slices.Equal(s.Path.Path, []int{0}) || !s.Unique() || len(s.Outcomes) != 1 {
		t.Errorf("centipede: path %v ties %v outcomes %v", s.Path.Path, s.Ties, s.Outcomes)
	}
	// 0: Alice: a -> 1 (Bob) or b -> (2, 2). At 1 Bob is indifferent between (3, 1) and
	// (0, 1). If Bob picks (3,1), Alice plays a (3 > 2); if (0,1), Alice plays b (2 > 0). Two
	// subgame-perfect outcomes: [0 0] -> (3,1) and [1] -> (2,2); the canonical one takes Bob's
	// first branch, so its path is [0 0].
	tie := tree(t, []equilibria.Node{
		{Player: 0, Children: []int{1, 4}},
		{Player: 1, Children: []int{2, 3}}, leaf(3, 1), leaf(0, 1), leaf(2, 2),
	})
	s = equilibria.BackwardInduction(tie)
	if !slices.Equal(s.Path.Path, []int{0, 0}) || s.Unique() || len(s.Ties) != 1 || s.Ties[0].Node != 1 || !slices.Equal(s.Ties[0].Branches, []int{0, 1}) {
		t.Errorf("tie: path %v ties %+v", s.Path.Path, s.Ties)
	}
	var paths [][]int
	for _, o := range s.Outcomes {
		paths = append(paths, o.Path)
	}
	if !slices.EqualFunc(paths, [][]int{{0, 0}, {1}}, slices.Equal) {
		t.Errorf("tie: outcomes %v, want [0 0] and [1]", paths)
	}
}

// randomTree draws a small tree with ties likely.
func randomTree(rng *rand.Rand) *equilibria.Tree {
	nodes := []equilibria.Node{{}}
	var grow func(i, depth int)
	grow = func(i, depth int) {
		if depth >= 3 || (depth > 0 && rng.IntN(3) == 0) {
			nodes[i] = equilibria.Node{Payoffs: equilibria.Payoffs{r(int64(rng.IntN(4)), 1), r(int64(rng.IntN(4)), 1)}}
			return
		}
		nodes[i].Player = rng.IntN(2)
		for range 2 + rng.IntN(2) {
			nodes = append(nodes, equilibria.Node{})
			ch := len(nodes) - 1
			nodes[i].Children = append(nodes[i].Children, ch)
			grow(ch, depth+1)
		}
	}
	grow(0, 0)
	t, err := equilibria.NewTree(nodes)
	if err != nil {
		panic(err)
	}
	return t
}

// TestBackwardInductionBruteForce: on random trees, the outcomes BackwardInduction reports are
// exactly those of the strategy profiles (every combination of a branch at every decision
// node) in which the mover's branch is a best reply at every node, given the profile below it.
func TestBackwardInductionBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range iterations() / 4 {
		tr := randomTree(rng)
		var decisions []int
		for i := range tr.Len() {
			if !tr.Node(i).Leaf() {
				decisions = append(decisions, i)
			}
		}
		choice := make([]int, tr.Len())
		value := func(n int) equilibria.Payoffs {
			for !tr.Node(n).Leaf() {
				n = tr.Node(n).Children[choice[n]]
			}
			return tr.Node(n).Payoffs
		}
		var want [][]int
		var rec func(k int)
		rec = func(k int) {
			if k == len(decisions) {
				for _, n := range decisions {
					node := tr.Node(n)
					v := value(node.Children[choice[n]])[node.Player]
					for _, ch := range node.Children {
						if value(ch)[node.Player].Cmp(v) > 0 {
							return
						}
					}
				}
				var path []int
				for n := 0; !tr.Node(n).Leaf(); n = tr.Node(n).Children[choice[n]] {
					path = append(path, choice[n])
				}
				if !slices.ContainsFunc(want, func(p []int) bool { return slices.Equal(p, path) }) {
					want = append(want, path)
				}
				return
			}
			for b := range tr.Node(decisions[k]).Children {
				choice[decisions[k]] = b
				rec(k + 1)
			}
		}
		rec(0)
		slices.SortFunc(want, slices.Compare)
		s := equilibria.BackwardInduction(tr)
		var got [][]int
		for _, o := range s.Outcomes {
			got = append(got, o.Path)
		}
		slices.SortFunc(got, slices.Compare)
		if !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("SPE outcomes %v, brute force %v", got, want)
		}
		if !s.OnPath(s.Path.Path) {
			t.Fatalf("the canonical path %v is not among the outcomes %v", s.Path.Path, got)
		}
		// Every SPE outcome is a Nash outcome of the normal form.
		nash, err := equilibria.NashOutcomes(tr)
		if errors.Is(err, equilibria.ErrTooLarge) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range got {
			if !slices.ContainsFunc(nash, func(o equilibria.Outcome) bool { return slices.Equal(o.Path, p) }) {
				t.Fatalf("SPE outcome %v is not a Nash outcome %v", p, nash)
			}
		}
	}
}

// TestNewTreeRefuses malformed trees.
func TestNewTreeRefuses(t *testing.T) {
	for name, nodes := range map[string][]equilibria.Node{
		"empty":            nil,
		"child before":     {{Player: 0, Children: []int{0}}},
		"two parents":      {{Player: 0, Children: []int{1, 1}}, leaf(0, 0)},
		"orphan":           {{Player: 0, Children: []int{1}}, leaf(0, 0), leaf(1, 1)},
		"bad player":       {{Player: 2, Children: []int{1}}, leaf(0, 0)},
		"leaf without pay": {{Player: 0, Children: []int{1}}, {}},
	} {
		if _, err := equilibria.NewTree(nodes); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
