// Package matrix implements the matrix game of specs/matrix-and-sequential.md: a game of two
// or more players with complete information given as data (a payoff table with any number of
// actions per player, from a shipped game or the user's own file; see
// referee/games/gamefile), played by all players choosing at the same time after optional
// public talk, once or for several rounds.
//
// Rules, as this package enforces them:
//
//   - One seat per player of the table, in its order: with two, seat 0 is the row player
//     (Alice by default) and seat 1 the column player (Bob). Everyone knows the whole table;
//     payoffs are the table's times the scale parameter (golden balls' jackpot).
//   - Each round of the stage game (rounds, default 1) begins with a talk phase of up to
//     talk_rounds rounds (default 0; see package pretalk): the opener (talk_opener, default
//     seat 0) writes one public message, then every other player in seat order replies with
//     one; any may end the talk early with pass. Each message is a turn.
//   - Then all players choose at the same time (one turn): their only legal move is choose,
//     naming one of their actions (Observation.choices). A choice is seen by nobody else until
//     all have chosen; then all choices and payoffs are announced (or, with
//     show_history=false, each player learns only its own payoff). Messages sent with a choice
//     are delivered at once, like any message; the others, asked at the same time, have
//     already made their choices by then.
//   - After the last round the game ends (END_CAUSE_COMPLETED); each player's payoff is the
//     sum of its payoffs over the rounds.
//   - neutral_labels shows every player the actions as choice_1, choice_2, ... (ids and
//     labels) and never names the game, as the published prompts do.
//
// The default moves, played for a seat whose agent gives no usable answer: on a talk turn,
// pass with the text "(no message)"; when choosing, the seat's first action.
//
// Events: PhaseStarted when a talk phase or a choice begins (the first among the opening
// events, games.Opener).
package matrix

import (
	"fmt"
	"math/big"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/datagame"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/pretalk"
	"google.golang.org/protobuf/proto"
)

// Name is the game's name in the registry and in observations.
const Name = "matrix"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

// Phase names, as in Observation.phase and PhaseStarted.phase.
const (
	PhaseTalk   = pretalk.Phase
	PhaseChoice = "choice"
)

// New returns the matrix game.
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
		Description:  "Matrix game of two or more players given as data (a shipped game or your own file): optional public talk, then all choose at the same time; once or repeated. " + family.Library(),
		RulesVersion: RulesVersion,
		Seats:        gamefile.DefaultPlayers[:],
		SeatRoles:    []string{"row player", "column player"},
		Params:       games.ParamInfos(Name, defaults),
	}
}

// family is what the matrix game shares with the sequential game's set-up.
var family = datagame.Family{Name: Name, Kind: gamefile.KindMatrix, Other: "sequential", Data: "table"}

// Seats names the seats after the table's players.
func (game) Seats(params *matchv1.GameParams) (names, roles []string) {
	p, err := resolve(params)
	if err != nil {
		return gamefile.DefaultPlayers[:], []string{"row player", "column player"}
	}
	s, err := newSetup(p)
	if err != nil {
		return gamefile.DefaultPlayers[:], []string{"row player", "column player"}
	}
	return s.Players, s.roles
}

// Load reads the game file named by the file parameter, unless the table is already there.
func (game) Load(gp *matchv1.GameParams, _ uint64, read games.ReadFile) (*matchv1.GameParams, error) {
	return family.LoadFile(gp, read)
}

// Resolve validates params and fills in the defaults, the table included.
func (game) Resolve(gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	p, err := resolve(gp)
	if err != nil {
		return nil, err
	}
	if _, err := newSetup(p); err != nil {
		return nil, err
	}
	return &matchv1.GameParams{Family: &matchv1.GameParams_Matrix{Matrix: p}}, nil
}

// NewState starts a match from resolved params; the seed is not used (the game draws
// nothing).
func (game) NewState(gp *matchv1.GameParams, _ uint64) (games.State, error) {
	if err := games.CheckResolved(Name, gp); err != nil {
		return nil, err
	}
	s, err := newSetup(gp.GetMatrix())
	if err != nil {
		return nil, err
	}
	return newState(s), nil
}

// resolve fills in gp's defaults: the declared ones, the table (from the shipped game named)
// and the scale (the table's default).
func resolve(gp *matchv1.GameParams) (*matrixv1.Params, error) {
	return datagame.Resolve[*matrixv1.Params](family, gp, gamefile.CheckTable)
}

// setup is what a match knows from its resolved parameters; shared by every state of the
// match and never changed.
type setup struct {
	datagame.Settings
	params  *matrixv1.Params   // resolved
	roles   []string           // "row player", "column player" for two; empty for more
	m       *equilibria.Matrix // scaled payoffs
	shown   *matrixv1.Table    // the table as players see it: scaled, labels neutral or not
	acts    [][]*matrixv1.Action
	rounds  int32
	history bool
	text    []string // the fixed part of each seat's briefing
}

// Setup is the exported reading of resolved params, for agents and analyses: the scaled model
// and the table as players see it.
type Setup struct {
	Players []string
	Matrix  *equilibria.Matrix
	Shown   *matrixv1.Table
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
	return &Setup{Players: s.Players, Matrix: s.m, Shown: proto.CloneOf(s.shown), Scale: new(big.Rat).Set(s.Scale)}, nil
}

// newSetup reads resolved params, refusing a match they cannot play.
func newSetup(p *matrixv1.Params) (*setup, error) {
	if p.GetTable() == nil {
		return nil, fmt.Errorf("matrix: %w (no table): resolve them first", games.ErrNotResolved)
	}
	if err := gamefile.CheckTable(p.Table); err != nil {
		return nil, fmt.Errorf("matrix: table: %w", err)
	}
	settings, err := family.Settle(p.Table.GetPlayers(), p.Table.GetScaleDefault(), p)
	if err != nil {
		return nil, err
	}
	m, err := gamefile.MatrixOf(p.Table, settings.Scale)
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	// Totals over all rounds must stay exact in the outcome's float64 payoffs.
	limit := new(big.Rat).SetInt64(gamefile.MaxMagnitude / int64(p.GetRounds()))
	for k := range m.Len() {
		for _, x := range m.Payoffs(m.ProfileAt(k)) {
			if new(big.Rat).Abs(x).Cmp(limit) > 0 {
				return nil, fmt.Errorf("matrix: a scaled payoff of %s over %d rounds is too large", x.RatString(), p.GetRounds())
			}
		}
	}
	s := &setup{
		Settings: settings,
		params:   p,
		roles:    make([]string, m.Players()),
		m:        m,
		rounds:   p.GetRounds(),
		history:  p.GetShowHistory(),
	}
	if m.Players() == 2 {
		s.roles = []string{"row player", "column player"}
	}
	s.shown = shownTable(p.Table, m, s.Neutral)
	s.acts = gamefile.TableActions(s.shown)
	for seat := range s.Players {
		s.text = append(s.text, s.rulesText(games.Seat(seat)))
	}
	return s, nil
}

// shownTable is the table with payoffs scaled and, under neutral labels, ids and labels
// choice_1, ... and no title or description.
func shownTable(t *matrixv1.Table, m *equilibria.Matrix, neutral bool) *matrixv1.Table {
	c := proto.CloneOf(t)
	if neutral {
		c = gamefile.NeutralTable(c)
	}
	c.Players = gamefile.Players(c.Players)
	c.ScaleDefault = nil
	c.Description = "" // for people only: it may name the equilibria
	for k, cell := range c.Cells {
		pay := m.Payoffs(m.ProfileAt(k))
		cell.Payoffs = make([]*gamev1.Rational, len(pay))
		for p, x := range pay {
			cell.Payoffs[p] = gamefile.RatProto(x)
		}
	}
	return c
}

// actions returns seat's actions as shown.
func (s *setup) actions(seat games.Seat) []*matrixv1.Action { return s.acts[seat] }

// label is how seat's action i is written in texts every seat sees.
func (s *setup) label(seat games.Seat, i int) string {
	a := s.actions(seat)[i]
	if a.GetLabel() == a.GetId() {
		return a.GetId()
	}
	return fmt.Sprintf("%s (%s)", a.GetId(), a.GetLabel())
}
