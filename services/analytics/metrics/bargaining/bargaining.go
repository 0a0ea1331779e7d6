// Package bargaining computes the per-match metrics of the two-player alternating-offer games
// of specs/negotiationarena.md: the multi-turn ultimatum, buyer and seller, and resource
// exchange. Every value is a pure function of the match record.
//
// The common values of every game (agreement, turns, payoff, faulted, refused_actions: see
// metrics.NewRow) are not repeated here; refused_actions is the count of refused (invalid)
// moves per seat that the tournament tables ask for.
//
// Values of all three games:
//
//   - turns_to_agreement (whole match): the turn on which the accepted proposal was accepted.
//     Only present when the match ended in an agreement, so its mean over matches is the mean
//     over agreements.
//   - proposals (per seat): proposals the seat made (default moves are never proposals).
//   - default_moves (per seat): moves the referee played for the seat because its agent gave
//     no usable answer.
//   - opening_proposal (per seat): the seat's first proposal in the game's natural unit, below.
//     Absent for a seat that never proposed.
//
// The natural unit of a proposal:
//
//   - ultimatum: x, the dollars (the game's currency) P1 hands to P2, whichever seat proposes.
//     P1's opening_proposal is its opening offer to P2; P2's is what it asks for itself.
//     Also opening_share (per seat): x / total, and total (whole match).
//   - buysell: the price p, in the game's currency.
//   - trading: the proposer's net gain in resource count, the units it would receive minus
//     the units it would give (with the default goal, the payoff the proposal would give it).
//
// Buyer and seller also records the whole price path, for anchoring and split-the-difference
// analyses across matches (specs/negotiationarena.md: prices numbered p1, p2, ...; odd = the
// seller's, even = the buyer's, since neither may pass):
//
//   - price_1, price_2, ... (whole match): every proposed price in the order made.
//   - price_count: how many prices were proposed.
//   - first_price: price_1. last_price: the last price proposed.
//   - final_price: the price of the sale, only when the match ended in one.
//   - bad_counter_offer: 1 when the buyer's first counter is above the seller's opening
//     (p2 > p1), else 0; absent with fewer than two prices. Its mean is P(p2 > p1).
//   - seller_payoff, buyer_payoff: the payoffs of seat 0 (seller) and seat 1 (buyer).
//   - cost, willingness, budget: the match's private values and the buyer's money, scaled
//     (drawn values included), recomputed from the params and the seed.
//   - budget_share: final_price / budget, only with a sale ("share of budget paid").
package bargaining

import (
	"fmt"
	"strconv"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/referee/games/trading"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Names of the values this family adds.
const (
	ValueTurnsToAgreement = "turns_to_agreement"
	ValueProposals        = "proposals"
	ValueDefaultMoves     = "default_moves"
	ValueOpeningProposal  = "opening_proposal"
	ValueOpeningShare     = "opening_share"
	ValueTotal            = "total"
	ValuePricePrefix      = "price_" // price_1, price_2, ...
	ValuePriceCount       = "price_count"
	ValueFirstPrice       = "first_price"
	ValueLastPrice        = "last_price"
	ValueFinalPrice       = "final_price"
	ValueBadCounterOffer  = "bad_counter_offer"
	ValueSellerPayoff     = "seller_payoff"
	ValueBuyerPayoff      = "buyer_payoff"
	ValueCost             = "cost"
	ValueWillingness      = "willingness"
	ValueBudget           = "budget"
	ValueBudgetShare      = "budget_share"
)

// PriceName returns the name of the k-th price of a buyer/seller match (1-based): "price_k".
func PriceName(k int) string { return ValuePricePrefix + strconv.Itoa(k) }

// Family is the bargaining games' metrics.
type Family struct{}

// New returns the family.
func New() Family { return Family{} }

var _ metrics.Family = Family{}

// Games lists the games whose records it reads.
func (Family) Games() []string { return []string{ultimatum.Name, buysell.Name, trading.Name} }

// Texts says the family reads no free text: moves, messages and outcomes only.
func (Family) Texts() metrics.Texts { return 0 }

// proposal is one proposal of the record, read into the game's unit.
type proposal struct {
	seat   int32
	amount float64
}

// Match computes the family's values of one finished match.
func (Family) Match(events []*eventsv1.MatchEvent) ([]metrics.Value, error) {
	started, ended, err := metrics.Finished(events)
	if err != nil {
		return nil, err
	}
	game := started.GetGame()
	params, err := resolve(game, started.GetParams())
	if err != nil {
		return nil, err
	}
	read := reader(game, params)
	var (
		props        []proposal
		acceptTurn   int32
		accepted     bool
		defaultMoves [2]int
	)
	for _, ev := range events {
		taken := ev.GetActionTaken()
		if taken == nil {
			continue
		}
		seat := taken.GetSeat()
		if seat != 0 && seat != 1 {
			return nil, fmt.Errorf("bargaining: seq %d: action of seat %d in a two-player game", ev.GetSeq(), seat)
		}
		if taken.GetDefaultReason() != "" {
			defaultMoves[seat]++
		}
		move := taken.GetAction().GetMove()
		switch {
		case move.GetPropose() != nil:
			amount, err := read(seat, move.GetPropose().GetProposal())
			if err != nil {
				return nil, fmt.Errorf("bargaining: seq %d: %w", ev.GetSeq(), err)
			}
			props = append(props, proposal{seat: seat, amount: amount})
		case move.GetAccept() != nil:
			acceptTurn, accepted = ev.GetTurn(), true
		}
	}
	agreement := ended.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_AGREEMENT

	var out []metrics.Value
	whole := func(name string, v float64) {
		out = append(out, metrics.Value{Name: name, Seat: metrics.WholeMatch, Value: v})
	}
	if agreement && accepted {
		whole(ValueTurnsToAgreement, float64(acceptTurn))
	}
	var count [2]int
	for _, p := range props {
		count[p.seat]++
	}
	for seat := range int32(2) {
		out = append(out,
			metrics.Value{Name: ValueProposals, Seat: seat, Value: float64(count[seat])},
			metrics.Value{Name: ValueDefaultMoves, Seat: seat, Value: float64(defaultMoves[seat])})
		for _, p := range props {
			if p.seat == seat {
				out = append(out, metrics.Value{Name: ValueOpeningProposal, Seat: seat, Value: p.amount})
				break
			}
		}
	}

	switch game {
	case ultimatum.Name:
		total := float64(params.GetUltimatum().GetTotal())
		whole(ValueTotal, total)
		if total > 0 {
			for _, v := range out {
				if v.Name == ValueOpeningProposal {
					out = append(out, metrics.Value{Name: ValueOpeningShare, Seat: v.Seat, Value: v.Value / total})
				}
			}
		}
	case buysell.Name:
		vals, err := priceValues(params, started.GetSeed(), ended, props, agreement && accepted)
		if err != nil {
			return nil, err
		}
		out = append(out, vals...)
	}
	return out, nil
}

// priceValues are buyer/seller's price path and its summaries.
func priceValues(params *matchv1.GameParams, seed uint64, ended *eventsv1.MatchEnded, props []proposal, sale bool) ([]metrics.Value, error) {
	var out []metrics.Value
	whole := func(name string, v float64) {
		out = append(out, metrics.Value{Name: name, Seat: metrics.WholeMatch, Value: v})
	}
	for k, p := range props {
		whole(PriceName(k+1), p.amount)
	}
	whole(ValuePriceCount, float64(len(props)))
	if len(props) > 0 {
		whole(ValueFirstPrice, props[0].amount)
		whole(ValueLastPrice, props[len(props)-1].amount)
	}
	if len(props) > 1 {
		whole(ValueBadCounterOffer, b2f(props[1].amount > props[0].amount))
	}
	payoffs := ended.GetOutcome().GetPayoffs()
	if len(payoffs) == 2 {
		whole(ValueSellerPayoff, payoffs[buysell.Seller])
		whole(ValueBuyerPayoff, payoffs[buysell.Buyer])
	}
	cost, willingness, err := buysell.Values(params, seed)
	if err != nil {
		return nil, fmt.Errorf("bargaining: buysell params: %w", err)
	}
	budget := float64(params.GetBuysell().GetBudget() * max(params.GetBuysell().GetScale(), 1))
	whole(ValueCost, float64(cost))
	whole(ValueWillingness, float64(willingness))
	whole(ValueBudget, budget)
	if sale && len(props) > 0 {
		final := props[len(props)-1].amount
		whole(ValueFinalPrice, final)
		if budget > 0 {
			whole(ValueBudgetShare, final/budget)
		}
	}
	return out, nil
}

// resolve fills in the defaults of a record's params (a real record has them resolved
// already; a hand-written one may not), refusing a game of another family.
func resolve(game string, gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	var g games.Game
	switch game {
	case ultimatum.Name:
		g = ultimatum.New()
	case buysell.Name:
		g = buysell.New()
	case trading.Name:
		g = trading.New()
	default:
		return nil, fmt.Errorf("bargaining: game %q is not one of ultimatum, buysell, trading", game)
	}
	p, err := g.Resolve(gp)
	if err != nil {
		return nil, fmt.Errorf("bargaining: params: %w", err)
	}
	return p, nil
}

// reader returns the function that reads a proposal of game into its natural unit.
func reader(game string, params *matchv1.GameParams) func(seat int32, p *gamev1.Proposal) (float64, error) {
	gives := func(p *gamev1.Proposal) ([2]map[string]int64, error) {
		g, err := bargain.Gives(p.GetAllocation())
		if err != nil {
			return g, fmt.Errorf("proposal: %w", err)
		}
		return g, nil
	}
	switch game {
	case ultimatum.Name:
		currency := params.GetUltimatum().GetCurrency()
		return func(_ int32, p *gamev1.Proposal) (float64, error) {
			g, err := gives(p)
			if err != nil {
				return 0, err
			}
			return float64(g[ultimatum.P1][currency]), nil
		}
	case buysell.Name:
		currency := params.GetBuysell().GetCurrency()
		return func(_ int32, p *gamev1.Proposal) (float64, error) {
			g, err := gives(p)
			if err != nil {
				return 0, err
			}
			return float64(g[buysell.Buyer][currency]), nil
		}
	default: // trading; resolve refused every other game
		return func(seat int32, p *gamev1.Proposal) (float64, error) {
			g, err := gives(p)
			if err != nil {
				return 0, err
			}
			return float64(sum(g[1-seat]) - sum(g[seat])), nil
		}
	}
}

func sum(m map[string]int64) int64 {
	var s int64
	for _, v := range m {
		s += v
	}
	return s
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
