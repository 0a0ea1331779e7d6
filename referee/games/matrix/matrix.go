// Package matrix implements the matrix game of specs/matrix-and-sequential.md: a two-player
// game with complete information given as data (a payoff table with any number of actions per
// player, from a shipped game or the user's own file; see referee/games/gamefile), played by
// both players choosing at the same time after optional public talk, once or for several
// rounds.
//
// Rules, as this package enforces them:
//
//   - Seats 0 (the row player, Alice by default) and 1 (the column player, Bob). Both know the
//     whole table; payoffs are the table's times the scale parameter (golden balls' jackpot).
//   - Each round of the stage game (rounds, default 1) begins with a talk phase of up to
//     talk_rounds rounds (default 0; see package pretalk): the opener (talk_opener, default
//     seat 0) writes one public message, the other replies with one; either may end the talk
//     early with pass. Each message is a turn.
//   - Then both players choose at the same time (one turn): their only legal move is choose,
//     naming one of their actions (Observation.choices). A choice is seen by nobody else until
//     both have chosen; then both choices and payoffs are announced (or, with
//     show_history=false, each player learns only its own payoff). Messages sent with a choice
//     are delivered at once, like any message; the other player, asked at the same time, has
//     already made its choice by then.
//   - After the last round the game ends (END_CAUSE_COMPLETED); each player's payoff is the
//     sum of its payoffs over the rounds.
//   - neutral_labels shows both players the actions as choice_1, choice_2, ... (ids and labels)
//     and never names the game, as the published prompts do.
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
	"strconv"
	"strings"

	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
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

// Defaults and limits of the parameters.
const (
	DefaultGame       = "prisoners_dilemma"
	DefaultRounds     = 1
	MaxRounds         = 1000
	DefaultTalkRounds = 0
)

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
func (game) Info() *refereev1.GameInfo {
	return &refereev1.GameInfo{
		Name:         Name,
		Description:  "Two-player matrix game given as data (a shipped game or your own file): optional public talk, then both choose at the same time; once or repeated.",
		RulesVersion: RulesVersion,
		Seats:        gamefile.DefaultPlayers[:],
		SeatRoles:    []string{"row player", "column player"},
		Params: []*refereev1.ParamInfo{
			{Name: "game", Kind: refereev1.ParamKind_PARAM_KIND_STRING, DefaultValue: DefaultGame,
				Description: "A shipped matrix game: " + strings.Join(gamefile.Library(gamefile.KindMatrix), ", ") + "."},
			{Name: "file", Kind: refereev1.ParamKind_PARAM_KIND_STRING, DefaultValue: "",
				Description: "Path of your own game file (YAML or JSON; format in referee/games/gamefile); replaces game."},
			{Name: "scale", Kind: refereev1.ParamKind_PARAM_KIND_STRING, DefaultValue: "1",
				Description: "Multiplies every payoff, e.g. golden balls' jackpot (its default 100); a whole number, decimal or fraction."},
			{Name: "talk_rounds", Kind: refereev1.ParamKind_PARAM_KIND_INT, DefaultValue: strconv.Itoa(DefaultTalkRounds),
				Description: fmt.Sprintf("Rounds of public talk before each choice (a message from the opener, a reply); either may end it early. 0 to %d.", pretalk.MaxRounds)},
			{Name: "talk_opener", Kind: refereev1.ParamKind_PARAM_KIND_INT, DefaultValue: "0",
				Description: "Seat that opens each talk round: 0 (row player) or 1."},
			{Name: "neutral_labels", Kind: refereev1.ParamKind_PARAM_KIND_BOOL, DefaultValue: "false",
				Description: "Show actions as choice_1, choice_2, ... and never name the game, as the published prompts do."},
			{Name: "rounds", Kind: refereev1.ParamKind_PARAM_KIND_INT, DefaultValue: strconv.Itoa(DefaultRounds),
				Description: fmt.Sprintf("Times the stage game is played; payoffs add up. 1 to %d.", MaxRounds)},
			{Name: "show_history", Kind: refereev1.ParamKind_PARAM_KIND_BOOL, DefaultValue: "true",
				Description: "In repeated play, whether players see each other's earlier choices and payoffs."},
		},
	}
}

// Seats names the seats after the table's players.
func (game) Seats(params *matchv1.GameParams) (names, roles []string) {
	roles = []string{"row player", "column player"}
	s, err := newSetup(params)
	if err != nil {
		return gamefile.DefaultPlayers[:], roles
	}
	return s.players[:], roles
}

// Load reads the game file named by the file parameter, unless the table is already there.
func (game) Load(gp *matchv1.GameParams, _ uint64, read games.ReadFile) (*matchv1.GameParams, error) {
	p := gp.GetMatrix()
	if p == nil || p.File == nil || p.GetTable() != nil {
		return gp, nil
	}
	data, err := read(p.GetFile())
	if err != nil {
		return nil, fmt.Errorf("matrix: file: %w", err)
	}
	f, err := gamefile.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("matrix: file %s: %w", p.GetFile(), err)
	}
	if f.Kind != gamefile.KindMatrix {
		return nil, fmt.Errorf("matrix: file %s holds a game tree; play it with the sequential game", p.GetFile())
	}
	out := proto.CloneOf(gp)
	out.GetMatrix().Table = f.Table
	return out, nil
}

// Resolve validates params and fills in the defaults, the table included.
func (game) Resolve(gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	s, err := newSetup(gp)
	if err != nil {
		return nil, err
	}
	return &matchv1.GameParams{Family: &matchv1.GameParams_Matrix{Matrix: s.params}}, nil
}

// NewState starts a match; the seed is not used (the game draws nothing).
func (game) NewState(gp *matchv1.GameParams, _ uint64) (games.State, error) {
	s, err := newSetup(gp)
	if err != nil {
		return nil, err
	}
	return newState(s), nil
}

// setup is what a match knows from its resolved parameters; shared by every state of the
// match and never changed.
type setup struct {
	params  *matrixv1.Params // resolved
	players [2]string
	scale   *big.Rat
	m       *equilibria.Matrix // scaled payoffs
	shown   *matrixv1.Table    // the table as players see it: scaled, labels neutral or not
	rounds  int32
	talk    int32
	opener  games.Seat
	neutral bool
	history bool
	text    [2]string // the fixed part of each seat's briefing
}

// Setup is the exported reading of resolved params, for agents and analyses: the scaled model
// and the table as players see it.
type Setup struct {
	Players [2]string
	Matrix  *equilibria.Matrix
	Shown   *matrixv1.Table
	Scale   *big.Rat
}

// NewSetup reads params (resolving them).
func NewSetup(gp *matchv1.GameParams) (*Setup, error) {
	s, err := newSetup(gp)
	if err != nil {
		return nil, err
	}
	return &Setup{Players: s.players, Matrix: s.m, Shown: proto.CloneOf(s.shown), Scale: new(big.Rat).Set(s.scale)}, nil
}

func newSetup(gp *matchv1.GameParams) (*setup, error) {
	if err := bargain.CheckFamily(gp, Name); err != nil {
		return nil, err
	}
	in := gp.GetMatrix()
	if in == nil {
		in = &matrixv1.Params{}
	}
	p := &matrixv1.Params{Game: in.Game, File: in.File, Table: proto.CloneOf(in.GetTable())}
	if p.Table == nil {
		switch {
		case in.File != nil:
			return nil, fmt.Errorf("matrix: file %q was not loaded: `parley play` reads it; other callers must send the table itself", in.GetFile())
		case in.Game == nil:
			p.Game = proto.String(DefaultGame)
		}
		f, err := gamefile.Shipped(p.GetGame())
		if err != nil {
			return nil, fmt.Errorf("matrix: game: %w", err)
		}
		if f.Kind != gamefile.KindMatrix {
			return nil, fmt.Errorf("matrix: %s is a game tree; play it with the sequential game", p.GetGame())
		}
		p.Table = f.Table
	}
	if err := gamefile.CheckTable(p.Table); err != nil {
		return nil, fmt.Errorf("matrix: table: %w", err)
	}
	scale, err := gamefile.Scale(in.Scale, p.Table.GetScaleDefault())
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	m, err := gamefile.MatrixOf(p.Table, scale)
	if err != nil {
		return nil, fmt.Errorf("matrix: %w", err)
	}
	p.Scale = proto.String(scale.RatString())
	p.TalkRounds = proto.Int32(valueOr(in.TalkRounds, DefaultTalkRounds))
	p.TalkOpener = proto.Int32(valueOr(in.TalkOpener, 0))
	p.NeutralLabels = proto.Bool(in.GetNeutralLabels())
	p.Rounds = proto.Int32(valueOr(in.Rounds, DefaultRounds))
	p.ShowHistory = proto.Bool(in.ShowHistory == nil || in.GetShowHistory())
	switch {
	case p.GetTalkRounds() < 0 || p.GetTalkRounds() > pretalk.MaxRounds:
		return nil, fmt.Errorf("matrix: talk_rounds must be from 0 to %d, got %d", pretalk.MaxRounds, p.GetTalkRounds())
	case p.GetTalkOpener() != 0 && p.GetTalkOpener() != 1:
		return nil, fmt.Errorf("matrix: talk_opener must be 0 (row player) or 1 (column player), got %d", p.GetTalkOpener())
	case p.GetRounds() < 1 || p.GetRounds() > MaxRounds:
		return nil, fmt.Errorf("matrix: rounds must be from 1 to %d, got %d", MaxRounds, p.GetRounds())
	}
	// Totals over all rounds must stay exact in the outcome's float64 payoffs.
	limit := new(big.Rat).SetInt64(gamefile.MaxMagnitude / int64(p.GetRounds()))
	for _, pr := range m.Profiles() {
		for _, x := range m.Payoffs(pr) {
			if new(big.Rat).Abs(x).Cmp(limit) > 0 {
				return nil, fmt.Errorf("matrix: a scaled payoff of %s over %d rounds is too large", x.RatString(), p.GetRounds())
			}
		}
	}
	s := &setup{
		params:  p,
		players: gamefile.Players(p.Table.GetPlayers()),
		scale:   scale,
		m:       m,
		rounds:  p.GetRounds(),
		talk:    p.GetTalkRounds(),
		opener:  p.GetTalkOpener(),
		neutral: p.GetNeutralLabels(),
		history: p.GetShowHistory(),
	}
	s.shown = shownTable(p.Table, m, s.neutral)
	s.text = [2]string{s.rulesText(0), s.rulesText(1)}
	return s, nil
}

func valueOr(v *int32, def int32) int32 {
	if v == nil {
		return def
	}
	return *v
}

// shownTable is the table with payoffs scaled and, under neutral labels, ids and labels
// choice_1, ... and no title or description.
func shownTable(t *matrixv1.Table, m *equilibria.Matrix, neutral bool) *matrixv1.Table {
	c := proto.CloneOf(t)
	if neutral {
		c = gamefile.NeutralTable(c)
	}
	if len(c.Players) == 0 {
		c.Players = gamefile.DefaultPlayers[:]
	}
	c.ScaleDefault = nil
	c.Description = "" // for people only: it may name the equilibria
	for k, cell := range c.Cells {
		pay := m.Payoffs(equilibria.Profile{Row: k / len(c.Cols), Col: k % len(c.Cols)})
		cell.Payoffs = []*matrixv1.Rational{gamefile.RatProto(pay[0]), gamefile.RatProto(pay[1])}
	}
	return c
}

// actions returns seat's actions as shown.
func (s *setup) actions(seat games.Seat) []*matrixv1.Action {
	if seat == 0 {
		return s.shown.GetRows()
	}
	return s.shown.GetCols()
}

// label is how seat's action i is written in texts every seat sees.
func (s *setup) label(seat games.Seat, i int) string {
	a := s.actions(seat)[i]
	if a.GetLabel() == a.GetId() {
		return a.GetId()
	}
	return fmt.Sprintf("%s (%s)", a.GetId(), a.GetLabel())
}
