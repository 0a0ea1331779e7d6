package gamefile

import (
	"errors"
	"fmt"
	"math/big"

	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	sequentialv1 "github.com/parley-arena/parley/gen/go/parley/games/sequential/v1"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"google.golang.org/protobuf/proto"
)

// CheckTable checks a matrix game from the contract: players, 1 to equilibria.MaxActions
// actions each with unique valid ids, one cell of two payoffs per profile, texts within their
// limits.
func CheckTable(t *matrixv1.Table) error {
	if t == nil {
		return errors.New("no table")
	}
	if err := checkCommon(t.GetTitle(), t.GetDescription(), t.GetPlayers(), t.GetScaleName(), t.GetScaleDefault()); err != nil {
		return err
	}
	for _, side := range []struct {
		name string
		acts []*matrixv1.Action
	}{{"row", t.GetRows()}, {"column", t.GetCols()}} {
		if len(side.acts) == 0 || len(side.acts) > equilibria.MaxActions {
			return fmt.Errorf("the %s player has %d actions; 1 to %d are allowed", side.name, len(side.acts), equilibria.MaxActions)
		}
		seen := map[string]bool{}
		for i, a := range side.acts {
			if err := checkAction(a); err != nil {
				return fmt.Errorf("%s action %d: %v", side.name, i+1, err)
			}
			if seen[a.GetId()] {
				return fmt.Errorf("two %s actions have the id %q", side.name, a.GetId())
			}
			seen[a.GetId()] = true
		}
	}
	if want := len(t.GetRows()) * len(t.GetCols()); len(t.GetCells()) != want {
		return fmt.Errorf("the table has %d cells; %d rows x %d columns need %d", len(t.GetCells()), len(t.GetRows()), len(t.GetCols()), want)
	}
	for k, c := range t.GetCells() {
		if err := checkPayoffs(c.GetPayoffs()); err != nil {
			return fmt.Errorf("cell (%d, %d): %v", k/len(t.GetCols())+1, k%len(t.GetCols())+1, err)
		}
	}
	return nil
}

// CheckTree checks a game tree from the contract: players, nodes in topological order each
// the child of one branch, decision nodes of player 0 or 1 with uniquely named moves, leaves
// with two payoffs, texts within their limits.
func CheckTree(t *sequentialv1.Tree) error {
	if t == nil {
		return errors.New("no tree")
	}
	if err := checkCommon(t.GetTitle(), t.GetDescription(), t.GetPlayers(), t.GetScaleName(), t.GetScaleDefault()); err != nil {
		return err
	}
	_, err := treeOf(t, big.NewRat(1, 1))
	return err
}

func checkCommon(title, description string, players []string, scaleName string, scaleDefault *matrixv1.Rational) error {
	if err := checkText("title", title, MaxLabelLen); err != nil {
		return err
	}
	if err := checkText("description", description, MaxTextLen); err != nil {
		return err
	}
	switch len(players) {
	case 0:
	case 2:
		for _, p := range players {
			if err := checkName("player name", p); err != nil {
				return err
			}
		}
		if players[0] == players[1] {
			return fmt.Errorf("both players are called %q", players[0])
		}
	default:
		return fmt.Errorf("%d player names; give two or none", len(players))
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

func checkPayoffs(pay []*matrixv1.Rational) error {
	if len(pay) != 2 {
		return fmt.Errorf("%d payoffs; want one per player (2)", len(pay))
	}
	for _, q := range pay {
		if _, err := RatOf(q); err != nil {
			return err
		}
	}
	return nil
}

// scaled returns payoffs times scale, refusing results beyond MaxMagnitude.
func scaled(pay []*matrixv1.Rational, scale *big.Rat) (equilibria.Payoffs, error) {
	var out equilibria.Payoffs
	for p, q := range pay {
		r, err := RatOf(q)
		if err != nil {
			return out, err
		}
		r.Mul(r, scale)
		if err := checkMagnitude(r); err != nil {
			return out, fmt.Errorf("scaled payoff: %v", err)
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
	rows, cols := len(t.GetRows()), len(t.GetCols())
	pay := make([][]equilibria.Payoffs, rows)
	for i := range rows {
		pay[i] = make([]equilibria.Payoffs, cols)
		for j := range cols {
			p, err := scaled(t.GetCells()[i*cols+j].GetPayoffs(), scale)
			if err != nil {
				return nil, fmt.Errorf("cell (%d, %d): %v", i+1, j+1, err)
			}
			pay[i][j] = p
		}
	}
	return equilibria.NewMatrix(pay)
}

// TreeOf checks t and returns its exact model with every payoff times scale.
func TreeOf(t *sequentialv1.Tree, scale *big.Rat) (*equilibria.Tree, error) {
	if err := CheckTree(t); err != nil {
		return nil, err
	}
	return treeOf(t, scale)
}

func treeOf(t *sequentialv1.Tree, scale *big.Rat) (*equilibria.Tree, error) {
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
			p, err := scaled(node.GetPayoffs(), scale)
			if err != nil {
				return nil, fmt.Errorf("leaf %d: %v", i, err)
			}
			if len(node.GetPayoffs()) != 2 {
				return nil, fmt.Errorf("leaf %d has %d payoffs; want 2", i, len(node.GetPayoffs()))
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
	return equilibria.NewTree(nodes)
}

// NeutralTable returns a copy of t as players see it under neutral labels: every action's id
// and label become choice_1, choice_2, ... and the title and description are dropped.
func NeutralTable(t *matrixv1.Table) *matrixv1.Table {
	c := proto.CloneOf(t)
	c.Title, c.Description = "", ""
	for _, acts := range [][]*matrixv1.Action{c.Rows, c.Cols} {
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
