package ultimatum

import (
	"fmt"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// briefing is the plain-language account of the rules and of seat's situation, complete
// enough that a person or a language model can act on it alone. The published study found
// models lose track of their holdings, the turn and the proposals left, so each is restated.
// The text is a pure function of the state: same state, same bytes.
func (s *state) briefing(seat games.Seat) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	b.WriteString(s.rules[seat])
	line("Your situation")
	s.situation(seat, line)
	line("")
	line("What you may do now")
	s.options(seat, line)
	return b.String()
}

// rulesText is the part of the briefing that depends only on the parameters and the seat. It
// is written once per match (see NewState): rebuilding it on every observation was a large
// share of the referee's work per move.
func rulesText(p params, seat games.Seat) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	me, opp := seatNames[seat], seatNames[1-seat]
	c, total, maxTurns := p.currency, p.total, p.maxTurns
	lastMover := seatNames[(maxTurns+1)%2]

	line("You are %s in a two-player bargaining game, a multi-turn ultimatum, against %s.", me, opp)
	line("")
	line("Rules")
	line("- P1 holds %d %s and P2 holds none; both players know this. The game decides how P1's %d %s are split between the two.", total, c, total, c)
	line("- A proposal names x, the %s P1 hands to P2: a whole number with 0 <= x <= %d. P1 keeps %d - x. Either player may propose; P2 never gives anything.", c, total, total)
	line("- Players take turns: P1 moves on odd turns, P2 on even turns, starting with P1 on turn 1. The game lasts at most %d %s (%s).", maxTurns, plural(int64(maxTurns), "turn", "turns"), turnShares(maxTurns))
	line("- On a turn, the player to move does one of these:")
	line("  - propose: put a split on the table. It replaces the mover's own earlier proposal and declines the opponent's.")
	line("  - accept: take the opponent's proposal from the turn just before. The split is carried out and the game ends.")
	line("  - reject: end the game at once with no deal; both players get 0.")
	line("- Only the opponent's latest proposal, made on the turn just before, can be accepted; turn 1 has nothing to accept.")
	line("- No proposal may be made on the last turn (turn %d, %s's): there %s may only accept or reject.", maxTurns, lastMover, lastMover)
	line("- If the game ends without an accepted proposal, both players get 0.")
	line("- Your payoff is the %s you have when the game ends; your goal is to make it as large as you can.", c)
	line("- This is the only game between you and %s: there is no later game, and nothing carries over.", opp)
	line("- If your agent fails to give a usable answer, you reject.")
	line("- %s sees your moves and any message you send. Your private reasoning and notes are never shown to %s.", opp, opp)
	line("")
	return b.String()
}

// situation restates where the game stands for seat.
func (s *state) situation(seat games.Seat, line func(string, ...any)) {
	opp := seatNames[1-seat]
	c, maxTurns := s.p.currency, s.p.maxTurns
	if s.over {
		pay := s.payoffs()
		line("- The game is over. %s", s.outcomeSummary())
		line("- You end with %d %s; %s ends with %d.", pay[seat], c, opp, pay[1-seat])
		return
	}
	held := [2]int64{s.p.total, 0}
	myTurn := seat == s.mover()
	if myTurn {
		left := maxTurns - s.turn
		if s.isLastTurn() {
			only := "only accept or reject"
			if !s.hasStanding {
				only = "only reject, as there is nothing to accept"
			}
			line("- It is turn %d of %d, your turn, and the last one: you cannot propose, %s.", s.turn, maxTurns, only)
		} else {
			line("- It is turn %d of %d, your turn; %d %s remain after this one.", s.turn, maxTurns, left, plural(int64(left), "turn", "turns"))
		}
	} else {
		line("- It is turn %d of %d, %s's turn; you are waiting for %s's move.", s.turn, maxTurns, opp, opp)
	}
	n, last, proposable := s.turnsLeft(seat)
	switch {
	case n == 0:
		line("- You have no turns left.")
	case myTurn && s.isLastTurn():
		// Already said: this is the last turn.
	case myTurn && n == 1:
		line("- This is your last turn.")
	case myTurn:
		line("- Counting this one, you have %d turns left (the last is turn %d) and may propose on %d of them.", n, last, proposable)
	case n == 1 && proposable == 0:
		line("- You have 1 turn left, turn %d, the last of the game, on which you may only accept or reject.", last)
	case n == 1:
		line("- You have 1 turn left, turn %d.", last)
	default:
		line("- You have %d turns left (the next is turn %d, the last turn %d) and may propose on %d of them.", n, s.turn+1, last, proposable)
	}
	line("- You hold %d %s; %s holds %d.", held[seat], c, opp, held[1-seat])

	if myTurn {
		if s.hasStanding {
			line("- %s's proposal from turn %d stands: %s. If you accept it, you get %d %s and %s gets %d.",
				opp, s.standing.turn, s.splitText(s.standing.x), share(seat, s.standing.x, s.p.total), c, opp, share(1-seat, s.standing.x, s.p.total))
		} else {
			line("- There is no proposal for you to accept.")
		}
		if s.hasLast[seat] {
			o := s.last[seat]
			line("- Your latest proposal (turn %d: %s) was declined when %s proposed on turn %d.", o.turn, s.splitText(o.x), opp, s.standing.turn)
		}
		return
	}
	if s.hasStanding {
		answers := "accept it, reject, or make a proposal of its own"
		if s.isLastTurn() {
			answers = "only accept it or reject"
		}
		line("- Your proposal from turn %d stands: %s. %s may %s; if it accepts, you get %d %s and %s gets %d.",
			s.standing.turn, s.splitText(s.standing.x), opp, answers, share(seat, s.standing.x, s.p.total), c, opp, share(1-seat, s.standing.x, s.p.total))
	}
}

// options lists the moves seat may make now, with their effect.
func (s *state) options(seat games.Seat, line func(string, ...any)) {
	opp := seatNames[1-seat]
	c := s.p.currency
	switch {
	case s.over:
		line("- Nothing: the game is over.")
		return
	case seat != s.mover():
		line("- Nothing: it is %s's turn.", opp)
		return
	}
	for _, k := range s.legalMoves() {
		switch k {
		case gamev1.MoveKind_MOVE_KIND_PROPOSE:
			line("- propose: choose x with 0 <= x <= %d, the %s P1 gives to P2 (in the action: a proposal whose allocation has seat 0 giving {%q: x}). If %s accepts it on the next turn, P1 gets %d - x and P2 gets x.",
				s.p.total, c, c, opp, s.p.total)
		case gamev1.MoveKind_MOVE_KIND_ACCEPT:
			line("- accept: take %s's proposal from turn %d; you get %d %s, %s gets %d, and the game ends.",
				opp, s.standing.turn, share(seat, s.standing.x, s.p.total), c, opp, share(1-seat, s.standing.x, s.p.total))
		case gamev1.MoveKind_MOVE_KIND_REJECT:
			line("- reject: end the game now with no deal; both get 0.")
		}
	}
}

// turnsLeft counts seat's turns from now on (this one included when it is seat's), the last of
// them, and on how many of them seat may still propose (not on the game's last turn).
func (s *state) turnsLeft(seat games.Seat) (n, last, proposable int32) {
	first := s.turn
	if s.mover() != seat {
		first++
	}
	if first > s.p.maxTurns {
		return 0, 0, 0
	}
	n = (s.p.maxTurns-first)/2 + 1
	last = first + 2*(n-1)
	proposable = n
	if last == s.p.maxTurns {
		proposable--
	}
	return n, last, proposable
}

// share is what seat gets from a split in which P1 gives x of total to P2.
func share(seat games.Seat, x, total int64) int64 {
	if seat == P2 {
		return x
	}
	return total - x
}

// turnShares says how the turns divide between the players, e.g. "4 for each player".
func turnShares(maxTurns int32) string {
	p1, p2 := (maxTurns+1)/2, maxTurns/2
	switch {
	case p1 == p2:
		return fmt.Sprintf("%d for each player", p1)
	case p2 == 0:
		return "only P1 moves"
	}
	return fmt.Sprintf("%d for P1, %d for P2", p1, p2)
}
