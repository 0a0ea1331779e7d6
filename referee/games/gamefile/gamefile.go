// Package gamefile reads games given as data — payoff matrices and game trees of two or more
// players — from YAML or JSON files, checks them, and turns them into the contract's typed tables
// (parley.games.matrix.v1.Table, parley.games.sequential.v1.Tree) and into the exact models of
// package equilibria. It also holds the games Parley ships (the testbed of
// specs/matrix-and-sequential.md, golden balls, rock-paper-scissors and the perturbed
// variants), embedded in the binary and found by name.
//
// # File format
//
// A game file is one YAML document (JSON is accepted too, being YAML). Unknown keys are
// errors. A matrix game:
//
//	kind: matrix                 # optional: a file with rows is a matrix, one with root a tree
//	title: Prisoner's dilemma    # display name (hidden from players under neutral labels)
//	description: One paragraph for people.
//	players: [Alice, Bob]        # optional; row player first; default Alice, Bob
//	rows: [cooperate, defect]    # the row player's actions
//	cols: [cooperate, defect]    # the column player's actions
//	payoffs:                     # one list per row, one [row payoff, column payoff] per column
//	  - [[3, 3], [0, 5]]
//	  - [[5, 0], [1, 1]]
//
// A matrix game of any number of players lists each player's actions and one cell per profile,
// in row-major order (the first player's action changing slowest, the last player's fastest),
// each with one payoff per player; beyond two players the players must be named:
//
//	players: [Ann, Ben, Cat]
//	actions: [[in, out], [in, out], [in, out]]
//	cells:                       # (in,in,in), (in,in,out), (in,out,in), ... (out,out,out)
//	  - [1, 1, 1]
//	  - ...
//
// Written this way with two players it is the same game as with rows, cols and payoffs.
//
// A game tree:
//
//	kind: tree
//	title: Monopoly
//	root:                        # a decision node: who moves, and the moves
//	  player: Alice              # a name from players, or a seat number 0, 1, ...
//	  moves:
//	    - {id: a1, label: stay out, leaf: [0, 2]}   # a move to a leaf: one payoff per player
//	    - id: a2
//	      label: enter
//	      node:                  # a move to another decision node
//	        player: Bob
//	        moves:
//	          - {id: b1, label: accommodate, leaf: [2, 1]}
//	          - {id: b2, label: fight, leaf: [-1, -1]}
//
// Actions (rows, cols) and moves are a label, or a mapping {id, label}: the id is what a
// player sends in a choose move (one word: letters, digits, '_' or '-', at most 32
// characters, unique among the player's actions or the node's moves); written as a label
// alone, the id is the label with spaces turned into '_'. A move needs an id or a label, and
// exactly one of leaf and node.
//
// Payoffs are exact: whole numbers (-4), decimals (2.5) or fractions ("1/2"; YAML reads
// 1/2 as text too), numerator and denominator at most 2^53. A game whose payoffs are written
// per unit of a stake declares it, and the `scale` parameter of the match multiplies every
// payoff:
//
//	scale: {name: jackpot, default: 100}   # golden balls: payoffs are shares of the jackpot
//
// A tree of more than two players names them (players: [Ann, Ben, Cat]) and gives every leaf
// one payoff per player.
//
// Limits: 2 to equilibria.MaxPlayers players, 1 to equilibria.MaxActions actions per player,
// at most equilibria.MaxProfiles profiles, up to equilibria.MaxNodes tree nodes, titles and
// labels of at most 64 characters.
package gamefile

import (
	"bytes"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"google.golang.org/protobuf/proto"

	"gopkg.in/yaml.v3"

	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	sequentialv1 "github.com/parley-arena/parley/gen/go/parley/games/sequential/v1"
	"github.com/parley-arena/parley/referee/games/equilibria"
)

// Kind says what a game file holds.
type Kind string

// The kinds of game.
const (
	KindMatrix Kind = "matrix"
	KindTree   Kind = "tree"
)

// Limits on names in a game.
const (
	MaxIDLen    = 32
	MaxLabelLen = 64
	MaxTextLen  = 2000
	// MaxFileBytes bounds a game file.
	MaxFileBytes = 1 << 20
)

// DefaultPlayers are the players' names of a two-player game that gives none.
var DefaultPlayers = [2]string{"Alice", "Bob"}

// File is a parsed game: exactly one of Table and Tree is set.
type File struct {
	Kind  Kind
	Table *matrixv1.Table
	Tree  *sequentialv1.Tree
}

// Game returns the game itself: the table or the tree.
func (f *File) Game() proto.Message {
	if f.Table != nil {
		return f.Table
	}
	return f.Tree
}

// Title returns the game's title.
func (f *File) Title() string {
	if f.Table != nil {
		return f.Table.GetTitle()
	}
	return f.Tree.GetTitle()
}

// ErrFormat is wrapped by every error about a file that is not a valid game.
var ErrFormat = errors.New("gamefile: invalid game file")

type fileYAML struct {
	Kind        string         `yaml:"kind"`
	Title       string         `yaml:"title"`
	Description string         `yaml:"description"`
	Players     []string       `yaml:"players"`
	Scale       *scaleYAML     `yaml:"scale"`
	Rows        []actionYAML   `yaml:"rows"`
	Cols        []actionYAML   `yaml:"cols"`
	Payoffs     [][][]numYAML  `yaml:"payoffs"`
	Actions     [][]actionYAML `yaml:"actions"`
	Cells       [][]numYAML    `yaml:"cells"`
	Root        *nodeYAML      `yaml:"root"`
}

type scaleYAML struct {
	Name    string  `yaml:"name"`
	Default numYAML `yaml:"default"`
}

type nodeYAML struct {
	Player string     `yaml:"player"`
	Moves  []moveYAML `yaml:"moves"`
}

type moveYAML struct {
	ID    string    `yaml:"id"`
	Label string    `yaml:"label"`
	Leaf  []numYAML `yaml:"leaf"`
	Node  *nodeYAML `yaml:"node"`
}

// actionYAML is a label, or {id, label}.
type actionYAML struct{ ID, Label string }

func (a *actionYAML) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		a.Label = n.Value
		return nil
	}
	var m struct {
		ID    string `yaml:"id"`
		Label string `yaml:"label"`
	}
	if err := n.Decode(&m); err != nil {
		return err
	}
	a.ID, a.Label = m.ID, m.Label
	return nil
}

// numYAML is a number as written, parsed later so that errors can say where it is.
type numYAML struct {
	text string
	set  bool
}

func (x *numYAML) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a number, got a list or mapping", n.Line)
	}
	x.text, x.set = n.Value, true
	return nil
}

// Parse reads a game file. Errors wrap ErrFormat and say what is wrong and where.
func Parse(data []byte) (*File, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrFormat, len(data), MaxFileBytes)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%w: not UTF-8 text", ErrFormat)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var y fileYAML
	if err := dec.Decode(&y); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	f, err := y.build()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	return f, nil
}

func (y *fileYAML) matrixKeys() bool {
	return y.Rows != nil || y.Cols != nil || y.Payoffs != nil || y.Actions != nil || y.Cells != nil
}

func (y *fileYAML) build() (*File, error) {
	kind := Kind(y.Kind)
	if kind == "" {
		switch {
		case y.Root != nil && !y.matrixKeys():
			kind = KindTree
		case y.Root == nil:
			kind = KindMatrix
		default:
			return nil, errors.New("a game has actions and payoffs (a matrix) or a root (a tree), not both")
		}
	}
	var scaleName string
	var scaleDefault *gamev1.Rational
	if y.Scale != nil {
		if y.Scale.Name == "" {
			return nil, errors.New("scale needs a name, e.g. {name: jackpot, default: 100}")
		}
		if err := checkText("scale name", y.Scale.Name, MaxLabelLen); err != nil {
			return nil, err
		}
		scaleName = y.Scale.Name
		if y.Scale.Default.set {
			r, err := ParseRational(y.Scale.Default.text)
			if err != nil {
				return nil, fmt.Errorf("scale default: %v", err)
			}
			scaleDefault = RatProto(r)
		}
	}
	switch kind {
	case KindMatrix:
		if y.Root != nil {
			return nil, errors.New("a matrix game has no root; give its actions and payoffs")
		}
		t := &matrixv1.Table{Title: y.Title, Description: y.Description, ScaleName: scaleName, ScaleDefault: scaleDefault}
		if err := y.buildTable(t); err != nil {
			return nil, err
		}
		if err := CheckTable(t); err != nil {
			return nil, err
		}
		return &File{Kind: KindMatrix, Table: t}, nil
	case KindTree:
		if y.matrixKeys() {
			return nil, errors.New("a game tree has no rows, cols, payoffs, actions or cells; give a root")
		}
		if y.Root == nil {
			return nil, errors.New("a game tree needs a root")
		}
		players, err := y.players(0)
		if err != nil {
			return nil, err
		}
		t := &sequentialv1.Tree{Title: y.Title, Description: y.Description, Players: players, ScaleName: scaleName, ScaleDefault: scaleDefault}
		t.Nodes = append(t.Nodes, &sequentialv1.Node{})
		if err := addNode(t, 0, y.Root, "root", Players(players)); err != nil {
			return nil, err
		}
		if err := CheckTree(t); err != nil {
			return nil, err
		}
		return &File{Kind: KindTree, Tree: t}, nil
	default:
		return nil, fmt.Errorf("kind %q: want matrix or tree", y.Kind)
	}
}

// buildTable fills t from the two-player form (rows, cols, payoffs) or the form for any
// number of players (actions, cells).
func (y *fileYAML) buildTable(t *matrixv1.Table) error {
	byPlayer := y.Actions != nil || y.Cells != nil
	if byPlayer && (y.Rows != nil || y.Cols != nil || y.Payoffs != nil) {
		return errors.New("give rows, cols and payoffs (two players) or actions and cells (any number), not both")
	}
	if !byPlayer {
		players, err := y.players(2)
		if err != nil {
			return err
		}
		t.Players = players
		for i, a := range y.Rows {
			act, err := action(a, fmt.Sprintf("row %d", i+1))
			if err != nil {
				return err
			}
			t.Rows = append(t.Rows, act)
		}
		for j, a := range y.Cols {
			act, err := action(a, fmt.Sprintf("column %d", j+1))
			if err != nil {
				return err
			}
			t.Cols = append(t.Cols, act)
		}
		if len(y.Payoffs) != len(t.Rows) {
			return fmt.Errorf("payoffs has %d rows, but there are %d row actions", len(y.Payoffs), len(t.Rows))
		}
		for i, row := range y.Payoffs {
			if len(row) != len(t.Cols) {
				return fmt.Errorf("payoffs row %d has %d cells, but there are %d column actions", i+1, len(row), len(t.Cols))
			}
			for j, cell := range row {
				pay, err := payoffs(cell, 2, fmt.Sprintf("payoffs row %d, column %d", i+1, j+1))
				if err != nil {
					return err
				}
				t.Cells = append(t.Cells, &matrixv1.Cell{Payoffs: pay})
			}
		}
		return nil
	}
	n := len(y.Actions)
	if n < 2 || n > equilibria.MaxPlayers {
		return fmt.Errorf("actions lists %d players; 2 to %d are allowed", n, equilibria.MaxPlayers)
	}
	players, err := y.players(n)
	if err != nil {
		return err
	}
	t.Players = players
	acts := make([][]*matrixv1.Action, n)
	cells := 1
	for p, list := range y.Actions {
		if len(list) == 0 || len(list) > equilibria.MaxActions {
			return fmt.Errorf("player %d has %d actions; 1 to %d are allowed", p+1, len(list), equilibria.MaxActions)
		}
		for i, a := range list {
			act, err := action(a, fmt.Sprintf("player %d, action %d", p+1, i+1))
			if err != nil {
				return err
			}
			acts[p] = append(acts[p], act)
		}
		if cells *= len(list); cells > equilibria.MaxProfiles {
			return fmt.Errorf("the game has more than %d profiles", equilibria.MaxProfiles)
		}
	}
	if len(y.Cells) != cells {
		return fmt.Errorf("cells has %d entries, but there are %d profiles (one per combination of actions, the last player's changing fastest)", len(y.Cells), cells)
	}
	for k, cell := range y.Cells {
		pay, err := payoffs(cell, n, fmt.Sprintf("cell %d %s", k+1, profileText(acts, k)))
		if err != nil {
			return err
		}
		t.Cells = append(t.Cells, &matrixv1.Cell{Payoffs: pay})
	}
	SetActions(t, acts)
	return nil
}

// profileText names the actions of the profile of row-major index k, e.g. "(stay, go, go)".
func profileText(acts [][]*matrixv1.Action, k int) string {
	ids := make([]string, len(acts))
	for p := len(acts) - 1; p >= 0; p-- {
		ids[p] = acts[p][k%len(acts[p])].GetId()
		k /= len(acts[p])
	}
	return "(" + strings.Join(ids, ", ") + ")"
}

// players checks the players' names; want is the number of players the game has (0: as many
// as are named, two when none are). Two players may go unnamed (Alice and Bob).
func (y *fileYAML) players(want int) ([]string, error) {
	if len(y.Players) == 0 {
		if want > 2 {
			return nil, fmt.Errorf("a game of %d players names them: players: [...]", want)
		}
		return nil, nil
	}
	if want > 0 && len(y.Players) != want {
		return nil, fmt.Errorf("players lists %d names for a game of %d players", len(y.Players), want)
	}
	if err := checkPlayers(y.Players); err != nil {
		return nil, err
	}
	return y.Players, nil
}

// addNode fills t.Nodes[idx] from n, appending its descendants in pre-order.
func addNode(t *sequentialv1.Tree, idx int, n *nodeYAML, where string, players []string) error {
	if len(t.Nodes) > equilibria.MaxNodes {
		return fmt.Errorf("the tree has more than %d nodes", equilibria.MaxNodes)
	}
	player := -1
	for p, name := range players {
		if n.Player == name || n.Player == strconv.Itoa(p) {
			player = p
		}
	}
	if player < 0 {
		return fmt.Errorf("%s: player %q is not one of %s or a seat number 0 to %d", where, n.Player, strings.Join(players, ", "), len(players)-1)
	}
	if len(n.Moves) == 0 {
		return fmt.Errorf("%s: a decision node needs moves", where)
	}
	node := t.Nodes[idx]
	node.Player = int32(player)
	for k, m := range n.Moves {
		mwhere := fmt.Sprintf("%s, move %d", where, k+1)
		act, err := action(actionYAML{ID: m.ID, Label: m.Label}, mwhere)
		if err != nil {
			return err
		}
		child := len(t.Nodes)
		node.Branches = append(node.Branches, &sequentialv1.Branch{Id: act.GetId(), Label: act.GetLabel(), Child: int32(child)})
		switch {
		case (m.Leaf != nil) == (m.Node != nil):
			return fmt.Errorf("%s (%s): give exactly one of leaf (payoffs) and node (the next decision)", mwhere, act.GetId())
		case m.Leaf != nil:
			pay, err := payoffs(m.Leaf, len(players), fmt.Sprintf("%s (%s) leaf", mwhere, act.GetId()))
			if err != nil {
				return err
			}
			t.Nodes = append(t.Nodes, &sequentialv1.Node{Payoffs: pay})
		default:
			t.Nodes = append(t.Nodes, &sequentialv1.Node{})
			if err := addNode(t, child, m.Node, fmt.Sprintf("%s (%s)", mwhere, act.GetId()), players); err != nil {
				return err
			}
		}
	}
	return nil
}

// action builds an action from its id and label: each defaults to the other (the id with
// spaces turned into '_').
func action(a actionYAML, where string) (*matrixv1.Action, error) {
	id, label := a.ID, a.Label
	switch {
	case id == "" && label == "":
		return nil, fmt.Errorf("%s: an action needs an id or a label", where)
	case id == "":
		id = strings.ReplaceAll(strings.TrimSpace(label), " ", "_")
	case label == "":
		label = id
	}
	act := &matrixv1.Action{Id: id, Label: label}
	if err := checkAction(act); err != nil {
		return nil, fmt.Errorf("%s: %v", where, err)
	}
	return act, nil
}

func payoffs(cell []numYAML, n int, where string) ([]*gamev1.Rational, error) {
	if len(cell) != n {
		return nil, fmt.Errorf("%s: want %d payoffs, one per player in seat order, got %d", where, n, len(cell))
	}
	out := make([]*gamev1.Rational, n)
	for p, x := range cell {
		r, err := ParseRational(x.text)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", where, err)
		}
		out[p] = RatProto(r)
	}
	return out, nil
}

// checkAction checks an action's id and label.
func checkAction(a *matrixv1.Action) error {
	if err := CheckID(a.GetId()); err != nil {
		return err
	}
	return checkText("label", a.GetLabel(), MaxLabelLen)
}

// CheckID checks an action or move id: one word of letters, digits, '_' or '-', at most
// MaxIDLen characters.
func CheckID(id string) error {
	if id == "" {
		return errors.New("an empty id")
	}
	if n := utf8.RuneCountInString(id); n > MaxIDLen {
		return fmt.Errorf("id %q is %d characters long, at most %d", id, n, MaxIDLen)
	}
	for _, r := range id {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' {
			return fmt.Errorf("id %q: use only letters, digits, '_' and '-'", id)
		}
	}
	return nil
}

func checkName(what, s string) error {
	if s == "" {
		return fmt.Errorf("an empty %s", what)
	}
	return checkText(what, s, MaxLabelLen)
}

// checkText checks a display text: valid UTF-8, at most limit characters, no control
// characters (texts are spliced into briefings line by line).
func checkText(what, s string, limit int) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", what)
	}
	if n := utf8.RuneCountInString(s); n > limit {
		return fmt.Errorf("%s is %d characters long, at most %d", what, n, limit)
	}
	for _, r := range s {
		if unicode.IsControl(r) && r != '\n' {
			return fmt.Errorf("%s contains a control character", what)
		}
		if r == '\n' && limit == MaxLabelLen {
			return fmt.Errorf("%s spans lines", what)
		}
	}
	return nil
}

// Players returns the players' names of a game (Alice and Bob when it gives none).
func Players(names []string) []string {
	if len(names) == 0 {
		return DefaultPlayers[:]
	}
	return names
}

// Scale returns the multiplier of a match: the parameter when given (a rational as
// ParseRational reads it), else the game's default, else 1. The scale must be positive.
func Scale(param *string, def *gamev1.Rational) (*big.Rat, error) {
	var r *big.Rat
	var err error
	switch {
	case param != nil:
		r, err = ParseRational(*param)
	case def != nil:
		r, err = RatOf(def)
	default:
		r = big.NewRat(1, 1)
	}
	if err != nil {
		return nil, fmt.Errorf("scale: %v", err)
	}
	if r.Sign() <= 0 {
		return nil, fmt.Errorf("scale must be positive, got %s", r.RatString())
	}
	return r, nil
}
