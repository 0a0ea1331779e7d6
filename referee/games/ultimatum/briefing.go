package ultimatum

import (
	"fmt"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
)

// Briefing is the plain-language account of the rules and of seat's situation, complete
// enough that a person or a language model can act on it alone. The published study found
// models lose track of their holdings, the turn and the proposals left, so each is restated.
// The text is a pure function of the state: same state, same bytes.
func (r *rules) Briefing(m *match, seat games.Seat) string {
	return games.Brief(r.text[seat]().rules, "Your situation",
		func(line games.BriefingLine) { r.situation(m, seat, line) },
		func(line games.BriefingLine) { r.options(m, seat, line) })
}

// newSeatText writes the parts of seat's briefing that depend only on the parameters and the
// seat, once per match (see NewState).
func newSeatText(p params, seat games.Seat) seatText {
	opp := seatNames[1-seat]
	c, total, held := p.currency, p.total, p.holdings()
	return seatText{
		rules: rulesText(p, seat),
		holds: games.Verbatim(fmt.Sprintf("- You hold %d %s; %s holds %d.", held[seat], c, opp, held[1-seat])),
		propose: games.Verbatim(fmt.Sprintf("- propose: choose x with 0 <= x <= %d, the %s P1 gives to P2 (in the action: a proposal whose allocation has seat 0 giving {%q: x}). If %s accepts it on the next turn, P1 gets %d - x and P2 gets x.",
			total, c, c, opp, total)),
		waiting: games.Verbatim(fmt.Sprintf("- Nothing: it is %s's turn.", opp)),
	}
}

// rulesText is the rules section of seat's briefing.
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
	line("- Players take turns: P1 moves on odd turns, P2 on even turns, starting with P1 on turn 1. The game lasts at most %d %s (%s).", maxTurns, bargain.Plural(int64(maxTurns), "turn", "turns"), bargain.TurnShares(maxTurns))
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
func (r *rules) situation(m *match, seat games.Seat, line bargain.Line) {
	opp := seatNames[1-seat]
	c, total := r.p.currency, r.p.total
	held := r.held(m)
	if m.Over() {
		line("- The game is over. %s", m.Summary())
		line("- You end with %d %s; %s ends with %d.", held[seat], c, opp, held[1-seat])
		return
	}
	m.TurnLines(seat, line)
	line(r.text[seat]().holds)

	st, standing := m.Standing()
	if seat == m.Mover() {
		if standing {
			line("- %s's proposal from turn %d stands: %s. If you accept it, you get %d %s and %s gets %d.",
				opp, st.Turn, r.Describe(st.Terms), share(seat, st.Terms, total), c, opp, share(1-seat, st.Terms, total))
		} else {
			line("- There is no proposal for you to accept.")
		}
		if o, ok := m.Own(seat); ok {
			line("- Your latest proposal (turn %d: %s) was declined when %s proposed on turn %d.", o.Turn, r.Describe(o.Terms), opp, st.Turn)
		}
		return
	}
	if standing {
		answers := "accept it, reject, or make a proposal of its own"
		if m.IsLastTurn() {
			answers = "only accept it or reject"
		}
		line("- Your proposal from turn %d stands: %s. %s may %s; if it accepts, you get %d %s and %s gets %d.",
			st.Turn, r.Describe(st.Terms), opp, answers, share(seat, st.Terms, total), c, opp, share(1-seat, st.Terms, total))
	}
}

// options lists the moves seat may make now, with their effect.
func (r *rules) options(m *match, seat games.Seat, line bargain.Line) {
	opp := seatNames[1-seat]
	c, total := r.p.currency, r.p.total
	switch {
	case m.Over():
		line("- Nothing: the game is over.")
		return
	case seat != m.Mover():
		line(r.text[seat]().waiting)
		return
	}
	st, _ := m.Standing()
	for _, k := range m.LegalMoves(seat) {
		switch k {
		case gamev1.MoveKind_MOVE_KIND_PROPOSE:
			line(r.text[seat]().propose)
		case gamev1.MoveKind_MOVE_KIND_ACCEPT:
			line("- accept: take %s's proposal from turn %d; you get %d %s, %s gets %d, and the game ends.",
				opp, st.Turn, share(seat, st.Terms, total), c, opp, share(1-seat, st.Terms, total))
		case gamev1.MoveKind_MOVE_KIND_REJECT:
			line("- reject: end the game now with no deal; both get 0.")
		}
	}
}

// share is what seat gets from a split in which P1 gives x of total to P2.
func share(seat games.Seat, x, total int64) int64 {
	if seat == P2 {
		return x
	}
	return total - x
}
