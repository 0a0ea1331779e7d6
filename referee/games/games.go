// Package games defines the interface every game family implements and the pieces the families
// share. Rules are pure: a state plus an action gives a new state and events, all randomness
// comes from the match seed, and nothing here does I/O, reads the clock or logs.
package games

import (
	"errors"
	"fmt"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// Seat indexes a player of a match, 0-based, in the game's seat order.
type Seat = int32

// Game is a factory of match states plus the facts that do not change between matches.
type Game interface {
	// Info describes the game: name, seats, and its parameters as its Params message declares
	// them (ParamInfos).
	Info() *gamev1.GameInfo
	// Resolve returns a copy of params with every unset field set to its default (declared, as
	// FillParams fills it in, or derived by the family), or an error that names the bad
	// parameter and the legal values. A nil params, or one with no branch
	// set, means "all defaults". The branch of matchv1.GameParams is named after the game.
	Resolve(params *matchv1.GameParams) (*matchv1.GameParams, error)
	// NewState returns the initial state of a match with resolved params (Resolve's result) and
	// the match seed. It fills in nothing: params missing a value Resolve fills in are refused
	// (ErrNotResolved), and it checks them cheaply so that no params ever make it panic.
	NewState(params *matchv1.GameParams, seed uint64) (State, error)
}

// State is the state of one match. Methods never block and never do I/O.
type State interface {
	// ToMove returns the seats that must act now: one for turn-based play, several when they
	// choose at the same time, none when the match is over.
	ToMove() []Seat
	// Turn returns the current turn, 1-based, counted over all seats.
	Turn() int32
	// Observe returns what seat may know now: phase, turn, legal moves, its view, visible
	// history and briefing. The runner adds match id, seats, deadline, notes and rejection.
	// It must never contain anything private to another seat.
	Observe(seat Seat) *agentv1.Observation
	// Apply applies seat's action. An action the rules refuse returns a *Rejection and leaves
	// the state unchanged. Events returned carry only their payload; the runner stamps them.
	// Apply never changes the action (the runner records it as given), and an applied action
	// belongs to the state from then on: the state may keep parts of it, its move and messages,
	// in its history instead of copies, so the caller must not change it afterwards.
	Apply(seat Seat, action *agentv1.Action) ([]*eventsv1.MatchEvent, error)
	// Default returns the game's documented move for a seat whose agent gave no usable
	// answer. It must be legal for Apply.
	Default(seat Seat) *agentv1.Action
	// Outcome returns how the match ended. Only meaningful once ToMove is empty.
	Outcome() *matchv1.Outcome
	// Clone returns an independent copy.
	Clone() State
}

// Unbriefed is implemented by states that can build an observation without its briefing, for
// an agent that never reads it (agentv1.Observing.skips_briefing): for a seat of the match,
// ObserveUnbriefed(seat) is Observe(seat) with an empty briefing, and nothing is spent writing
// one. The conformance suite (gametest) checks that it is.
type Unbriefed interface {
	ObserveUnbriefed(seat Seat) *agentv1.Observation
}

// MoveWorder is implemented by every state that keeps a History: LastMove returns the summary
// its rules recorded with seat's latest move on turn, and who besides the mover may see it
// (History.LastMove). The runner copies them into the record's ActionTaken, so that whoever
// shows the record words a move as the seats' histories do. The conformance suite (gametest)
// requires it and checks it against the observations.
type MoveWorder interface {
	LastMove(seat Seat, turn int32) (summary string, visibleTo []Seat, ok bool)
}

// SeatLister is implemented by games whose seats depend on their parameters (e.g. a list of
// players). Info().Seats and SeatRoles then describe the seats of the default parameters.
type SeatLister interface {
	// Seats returns the seat names and roles (same length; empty roles where seats are
	// symmetric) for resolved params.
	Seats(params *matchv1.GameParams) (names, roles []string)
}

// Seats returns the seat names and roles of g for resolved params: g's own answer when it is
// a SeatLister, else Info's.
func Seats(g Game, params *matchv1.GameParams) (names, roles []string) {
	if sl, ok := g.(SeatLister); ok {
		return sl.Seats(params)
	}
	info := g.Info()
	names, roles = info.GetSeats(), info.GetSeatRoles()
	for len(roles) < len(names) {
		roles = append(roles, "")
	}
	return names, roles
}

// Opener is implemented by states whose rules act before the first move: a phase begins, a
// chance draw is made. The runner records the events OpeningEvents returns right after
// MatchStarted, on the state's first turn; like Apply's, they carry only their payload. It
// depends only on the game's parameters and seed, so every call on a match's states gives the
// same events.
type Opener interface {
	OpeningEvents() []*eventsv1.MatchEvent
}

// Rejection is the rules' reason for refusing an action. It is an error so Apply can return
// it, but it is an ordinary outcome of play, not a failure.
type Rejection struct {
	Code    gamev1.RejectionCode
	Message string
}

// Error returns the plain-language reason.
func (r *Rejection) Error() string { return r.Message }

// Proto returns the rejection as sent to the agent and recorded.
func (r *Rejection) Proto() *gamev1.Rejection {
	return &gamev1.Rejection{Code: r.Code, Message: r.Message}
}

// Reject builds a Rejection with a formatted message.
func Reject(code gamev1.RejectionCode, format string, args ...any) *Rejection {
	return &Rejection{Code: code, Message: fmt.Sprintf(format, args...)}
}

// AsRejection reports whether err is a *Rejection and returns it.
func AsRejection(err error) (*Rejection, bool) {
	var r *Rejection
	ok := errors.As(err, &r)
	return r, ok
}

// Start resolves params for g and starts a match with them and seed: Resolve, then NewState.
// It is for callers holding params that may not be resolved yet (tests, analyses); the runner
// takes params resolved once, when the match was prepared, to NewState directly.
func Start(g Game, params *matchv1.GameParams, seed uint64) (State, error) {
	resolved, err := g.Resolve(params)
	if err != nil {
		return nil, err
	}
	return g.NewState(resolved, seed)
}
