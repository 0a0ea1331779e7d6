package gamefile

import (
	"errors"
	"fmt"
	"math/big"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	sequentialv1 "github.com/parley-arena/parley/gen/go/parley/games/sequential/v1"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"google.golang.org/protobuf/proto"
)

// TableActions returns every player's actions, seat order: rows and cols in a two-player
// table, player_actions otherwise. The slices are the table's own.
func TableActions(t *matrixv1.Table) [][]*matrixv1.Action {
	if len(t.GetPlayerActions()) > 0 {
		out := make([][]*matrixv1.Action, len(t.GetPlayerActions()))
		for p, pa := range t.GetPlayerActions() {
			out[p] = pa.GetActions()
		}
		return out
	}
	return [][]*matrixv1.Action{t.GetRows(), t.GetCols()}
}

// SetActions writes every player's actions into t in the contract's form: rows and cols for
// two players, player_actions for more.
func SetActions(t *matrixv1.Table, acts [][]*matrixv1.Action) {
	t.Rows, t.Cols, t.PlayerActions = nil, nil, nil
	if len(acts) == 2 {
		t.Rows, t.Cols = acts[0], acts[1]
		return
	}
	for _, a := range acts {
		t.PlayerActions = append(t.PlayerActions, &matrixv1.PlayerActions{Actions: a})
	}
}

// CheckTable checks a matrix game from the contract: 2 to equilibria.MaxPlayers players (rows
// and cols, or player_actions for three or more), 1 to equilibria.MaxActions actions each with
// unique valid ids, at most equilibria.MaxProfiles profiles, one cell of one payoff per player
// per profile, texts within their limits.
func CheckTable(t *matrixv1.Table) error {
	if t == nil {
		return errors.New("no table")
	}
	if len(t.GetPlayerActions()) > 0 && (len(t.GetRows()) > 0 || len(t.GetCols()) > 0) {
		return errors.New("a table has rows and cols (two players) or player_actions (three or more), not both")
	}
	acts := TableActions(t)
	if len(acts) == 2 && len(t.GetPlayerActions()) > 0 {
		return errors.New("a two-player table gives rows and cols, not player_actions")
	}
	if len(acts) > equilibria.MaxPlayers {
		return fmt.Errorf("%d players; at most %d", len(acts), equilibria.MaxPlayers)
	}
	if err := checkCommon(t.GetTitle(), t.GetDescription(), t.GetPlayers(), len(acts), t.GetScaleName(), t.GetScaleDefault()); err != nil {
		return err
	}
	names := Players(t.GetPlayers())
	cells := 1
	for p, list := range acts {
		if len(list) == 0 || len(list) > equilibria.MaxActions {
			return fmt.Errorf("%s has %d actions; 1 to %d are allowed", names[p], len(list), equilibria.MaxActions)
		}
		seen := map[string]bool{}
		for i, a := range list {
			if err := checkAction(a); err != nil {
				return fmt.Errorf("%s's action %d: %v", names[p], i+1, err)
			}
			if seen[a.GetId()] {
				return fmt.Errorf("two of %s's actions have the id %q", names[p], a.GetId())
			}
			seen[a.GetId()] = true
		}
		if cells *= len(list); cells > equilibria.MaxProfiles {
			return fmt.Errorf("the table has more than %d profiles", equilibria.MaxProfiles)
		}
	}
	if len(t.GetCells()) != cells {
		return fmt.Errorf("the table has %d cells; its %d profiles need one each", len(t.GetCells()), cells)
	}
	for k, c := range t.GetCells() {
		if err := checkPayoffs(c.GetPayoffs(), len(acts)); err != nil {
			return fmt.Errorf("cell %d %s: %v", k+1, profileText(acts, k), err)
		}
	}
	return nil
}

// CheckTree checks a game tree from the contract: players, nodes in topological order each
// the child of one branch, decision nodes of one of the players with uniquely named moves,
// leaves with one payoff per player, texts within their limits.
func CheckTree(t *sequentialv1.Tree) error {
	if t == nil {
		return errors.New("no tree")
	}
	n := max(2, len(t.GetPlayers()))
	if err := checkCommon(t.GetTitle(), t.GetDescription(), t.GetPlayers(), n, t.GetScaleName(), t.GetScaleDefault()); err != nil {
		return err
	}
	_, err := treeOf(t, big.NewRat(1, 1))
	return err
}

// checkCommon checks what tables and trees share; n is the number of players.
func checkCommon(title, description string, players []string, n int, scaleName string, scaleDefault *gamev1.Rational) error {
	if err := checkText("title", title, MaxLabelLen); err != nil {
		return err
	}
	if err := checkText("description", description, MaxTextLen); err != nil {
		return err
	}
	switch {
	case len(players) == 0 && n == 2:
	case len(players) != n:
		return fmt.Errorf("%d player names for %d players", len(players), n)
	default:
		if err := checkPlayers(players); err != nil {
			return err
		}
	}
	if err := checkText("scale name", scaleName, MaxLabelLen); err != nil {
		return err
	}
	if scaleDefault != nil {
		r, err := RatOf(scaleDefault)
		if err != nil {
			return fmt.Errorf("scale default: %v", err)
		}
		if r.Sign() <= 0 {
			return fmt.Errorf("scale default must be positive, got %s", r.RatString())
		}
	}
	return nil
}

// checkPlayers checks 2 to equilibria.MaxPlayers distinct, valid names.
func checkPlayers(names []string) error {
	if len(names) < 2 || len(names) > equilibria.MaxPlayers {
		return fmt.Errorf("%d players; 2 to %d are allowed", len(names), equilibria.MaxPlayers)
	}
	seen := map[string]bool{}
	for _, p := range names {
		if err := checkName("player name", p); err != nil {
			return err
		}
		if seen[p] {
			return fmt.Errorf("two players are called %q", p)
		}
		seen[p] = true
	}
	return nil
}

func checkPayoffs(pay []*gamev1.Rational, n int) error {
	if len(pay) != n {
		return fmt.Errorf("%d payoffs; want one per player (%d)", len(pay), n)
	}
	for _, q := range pay {
		if _, err := RatOf(q); err != nil {
			return err
		}
	}
	return nil
}

// scaled returns payoffs times scale, refusing results beyond MaxMagnitude.
func scaled(pay []*gamev1.Rational, scale *big.Rat) (equilibria.Payoffs, error) {
	out := make(equilibria.Payoffs, len(pay))
	for p, q := range pay {
		r, err := RatOf(q)
		if err != nil {
			return nil, err
		}
		r.Mul(r, scale)
		if err := checkMagnitude(r); err != nil {
			return nil, fmt.Errorf("scaled payoff: %v", err)
		}
		out[p] = r
	}
	return out, nil
}

// MatrixOf checks t and returns its exact model with every payoff times scale.
func MatrixOf(t *matrixv1.Table, scale *big.Rat) (*equilibria.Matrix, error) {
	if err := CheckTable(t); err != nil {
		return nil, err
	}
	acts := TableActions(t)
	sizes := make([]int, len(acts))
	for p, a := range acts {
		sizes[p] = len(a)
	}
	pay := make([]equilibria.Payoffs, len(t.GetCells()))
	for k, c := range t.GetCells() {
		p, err := scaled(c.GetPayoffs(), scale)
		if err != nil {
			return nil, fmt.Errorf("cell %d %s: %v", k+1, profileText(acts, k), err)
		}
		pay[k] = p
	}
	return equilibria.NewGame(sizes, pay)
}

// TreeOf checks t and returns its exact model with every payoff times scale.
func TreeOf(t *sequentialv1.Tree, scale *big.Rat) (*equilibria.Tree, error) {
	if err := CheckTree(t); err != nil {
		return nil, err
	}
	return treeOf(t, scale)
}

func treeOf(t *sequentialv1.Tree, scale *big.Rat) (*equilibria.Tree, error) {
	players := len(Players(t.GetPlayers()))
	n := len(t.GetNodes())
	if n == 0 || n > equilibria.MaxNodes {
		return nil, fmt.Errorf("the tree has %d nodes; 1 to %d are allowed", n, equilibria.MaxNodes)
	}
	if len(t.GetNodes()[0].GetBranches()) == 0 {
		return nil, errors.New("the root is a leaf; a game tree starts with a decision")
	}
	nodes := make([]equilibria.Node, n)
	for i, node := range t.GetNodes() {
		if len(node.GetBranches()) == 0 {
			if len(node.GetPayoffs()) != players {
				return nil, fmt.Errorf("leaf %d has %d payoffs; want one per player (%d)", i, len(node.GetPayoffs()), players)
			}
			p, err := scaled(node.GetPayoffs(), scale)
			if err != nil {
				return nil, fmt.Errorf("leaf %d: %v", i, err)
			}
			nodes[i].Payoffs = p
			continue
		}
		if len(node.GetPayoffs()) != 0 {
			return nil, fmt.Errorf("node %d has moves and payoffs; a node is a decision or a leaf", i)
		}
		if len(node.GetBranches()) > equilibria.MaxActions {
			return nil, fmt.Errorf("node %d has %d moves, at most %d", i, len(node.GetBranches()), equilibria.MaxActions)
		}
		nodes[i].Player = int(node.GetPlayer())
		seen := map[string]bool{}
		for k, b := range node.GetBranches() {
			if err := checkAction(&matrixv1.Action{Id: b.GetId(), Label: b.GetLabel()}); err != nil {
				return nil, fmt.Errorf("node %d, move %d: %v", i, k+1, err)
			}
			if seen[b.GetId()] {
				return nil, fmt.Errorf("node %d has two moves with the id %q", i, b.GetId())
			}
			seen[b.GetId()] = true
			nodes[i].Children = append(nodes[i].Children, int(b.GetChild()))
		}
	}
	return equilibria.NewTree(players, nodes)
}

// NeutralTable returns a copy of t as players see it under neutral labels: every action's id
// and label become choice_1, choice_2, ... and the title and description are dropped.
func NeutralTable(t *matrixv1.Table) *matrixv1.Table {
	c := proto.CloneOf(t)
	c.Title, c.Description = "", ""
	for _, acts := range TableActions(c) {
		for i, a := range acts {
			a.Id, a.Label = NeutralID(i), NeutralID(i)
		}
	}
	return c
}

// NeutralTree returns a copy of t as players see it under neutral labels: every move at every
// node becomes choice_1, choice_2, ... and the title and description are dropped.
func NeutralTree(t *sequentialv1.Tree) *sequentialv1.Tree {
	c := proto.CloneOf(t)
	c.Title, c.Description = "", ""
	for _, n := range c.Nodes {
		for i, b := range n.Branches {
			b.Id, b.Label = NeutralID(i), NeutralID(i)
		}
	}
	return c
}

// NeutralID is the neutral label of action i (0-based): choice_1, choice_2, ...
func NeutralID(i int) string { return fmt.Sprintf("choice_%d", i+1) }
