// Package ultimatum implements the multi-turn ultimatum game of NegotiationArena
// (specs/negotiationarena.md): P1 holds a sum of money, P2 holds nothing, and the two take
// turns proposing how to split P1's money until one accepts the other's latest proposal,
// someone rejects, or the turns run out. It plays on the shared bargaining engine
// (referee/games/bargain), which enforces the turn rules; this package reads the terms, values
// them and writes the briefing.
//
// Rules, as this package enforces them:
//
//   - P1 (seat 0) moves on odd turns, P2 (seat 1) on even turns, turns 1 to max_turns.
//   - A proposal is x, the amount P1 hands to P2, written as an Allocation in which seat 0
//     gives {currency: x}, 0 <= x <= total. Either player may propose; P2 never gives.
//   - propose is legal on every turn but the last; it replaces the mover's earlier proposal
//     and declines the opponent's. There is no limit on the number of proposals.
//   - accept is legal when the opponent proposed on the previous turn (every turn after the
//     first, since every move that does not end the game is a proposal). It executes the split:
//     P1 gets total - x, P2 gets x.
//   - reject is always legal and ends the game at once; both get 0. There is no pass.
//
// Because the last turn allows only accept or reject, a match always ends with an agreement or
// a rejection; the turn limit itself is never what ends it.
//
// The default move, played for a seat whose agent gives no usable answer, is reject: if your
// agent fails to answer, you reject.
//
// The game has no chance moves; the match seed is not used. Apply returns no events of its
// own: the runner's record of each action is the whole story.
package ultimatum

import (
	"fmt"
	"sync"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
)

// Name is the game's name in the registry and in observations.
const Name = "ultimatum"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

// Seats.
const (
	P1 games.Seat = bargain.P1 // holds the money and moves first
	P2 games.Seat = bargain.P2 // holds nothing; receives x in a deal
)

// seatNames and seatRoles are indexed by seat. Arrays, so that no caller can change them.
var (
	seatNames = [2]string{"P1", "P2"}
	seatRoles = [2]string{"holder", "receiver"}
)

// New returns the multi-turn ultimatum game.
func New() games.Game { return game{} }

type game struct{}

// Info describes the game, its seats and its parameters (as Params declares them).
func (game) Info() *gamev1.GameInfo {
	return &gamev1.GameInfo{
		Name:         Name,
		Description:  "Multi-turn ultimatum: P1 holds money, P2 nothing; they take turns proposing how to split it until one accepts or rejects.",
		RulesVersion: RulesVersion,
		Seats:        seatNames[:],
		SeatRoles:    seatRoles[:],
		Params:       games.ParamInfos(Name, nil),
	}
}

// Resolve checks params and fills in the defaults, as Params declares them. It refuses params
// meant for another game.
func (game) Resolve(params *matchv1.GameParams) (*matchv1.GameParams, error) {
	return games.FillParams(Name, params)
}

// NameTerms writes proposals in the game's own words, for transcripts (games.TermsNamer).
func (game) NameTerms(params *matchv1.GameParams) func(*gamev1.Proposal) string {
	p, err := read(params)
	if err != nil {
		return nil
	}
	return bargain.NameTerms[int64](&rules{p: p})
}

// NewState starts a match with resolved params; the seed is unused since the game has no
// chance.
func (game) NewState(params *matchv1.GameParams, _ uint64) (games.State, error) {
	p, err := read(params)
	if err != nil {
		return nil, err
	}
	r := &rules{p: p}
	for seat := range r.text {
		r.text[seat] = sync.OnceValue(func() seatText { return newSeatText(p, games.Seat(seat)) })
	}
	return bargain.New[int64](bargain.Config{
		Game:           Name,
		Title:          Name,
		Roles:          seatRoles,
		MaxTurns:       p.maxTurns,
		Reject:         true,
		NoLastProposal: true,
	}, r)
}

// params are the resolved parameters, as plain values.
type params struct {
	total    int64
	maxTurns int32
	currency string
}

// read takes resolved params as they are, checked against their declaration.
func read(gp *matchv1.GameParams) (params, error) {
	if err := games.CheckResolved(Name, gp); err != nil {
		return params{}, err
	}
	u := gp.GetUltimatum()
	return params{total: u.GetTotal(), maxTurns: u.GetMaxTurns(), currency: u.GetCurrency()}, nil
}

func (p params) proto() *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: p.ultimatum()}}
}

func (p params) ultimatum() *ultimatumv1.Params {
	return &ultimatumv1.Params{Total: proto.Int64(p.total), MaxTurns: proto.Int32(p.maxTurns), Currency: proto.String(p.currency)}
}

// holdings is what each seat holds until the game ends: P1 the total, P2 nothing.
func (p params) holdings() [2]int64 { return [2]int64{p.total, 0} }

// match is the engine's state with the ultimatum's terms: x, the amount P1 hands to P2.
type match = bargain.Match[int64]

// rules are the ultimatum's hooks into the engine. Never changed once the match starts.
type rules struct {
	p params
	// text holds each seat's briefing text that does not change while the game goes on,
	// written once, when first asked for: rebuilding it on every observation was a large share
	// of the referee's work per move, and a match whose agents read no briefing
	// (games.Unbriefed) never writes it.
	text [2]func() seatText
}

// seatText is one seat's part of the briefing that stays the same until the game ends; its
// lines are formats for the briefing's line (games.Verbatim).
type seatText struct {
	rules   string // the rules section
	holds   string // the holdings line
	propose string // the propose option
	waiting string // the options while the other seat is to move
}

var _ bargain.Rules[int64] = (*rules)(nil)

// Terms reads x from a proposal, or says what is wrong and what would be legal. Zero amounts
// are allowed anywhere, as the Bound contract says ("absent or 0"); negative ones never.
func (r *rules) Terms(_ games.Seat, alloc *gamev1.Allocation) (int64, error) {
	gives, err := bargain.Gives(alloc)
	if err != nil {
		return 0, r.badTerms("%s", err)
	}
	var x int64
	for _, seat := range []games.Seat{P1, P2} {
		for _, name := range bargain.SortedKeys(gives[seat]) {
			amount := gives[seat][name]
			switch {
			case name != r.p.currency:
				return 0, r.badTerms("there is no resource %q in this game; the only one is %s", name, r.p.currency)
			case seat == P2:
				return 0, r.badTerms("P2 holds no %s", r.p.currency)
			case amount > r.p.total:
				return 0, r.badTerms("P1 holds only %d %s and cannot give %d", r.p.total, r.p.currency, amount)
			}
			x = amount
		}
	}
	return x, nil
}

// badTerms refuses terms, explaining what a legal proposal looks like.
func (r *rules) badTerms(format string, args ...any) error {
	return games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS,
		"%s; a proposal moves x %s from P1 to P2 with 0 <= x <= %d (seat 0 gives {%q: x}, nothing else)",
		fmt.Sprintf(format, args...), r.p.currency, r.p.total, r.p.currency)
}

// Bounds: x, what P1 gives, from 0 to the total.
func (r *rules) Bounds(*match, games.Seat) []*gamev1.Bound {
	return []*gamev1.Bound{{Seat: P1, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: r.p.currency, Min: 0, Max: r.p.total}}
}

// amounts returns what each seat ends with: the split on agreement, nothing otherwise (with no
// deal the money is lost to both: the spec's "both get 0").
func (r *rules) amounts(deal *int64) [2]int64 {
	if deal == nil {
		return [2]int64{}
	}
	return [2]int64{r.p.total - *deal, *deal}
}

// Payoffs are what each seat ends with.
func (r *rules) Payoffs(deal *int64) [2]float64 {
	a := r.amounts(deal)
	return [2]float64{float64(a[P1]), float64(a[P2])}
}

// Describe writes a split: "P1 gives 40 Dollars to P2 and keeps 60".
func (r *rules) Describe(x int64) string {
	return fmt.Sprintf("P1 gives %d %s to P2 and keeps %d", x, r.p.currency, r.p.total-x)
}

// Result says who gets what.
func (r *rules) Result(deal *int64) string {
	if deal == nil {
		return fmt.Sprintf("there is no deal and both get 0 %s", r.p.currency)
	}
	a := r.amounts(deal)
	return fmt.Sprintf("P1 gets %d %s, P2 gets %d %s", a[P1], r.p.currency, a[P2], r.p.currency)
}

// held returns what each seat holds now: its holdings until the end, then its payoff.
func (r *rules) held(m *match) [2]int64 {
	if !m.Over() {
		return r.p.holdings()
	}
	if x, ok := m.Deal(); ok {
		return r.amounts(&x)
	}
	return r.amounts(nil)
}

// View: the game has complete information, so both seats' views hold the same facts; only the
// mover is shown the offer it may accept.
func (r *rules) View(m *match, seat games.Seat, obs *agentv1.Observation) {
	held := r.held(m)
	v := &ultimatumv1.View{
		Params:       r.p.ultimatum(),
		Held:         held[seat],
		OpponentHeld: held[1-seat],
		TurnsLeft:    m.TurnsLeft(),
	}
	if st, ok := m.Standing(); ok && seat == m.Mover() {
		v.StandingOffer = proto.Int64(st.Terms)
		v.StandingProposer = proto.Int32(st.By)
	}
	obs.View = &agentv1.Observation_Ultimatum{Ultimatum: v}
}
