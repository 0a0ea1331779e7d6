package games

import (
	"strings"
	"unicode/utf8"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// MaxTextBytes bounds every message text, reasoning and note of one action. Longer text is
// refused rather than truncated, so the agent learns of it.
const MaxTextBytes = 8 << 10

// MaxMessages bounds the messages of one action.
const MaxMessages = 16

// CheckOption relaxes a rule of CheckAction for games that allow more.
type CheckOption func(*checkRules)

type checkRules struct{ messageTerms bool }

// AllowMessageTerms lets messages carry non-binding terms (Message.proposal). The game still
// checks the terms themselves.
func AllowMessageTerms() CheckOption { return func(r *checkRules) { r.messageTerms = true } }

// CheckAction applies the rules every game shares to seat's action in a game of nSeats: a
// move is present, messages go to other existing seats, texts are valid UTF-8 and not too
// long, and messages carry no terms unless the game allows them. Families call it first in
// Apply.
func CheckAction(action *agentv1.Action, seat Seat, nSeats int, opts ...CheckOption) error {
	var rules checkRules
	for _, o := range opts {
		o(&rules)
	}
	if action == nil || action.GetMove() == nil || action.GetMove().GetKind() == nil {
		return Reject(gamev1.RejectionCode_REJECTION_CODE_MISSING_MOVE, "the action has no move; set exactly one of propose, accept, reject, pass, choose or say")
	}
	if len(action.GetMessages()) > MaxMessages {
		return Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "%d messages in one action; at most %d are allowed", len(action.GetMessages()), MaxMessages)
	}
	for _, m := range action.GetMessages() {
		if err := checkText("message", m.GetText()); err != nil {
			return err
		}
		if m.GetProposal() != nil && !rules.messageTerms {
			return Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "messages in this game carry text only; put terms in a propose move instead")
		}
		seen := make(map[Seat]bool, len(m.GetTo()))
		for _, to := range m.GetTo() {
			switch {
			case to < 0 || int(to) >= nSeats:
				return Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "message addressed to seat %d, which does not exist (seats are 0 to %d)", to, nSeats-1)
			case to == seat:
				return Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "message addressed to the sender's own seat %d", to)
			case seen[to]:
				return Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "message addressed to seat %d twice", to)
			}
			seen[to] = true
		}
	}
	if err := checkText("private_reasoning", action.GetPrivateReasoning()); err != nil {
		return err
	}
	return checkText("private_notes", action.GetPrivateNotes())
}

func checkText(field, s string) error {
	if len(s) > MaxTextBytes {
		return Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "%s is %d bytes long; at most %d are allowed", field, len(s), MaxTextBytes)
	}
	if !utf8.ValidString(s) {
		return Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "%s is not valid UTF-8", field)
	}
	return nil
}

// KindWord is the word for a kind of move, as briefings, refusals and agents' formats use it.
func KindWord(k gamev1.MoveKind) string {
	switch k {
	case gamev1.MoveKind_MOVE_KIND_PROPOSE:
		return "propose"
	case gamev1.MoveKind_MOVE_KIND_ACCEPT:
		return "accept"
	case gamev1.MoveKind_MOVE_KIND_REJECT:
		return "reject"
	case gamev1.MoveKind_MOVE_KIND_PASS:
		return "pass"
	case gamev1.MoveKind_MOVE_KIND_CHOOSE:
		return "choose"
	case gamev1.MoveKind_MOVE_KIND_SAY:
		return "say"
	}
	return strings.ToLower(strings.TrimPrefix(k.String(), "MOVE_KIND_"))
}

// KindWords returns the word for each kind.
func KindWords(kinds []gamev1.MoveKind) []string {
	words := make([]string, len(kinds))
	for i, k := range kinds {
		words[i] = KindWord(k)
	}
	return words
}
