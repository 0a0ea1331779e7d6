package equilibria

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// Limits on game trees.
const (
	// MaxNodes bounds the nodes of a Tree.
	MaxNodes = 4096
	// MaxStrategies bounds each player's pure strategies in NormalForm: a player with d
	// decision nodes of b branches has b^d of them.
	MaxStrategies = 256
)

// Node is a node of a game tree: a decision node of Player with Children (node indices, one
// per branch, in branch order), or a leaf with Payoffs.
type Node struct {
	// Player to move at a decision node: Row (0) or Col (1).
	Player int
	// Children are the nodes the branches lead to; empty at a leaf.
	Children []int
	// Payoffs at a leaf.
	Payoffs Payoffs
}

// Leaf reports whether the node is a leaf.
func (n Node) Leaf() bool { return len(n.Children) == 0 }

// Tree is a two-player game tree with perfect information; Nodes[0] is the root. Never
// changed once built.
type Tree struct {
	nodes []Node
}

// NewTree returns the tree of nodes, which it copies. Every child index must be greater than
// its parent's (topological order), every node but the root the child of exactly one branch,
// every decision node's player 0 or 1, and every leaf's payoffs set.
func NewTree(nodes []Node) (*Tree, error) {
	if len(nodes) == 0 {
		return nil, errors.New("equilibria: a tree needs a root")
	}
	if len(nodes) > MaxNodes {
		return nil, fmt.Errorf("%w: %d nodes, at most %d", ErrTooLarge, len(nodes), MaxNodes)
	}
	parents := make([]int, len(nodes))
	t := &Tree{nodes: make([]Node, len(nodes))}
	for i, n := range nodes {
		c := Node{Player: n.Player, Children: slices.Clone(n.Children)}
		if n.Leaf() {
			if n.Payoffs[0] == nil || n.Payoffs[1] == nil {
				return nil, fmt.Errorf("equilibria: leaf %d lacks a payoff", i)
			}
			c.Payoffs = Payoffs{new(big.Rat).Set(n.Payoffs[0]), new(big.Rat).Set(n.Payoffs[1])}
		} else if n.Player != Row && n.Player != Col {
			return nil, fmt.Errorf("equilibria: node %d is a decision node of player %d; players are 0 and 1", i, n.Player)
		}
		for _, ch := range n.Children {
			if ch <= i || ch >= len(nodes) {
				return nil, fmt.Errorf("equilibria: node %d has child %d; children must come after their parent, before %d", i, ch, len(nodes))
			}
			parents[ch]++
		}
		t.nodes[i] = c
	}
	for i := 1; i < len(nodes); i++ {
		if parents[i] != 1 {
			return nil, fmt.Errorf("equilibria: node %d is the child of %d branches; every node but the root must be the child of exactly one", i, parents[i])
		}
	}
	return t, nil
}

// Len returns the number of nodes.
func (t *Tree) Len() int { return len(t.nodes) }

// Node returns node i (shared: callers must not change it).
func (t *Tree) Node(i int) Node { return t.nodes[i] }

// Follow returns the node reached from the root by path (branch indices), or false when the
// path leaves the tree.
func (t *Tree) Follow(path []int) (int, bool) {
	n := 0
	for _, b := range path {
		ch := t.nodes[n].Children
		if b < 0 || b >= len(ch) {
			return 0, false
		}
		n = ch[b]
	}
	return n, true
}

// Outcome is a way through a tree to a leaf: the branch taken at each decision node from the
// root, and the leaf's payoffs.
type Outcome struct {
	Path    []int
	Leaf    int
	Payoffs Payoffs
}

// Tie is a decision node where backward induction finds several best branches for the player
// to move.
type Tie struct {
	Node     int
	Branches []int
}

// SPE is what backward induction finds in a tree.
type SPE struct {
	// Choice[n] is, at decision node n, the first of its best branches given the choices below
	// it (the canonical subgame-perfect strategy profile); -1 at leaves.
	Choice []int
	// Value[n] is the payoffs of the subgame at n under Choice.
	Value []Payoffs
	// Path is the canonical profile's way from the root to a leaf.
	Path Outcome
	// Ties lists the decision nodes, on the path or off it, where the canonical profile has
	// several best branches, in node order. Without ties the subgame-perfect equilibrium is
	// unique.
	Ties []Tie
	// Outcomes is every outcome some subgame-perfect equilibrium reaches (every way of
	// breaking every tie), in the order of their paths. One entry when the play is unique.
	Outcomes []Outcome
}

// Unique reports whether the tree has a single subgame-perfect equilibrium.
func (s *SPE) Unique() bool { return len(s.Ties) == 0 }

// OnPath reports whether path (branch indices from the root to a leaf) is the way of some
// subgame-perfect equilibrium.
func (s *SPE) OnPath(path []int) bool {
	for _, o := range s.Outcomes {
		if slices.Equal(o.Path, path) {
			return true
		}
	}
	return false
}

// BackwardInduction solves the tree: the canonical subgame-perfect profile, its ties, and the
// outcome of every subgame-perfect equilibrium.
func BackwardInduction(t *Tree) *SPE {
	n := len(t.nodes)
	s := &SPE{Choice: make([]int, n), Value: make([]Payoffs, n)}
	sets := make([][]Outcome, n) // every SPE outcome of the subgame at each node, paths from it
	for i := n - 1; i >= 0; i-- {
		node := t.nodes[i]
		if node.Leaf() {
			s.Choice[i] = -1
			s.Value[i] = node.Payoffs
			sets[i] = []Outcome{{Leaf: i, Payoffs: node.Payoffs}}
			continue
		}
		p := node.Player
		best := -1
		var ties []int
		for b, ch := range node.Children {
			switch {
			case best < 0 || s.Value[ch][p].Cmp(s.Value[node.Children[best]][p]) > 0:
				best, ties = b, []int{b}
			case s.Value[ch][p].Cmp(s.Value[node.Children[best]][p]) == 0:
				ties = append(ties, b)
			}
		}
		s.Choice[i] = best
		s.Value[i] = s.Value[node.Children[best]]
		if len(ties) > 1 {
			s.Ties = append(s.Ties, Tie{Node: i, Branches: ties})
		}
		// An outcome o of child c is reached by some SPE of this subgame when the mover gets
		// at least as much from o as from every other child's worst SPE outcome (for it): the
		// other subgames can then be resolved that way.
		worst := make([]*big.Rat, len(node.Children))
		for b, ch := range node.Children {
			for _, o := range sets[ch] {
				if worst[b] == nil || o.Payoffs[p].Cmp(worst[b]) < 0 {
					worst[b] = o.Payoffs[p]
				}
			}
		}
		for b, ch := range node.Children {
			for _, o := range sets[ch] {
				ok := true
				for b2 := range node.Children {
					if b2 != b && o.Payoffs[p].Cmp(worst[b2]) < 0 {
						ok = false
						break
					}
				}
				if ok {
					sets[i] = append(sets[i], Outcome{Path: append([]int{b}, o.Path...), Leaf: o.Leaf, Payoffs: o.Payoffs})
				}
			}
		}
	}
	slices.SortFunc(s.Ties, func(a, b Tie) int { return a.Node - b.Node })
	s.Outcomes = sets[0]
	var path []int
	for i := 0; !t.nodes[i].Leaf(); i = t.nodes[i].Children[s.Choice[i]] {
		path = append(path, s.Choice[i])
	}
	leaf, _ := t.Follow(path)
	s.Path = Outcome{Path: path, Leaf: leaf, Payoffs: t.nodes[leaf].Payoffs}
	return s
}

// Strategy is a pure strategy of one player in a tree: the branch it takes at each of its
// decision nodes, in node order (see NormalForm's nodes).
type Strategy []int

// NormalForm is a tree written as a matrix: every pure strategy of each player, and the
// payoffs of each pair.
type NormalForm struct {
	// Matrix has a row per strategy of player 0 and a column per strategy of player 1.
	Matrix *Matrix
	// Nodes[p] are player p's decision nodes, in node order; Strategies[p][k][i] is the branch
	// strategy k takes at Nodes[p][i].
	Nodes      [2][]int
	Strategies [2][]Strategy
}

// Outcome returns the outcome of the profile of strategies r (player 0) and c (player 1).
func (nf *NormalForm) Outcome(t *Tree, r, c int) Outcome {
	choice := make(map[int]int)
	for p, k := range [2]int{r, c} {
		for i, n := range nf.Nodes[p] {
			choice[n] = nf.Strategies[p][k][i]
		}
	}
	var path []int
	n := 0
	for !t.nodes[n].Leaf() {
		b := choice[n]
		path = append(path, b)
		n = t.nodes[n].Children[b]
	}
	return Outcome{Path: path, Leaf: n, Payoffs: t.nodes[n].Payoffs}
}

// ToNormalForm writes the tree as a matrix of pure strategies. Trees where a player has more
// than MaxStrategies strategies are refused with ErrTooLarge.
func ToNormalForm(t *Tree) (*NormalForm, error) {
	nf := &NormalForm{}
	for i, n := range t.nodes {
		if !n.Leaf() {
			nf.Nodes[n.Player] = append(nf.Nodes[n.Player], i)
		}
	}
	for p := range 2 {
		count := 1
		for _, n := range nf.Nodes[p] {
			count *= len(t.nodes[n].Children)
			if count > MaxStrategies {
				return nil, fmt.Errorf("%w: player %d has more than %d pure strategies", ErrTooLarge, p, MaxStrategies)
			}
		}
		// Enumerate like an odometer, the last node fastest.
		cur := make(Strategy, len(nf.Nodes[p]))
		for range count {
			nf.Strategies[p] = append(nf.Strategies[p], slices.Clone(cur))
			for i := len(cur) - 1; i >= 0; i-- {
				cur[i]++
				if cur[i] < len(t.nodes[nf.Nodes[p][i]].Children) {
					break
				}
				cur[i] = 0
			}
		}
	}
	pay := make([][]Payoffs, len(nf.Strategies[0]))
	for r := range pay {
		pay[r] = make([]Payoffs, len(nf.Strategies[1]))
		for c := range pay[r] {
			pay[r][c] = nf.Outcome(t, r, c).Payoffs
		}
	}
	if len(nf.Strategies[0]) > MaxActions || len(nf.Strategies[1]) > MaxActions {
		// NewMatrix's own limit is for games written by hand; a normal form may be larger.
		nf.Matrix = &Matrix{pay: pay}
		return nf, nil
	}
	m, err := NewMatrix(pay)
	if err != nil {
		return nil, err
	}
	nf.Matrix = m
	return nf, nil
}

// NashOutcomes returns the distinct outcomes of the tree's pure Nash equilibria (of its normal
// form), in the order of their paths: the subgame-perfect ones and those that rest on threats
// off the path (e.g. in monopoly, staying out because the incumbent "would fight").
func NashOutcomes(t *Tree) ([]Outcome, error) {
	nf, err := ToNormalForm(t)
	if err != nil {
		return nil, err
	}
	var out []Outcome
	for _, p := range PureNash(nf.Matrix) {
		o := nf.Outcome(t, p.Row, p.Col)
		if !slices.ContainsFunc(out, func(q Outcome) bool { return slices.Equal(q.Path, o.Path) }) {
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b Outcome) int { return slices.Compare(a.Path, b.Path) })
	return out, nil
}
