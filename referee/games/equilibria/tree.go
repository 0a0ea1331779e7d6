package equilibria

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
)

// MaxNodes bounds the nodes of a Tree.
const MaxNodes = 4096

// Node is a node of a game tree: a decision node of Player with Children (node indices, one
// per branch, in branch order), or a leaf with Payoffs.
type Node struct {
	// Player to move at a decision node, 0-based.
	Player int
	// Children are the nodes the branches lead to; empty at a leaf.
	Children []int
	// Payoffs at a leaf, one per player.
	Payoffs Payoffs
}

// Leaf reports whether the node is a leaf.
func (n Node) Leaf() bool { return len(n.Children) == 0 }

// Tree is a game tree with perfect information of any number of players; Nodes[0] is the
// root. Never changed once built.
type Tree struct {
	players int
	nodes   []Node
}

// NewTree returns the tree of nodes for players players (2 to MaxPlayers), which it copies.
// Every child index must be greater than its parent's (topological order), every node but the
// root the child of exactly one branch, every decision node's player one of the players, and
// every leaf's payoffs set, one per player.
func NewTree(players int, nodes []Node) (*Tree, error) {
	if players < 2 || players > MaxPlayers {
		return nil, fmt.Errorf("%w: %d players; 2 to %d are allowed", ErrTooLarge, players, MaxPlayers)
	}
	if len(nodes) == 0 {
		return nil, errors.New("equilibria: a tree needs a root")
	}
	if len(nodes) > MaxNodes {
		return nil, fmt.Errorf("%w: %d nodes, at most %d", ErrTooLarge, len(nodes), MaxNodes)
	}
	parents := make([]int, len(nodes))
	t := &Tree{players: players, nodes: make([]Node, len(nodes))}
	for i, n := range nodes {
		c := Node{Player: n.Player, Children: slices.Clone(n.Children)}
		if n.Leaf() {
			p, err := clonePayoffs(n.Payoffs, players, fmt.Sprintf("leaf %d", i))
			if err != nil {
				return nil, err
			}
			c.Payoffs = p
		} else if n.Player < 0 || n.Player >= players {
			return nil, fmt.Errorf("equilibria: node %d is a decision node of player %d; players are 0 to %d", i, n.Player, players-1)
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

// Players returns the number of players.
func (t *Tree) Players() int { return t.players }

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
	// breaking every tie, anywhere in the tree), in the order of their paths. One entry when
	// the play is unique.
	Outcomes []Outcome
}

// Unique reports whether the tree has a single subgame-perfect equilibrium.
func (s *SPE) Unique() bool { return len(s.Ties) == 0 }

// OnPath reports whether path (branch indices from the root to a leaf) is the way of some
// subgame-perfect equilibrium.
func (s *SPE) OnPath(path []int) bool {
	return slices.ContainsFunc(s.Outcomes, func(o Outcome) bool { return slices.Equal(o.Path, path) })
}

// BackwardInduction solves the tree: the canonical subgame-perfect profile, its ties, and the
// outcome of every subgame-perfect equilibrium. Its cost is the number of nodes times the
// number of subgame-perfect outcomes of the subgames (at most the leaves).
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
		// other subgames can then be resolved that way. Only the mover's payoff matters here,
		// whatever the number of players.
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
		for _, ch := range node.Children {
			sets[ch] = nil // no longer needed
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

// Punishment returns, for every node n and player p, the most p can secure in the subgame at n
// when every other player acts against it: p maximizes at its own nodes, the others minimize
// p's payoff at theirs (the value of the zero-sum game of p against the rest).
func Punishment(t *Tree) [][]*big.Rat {
	w := make([][]*big.Rat, len(t.nodes))
	for i := len(t.nodes) - 1; i >= 0; i-- {
		node := t.nodes[i]
		w[i] = make([]*big.Rat, t.players)
		if node.Leaf() {
			copy(w[i], node.Payoffs)
			continue
		}
		for p := range t.players {
			for _, ch := range node.Children {
				v := w[ch][p]
				if w[i][p] == nil || (node.Player == p) == (v.Cmp(w[i][p]) > 0) {
					w[i][p] = v
				}
			}
		}
	}
	return w
}

// NashOutcomes returns the distinct outcomes of the tree's pure Nash equilibria (of its normal
// form), in the order of their paths: the subgame-perfect ones and those that rest on threats
// off the path (e.g. in monopoly, staying out because the incumbent "would fight").
//
// It never lists strategies, so its cost is linear in the tree's size times the players: a
// leaf is the outcome of a pure Nash equilibrium exactly when, at every decision node on its
// path, the mover could not get more by leaving the path than the leaf pays it, with everybody
// else then punishing it (Punishment). The others' strategies off the path can be set to those
// punishments, one deviator per subgame left, and the mover's own deviations at later nodes
// of the path are covered by the same test at those nodes.
func NashOutcomes(t *Tree) []Outcome {
	w := Punishment(t)
	var out []Outcome
	threshold := make([]*big.Rat, t.players) // the most each player could get by leaving the path so far
	var path []int
	var walk func(n int)
	walk = func(n int) {
		node := t.nodes[n]
		if node.Leaf() {
			for p, th := range threshold {
				if th != nil && node.Payoffs[p].Cmp(th) < 0 {
					return
				}
			}
			out = append(out, Outcome{Path: slices.Clone(path), Leaf: n, Payoffs: node.Payoffs})
			return
		}
		p := node.Player
		saved := threshold[p]
		for b, ch := range node.Children {
			th := saved
			for b2, other := range node.Children {
				if b2 != b && (th == nil || w[other][p].Cmp(th) > 0) {
					th = w[other][p]
				}
			}
			threshold[p] = th
			path = append(path, b)
			walk(ch)
			path = path[:len(path)-1]
		}
		threshold[p] = saved
	}
	walk(0)
	return out
}
