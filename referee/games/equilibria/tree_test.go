package equilibria_test

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parley-arena/parley/referee/games/equilibria"
)

func tree(t testing.TB, players int, nodes []equilibria.Node) *equilibria.Tree {
	t.Helper()
	tr, err := equilibria.NewTree(players, nodes)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func leaf(pay ...int64) equilibria.Node {
	var p equilibria.Payoffs
	for _, x := range pay {
		p = append(p, r(x, 1))
	}
	return equilibria.Node{Payoffs: p}
}

func paths(os []equilibria.Outcome) [][]int {
	var out [][]int
	for _, o := range os {
		out = append(out, o.Path)
	}
	return out
}

// TestHandWorkedTrees: a centipede-like tree, one with a tie that changes the path, monopoly's
// threat, and a three-player tree.
func TestHandWorkedTrees(t *testing.T) {
	// 0: Alice: take (1,0) or pass to 2; 2: Bob: take (0,2) or pass to 4; 4: Alice: take (3,1)
	// or pass (2,4). Backward: at 4 Alice takes (3 > 2); at 2 Bob takes (2 > 1); at 0 Alice
	// takes (1 > 0). Path [0] -> (1, 0), unique.
	centipede := tree(t, 2, []equilibria.Node{
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
	tie := tree(t, 2, []equilibria.Node{
		{Player: 0, Children: []int{1, 4}},
		{Player: 1, Children: []int{2, 3}}, leaf(3, 1), leaf(0, 1), leaf(2, 2),
	})
	s = equilibria.BackwardInduction(tie)
	if !slices.Equal(s.Path.Path, []int{0, 0}) || s.Unique() || len(s.Ties) != 1 || s.Ties[0].Node != 1 || !slices.Equal(s.Ties[0].Branches, []int{0, 1}) {
		t.Errorf("tie: path %v ties %+v", s.Path.Path, s.Ties)
	}
	if got := paths(s.Outcomes); !slices.EqualFunc(got, [][]int{{0, 0}, {1}}, slices.Equal) {
		t.Errorf("tie: outcomes %v, want [0 0] and [1]", got)
	}
	// Monopoly: stay out (0,2), or enter and Bob accommodates (2,1) or fights (-1,-1). SPE:
	// enter, accommodate. Nash outcomes: that one, and staying out (Bob's threat to fight
	// holds Alice to -1 < 0).
	monopoly := tree(t, 2, []equilibria.Node{
		{Player: 0, Children: []int{1, 2}}, leaf(0, 2),
		{Player: 1, Children: []int{3, 4}}, leaf(2, 1), leaf(-1, -1),
	})
	if got := paths(equilibria.NashOutcomes(monopoly)); !slices.EqualFunc(got, [][]int{{0}, {1, 0}}, slices.Equal) {
		t.Errorf("monopoly Nash outcomes %v, want [0] and [1 0]", got)
	}
	// Three players in turn: Ann stops (1,1,1) or goes on to Ben, who stops (0,2,0) or goes on
	// to Cat, who picks (2,0,3) or (3,3,2). Cat takes (2,0,3); Ben then stops (2 > 0); Ann
	// stops (1 > 0). Nash outcomes: [0] (Ben and Cat can hold Ann to 0 < 1), and [1 0]: Ben
	// stops for 2; Ann gets 0 there, but going on... no: Ann could stop for 1 > 0, so [1 0] is
	// not one. [1 1 0]: Ann gets 2 >= 1 (stop), Ben gets 0 < 2 (stop): not. [1 1 1]: Cat gets
	// 2 < 3: not. So only [0].
	three := tree(t, 3, []equilibria.Node{
		{Player: 0, Children: []int{1, 2}}, leaf(1, 1, 1),
		{Player: 1, Children: []int{3, 4}}, leaf(0, 2, 0),
		{Player: 2, Children: []int{5, 6}}, leaf(2, 0, 3), leaf(3, 3, 2),
	})
	s = equilibria.BackwardInduction(three)
	if !slices.Equal(s.Path.Path, []int{0}) || !s.Unique() {
		t.Errorf("three players: %+v", s)
	}
	if got := paths(equilibria.NashOutcomes(three)); !slices.EqualFunc(got, [][]int{{0}}, slices.Equal) {
		t.Errorf("three players: Nash outcomes %v, want [0]", got)
	}
}

// growTree builds a tree of players: a node at depth d is a leaf when leafAt(d) says so, else
// a decision node of who(d) with branches(d) children; leaves pay from 0..span-1.
func growTree(rng *rand.Rand, players, span int, leafAt func(d int) bool, who, branches func(d int) int) *equilibria.Tree {
	nodes := []equilibria.Node{{}}
	var grow func(i, depth int)
	grow = func(i, depth int) {
		if leafAt(depth) {
			var p equilibria.Payoffs
			for range players {
				p = append(p, r(int64(rng.IntN(span)), 1))
			}
			nodes[i] = equilibria.Node{Payoffs: p}
			return
		}
		nodes[i].Player = who(depth)
		for range branches(depth) {
			nodes = append(nodes, equilibria.Node{})
			ch := len(nodes) - 1
			nodes[i].Children = append(nodes[i].Children, ch)
			grow(ch, depth+1)
		}
	}
	grow(0, 0)
	t, err := equilibria.NewTree(players, nodes)
	if err != nil {
		panic(err)
	}
	return t
}

// randomTree draws a small tree of 2 or 3 players with ties likely.
func randomTree(rng *rand.Rand) *equilibria.Tree {
	players := 2 + rng.IntN(2)
	return growTree(rng, players, 4,
		func(d int) bool { return d >= 3 || (d > 0 && rng.IntN(3) == 0) },
		func(int) int { return rng.IntN(players) },
		func(int) int { return 2 + rng.IntN(2) })
}

// TestTreesBruteForce: on random trees of 2 or 3 players, with every strategy profile (a
// branch at every decision node) listed here, BackwardInduction's outcomes are exactly those
// of the profiles where every mover's branch is a best reply given the profile below it, and
// NashOutcomes' exactly those of the profiles where no player gains by changing any of its
// branches at once.
func TestTreesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range iterations() / 4 {
		var tr *equilibria.Tree
		var decisions []int
		for profiles := 1 << 30; profiles > 3000; {
			tr, decisions, profiles = randomTree(rng), nil, 1
			for i := range tr.Len() {
				if !tr.Node(i).Leaf() {
					decisions = append(decisions, i)
					profiles *= len(tr.Node(i).Children)
				}
			}
		}
		choice := make([]int, tr.Len())
		value := func(n int, choice []int) equilibria.Payoffs {
			for !tr.Node(n).Leaf() {
				n = tr.Node(n).Children[choice[n]]
			}
			return tr.Node(n).Payoffs
		}
		pathOf := func(choice []int) []int {
			var path []int
			for n := 0; !tr.Node(n).Leaf(); n = tr.Node(n).Children[choice[n]] {
				path = append(path, choice[n])
			}
			return path
		}
		// strategies of player p: every assignment of branches to its nodes, tried on a copy.
		var deviates func(p int, k int, dev []int, v *big.Rat) bool
		deviates = func(p, k int, dev []int, v *big.Rat) bool {
			if k == len(decisions) {
				return value(0, dev)[p].Cmp(v) > 0
			}
			n := decisions[k]
			if tr.Node(n).Player != p {
				return deviates(p, k+1, dev, v)
			}
			for b := range tr.Node(n).Children {
				dev[n] = b
				if deviates(p, k+1, dev, v) {
					return true
				}
			}
			return false
		}
		var wantSPE, wantNash [][]int
		add := func(set *[][]int, p []int) {
			if !slices.ContainsFunc(*set, func(q []int) bool { return slices.Equal(p, q) }) {
				*set = append(*set, p)
			}
		}
		var rec func(k int)
		rec = func(k int) {
			if k < len(decisions) {
				for b := range tr.Node(decisions[k]).Children {
					choice[decisions[k]] = b
					rec(k + 1)
				}
				return
			}
			perfect := true
			for _, n := range decisions {
				node := tr.Node(n)
				v := value(node.Children[choice[n]], choice)[node.Player]
				for _, ch := range node.Children {
					if value(ch, choice)[node.Player].Cmp(v) > 0 {
						perfect = false
					}
				}
			}
			if perfect {
				add(&wantSPE, pathOf(choice))
			}
			nash := true
			for p := range tr.Players() {
				if deviates(p, 0, slices.Clone(choice), value(0, choice)[p]) {
					nash = false
					break
				}
			}
			if nash {
				add(&wantNash, pathOf(choice))
			}
		}
		rec(0)
		slices.SortFunc(wantSPE, slices.Compare)
		slices.SortFunc(wantNash, slices.Compare)
		s := equilibria.BackwardInduction(tr)
		got := paths(s.Outcomes)
		slices.SortFunc(got, slices.Compare)
		if !slices.EqualFunc(got, wantSPE, slices.Equal) {
			t.Fatalf("SPE outcomes %v, brute force %v", got, wantSPE)
		}
		if !s.OnPath(s.Path.Path) {
			t.Fatalf("the canonical path %v is not among the outcomes %v", s.Path.Path, got)
		}
		if got := paths(equilibria.NashOutcomes(tr)); !slices.EqualFunc(got, wantNash, slices.Equal) {
			t.Fatalf("Nash outcomes %v, brute force %v", got, wantNash)
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
		"short payoffs":    {{Player: 0, Children: []int{1}}, leaf(1)},
	} {
		if _, err := equilibria.NewTree(2, nodes); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := equilibria.NewTree(1, []equilibria.Node{leaf(1)}); err == nil {
		t.Error("one player: accepted")
	}
}
