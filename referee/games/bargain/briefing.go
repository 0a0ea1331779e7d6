package bargain

import (
	"fmt"

	"github.com/parley-arena/parley/referee/games"
)

// Pieces of briefing the games share, so that the three read alike. The published study found
// that models lose track of the turn and of the proposals they have left, so every briefing
// restates them with TurnLines.

// Line writes one line of a briefing, as fmt.Sprintf would format it.
type Line = games.BriefingLine

// TurnLines writes where the turns stand for seat: whose turn it is, "turn k of n", how many
// turns seat has left and on how many of them it may still propose, and, when the game limits
// proposals, how many seat has made. Only for a match that is not over.
func (m *Match[T]) TurnLines(seat games.Seat, line Line) {
	opp := m.name(1 - seat)
	maxTurns := m.cfg.MaxTurns
	myTurn := seat == m.Mover()
	if myTurn {
		left := maxTurns - m.turn
		switch {
		case !m.IsLastTurn():
			line("- It is turn %d of %d, your turn; %d %s after this one.", m.turn, maxTurns, left, Plural(int64(left), "turn remains", "turns remain"))
		case m.CanPropose(seat):
			line("- It is turn %d of %d, your turn, and the last one: the game ends after this move, so a proposal made now cannot be accepted.", m.turn, maxTurns)
		default:
			only := "only " + OrList(games.KindWords(m.LegalMoves(seat)))
			if _, ok := m.Standing(); !ok {
				only += ", as there is nothing to accept"
			}
			line("- It is turn %d of %d, your turn, and the last one: you cannot propose, %s.", m.turn, maxTurns, only)
		}
	} else {
		line("- It is turn %d of %d, %s's turn; you are waiting for %s's move.", m.turn, maxTurns, opp, opp)
	}
	n, last, proposable := m.SeatTurns(seat)
	switch {
	case n == 0:
		line("- You have no turns left.")
	case myTurn && m.IsLastTurn():
		// Already said: this is the last turn.
	case myTurn && n == 1:
		line("- This is your last turn.")
	case myTurn:
		line("- Counting this one, you have %d turns left (the last is turn %d) and may propose on %d of them.", n, last, proposable)
	case n == 1 && proposable == 0:
		where := ""
		if last == maxTurns {
			where = ", the last of the game"
		}
		line("- You have 1 turn left, turn %d%s, on which you may only %s.", last, where, OrList(m.answerWords()))
	case n == 1:
		line("- You have 1 turn left, turn %d.", last)
	default:
		line("- You have %d turns left (the next is turn %d, the last turn %d) and may propose on %d of them.", n, m.turn+1, last, proposable)
	}
	if limit := m.cfg.MaxProposals; limit > 0 {
		made := m.made[seat]
		line("- You have made %d of the %d proposals you may make.", made, limit)
	}
}

// answerWords names the game's moves other than propose: what a player with no proposal left
// may still do.
func (m *Match[T]) answerWords() []string {
	words := []string{"accept"}
	if m.cfg.Pass {
		words = append(words, "pass")
	}
	if m.cfg.Reject {
		words = append(words, "reject")
	}
	return words
}

// TurnShares says how max_turns divide between the players, e.g. "4 for each player".
func TurnShares(maxTurns int32) string {
	p1, p2 := (maxTurns+1)/2, maxTurns/2
	switch {
	case p1 == p2:
		return fmt.Sprintf("%d for each player", p1)
	case p2 == 0:
		return "only P1 moves"
	}
	return fmt.Sprintf("%d for P1, %d for P2", p1, p2)
}

// OrList joins words as "a", "a or b", "a, b or c"; "nothing" when there are none.
func OrList(words []string) string { return joinList(words, " or ") }

// AndList joins words as "a", "a and b", "a, b and c"; "nothing" when there are none.
func AndList(words []string) string { return joinList(words, " and ") }

func joinList(words []string, last string) string {
	switch len(words) {
	case 0:
		return "nothing"
	case 1:
		return words[0]
	}
	out := words[0]
	for _, w := range words[1 : len(words)-1] {
		out += ", " + w
	}
	return out + last + words[len(words)-1]
}

// Plural picks the singular or plural form of a counted noun.
func Plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
