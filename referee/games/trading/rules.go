package trading

import (
	"fmt"
	"maps"
	"math"
	"slices"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
)

// trade is a proposal's terms: what each seat gives the other, zero amounts left out. Never
// changed once made.
type trade struct {
	gives [2]map[string]int64
}

// match is the engine's state with trades as terms.
type match = bargain.Match[trade]

// rules are the game's hooks into the engine. Never changed once the match starts.
type rules struct {
	p         params
	resources []string // in play, sorted
	// text is the fixed part of each seat's briefing, written once per match.
	text [2]string
}

var _ bargain.Rules[trade] = (*rules)(nil)

// Terms reads a trade and checks that each side gives only resources in play that it holds.
func (r *rules) Terms(mover games.Seat, alloc *gamev1.Allocation) (trade, error) {
	gives, err := bargain.Gives(alloc)
	if err != nil {
		return trade{}, r.badTerms("%s", err)
	}
	for _, seat := range []games.Seat{bargain.P1, bargain.P2} {
		name := bargain.SeatName(seat)
		for _, res := range bargain.SortedKeys(gives[seat]) {
			amount, held := gives[seat][res], r.p.holdings[seat][res]
			switch {
			case !slices.Contains(r.resources, res):
				return trade{}, r.badTerms("there is no resource %q in this game; the resources are %s", res, bargain.AndList(r.resources))
			case amount <= held:
				continue
			case seat != mover:
				// Say no more than that: the opponent's holdings are private.
				return trade{}, r.badTerms("%s does not hold %d %s to give (you cannot see what %s holds; ask for less, or ask in a message)", name, amount, res, name)
			case held == 0:
				return trade{}, r.badTerms("you (%s) have no %s to give", name, res)
			default:
				return trade{}, r.badTerms("you (%s) hold only %d %s and cannot give %d", name, held, res, amount)
			}
		}
	}
	return trade{gives: gives}, nil
}

// badTerms refuses terms, explaining what a legal proposal looks like.
func (r *rules) badTerms(format string, args ...any) error {
	return games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS,
		"%s; a proposal is a trade in which seat 0 (P1) gives {resource: amount, ...} and seat 1 (P2) gives {resource: amount, ...}, with resources among %s and neither side giving more than it holds",
		fmt.Sprintf(format, args...), bargain.AndList(r.resources))
}

// Bounds: the mover's own side up to what it holds; the opponent's side, whose holdings the
// mover cannot see, with no known upper limit (see the package doc).
func (r *rules) Bounds(_ *match, mover games.Seat) []*gamev1.Bound {
	own := r.p.holdings[mover]
	bounds := make([]*gamev1.Bound, 0, 2*len(r.resources))
	for _, res := range r.resources {
		bounds = append(bounds, &gamev1.Bound{Seat: mover, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: res, Max: own[res]})
	}
	for _, res := range r.resources {
		bounds = append(bounds, &gamev1.Bound{Seat: 1 - mover, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: res,
			Max: math.MaxInt64, MaxUnknown: true})
	}
	return bounds
}

// after returns seat's holdings once deal is carried out (nil: the starting holdings), as a
// fresh map.
func (r *rules) after(seat games.Seat, deal *trade) map[string]int64 {
	h := maps.Clone(r.p.holdings[seat])
	if deal == nil {
		return h
	}
	for res, v := range deal.gives[seat] {
		h[res] -= v
	}
	for res, v := range deal.gives[1-seat] {
		h[res] += v
	}
	return h
}

// payoff is seat's payoff holding h at the end: the gain in total count, or for a
// minimum-holdings goal 1 when every minimum is met, else 0.
func (r *rules) payoff(seat games.Seat, h map[string]int64) int64 {
	goal := r.p.goals[seat]
	if len(goal) == 0 {
		return total(h) - total(r.p.holdings[seat])
	}
	for res, least := range goal {
		if h[res] < least {
			return 0
		}
	}
	return 1
}

func total(h map[string]int64) int64 {
	var n int64
	for _, v := range h {
		n += v
	}
	return n
}

// Payoffs values the holdings at the end by each seat's goal.
func (r *rules) Payoffs(deal *trade) [2]float64 {
	return [2]float64{
		float64(r.payoff(bargain.P1, r.after(bargain.P1, deal))),
		float64(r.payoff(bargain.P2, r.after(bargain.P2, deal))),
	}
}

// Describe writes a trade the way the spec does: "P1 gives {X: 10}; P2 gives {Y: 10}".
func (r *rules) Describe(t trade) string {
	return fmt.Sprintf("P1 gives %s; P2 gives %s", bargain.Bundle(t.gives[bargain.P1]), bargain.Bundle(t.gives[bargain.P2]))
}

// Result says what changes hands; never holdings or payoffs, which are private.
func (r *rules) Result(deal *trade) string {
	if deal == nil {
		return "nothing changes hands"
	}
	return r.Describe(*deal)
}

// allocation writes a trade as the contract's Allocation, one share per seat.
func allocation(t trade) *gamev1.Allocation {
	return &gamev1.Allocation{Shares: []*gamev1.SeatShare{
		{Seat: bargain.P1, Gives: maps.Clone(t.gives[bargain.P1])},
		{Seat: bargain.P2, Gives: maps.Clone(t.gives[bargain.P2])},
	}}
}

// holdings returns what seat holds now: its starting holdings, until a deal changes them.
func (r *rules) holdings(m *match, seat games.Seat) map[string]int64 {
	if deal, ok := m.Deal(); ok {
		return r.after(seat, &deal)
	}
	return r.after(seat, nil)
}

// View holds seat's own holdings and goal and the resources in play, never the opponent's
// holdings or goal.
func (r *rules) View(m *match, seat games.Seat, obs *agentv1.Observation) {
	v := &tradingv1.View{
		Holdings:      r.holdings(m, seat),
		Resources:     slices.Clone(r.resources),
		MaxTurns:      r.p.maxTurns,
		MaxProposals:  r.p.maxProposals,
		ProposalsLeft: m.ProposalsLeft(seat),
		TurnsLeft:     m.TurnsLeft(),
	}
	if len(r.p.goals[seat]) > 0 {
		v.Goal = maps.Clone(r.p.goals[seat])
	}
	if st, ok := m.Standing(); ok && seat == m.Mover() {
		v.StandingProposal = allocation(st.Terms)
	}
	if own, ok := m.Own(seat); ok {
		v.OwnProposal = allocation(own.Terms)
	}
	obs.View = &agentv1.Observation_Trading{Trading: v}
}
