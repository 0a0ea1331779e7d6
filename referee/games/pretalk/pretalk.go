// Package pretalk is the public talk phase that precedes a choice in the games given as data
// (specs/matrix-and-sequential.md): up to a number of rounds, each one public message from
// the opener and then one reply from every other player in seat order after it (with two
// players: a message and a reply), and any player may end the talk early (the reference code's
// "halt negotiation"). Talk binds nobody.
//
// On a talk turn the speaker's legal moves are say (its message, and the talk goes on) and
// pass (its message, and the talk ends after it); either way the action carries exactly one
// public message, which Observation.required_messages prescribes. The default move, for an
// agent that gives no usable answer, is pass with the text "(no message)".
package pretalk

import (
	"fmt"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// MaxRounds bounds the talk rounds before one choice.
const MaxRounds = 50

// DefaultText is the text of the message a default move sends.
const DefaultText = "(no message)"

// Phase is the observation's phase during the talk.
const Phase = "talk"

// Talk is the state of one talk phase. A value: copying it copies the state.
type Talk struct {
	// Rounds is the number of rounds allowed; Opener the seat that opens each round; Seats the
	// number of players, who all speak once per round.
	Rounds int32
	Opener games.Seat
	Seats  int32
	// Round is the current round, 1-based; Spoken is how many have spoken in it so far.
	Round  int32
	Spoken int32
	// Over is true once the talk has ended; EndedBy is the seat that ended it early, or -1
	// when the rounds ran out (or there were none).
	Over    bool
	EndedBy games.Seat
}

// Start returns a talk phase of rounds rounds among seats players, each round opened by
// opener; with no rounds it is over at once.
func Start(rounds int32, opener games.Seat, seats int32) Talk {
	t := Talk{Rounds: rounds, Opener: opener, Seats: seats, EndedBy: -1}
	if rounds <= 0 {
		t.Over = true
		return t
	}
	t.Round = 1
	return t
}

// Speaker returns the seat whose message is next; meaningless once over.
func (t Talk) Speaker() games.Seat { return (t.Opener + t.Spoken) % t.Seats }

// LegalMoves are the speaker's moves: say or pass.
func LegalMoves() []gamev1.MoveKind {
	return []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_SAY, gamev1.MoveKind_MOVE_KIND_PASS}
}

// RequiredMessages are the speaker's: one public message.
func RequiredMessages() []*gamev1.MessageSlot { return []*gamev1.MessageSlot{{}} }

// Default is the default move of a speaker: end the talk, saying nothing.
func Default() *agentv1.Action {
	return &agentv1.Action{
		Move:     &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}},
		Messages: []*gamev1.Message{{Text: DefaultText}},
	}
}

// Check refuses a speaker's action that is not say or pass with exactly one public message
// of text only.
func Check(action *agentv1.Action) error {
	switch action.GetMove().GetKind().(type) {
	case *gamev1.Move_Say, *gamev1.Move_Pass:
	default:
		return games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE,
			"this is a talk turn: say (send your message and let the talk go on) or pass (send your message and end the talk); the choice comes after the talk")
	}
	msgs := action.GetMessages()
	switch {
	case len(msgs) != 1:
		return games.Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE,
			"a talk turn carries exactly one public message, got %d", len(msgs))
	case len(msgs[0].GetTo()) != 0:
		return games.Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE,
			"talk is public: leave the message's recipients empty")
	case msgs[0].GetProposal() != nil:
		return games.Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE,
			"messages in this game carry text only")
	}
	return nil
}

// Advance returns the talk after seat spoke; ended says whether it ended the talk early (a
// pass). The caller has checked that seat is the speaker.
func (t Talk) Advance(seat games.Seat, ended bool) Talk {
	switch {
	case ended:
		t.Over, t.EndedBy = true, seat
	case t.Spoken+1 < t.Seats:
		t.Spoken++
	case t.Round >= t.Rounds:
		t.Over, t.Spoken = true, 0
	default:
		t.Round++
		t.Spoken = 0
	}
	return t
}

// Speak plays seat's talk action: it checks it (a *games.Rejection when refused), records it
// in h on turn with a summary naming the speaker, and returns the talk after it. The caller
// has checked that seat is the speaker.
func (t Talk) Speak(h *games.History, turn int32, seat games.Seat, action *agentv1.Action, names []string) (Talk, error) {
	if err := Check(action); err != nil {
		return t, err
	}
	ended := action.GetMove().GetPass() != nil
	summary := fmt.Sprintf("%s speaks.", names[seat])
	if ended {
		summary = fmt.Sprintf("%s speaks and ends the talk.", names[seat])
	}
	h.AddMove(turn, seat, action.GetMove(), action.GetMessages(), summary)
	return t.Advance(seat, ended), nil
}

// Observe fills the talk's part of seat's observation: the phase, and the speaker's legal
// moves and required message.
func (t Talk) Observe(obs *agentv1.Observation, seat games.Seat) {
	obs.Phase = Phase
	if t.Speaker() == seat {
		obs.LegalMoves = LegalMoves()
		obs.RequiredMessages = RequiredMessages()
	}
}

// Order writes who speaks in each round: "Alice writes one message and Bob replies with one"
// for two players, "Ann writes one message and then Ben and Cat reply with one each, in that
// order" for more.
func Order(opener games.Seat, names []string) string {
	n := games.Seat(len(names))
	if n == 2 {
		return fmt.Sprintf("%s writes one message and %s replies with one", names[opener], names[1-opener])
	}
	var rest []string
	for k := games.Seat(1); k < n; k++ {
		rest = append(rest, names[(opener+k)%n])
	}
	return fmt.Sprintf("%s writes one message and then %s and %s reply with one each, in that order",
		names[opener], strings.Join(rest[:len(rest)-1], ", "), rest[len(rest)-1])
}

// Rules writes the talk's rules as one briefing line, e.g. "Before every move there is public
// talk of up to 2 rounds; in each, ..."; when says when the talk happens ("Before every
// move").
func Rules(when string, rounds int32, opener games.Seat, names []string) string {
	return fmt.Sprintf("%s there is public talk of up to %d %s; in each, %s. "+
		"On your talk turn, say sends your message and the talk goes on; pass sends it and ends the talk at once. Nothing said binds anyone.",
		when, rounds, Plural(int64(rounds), "round", "rounds"), Order(opener, names))
}

// Status writes where the talk stands, for briefings; empty once it is over.
func (t Talk) Status(names []string, seat games.Seat) string {
	if t.Over {
		return ""
	}
	who := names[t.Speaker()]
	if t.Speaker() == seat {
		who = "you"
	}
	return fmt.Sprintf("Talk round %d of %d: %s to write.", t.Round, t.Rounds, who)
}

// Plural picks the word for n things.
func Plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
