package trading

import (
	"fmt"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
)

// Briefing is the plain-language account of the rules and of seat's situation. It states
// seat's own holdings and goal and never the opponent's. A pure function of the state.
func (r *rules) Briefing(m *match, seat games.Seat) string {
	return games.Brief(r.text[seat], "Your situation",
		func(line games.BriefingLine) { r.situation(m, seat, line) },
		func(line games.BriefingLine) { r.options(m, seat, line) })
}

// rulesText is the part of the briefing that depends only on the parameters and the seat,
// written once per match. Of the goals and holdings it states only seat's own.
func (r *rules) rulesText(seat games.Seat) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	me, opp := bargain.SeatName(seat), bargain.SeatName(1-seat)
	maxTurns := r.p.maxTurns
	res := bargain.AndList(r.resources)

	line("You are %s in a two-player bargaining game, a resource exchange, against %s.", me, opp)
	line("")
	line("Rules")
	line("- The resources in play are %s. Each player holds some of them and has a goal. Each sees only its own holdings and goal, never the other's; a player may tell the other about them in messages, truthfully or not.", res)
	line("- A proposal is a trade: what P1 gives P2 and what P2 gives P1, each a set of whole amounts of resources, e.g. \"P1 gives {%s: 5}; P2 gives {%s: 5}\"; either side may be empty. Either player may propose.", r.resources[0], r.resources[len(r.resources)-1])
	line("- No one can give more of a resource than it holds, or a resource it does not have: the referee refuses such a proposal. When you ask %s for more than it holds, the referee tells you only that it does not hold that much.", opp)
	line("- Players take turns: P1 moves on odd turns, P2 on even turns, starting with P1 on turn 1. The game lasts at most %d %s (%s).", maxTurns, bargain.Plural(int64(maxTurns), "turn", "turns"), bargain.TurnShares(maxTurns))
	line("- On a turn, the player to move does one of these:")
	line("  - propose: put a trade on the table. It replaces the mover's own earlier proposal and declines the opponent's.")
	line("  - accept: take the opponent's proposal from the turn just before. The trade is carried out and the game ends.")
	line("  - pass: wait. No proposal, no acceptance; play goes on, and the opponent's proposal can no longer be accepted.")
	line("- Only the opponent's latest proposal, made on the turn just before, can be accepted; turn 1 has nothing to accept.")
	if n := r.p.maxProposals; n > 0 {
		line("- Each player may make at most %d %s; after that it may only accept or pass.", n, bargain.Plural(int64(n), "proposal", "proposals"))
	}
	line("- If no proposal is accepted within the %d turns, nothing changes hands.", maxTurns)
	line("- Your goal: %s", r.goalText(seat))
	line("- This is the only game between you and %s: there is no later game, and nothing carries over.", opp)
	line("- If your agent fails to give a usable answer, you pass.")
	line("- %s sees your moves and any message you send. Your private reasoning and notes are never shown to %s.", opp, opp)
	line("")
	return b.String()
}

// goalText states seat's goal and how its payoff is counted.
func (r *rules) goalText(seat games.Seat) string {
	goal := r.p.goals[seat]
	if len(goal) == 0 {
		start := total(r.p.holdings[seat])
		return fmt.Sprintf("end the game with as many resources in total as possible. Your payoff is your total count of resources at the end minus your total at the start (%d): a trade gains you what you receive minus what you give.", start)
	}
	var parts []string
	for _, res := range bargain.SortedKeys(goal) {
		parts = append(parts, fmt.Sprintf("%d %s", goal[res], res))
	}
	return fmt.Sprintf("end the game holding at least %s. Your payoff is 1 if you do and 0 if you do not; nothing else counts.", bargain.AndList(parts))
}

// holdingsText writes holdings as "25 X and 5 Y", every resource in play included.
func (r *rules) holdingsText(h map[string]int64) string {
	parts := make([]string, len(r.resources))
	for i, res := range r.resources {
		parts[i] = fmt.Sprintf("%d %s", h[res], res)
	}
	return bargain.AndList(parts)
}

// outcomeText says what carrying out t would leave seat with, and its payoff.
func (r *rules) outcomeText(seat games.Seat, t *trade) string {
	h := r.after(seat, t)
	return fmt.Sprintf("you would hold %s, for a payoff of %d", r.holdingsText(h), r.payoff(seat, h))
}

// situation restates where the game stands for seat.
func (r *rules) situation(m *match, seat games.Seat, line bargain.Line) {
	opp := bargain.SeatName(1 - seat)
	h := r.holdings(m, seat)
	if m.Over() {
		line("- The game is over. %s", m.Summary())
		line("- You hold %s; your payoff is %d.", r.holdingsText(h), r.payoff(seat, h))
		return
	}
	line("- You hold %s (%d in all). Your payoff if nothing changes hands: %d.", r.holdingsText(h), total(h), r.payoff(seat, h))
	m.TurnLines(seat, line)
	st, standing := m.Standing()
	if seat == m.Mover() {
		if standing {
			line("- %s's proposal from turn %d stands: %s. If you accept it, %s.", opp, st.Turn, r.Describe(st.Terms), r.outcomeText(seat, &st.Terms))
		} else {
			line("- There is no proposal for you to accept.")
		}
		if o, ok := m.Own(seat); ok && o.Turn == m.Turn()-2 {
			what := fmt.Sprintf("was declined when %s proposed on turn %d", opp, m.Turn()-1)
			if !standing {
				what = fmt.Sprintf("was not accepted: %s passed on turn %d", opp, m.Turn()-1)
			}
			line("- Your latest proposal (turn %d: %s) %s.", o.Turn, r.Describe(o.Terms), what)
		}
		return
	}
	if standing {
		answers := "accept it, pass, or make a proposal of its own"
		if m.ProposalsLeft(1-seat) == 0 {
			answers = "only accept it or pass"
		}
		line("- Your proposal from turn %d stands: %s. %s may %s; if it accepts, %s.", st.Turn, r.Describe(st.Terms), opp, answers, r.outcomeText(seat, &st.Terms))
	}
}

// options lists the moves seat may make now, with their effect.
func (r *rules) options(m *match, seat games.Seat, line bargain.Line) {
	opp := bargain.SeatName(1 - seat)
	switch {
	case m.Over():
		line("- Nothing: the game is over.")
		return
	case seat != m.Mover():
		line("- Nothing: it is %s's turn.", opp)
		return
	}
	st, _ := m.Standing()
	for _, k := range m.LegalMoves(seat) {
		switch k {
		case gamev1.MoveKind_MOVE_KIND_PROPOSE:
			then := fmt.Sprintf("If %s accepts it on the next turn, the trade is carried out.", opp)
			if m.IsLastTurn() {
				then = "This is the last turn, so no one can accept it: the game ends with nothing changing hands."
			}
			line("- propose: choose what each side gives (in the action: a proposal whose allocation has a share for seat %d, you, giving {resource: amount, ...} and one for seat %d, %s, likewise). You can give up to %s; you cannot see what %s holds. %s",
				seat, 1-seat, opp, r.holdingsText(r.p.holdings[seat]), opp, then)
		case gamev1.MoveKind_MOVE_KIND_ACCEPT:
			line("- accept: take %s's proposal from turn %d; the trade is carried out, %s, and the game ends.", opp, st.Turn, r.outcomeText(seat, &st.Terms))
		case gamev1.MoveKind_MOVE_KIND_PASS:
			if m.IsLastTurn() {
				line("- pass: make no move; this is the last turn, so the game ends with nothing changing hands.")
			} else if _, ok := m.Standing(); ok {
				line("- pass: wait; play goes on, and %s's proposal can no longer be accepted.", opp)
			} else {
				line("- pass: wait; play goes on.")
			}
		}
	}
}
