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

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/pretalk"
	"google.golang.org/protobuf/proto"
)

// Family describes one of the two games to the shared code.
type Family struct {
	// Name is the game's name ("matrix"), the prefix of its errors.
	Name string
	// Kind is the kind of game file it plays; Other names the game that plays the other kind.
	Kind  gamefile.Kind
	Other string
	// DefaultGame is the shipped game played when params name none.
	DefaultGame string
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

// Source finds the game of a match whose params carry game and file but no table or tree: the
// shipped game named (DefaultGame when none), or an error when a file was named but never
// loaded. It returns the game and the resolved name.
func (f Family) Source(game, file *string) (*gamefile.File, *string, error) {
	switch {
	case file != nil:
		return nil, nil, fmt.Errorf("%s: file %q was not loaded: `parley play` reads it; other callers must send the game itself", f.Name, *file)
	case game == nil:
		game = proto.String(f.DefaultGame)
	}
	g, err := gamefile.Shipped(*game)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: game: %w", f.Name, err)
	}
	if g.Kind != f.Kind {
		return nil, nil, fmt.Errorf("%s: %s is a %s game; play it with the %s game", f.Name, *game, g.Kind, f.Other)
	}
	return g, game, nil
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

// Settle checks and resolves the shared parameters of a game with the given player names and
// default scale.
func (f Family) Settle(players []string, scaleDefault *gamev1.Rational, scale *string, talk, opener *int32, neutral *bool) (Settings, error) {
	s := Settings{Players: gamefile.Players(players), Talk: valueOr(talk, 0), Opener: valueOr(opener, 0), Neutral: neutral != nil && *neutral}
	r, err := gamefile.Scale(scale, scaleDefault)
	if err != nil {
		return s, fmt.Errorf("%s: %w", f.Name, err)
	}
	s.Scale = r
	switch {
	case s.Talk < 0 || s.Talk > pretalk.MaxRounds:
		return s, fmt.Errorf("%s: talk_rounds must be from 0 to %d, got %d", f.Name, pretalk.MaxRounds, s.Talk)
	case s.Opener < 0 || int(s.Opener) >= len(s.Players):
		return s, fmt.Errorf("%s: talk_opener must be a seat from 0 to %d, got %d", f.Name, len(s.Players)-1, s.Opener)
	}
	return s, nil
}

func valueOr(v *int32, def int32) int32 {
	if v == nil {
		return def
	}
	return *v
}

// Write stores the resolved settings back into the params' fields.
func (s Settings) Write(scale **string, talk, opener **int32, neutral **bool) {
	*scale = proto.String(s.Scale.RatString())
	*talk = proto.Int32(s.Talk)
	*opener = proto.Int32(s.Opener)
	*neutral = proto.Bool(s.Neutral)
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
