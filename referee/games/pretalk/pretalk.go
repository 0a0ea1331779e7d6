// Package pretalk is the public talk phase that precedes a choice in the games given as data
// (specs/matrix-and-sequential.md): up to a number of rounds, each one public message from
// the opener and one reply from the other player, and either player may end the talk early
// (the reference code's "halt negotiation"). Talk binds nobody.
//
// On a talk turn the speaker's legal moves are say (its message, and the talk goes on) and
// pass (its message, and the talk ends after it); either way the action carries exactly one
// public message, which Observation.required_messages prescribes. The default move, for an
// agent that gives no usable answer, is pass with the text "(no message)".
package pretalk

import (
	"fmt"

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
	// Rounds is the number of rounds allowed; Opener the seat that opens each round.
	Rounds int32
	Opener games.Seat
	// Round is the current round, 1-based; Replying is true once the opener has spoken in it.
	Round    int32
	Replying bool
	// Over is true once the talk has ended; EndedBy is the seat that ended it early, or -1
	// when the rounds ran out (or there were none).
	Over    bool
	EndedBy games.Seat
}

// Start returns a talk phase of rounds rounds opened by opener; with no rounds it is over at
// once.
func Start(rounds int32, opener games.Seat) Talk {
	t := Talk{Rounds: rounds, Opener: opener, EndedBy: -1}
	if rounds <= 0 {
		t.Over = true
		return t
	}
	t.Round = 1
	return t
}

// Speaker returns the seat whose message is next; meaningless once over.
func (t Talk) Speaker() games.Seat {
	if t.Replying {
		return 1 - t.Opener
	}
	return t.Opener
}

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
	case !t.Replying:
		t.Replying = true
	case t.Round >= t.Rounds:
		t.Over, t.Replying = true, false
	default:
		t.Round++
		t.Replying = false
	}
	return t
}

// Rule writes the talk's rules in one sentence for briefings.
func (t Talk) Rule(names [2]string) string {
	if t.Rounds <= 0 {
		return "There is no talk: you choose at once."
	}
	return fmt.Sprintf("Before choosing you may talk in public for up to %d %s: in each round %s writes one message and %s replies with one. "+
		"Either of you may end the talk early by passing (with a last message) instead of saying. Nothing said binds anyone.",
		t.Rounds, plural(t.Rounds, "round", "rounds"), names[t.Opener], names[1-t.Opener])
}

// Status writes where the talk stands, for briefings; empty once it is over.
func (t Talk) Status(names [2]string, seat games.Seat) string {
	if t.Over {
		return ""
	}
	who := names[t.Speaker()]
	if t.Speaker() == seat {
		who = "you"
	}
	return fmt.Sprintf("Talk round %d of %d: %s to write.", t.Round, t.Rounds, who)
}

func plural(n int32, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
