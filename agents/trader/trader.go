// Package trader is a built-in agent for resource exchange (trading) that only proposes or
// accepts trades that raise its own payoff, judged by its own view: its holdings and its goal
// (it never sees the opponent's). It accepts the standing proposal when carrying it out would
// pay it strictly more than no trade. With a minimum-holdings goal not yet met, it proposes to
// receive exactly what it lacks and to give only from its surplus (what it holds beyond its
// minimums), so that the trade meets its goal: first whatever the opponent's latest proposal
// asked of it, as far as its surplus allows, then more surplus, largest first, until it gives
// one unit more than it asks (so that an opponent counting totals gains too). Once its goal is
// met no trade can raise its payoff, so it only waits. With the default total-count goal,
// trades are zero-sum in totals: whatever raises its payoff lowers the opponent's by as much, so
// two traders never agree. It still proposes a trade that gains it one unit (two of the
// resource it holds least of, for one of the resource it holds most of) in case the opponent
// values resources otherwise, and accepts only trades that give it more units than it gives.
// When a proposal is refused (the opponent does not hold what it asked for) or no trade would
// help, it passes.
//
// The agent is deterministic and keeps no state between calls; its messages describe its
// proposals only, never its holdings or goal.
package trader

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/parley-arena/parley/agents/reply"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/trading"
)

// Agent is the self-interested trader.
type Agent struct{}

// New returns a trader.
func New() *Agent { return &Agent{} }

// Stateless: the agent's answers depend on its settings and each observation alone.
func (*Agent) Stateless() bool { return true }

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	return &gamev1.AgentInfo{
		Name:        "trader",
		Version:     "1",
		Author:      "parley",
		Games:       []string{trading.Name},
		Description: "Proposes and accepts only trades that raise its own payoff by its own holdings and goal; asks for what its goal lacks, paying from its surplus.",
	}
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act decides one resource-exchange move.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	view := obs.GetTrading()
	if view == nil {
		return nil, fmt.Errorf("trader: plays only the trading game, not %q", obs.GetGame())
	}
	me := obs.GetSeat()
	legal := obs.GetLegalMoves()
	base := payoff(view, view.GetHoldings())

	if st := view.GetStandingProposal(); st != nil && slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_ACCEPT) {
		if after := apply(view.GetHoldings(), st, me); payoff(view, after) > base {
			return reply.Accept(
				"Deal.",
				fmt.Sprintf("the trade raises my payoff from %d to %d", base, payoff(view, after)),
			), nil
		}
	}
	// A refused proposal means the opponent lacks what was asked; asking again would only be
	// refused again.
	if slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE) && obs.GetAttempt() <= 1 {
		if give, get, why := plan(view, opponentAsk(obs)); len(get) > 0 {
			shares := []*gamev1.SeatShare{{Seat: me, Gives: give}, {Seat: 1 - me, Gives: get}}
			if me != 0 {
				shares[0], shares[1] = shares[1], shares[0]
			}
			return reply.Propose(
				reply.Allocation(shares...),
				fmt.Sprintf("I offer %s for %s.", bargain.Bundle(give), bargain.Bundle(get)),
				why,
			), nil
		}
	}
	if slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PASS) {
		return reply.Pass("", fmt.Sprintf("no trade I can propose or accept raises my payoff of %d", base)), nil
	}
	return nil, fmt.Errorf("trader: nothing to do with legal moves %v", legal)
}

// plan returns the trade to propose, what this seat gives and gets, with the reason; an empty
// get means there is nothing worth proposing. asked is what the opponent's latest proposal
// asked this seat to give.
func plan(view *tradingv1.View, asked map[string]int64) (give, get map[string]int64, why string) {
	h, goal := view.GetHoldings(), view.GetGoal()
	if len(goal) > 0 {
		get = map[string]int64{}
		var need int64
		for _, res := range bargain.SortedKeys(goal) {
			if lack := goal[res] - h[res]; lack > 0 {
				get[res] = lack
				need += lack
			}
		}
		if need == 0 {
			return nil, nil, "my goal is met"
		}
		spare := func(res string) int64 { return max(0, h[res]-goal[res]) }
		give = map[string]int64{}
		var given int64
		for _, res := range bargain.SortedKeys(asked) {
			if n := min(asked[res], spare(res)); n > 0 && get[res] == 0 {
				give[res] = n
				given += n
			}
		}
		for _, res := range bySurplus(view) {
			if given > need || get[res] > 0 {
				continue
			}
			if n := min(spare(res)-give[res], need+1-given); n > 0 {
				give[res] += n
				given += n
			}
		}
		return give, get, fmt.Sprintf("my goal lacks %s; I pay from my surplus, starting with what %s asked for", bargain.Bundle(get), bargain.Bundle(asked))
	}
	res := view.GetResources()
	if len(res) == 0 {
		return nil, nil, "no resources in play"
	}
	order := slices.Clone(res)
	sort.SliceStable(order, func(i, j int) bool { return h[order[i]] < h[order[j]] })
	least, most := order[0], order[len(order)-1]
	if least == most || h[most] == 0 {
		return map[string]int64{}, map[string]int64{least: 1}, "any unit received raises my total"
	}
	return map[string]int64{most: 1}, map[string]int64{least: 2}, "receiving two units for one raises my total by one"
}

// opponentAsk returns what the opponent's latest proposal asked this seat to give, from the
// history; nil when it has proposed nothing.
func opponentAsk(obs *agentv1.Observation) map[string]int64 {
	hist := obs.GetHistory()
	for i := len(hist) - 1; i >= 0; i-- {
		h := hist[i]
		if h.GetFromReferee() || h.GetSeat() == obs.GetSeat() || h.GetMove().GetPropose() == nil {
			continue
		}
		for _, sh := range h.GetMove().GetPropose().GetProposal().GetAllocation().GetShares() {
			if sh.GetSeat() == obs.GetSeat() {
				return sh.GetGives()
			}
		}
		return nil
	}
	return nil
}

// bySurplus orders the resources by how much this seat holds beyond its minimum, largest first.
func bySurplus(view *tradingv1.View) []string {
	h, goal := view.GetHoldings(), view.GetGoal()
	res := slices.Clone(view.GetResources())
	sort.SliceStable(res, func(i, j int) bool { return h[res[i]]-goal[res[i]] > h[res[j]]-goal[res[j]] })
	return res
}

// apply returns seat's holdings after alloc is carried out.
func apply(h map[string]int64, alloc *gamev1.Allocation, seat int32) map[string]int64 {
	out := make(map[string]int64, len(h))
	for k, v := range h {
		out[k] = v
	}
	for _, sh := range alloc.GetShares() {
		for res, v := range sh.GetGives() {
			if sh.GetSeat() == seat {
				out[res] -= v
			} else {
				out[res] += v
			}
		}
	}
	return out
}

// payoff is this seat's payoff holding h, by its goal as its view states it: 1 or 0 for a
// minimum-holdings goal; for the total-count goal, the total (the start is the same for every
// choice, so comparisons need no more).
func payoff(view *tradingv1.View, h map[string]int64) int64 {
	goal := view.GetGoal()
	if len(goal) == 0 {
		var n int64
		for _, v := range h {
			n += v
		}
		return n
	}
	for res, least := range goal {
		if h[res] < least {
			return 0
		}
	}
	return 1
}
