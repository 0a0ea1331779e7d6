package buysell

import (
	"fmt"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
)

// Briefing is the plain-language account of the rules and of seat's situation. It states seat's
// own private value and never the other's. A pure function of the state.
func (r *rules) Briefing(m *match, seat games.Seat) string {
	return games.Brief(r.text[seat], "Your situation",
		func(line games.BriefingLine) { r.situation(m, seat, line) },
		func(line games.BriefingLine) { r.options(m, seat, line) })
}

// names returns "P1, the seller" style names of seat and of its opponent.
func names(seat games.Seat) (me, opp string) {
	return bargain.SeatName(seat), bargain.SeatName(1 - seat)
}

// rulesText is the part of the briefing that depends only on the parameters and the seat,
// written once per match. It holds no private value: the situation states the seat's own.
func (r *rules) rulesText(seat games.Seat) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	me, opp := names(seat)
	item, c, budget, maxTurns := r.p.item, r.p.currency, r.budget, r.p.maxTurns

	line("You are %s, the %s, in a two-player bargaining game between a seller and a buyer, against %s, the %s.", me, roles[seat], opp, roles[1-seat])
	line("")
	line("Rules")
	line("- P1, the seller, holds 1 %s and wants to sell it; P2, the buyer, holds %d %s. Both players know this.", item, budget, c)
	line("- Each player has a private value that only it knows: the seller's cost of producing the %s, and the buyer's willingness to pay for it. The referee never tells either player the other's value.", item)
	line("- A proposal names a price p, a whole number of %s with 0 <= p <= %d: the seller gives the %s and the buyer gives p %s. Either player may propose.", c, budget, item, c)
	line("- Players take turns: P1 moves on odd turns, P2 on even turns, starting with P1 on turn 1 (the %s is already on sale). The game lasts at most %d %s (%s).", item, maxTurns, bargain.Plural(int64(maxTurns), "turn", "turns"), bargain.TurnShares(maxTurns))
	line("- On a turn, the player to move does one of these:")
	line("  - propose: put a price on the table. It replaces the mover's own earlier proposal and declines the opponent's.")
	line("  - accept: take the opponent's proposal from the turn just before. The sale is made at that price and the game ends.")
	line("  - reject: end the game at once with no sale.")
	line("- Only the opponent's latest proposal, made on the turn just before, can be accepted; turn 1 has nothing to accept.")
	if n := r.p.maxProposals; n > 0 {
		line("- Each player may make at most %d %s; after that it may only accept or reject.", n, bargain.Plural(int64(n), "proposal", "proposals"))
	}
	line("- If the game ends without an accepted proposal (someone rejects, or %d turns pass), there is no sale and both get 0.", maxTurns)
	line("- With a sale at price p, the seller's payoff is p minus its cost and the buyer's payoff is its willingness to pay minus p. Your goal is to make your own payoff as large as you can.")
	if seat == Buyer && r.p.selfInterested {
		line("- Be self-interested: you are here to get the best deal for yourself. Do not try to be fair to the seller or to please it; only your own payoff counts.")
	}
	line("- This is the only game between you and %s: there is no later game, and nothing carries over.", opp)
	line("- If your agent fails to give a usable answer, you reject.")
	line("- %s sees your moves and any message you send. Your private reasoning and notes are never shown to %s.", opp, opp)
	line("")
	return b.String()
}

// valueText states seat's own private value and what a sale at price p gives it.
func (r *rules) valueText(seat games.Seat) string {
	item, c := r.p.item, r.p.currency
	if seat == Seller {
		return fmt.Sprintf("You are the seller. Producing the %s cost you %d %s; only you know this. A sale at price p gives you p - %d, so any price below %d loses you %s; with no sale you get 0.",
			item, r.cost, c, r.cost, r.cost, c)
	}
	return fmt.Sprintf("You are the buyer. You are willing to pay up to %d %s for the %s; only you know this. Buying at price p gives you %d - p, so any price above %d loses you %s; with no sale you get 0.",
		r.willingness, c, item, r.willingness, r.willingness, c)
}

// priceText describes a price and what it would give seat: "a price of 55 ZUP; your payoff
// would be 15".
func (r *rules) priceText(seat games.Seat, price int64) string {
	return fmt.Sprintf("a price of %d %s, which would give you a payoff of %d", price, r.p.currency, r.payoff(seat, &price))
}

// situation restates where the game stands for seat.
func (r *rules) situation(m *match, seat games.Seat, line bargain.Line) {
	_, opp := names(seat)
	line("- %s", r.valueText(seat))
	if m.Over() {
		line("- The game is over. %s", m.Summary())
		price, sold := m.Deal()
		if sold {
			line("- Your payoff is %d.", r.payoff(seat, &price))
		} else {
			line("- Your payoff is 0: there was no sale.")
		}
		line("- You hold %s.", holdingsText(r.holdings(m, seat)))
		return
	}
	m.TurnLines(seat, line)
	line("- You hold %s.", holdingsText(r.holdings(m, seat)))

	st, standing := m.Standing()
	if seat == m.Mover() {
		if standing {
			line("- %s's proposal from turn %d stands: %s.", opp, st.Turn, r.priceText(seat, st.Terms))
		} else {
			line("- There is no proposal for you to accept.")
		}
		if o, ok := m.Own(seat); ok && standing {
			line("- Your latest proposal (turn %d: a price of %d %s) was declined when %s proposed on turn %d.", o.Turn, o.Terms, r.p.currency, opp, st.Turn)
		}
		return
	}
	if standing {
		answers := "accept it, reject, or make a proposal of its own"
		if m.ProposalsLeft(1-seat) == 0 {
			answers = "only accept it or reject"
		}
		line("- Your proposal from turn %d stands: %s. %s may %s.", st.Turn, r.priceText(seat, st.Terms), opp, answers)
	}
}

// options lists the moves seat may make now, with their effect.
func (r *rules) options(m *match, seat games.Seat, line bargain.Line) {
	_, opp := names(seat)
	item, c := r.p.item, r.p.currency
	switch {
	case m.Over():
		line("- Nothing: the game is over.")
		return
	case seat != m.Mover():
		line("- Nothing: it is %s's turn.", opp)
		return
	}
	st, _ := m.Standing()
	gain := fmt.Sprintf("p - %d", r.cost)
	if seat == Buyer {
		gain = fmt.Sprintf("%d - p", r.willingness)
	}
	for _, k := range m.LegalMoves(seat) {
		switch k {
		case gamev1.MoveKind_MOVE_KIND_PROPOSE:
			then := fmt.Sprintf("If %s accepts it on the next turn, the %s is sold for p %s and your payoff is %s.", opp, item, c, gain)
			if m.IsLastTurn() {
				then = "This is the last turn, so no one can accept it: the game ends with no sale."
			}
			line("- propose: choose a price p with 0 <= p <= %d (in the action: a proposal whose allocation has seat 0 giving {%q: 1} and seat 1 giving {%q: p}). %s",
				r.budget, item, c, then)
		case gamev1.MoveKind_MOVE_KIND_ACCEPT:
			line("- accept: take %s's proposal from turn %d; the %s is sold for %d %s, your payoff is %d, and the game ends.",
				opp, st.Turn, item, st.Terms, c, r.payoff(seat, &st.Terms))
		case gamev1.MoveKind_MOVE_KIND_REJECT:
			line("- reject: end the game now with no sale; both get 0.")
		}
	}
}

// holdingsText writes holdings as "1 X" or "45 ZUP and 1 X", sorted by name, zero amounts left
// out.
func holdingsText(h map[string]int64) string {
	var parts []string
	for _, k := range bargain.SortedKeys(h) {
		if h[k] != 0 {
			parts = append(parts, fmt.Sprintf("%d %s", h[k], k))
		}
	}
	return bargain.AndList(parts)
}
