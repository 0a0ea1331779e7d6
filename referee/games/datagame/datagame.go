// Package datagame is what the two games given as data — the matrix game and the sequential
// game (specs/matrix-and-sequential.md) — share in setting up a match: finding the game (the
// table or tree sent in the params, a file the starting program loaded, or a shipped game by
// name), the parameters both have (scale, talk rounds and opener, neutral labels) checked for
// any number of players, and the pieces of observations that do not depend on the game's
// shape. The talk phase itself is package pretalk.
package datagame

import (
	"fmt"
	"math/big"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/pretalk"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Family describes one of the two games to the shared code.
type Family struct {
	// Name is the game's name ("matrix"), the prefix of its errors.
	Name string
	// Kind is the kind of game file it plays; Other names the game that plays the other kind.
	Kind  gamefile.Kind
	Other string
	// Data names the field of the family's Params that holds the game itself ("table",
	// "tree").
	Data string
}

// Load reads the game file at path for a games.Loader: nil when the family's params name no
// file.
func (f Family) Load(path string, read games.ReadFile) (*gamefile.File, error) {
	data, err := read(path)
	if err != nil {
		return nil, fmt.Errorf("%s: file: %w", f.Name, err)
	}
	g, err := gamefile.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: file %s: %w", f.Name, path, err)
	}
	if g.Kind != f.Kind {
		return nil, fmt.Errorf("%s: file %s holds a %s game; play it with the %s game", f.Name, path, g.Kind, f.Other)
	}
	return g, nil
}

// CheckParams refuses params of another game.
func (f Family) CheckParams(gp *matchv1.GameParams) error { return bargain.CheckFamily(gp, f.Name) }

// Fill checks gp holds this family's params and fills in the declared defaults
// (games.FillParams), except the shipped game's name when the params carry the game itself or
// name a file: those replace it, and the record says where the game came from.
func (f Family) Fill(gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	if err := f.CheckParams(gp); err != nil {
		return nil, err
	}
	out, err := games.FillParams(f.Name, gp)
	if err != nil {
		return nil, err
	}
	branch := games.ParamsField(f.Name)
	fields := branch.Message().Fields()
	game := fields.ByName("game")
	given := out.ProtoReflect().Get(branch).Message()
	if gp.ProtoReflect().Has(branch) {
		given = gp.ProtoReflect().Get(branch).Message()
	}
	if !given.Has(game) && (given.Has(fields.ByName("file")) || given.Has(fields.ByName(protoreflect.Name(f.Data)))) {
		out.ProtoReflect().Mutable(branch).Message().Clear(game)
	}
	return out, nil
}

// LoadFile reads the game file named by the family's file parameter into the params, unless
// they carry the game itself already or name no file (a games.Loader's Load).
func (f Family) LoadFile(gp *matchv1.GameParams, read games.ReadFile) (*matchv1.GameParams, error) {
	branch := games.ParamsField(f.Name)
	if !gp.ProtoReflect().Has(branch) {
		return gp, nil
	}
	p := gp.ProtoReflect().Get(branch).Message()
	fields := p.Descriptor().Fields()
	file, data := fields.ByName("file"), fields.ByName(protoreflect.Name(f.Data))
	if !p.Has(file) || p.Has(data) {
		return gp, nil
	}
	g, err := f.Load(p.Get(file).String(), read)
	if err != nil {
		return nil, err
	}
	out := proto.CloneOf(gp)
	out.ProtoReflect().Mutable(branch).Message().Set(data, protoreflect.ValueOfMessage(g.Game().ProtoReflect()))
	return out, nil
}

// Params are the family's generated Params.
type Params interface {
	proto.Message
	Shared
}

// Game is the game itself as the params carry it: a table or a tree.
type Game interface {
	proto.Message
	GetPlayers() []string
	GetScaleDefault() *gamev1.Rational
}

// Resolve fills in the family's params in gp: the declared defaults (Fill), the game itself
// when they carry none (the shipped game named; check validates it) and the scale (the game's
// default when unset). P is the family's Params type, D its game's.
func Resolve[P Params, D Game](f Family, gp *matchv1.GameParams, check func(D) error) (P, error) {
	var none P
	filled, err := f.Fill(gp)
	if err != nil {
		return none, err
	}
	p := filled.ProtoReflect().Mutable(games.ParamsField(f.Name)).Message()
	fields := p.Descriptor().Fields()
	data := fields.ByName(protoreflect.Name(f.Data))
	if !p.Has(data) {
		g, err := f.Source(stringField(p, "game"), stringField(p, "file"))
		if err != nil {
			return none, err
		}
		p.Set(data, protoreflect.ValueOfMessage(g.Game().ProtoReflect()))
	}
	game, ok := p.Get(data).Message().Interface().(D)
	if !ok {
		return none, fmt.Errorf("%s: %s is a %T, not the game's type", f.Name, f.Data, p.Get(data).Message().Interface())
	}
	if err := check(game); err != nil {
		return none, fmt.Errorf("%s: %s: %w", f.Name, f.Data, err)
	}
	params := p.Interface().(P)
	settings, err := f.Settle(game.GetPlayers(), game.GetScaleDefault(), params)
	if err != nil {
		return none, err
	}
	p.Set(fields.ByName("scale"), protoreflect.ValueOfString(settings.Scale.RatString()))
	return params, nil
}

// stringField is m's string field called name, nil when unset.
func stringField(m protoreflect.Message, name protoreflect.Name) *string {
	fd := m.Descriptor().Fields().ByName(name)
	if !m.Has(fd) {
		return nil
	}
	return proto.String(m.Get(fd).String())
}

// Source finds the game of a match whose filled params carry no table or tree: the shipped
// game named, or an error when a file was named but never loaded.
func (f Family) Source(game, file *string) (*gamefile.File, error) {
	if file != nil {
		return nil, fmt.Errorf("%s: file %q was not loaded: `parley play` reads it; other callers must send the game itself", f.Name, *file)
	}
	g, err := gamefile.Shipped(*game)
	if err != nil {
		return nil, fmt.Errorf("%s: game: %w", f.Name, err)
	}
	if g.Kind != f.Kind {
		return nil, fmt.Errorf("%s: %s is a %s game; play it with the %s game", f.Name, *game, g.Kind, f.Other)
	}
	return g, nil
}

// Library lists the shipped games of the family's kind, for its description.
func (f Family) Library() string {
	return "Shipped games: " + strings.Join(gamefile.Library(f.Kind), ", ") + "."
}

// Settings are the parameters both games have, resolved.
type Settings struct {
	// Players are the seats' names, one per player.
	Players []string
	// Scale multiplies every payoff.
	Scale *big.Rat
	// Talk is the number of talk rounds before each choice; Opener the seat opening them.
	Talk   int32
	Opener games.Seat
	// Neutral shows actions as choice_1, ... and never names the game.
	Neutral bool
}

// Shared are the parameters both games have, as their generated Params hold them once
// filled (Fill): only scale may still be unset, its default being the game's own.
type Shared interface {
	GetScale() string
	GetTalkRounds() int32
	GetTalkOpener() int32
	GetNeutralLabels() bool
}

// Settle reads the shared params of a game with the given player names and default scale,
// checking what depends on the game (the opener must be one of its seats).
func (f Family) Settle(players []string, scaleDefault *gamev1.Rational, p Shared) (Settings, error) {
	s := Settings{Players: gamefile.Players(players), Talk: p.GetTalkRounds(), Opener: p.GetTalkOpener(), Neutral: p.GetNeutralLabels()}
	var scale *string
	if p.GetScale() != "" {
		scale = proto.String(p.GetScale())
	}
	r, err := gamefile.Scale(scale, scaleDefault)
	if err != nil {
		return s, fmt.Errorf("%s: %w", f.Name, err)
	}
	s.Scale = r
	if int(s.Opener) >= len(s.Players) {
		return s, fmt.Errorf("%s: talk_opener must be a seat from 0 to %d, got %d", f.Name, len(s.Players)-1, s.Opener)
	}
	return s, nil
}

// StartTalk begins a talk phase among the players.
func (s Settings) StartTalk() pretalk.Talk {
	return pretalk.Start(s.Talk, s.Opener, int32(len(s.Players)))
}

// Observation starts seat's observation: the game, seat, turn and turn limit, and every
// seat's name and role. For a seat that does not play it says so in the briefing and is
// complete (ok false).
func (s Settings) Observation(game string, seat games.Seat, turn, maxTurns int32, roles []string) (obs *agentv1.Observation, ok bool) {
	obs = &agentv1.Observation{Game: game, Seat: seat, Turn: turn, MaxTurns: maxTurns}
	if seat < 0 || int(seat) >= len(s.Players) {
		var seats []string
		for i, name := range s.Players {
			seats = append(seats, fmt.Sprintf("%d (%s)", i, name))
		}
		obs.Briefing = fmt.Sprintf("Seat %d does not play in this game; the seats are %s.", seat, bargain.AndList(seats))
		return obs, false
	}
	for i, name := range s.Players {
		info := &gamev1.SeatInfo{Seat: int32(i), Name: name}
		if i < len(roles) {
			info.Role = roles[i]
		}
		obs.Seats = append(obs.Seats, info)
	}
	return obs, true
}

// Choose is the action choosing option id.
func Choose(id string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: id}}}}
}

// Pass is the action passing, the default of a seat with nothing to do (refused).
func Pass() *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}
}

// Others returns the seats other than seat, in seat order.
func Others(seat games.Seat, n int) []games.Seat {
	var out []games.Seat
	for s := range games.Seat(n) {
		if s != seat {
			out = append(out, s)
		}
	}
	return out
}

// Number writes small counts as words ("three"), for briefings.
func Number(n int) string {
	words := []string{"zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return fmt.Sprint(n)
}
