// Package sequential implements the sequential game of specs/matrix-and-sequential.md: a game
// tree of two or more players with perfect information given as data (decision nodes of any
// player, leaves with payoffs; a shipped tree or the user's own file, see
// referee/games/gamefile), played move by move with optional public talk before every move.
//
// Rules, as this package enforces them:
//
//   - One seat per player of the tree, in its order (Alice, who moves first in the shipped
//     two-player trees, and Bob by default). Everyone knows the whole tree and sees every
//     move; payoffs are the tree's times the scale parameter.
//   - Before every move there is a talk phase of up to talk_rounds rounds (default 0; see
//     package pretalk): the opener (talk_opener, default seat 0) writes one public message,
//     then every other player in seat order replies with one; any may end the talk early with
//     pass. Each message is a turn.
//   - Then the player to move at the current node chooses one of its moves (Observation.choices;
//     one turn). The game ends at a leaf (END_CAUSE_COMPLETED), paying the leaf's payoffs.
//   - neutral_labels shows the moves as choice_1, choice_2, ... at every node and never names
//     the game.
//
// The default moves, played for a seat whose agent gives no usable answer: on a talk turn,
// pass with the text "(no message)"; at a decision node, its first move.
//
// Events: PhaseStarted when a talk phase or a move begins (the first among the opening events,
// games.Opener).
package sequential

import (
	"fmt"
	"math/big"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

	sequentialv1 "github.com/parley-arena/parley/gen/go/parley/games/sequential/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/datagame"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/pretalk"
	"google.golang.org/protobuf/proto"
)

// Name is the game's name in the registry and in observations.
const Name = "sequential"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

// Phase names, as in Observation.phase and PhaseStarted.phase.
const (
	PhaseTalk = pretalk.Phase
	PhaseMove = "move"
)

// New returns the sequential game.
func New() games.Game { return game{} }

type game struct{}

var (
	_ games.Game       = game{}
	_ games.SeatLister = game{}
	_ games.Loader     = game{}
)

// Info describes the game and its parameters.
func (g game) Info() *gamev1.GameInfo {
	defaults, _ := g.Resolve(nil) // for the derived scale; the suite checks it resolves
	return &gamev1.GameInfo{
		Name:         Name,
		Description:  "Game tree of two or more players given as data (a shipped tree or your own file): optional public talk before every move, then the player to move chooses. " + family.Library(),
		RulesVersion: RulesVersion,
		Seats:        gamefile.DefaultPlayers[:],
		SeatRoles:    []string{"", ""},
		Params:       games.ParamInfos(Name, defaults),
	}
}

// family is what the sequential game shares with the matrix game's set-up.
var family = datagame.Family{Name: Name, Kind: gamefile.KindTree, Other: "matrix", Data: "tree"}

// Seats names the seats after the tree's players.
func (game) Seats(params *matchv1.GameParams) (names, roles []string) {
	p, err := resolve(params)
	if err != nil {
		return gamefile.DefaultPlayers[:], []string{"", ""}
	}
	players := gamefile.Players(p.GetTree().GetPlayers())
	return players, make([]string, len(players))
}

// Load reads the game file named by the file parameter, unless the tree is already there.
func (game) Load(gp *matchv1.GameParams, _ uint64, read games.ReadFile) (*matchv1.GameParams, error) {
	return family.LoadFile(gp, read)
}

// Resolve validates params and fills in the defaults, the tree included.
func (game) Resolve(gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	p, err := resolve(gp)
	if err != nil {
		return nil, err
	}
	if _, err := newSetup(p); err != nil {
		return nil, err
	}
	return &matchv1.GameParams{Family: &matchv1.GameParams_Sequential{Sequential: p}}, nil
}

// NewState starts a match from resolved params; the seed is not used.
func (game) NewState(gp *matchv1.GameParams, _ uint64) (games.State, error) {
	if err := games.CheckResolved(Name, gp); err != nil {
		return nil, err
	}
	s, err := newSetup(gp.GetSequential())
	if err != nil {
		return nil, err
	}
	return newState(s), nil
}

// resolve fills in gp's defaults: the declared ones, the tree (from the shipped game named)
// and the scale (the tree's default).
func resolve(gp *matchv1.GameParams) (*sequentialv1.Params, error) {
	return datagame.Resolve[*sequentialv1.Params](family, gp, gamefile.CheckTree)
}

// setup is what a match knows from its resolved parameters; never changed.
type setup struct {
	datagame.Settings
	params *sequentialv1.Params
	tree   *equilibria.Tree   // scaled
	shown  *sequentialv1.Tree // as players see it
	text   string             // the tree in words, as every player is shown it
	depth  int32              // most decisions on a way from the root to a leaf
}

// Setup is the exported reading of resolved params, for agents and analyses.
type Setup struct {
	Players []string
	Tree    *equilibria.Tree
	Shown   *sequentialv1.Tree
	Scale   *big.Rat
}

// NewSetup reads params (resolving them).
func NewSetup(gp *matchv1.GameParams) (*Setup, error) {
	p, err := resolve(gp)
	if err != nil {
		return nil, err
	}
	s, err := newSetup(p)
	if err != nil {
		return nil, err
	}
	return &Setup{Players: s.Players, Tree: s.tree, Shown: proto.CloneOf(s.shown), Scale: new(big.Rat).Set(s.Scale)}, nil
}

// newSetup reads resolved params, refusing a match they cannot play.
func newSetup(p *sequentialv1.Params) (*setup, error) {
	if p.GetTree() == nil {
		return nil, fmt.Errorf("sequential: %w (no tree): resolve them first", games.ErrNotResolved)
	}
	if err := gamefile.CheckTree(p.Tree); err != nil {
		return nil, fmt.Errorf("sequential: tree: %w", err)
	}
	settings, err := family.Settle(p.Tree.GetPlayers(), p.Tree.GetScaleDefault(), p)
	if err != nil {
		return nil, err
	}
	tree, err := gamefile.TreeOf(p.Tree, settings.Scale)
	if err != nil {
		return nil, fmt.Errorf("sequential: %w", err)
	}
	s := &setup{Settings: settings, params: p, tree: tree}
	s.shown = shownTree(p.Tree, tree, s.Neutral)
	depth := make([]int32, tree.Len())
	for i := tree.Len() - 1; i >= 0; i-- {
		for _, ch := range tree.Node(i).Children {
			depth[i] = max(depth[i], depth[ch]+1)
		}
	}
	s.depth = depth[0]
	s.text = s.treeText()
	return s, nil
}

// shownTree is the tree with payoffs scaled and, under neutral labels, moves choice_1, ...
func shownTree(t *sequentialv1.Tree, tree *equilibria.Tree, neutral bool) *sequentialv1.Tree {
	c := proto.CloneOf(t)
	if neutral {
		c = gamefile.NeutralTree(c)
	}
	c.Players = gamefile.Players(c.Players)
	c.ScaleDefault = nil
	c.Description = "" // for people only: it may name the equilibria
	for i, n := range c.Nodes {
		if len(n.Branches) == 0 {
			n.Payoffs = nil
			for _, x := range tree.Node(i).Payoffs {
				n.Payoffs = append(n.Payoffs, gamefile.RatProto(x))
			}
		}
	}
	return c
}

// payText writes a leaf's payoffs: "Alice gets 1, Bob gets 2".
func (s *setup) payText(pay equilibria.Payoffs) string {
	var gets []string
	for p, name := range s.Players {
		gets = append(gets, fmt.Sprintf("%s gets %s", name, equilibria.RatText(pay[p])))
	}
	return strings.Join(gets, ", ")
}

// moveName is how move b of node n is written in texts.
func (s *setup) moveName(n, b int) string {
	br := s.shown.GetNodes()[n].GetBranches()[b]
	if br.GetLabel() == br.GetId() {
		return br.GetId()
	}
	return fmt.Sprintf("%s (%s)", br.GetId(), br.GetLabel())
}

// treeText writes the whole tree in words, one line per node, indented by depth.
func (s *setup) treeText() string {
	var b strings.Builder
	var walk func(n int, indent string, how string)
	walk = func(n int, indent, how string) {
		node := s.tree.Node(n)
		if node.Leaf() {
			fmt.Fprintf(&b, "%s%sthe game ends: %s.\n", indent, how, s.payText(node.Payoffs))
			return
		}
		var moves []string
		for k := range node.Children {
			moves = append(moves, s.moveName(n, k))
		}
		fmt.Fprintf(&b, "%s%s%s chooses %s.\n", indent, how, s.Players[node.Player], strings.Join(moves, " or "))
		for k, ch := range node.Children {
			walk(ch, indent+"  ", fmt.Sprintf("After %s's %s: ", s.Players[node.Player], s.shown.GetNodes()[n].GetBranches()[k].GetId()))
		}
	}
	walk(0, "", "At the start, ")
	return b.String()
}
