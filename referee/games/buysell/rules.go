package buysell

import (
	"fmt"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"google.golang.org/protobuf/proto"
)

// match is the engine's state with buyer/seller terms: the price.
type match = bargain.Match[int64]

// rules are the game's hooks into the engine. Never changed once the match starts.
type rules struct {
	p params
	// cost, willingness and budget are the match's amounts, scaled (and drawn).
	cost, willingness, budget int64
	// text is the fixed part of each seat's briefing, written once per match.
	text [2]string
}

var _ bargain.Rules[int64] = (*rules)(nil)

// private is seat's private value: the seller's cost or the buyer's willingness to pay.
func (r *rules) private(seat games.Seat) int64 {
	if seat == Seller {
		return r.cost
	}
	return r.willingness
}

// Terms reads the price from a proposal: the seller gives exactly its one item, the buyer
// gives the price in money, at most the budget; nothing else changes hands.
func (r *rules) Terms(_ games.Seat, alloc *gamev1.Allocation) (int64, error) {
	gives, err := bargain.Gives(alloc)
	if err != nil {
		return 0, r.badTerms("%s", err)
	}
	for _, name := range bargain.SortedKeys(gives[Seller]) {
		amount := gives[Seller][name]
		switch {
		case name == r.p.currency:
			return 0, r.badTerms("the seller (P1) holds no %s; the buyer pays the price", r.p.currency)
		case name != r.p.item:
			return 0, r.noResource(name)
		case amount > 1:
			return 0, r.badTerms("the seller (P1) holds only 1 %s and cannot give %d", r.p.item, amount)
		}
	}
	var price int64
	for _, name := range bargain.SortedKeys(gives[Buyer]) {
		amount := gives[Buyer][name]
		switch {
		case name == r.p.item:
			return 0, r.badTerms("the buyer (P2) holds no %s; the seller gives it", r.p.item)
		case name != r.p.currency:
			return 0, r.noResource(name)
		case amount > r.budget:
			return 0, r.badTerms("the buyer (P2) holds only %d %s and cannot give %d", r.budget, r.p.currency, amount)
		}
		price = amount
	}
	if gives[Seller][r.p.item] != 1 {
		return 0, r.badTerms("the seller (P1) must give its 1 %s in every proposal", r.p.item)
	}
	return price, nil
}

func (r *rules) noResource(name string) error {
	return r.badTerms("there is no resource %q in this game; the resources are %s and %s", name, r.p.item, r.p.currency)
}

// badTerms refuses terms, explaining what a legal proposal looks like.
func (r *rules) badTerms(format string, args ...any) error {
	return games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS,
		"%s; a proposal is a price p with 0 <= p <= %d: seat 0 (the seller) gives {%q: 1} and seat 1 (the buyer) gives {%q: p}",
		fmt.Sprintf(format, args...), r.budget, r.p.item, r.p.currency)
}

// Bounds: the seller's item, exactly 1; the buyer's money, from 0 to the budget.
func (r *rules) Bounds(*match, games.Seat) []*gamev1.Bound {
	return []*gamev1.Bound{
		{Seat: Seller, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: r.p.item, Min: 1, Max: 1},
		{Seat: Buyer, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: r.p.currency, Min: 0, Max: r.budget},
	}
}

// payoff is seat's payoff from a sale at price (nil: no sale).
func (r *rules) payoff(seat games.Seat, price *int64) int64 {
	switch {
	case price == nil:
		return 0
	case seat == Seller:
		return *price - r.cost
	default:
		return r.willingness - *price
	}
}

// Payoffs: seller p - cost, buyer willingness - p; no sale, 0 each.
func (r *rules) Payoffs(price *int64) [2]float64 {
	return [2]float64{float64(r.payoff(Seller, price)), float64(r.payoff(Buyer, price))}
}

// Describe writes a price: "P1 sells 1 X to P2 for 55 ZUP".
func (r *rules) Describe(price int64) string {
	return fmt.Sprintf("P1 sells 1 %s to P2 for %d %s", r.p.item, price, r.p.currency)
}

// Result says whether there was a sale; never a payoff, which would tell each side the other's
// value.
func (r *rules) Result(price *int64) string {
	if price == nil {
		return "there is no sale and both get 0"
	}
	return r.Describe(*price)
}

// holdings returns what seat holds now: the item or the budget, until a sale moves them.
func (r *rules) holdings(m *match, seat games.Seat) map[string]int64 {
	item, money := [2]int64{1, 0}, [2]int64{0, r.budget}
	if price, ok := m.Deal(); ok {
		item, money = [2]int64{0, 1}, [2]int64{price, r.budget - price}
	}
	return map[string]int64{r.p.item: item[seat], r.p.currency: money[seat]}
}

// View holds seat's own private value and holdings, never the other's.
func (r *rules) View(m *match, seat games.Seat, obs *agentv1.Observation) {
	v := &buysellv1.View{
		Role:          roles[seat],
		PrivateValue:  r.private(seat),
		Holdings:      r.holdings(m, seat),
		Item:          r.p.item,
		Currency:      r.p.currency,
		MaxTurns:      r.p.maxTurns,
		MaxProposals:  r.p.maxProposals,
		ProposalsLeft: m.ProposalsLeft(seat),
		TurnsLeft:     m.TurnsLeft(),
	}
	if st, ok := m.Standing(); ok && seat == m.Mover() {
		v.StandingPrice = proto.Int64(st.Terms)
	}
	if own, ok := m.Own(seat); ok {
		v.OwnPrice = proto.Int64(own.Terms)
	}
	obs.View = &agentv1.Observation_Buysell{Buysell: v}
}
