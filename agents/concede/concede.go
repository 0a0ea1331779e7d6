// Package concede is a built-in agent for the buyer/seller game (buysell) that bargains by
// conceding, over its proposals, from an ambitious opening price to its own private value and
// never past it: the seller opens at Open times its cost (at most the buyer's budget) and comes
// down to its cost; the buyer opens at its willingness to pay divided by Open and goes up to
// that willingness (or the budget, if lower). Its k-th of n proposals moves a fraction f(k/(n-1))
// of the way, where n counts the proposals it has made and may still make; f is linear with
// curve=linear and k^3-shaped with curve=boulware (Boulware-style: firm for most of the game,
// conceding mostly at the end). Prices are rounded in its own favour, so a proposal never
// crosses its value. It accepts the opponent's standing price when that is at least as good for
// it as what it would ask next; once it may propose no more, it accepts any price that does not
// cross its value and otherwise rejects. It rejects at once when no legal price suits it (a
// seller whose cost exceeds the buyer's budget).
//
// The agent is deterministic and keeps no state between calls; its messages state prices only,
// never its private value.
package concede

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/parley-arena/parley/agents/concession"
	"github.com/parley-arena/parley/agents/reply"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games/buysell"
)

// Concession curves (see package concession).
const (
	Linear   = string(concession.Linear)
	Boulware = string(concession.Boulware)
)

// Config sets the agent's strategy.
type Config struct {
	// Curve is how concessions are spread over the proposals: Linear or Boulware.
	Curve string
	// Open is how far from its value the agent opens, as a factor of at least 1: the seller
	// asks Open times its cost, the buyer offers its willingness divided by Open.
	Open float64
}

// DefaultConfig returns the default strategy: linear concessions from a factor of 2.
func DefaultConfig() Config { return Config{Curve: Linear, Open: 2} }

// MaxOpen bounds the opening factor: a seller asking more than a thousand times its cost is
// not conceding, and the prices would overflow.
const MaxOpen = 1000

// Validate checks the curve's name and that Open is a finite factor of at least 1.
func (c Config) Validate() error {
	if err := concession.Curve(c.Curve).Validate(); err != nil {
		return fmt.Errorf("concede: %w", err)
	}
	// Written as "not in range" so that NaN fails; past 1000 the opening asks overflow.
	if !(c.Open >= 1 && c.Open <= MaxOpen) {
		return fmt.Errorf("concede: open must be a number from 1 to %d, got %g", MaxOpen, c.Open)
	}
	return nil
}

// Agent is the conceding buyer/seller agent.
type Agent struct{ cfg Config }

// New returns an agent with cfg.
func New(cfg Config) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Agent{cfg: cfg}, nil
}

// Stateless: the agent's answers depend on its settings and each observation alone.
func (*Agent) Stateless() bool { return true }

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	return &gamev1.AgentInfo{
		Name:    "concede",
		Version: "1",
		Author:  "parley",
		Games:   []string{buysell.Name},
		Description: fmt.Sprintf("Opens %g times away from its private value and concedes toward it (%s), never past it; accepts a price at least as good as its next ask.",
			a.cfg.Open, a.cfg.Curve),
	}
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act decides one buyer/seller move.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	view := obs.GetBuysell()
	if view == nil {
		return nil, fmt.Errorf("concede: plays only the buysell game, not %q", obs.GetGame())
	}
	seller := view.GetRole() == "seller"
	value := view.GetPrivateValue()
	currency := view.GetCurrency()
	legal := obs.GetLegalMoves()
	canPropose := slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE)
	budget, haveBudget := budgetOf(obs, currency)

	// better reports whether price a is at least as good for this side as price b.
	better := func(a, b int64) bool {
		if seller {
			return a >= b
		}
		return a <= b
	}
	ask, canAsk := int64(0), false
	if canPropose && haveBudget {
		ask, canAsk = a.ask(seller, value, budget, proposalsMade(obs), view.GetProposalsLeft())
	}

	if view.StandingPrice != nil && slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_ACCEPT) {
		price := view.GetStandingPrice()
		threshold, why := value, "it does not cross my value and I can propose no more"
		if canAsk {
			threshold, why = ask, fmt.Sprintf("it is at least as good as my next ask, %d", ask)
		}
		if better(price, threshold) {
			return reply.Accept(
				fmt.Sprintf("Deal at %d %s.", price, currency),
				fmt.Sprintf("accepting %d: %s (my value is %d)", price, why, value),
			), nil
		}
	}
	if canAsk {
		return reply.Propose(
			reply.Allocation(&gamev1.SeatShare{Seat: buysell.Seller, Gives: map[string]int64{view.GetItem(): 1}}, &gamev1.SeatShare{Seat: buysell.Buyer, Gives: map[string]int64{currency: ask}}),
			fmt.Sprintf("My price is %d %s.", ask, currency),
			fmt.Sprintf("proposal %d of %d on a %s curve toward my value %d: %d", proposalsMade(obs)+1, proposalsMade(obs)+view.GetProposalsLeft(), a.cfg.Curve, value, ask),
		), nil
	}
	if slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_REJECT) {
		return reply.Reject(
			"No deal.",
			fmt.Sprintf("no acceptable price is on the table and I cannot propose one (my value is %d)", value),
		), nil
	}
	return nil, fmt.Errorf("concede: nothing to do with legal moves %v", legal)
}

// ask is the price of the proposal after made earlier ones, with left more allowed (this one
// included), and whether there is one that does not cross value.
func (a *Agent) ask(seller bool, value, budget int64, made, left int32) (int64, bool) {
	n := made + left
	if left <= 0 || n <= 0 {
		return 0, false
	}
	progress := concession.Curve(a.cfg.Curve).At(int(made), int(n))
	if seller {
		if value > budget {
			return 0, false // no legal price covers the cost
		}
		open := budget
		if value > 0 {
			// Compared as floats: value times open may not fit an int64.
			open = int64(math.Min(float64(budget), math.Ceil(float64(value)*a.cfg.Open)))
		}
		p := int64(math.Ceil(float64(open) - float64(open-value)*progress))
		return min(max(p, value), budget), true
	}
	target := min(value, budget)
	open := int64(math.Floor(float64(target) / a.cfg.Open))
	p := int64(math.Floor(float64(open) + float64(target-open)*progress))
	return max(min(p, target), 0), true
}

// budgetOf reads the buyer's budget from the proposal bounds (present when a proposal is
// legal).
func budgetOf(obs *agentv1.Observation, currency string) (int64, bool) {
	for _, b := range obs.GetProposalBounds() {
		if b.GetSeat() == buysell.Buyer && b.GetResource() == currency {
			return b.GetMax(), true
		}
	}
	return 0, false
}

// proposalsMade counts this seat's proposals in the history.
func proposalsMade(obs *agentv1.Observation) int32 {
	var n int32
	for _, h := range obs.GetHistory() {
		if !h.GetFromReferee() && h.GetSeat() == obs.GetSeat() && h.GetMove().GetPropose() != nil {
			n++
		}
	}
	return n
}
