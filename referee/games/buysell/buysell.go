// Package buysell implements the buyer-and-seller game of NegotiationArena
// (specs/negotiationarena.md): a seller (P1) holds one unit of an item, X, which costs it a
// private amount to produce; a buyer (P2) holds money, ZUP, and is privately willing to pay up to
// some amount for the item. They take turns proposing a price until one accepts the other's
// latest proposal, someone rejects, or the turns run out. The game plays on the shared
// bargaining engine (referee/games/bargain), which enforces the turn rules; this package reads
// prices, values deals, keeps each side's private value to itself and writes the briefing.
//
// Rules, as this package enforces them:
//
//   - The seller (seat 0) moves on odd turns and opens on turn 1 (the item is already on sale);
//     the buyer (seat 1) moves on even turns; turns 1 to max_turns (default 10).
//   - A proposal is a price p, written as an Allocation in which seat 0 gives {item: 1} and
//     seat 1 gives {currency: p}, 0 <= p <= budget. Either player may propose; each may make at
//     most max_proposals proposals (default max_turns/2 - 1, 0 = no limit). A proposal
//     replaces the mover's earlier one and declines the opponent's.
//   - accept takes the opponent's proposal of the turn just before: the sale is made at that
//     price. reject ends the game at once with no sale. There is no pass.
//   - Payoffs: with a sale at p, the seller gets p - cost and the buyer willingness - p; with
//     no sale (a rejection, or max_turns turns without acceptance), both get 0.
//   - The seller's cost and the buyer's willingness are private: each seat's view and briefing
//     hold its own value only; nothing either seat can see mentions the other's. The budget,
//     the item and the money are known to both.
//
// Parameters (parley.games.buysell.v1.Params) cover the published variants: fixed values; cost
// and willingness drawn per match from the seed (draw=true, uniformly from the ranges, which
// scale multiplies like every amount); every amount times scale; an over-valuing buyer (a
// large willingness); the "contrasting" values cost 60, willingness 40; and a buyer briefed to
// be self-interested.
//
// With draw=true the drawn values cannot be in the resolved params, since Resolve sees no seed:
// the match records them in two chance_drawn events right after match_started, each visible
// only to its own seat; Values recomputes them from the params and the seed, as NewState does.
//
// The default move, for a seat whose agent gives no usable answer, is reject.
package buysell

import (
	"fmt"
	"math/rand/v2"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"google.golang.org/protobuf/proto"
)

// Name is the game's name in the registry and in observations.
const Name = "buysell"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

// Seats.
const (
	Seller games.Seat = bargain.P1 // holds the item, moves first
	Buyer  games.Seat = bargain.P2 // holds the money
)

// roles is indexed by seat. An array, so that no caller can change it.
var roles = [2]string{"seller", "buyer"}

// drawStream separates the draws of this game from any other use of the match seed.
const drawStream = 0xb5e11

// New returns the buyer-and-seller game.
func New() games.Game { return game{} }

type game struct{}

// Info describes the game, its seats and every parameter (as Params declares them).
func (g game) Info() *gamev1.GameInfo {
	defaults, _ := g.Resolve(nil) // for the derived max_proposals; the suite checks it resolves
	return &gamev1.GameInfo{
		Name:         Name,
		Description:  "Buyer and seller: the seller (P1) has an item with a private cost, the buyer (P2) money and a private willingness to pay; they take turns proposing a price.",
		RulesVersion: RulesVersion,
		Seats:        bargain.SeatNames(),
		SeatRoles:    roles[:],
		Params:       games.ParamInfos(Name, defaults),
	}
}

// Resolve checks params and fills in the defaults: those Params declares, then max_proposals
// from max_turns. With draw=true cost and willingness stay unset: they are drawn per match
// (see Values). It refuses params meant for another game.
func (game) Resolve(gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	if err := drawnValuesGiven(gp.GetBuysell()); err != nil {
		return nil, err
	}
	out, err := games.FillParams(Name, gp)
	if err != nil {
		return nil, err
	}
	b := out.GetBuysell()
	if b.GetDraw() {
		b.Cost, b.Willingness = nil, nil
	}
	if b.MaxProposals == nil {
		b.MaxProposals = proto.Int32(bargain.DefaultMaxProposals(b.GetMaxTurns()))
	}
	if _, err := read(out); err != nil {
		return nil, err
	}
	return out, nil
}

// drawnValuesGiven refuses cost or willingness given with draw=true, which draws them.
func drawnValuesGiven(b *buysellv1.Params) error {
	if b.GetDraw() && (b.Cost != nil || b.Willingness != nil) {
		return fmt.Errorf("buysell: cost and willingness are drawn when draw=true; set cost_min, cost_max, willingness_min and willingness_max instead")
	}
	return nil
}

// NameTerms writes proposals in the game's own words, for transcripts (games.TermsNamer).
func (game) NameTerms(gp *matchv1.GameParams) func(*gamev1.Proposal) string {
	// A record's params may lack what the seats keep private (a spectator's copy): the words
	// need only the public ones, so the private ones take their defaults here.
	filled, err := games.FillParams(Name, gp)
	if err != nil {
		return nil
	}
	p, err := read(filled)
	if err != nil {
		return nil
	}
	return bargain.NameTerms[int64](&rules{p: p, budget: p.budget * p.scale})
}

// NewState starts a match with resolved params; the seed draws cost and willingness when
// params say so.
func (game) NewState(gp *matchv1.GameParams, seed uint64) (games.State, error) {
	p, err := read(gp)
	if err != nil {
		return nil, err
	}
	r := &rules{p: p, budget: p.budget * p.scale}
	r.cost, r.willingness = p.values(seed)
	r.text = [2]string{r.rulesText(Seller), r.rulesText(Buyer)}
	cfg := bargain.Config{
		Game:         Name,
		Title:        "buyer/seller",
		Roles:        roles,
		MaxTurns:     p.maxTurns,
		MaxProposals: p.maxProposals,
		Reject:       true,
	}
	if p.draw {
		// The record must say what was drawn; each value is the private business of its seat.
		cfg.Opening = []*eventsv1.MatchEvent{
			drawn("cost", Seller, r.cost, fmt.Sprintf("The seller's cost is drawn: %d %s.", r.cost, p.currency)),
			drawn("willingness", Buyer, r.willingness, fmt.Sprintf("The buyer's willingness to pay is drawn: %d %s.", r.willingness, p.currency)),
		}
	}
	return bargain.New[int64](cfg, r)
}

func drawn(what string, seat games.Seat, value int64, summary string) *eventsv1.MatchEvent {
	return &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_ChanceDrawn{ChanceDrawn: &eventsv1.ChanceDrawn{
		What: what, Seat: proto.Int32(seat), Value: proto.Int64(value), Summary: summary, VisibleTo: []int32{seat},
	}}}
}

// Values returns the seller's cost and the buyer's willingness to pay in a match with resolved
// params and seed, scaled: the fixed values, or those drawn from the seed when params set draw.
// It is how NewState finds them, so analyses of a record can recompute them from its
// MatchStarted.
func Values(gp *matchv1.GameParams, seed uint64) (cost, willingness int64, err error) {
	p, err := read(gp)
	if err != nil {
		return 0, 0, err
	}
	cost, willingness = p.values(seed)
	return cost, willingness, nil
}

// params are the resolved parameters, as plain values, before scaling.
type params struct {
	cost, willingness, budget, scale int64
	maxTurns, maxProposals           int32
	draw                             bool
	costMin, costMax, wMin, wMax     int64
	item, currency                   string
	selfInterested                   bool
}

// read takes resolved params as they are, checked against their declaration and the rules
// across fields.
func read(gp *matchv1.GameParams) (params, error) {
	if err := games.CheckResolved(Name, gp); err != nil {
		return params{}, err
	}
	b := gp.GetBuysell()
	if err := drawnValuesGiven(b); err != nil {
		return params{}, err
	}
	if !b.GetDraw() && (b.Cost == nil || b.Willingness == nil) {
		return params{}, fmt.Errorf("buysell: %w (cost and willingness are unset without draw): resolve them first", games.ErrNotResolved)
	}
	p := params{
		cost: b.GetCost(), willingness: b.GetWillingness(), budget: b.GetBudget(), scale: b.GetScale(),
		maxTurns: b.GetMaxTurns(), maxProposals: b.GetMaxProposals(), draw: b.GetDraw(),
		costMin: b.GetCostMin(), costMax: b.GetCostMax(), wMin: b.GetWillingnessMin(), wMax: b.GetWillingnessMax(),
		item: b.GetItem(), currency: b.GetCurrency(), selfInterested: b.GetSelfInterestedBuyer(),
	}
	switch {
	case p.costMin > p.costMax:
		return params{}, fmt.Errorf("buysell: cost_min (%d) must not exceed cost_max (%d)", p.costMin, p.costMax)
	case p.wMin > p.wMax:
		return params{}, fmt.Errorf("buysell: willingness_min (%d) must not exceed willingness_max (%d)", p.wMin, p.wMax)
	case p.item == p.currency:
		return params{}, fmt.Errorf("buysell: item and currency must differ, both are %q", p.item)
	}
	limit := bargain.MaxAmount / p.scale
	for _, a := range []struct {
		name string
		v    int64
	}{
		{"cost", p.cost}, {"willingness", p.willingness}, {"budget", p.budget},
		{"cost_min", p.costMin}, {"cost_max", p.costMax}, {"willingness_min", p.wMin}, {"willingness_max", p.wMax},
	} {
		if a.v > limit {
			return params{}, fmt.Errorf("buysell: %s times scale must be at most %d (2^53), got %d times %d", a.name, bargain.MaxAmount, a.v, p.scale)
		}
	}
	return p, nil
}

// values returns the scaled cost and willingness: fixed, or drawn from seed, cost first, each
// uniformly from its range times scale.
func (p params) values(seed uint64) (cost, willingness int64) {
	if !p.draw {
		return p.cost * p.scale, p.willingness * p.scale
	}
	rng := rand.New(rand.NewPCG(seed, drawStream))
	cost = uniform(rng, p.costMin*p.scale, p.costMax*p.scale)
	willingness = uniform(rng, p.wMin*p.scale, p.wMax*p.scale)
	return cost, willingness
}

// uniform draws uniformly from [lo, hi]; amounts are at most 2^53, so the span never overflows.
func uniform(rng *rand.Rand, lo, hi int64) int64 {
	return lo + rng.Int64N(hi-lo+1)
}
