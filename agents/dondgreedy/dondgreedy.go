// Package dondgreedy is a simple built-in Deal-or-No-Deal agent: it goes down the allocations
// that are envy-free for itself (worth at least half the pool to it), best for itself first
// (ties in its own enumeration order: its own counts ascending, the first type slowest),
// proposing each once; once all are proposed it repeats the last. It accepts the opponent's
// standing proposal when that is worth at least as much to it as its own next proposal. It
// never models the opponent. Deterministic, and stateless: it reads its earlier proposals from
// the history.
package dondgreedy

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/parley-arena/parley/agents/reply"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// Agent is the greedy agent.
type Agent struct{}

// New returns the agent.
func New() *Agent { return &Agent{} }

// Stateless: the agent's answers depend on its settings and each observation alone.
func (*Agent) Stateless() bool { return true }

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	return &gamev1.AgentInfo{
		Name:        "dondgreedy",
		Version:     "1",
		Author:      "parley",
		Games:       []string{dealornodeal.Name},
		Description: "Deal or No Deal: proposes the allocations worth at least half the pool to it, best for itself first, one each turn; accepts what is worth at least its next proposal.",
	}
}

// Plan returns the agent's proposals in order for the player in seat me of g.
func Plan(g solution.Game, me int) []solution.Alloc {
	own := func(a solution.Alloc) int { return solution.Score(a.Bundle(me, g.Counts), g.Values[me]) }
	var out []solution.Alloc
	for _, a := range solution.Allocations(g.Counts) {
		if solution.EFFor(g.Counts, a, me, g.Values[me]) {
			out = append(out, a)
		}
	}
	slices.SortStableFunc(out, func(x, y solution.Alloc) int {
		return cmp.Or(cmp.Compare(own(y), own(x)), slices.Compare(x.Bundle(me, g.Counts), y.Bundle(me, g.Counts)))
	})
	return out
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act decides one move.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	v := obs.GetDealornodeal()
	if v == nil {
		return nil, fmt.Errorf("dondgreedy: plays Deal or No Deal only, not %q", obs.GetGame())
	}
	me := int(obs.GetSeat())
	g := dealornodeal.ViewGame(v, me)
	items := v.GetItems()
	plan := Plan(g, me)
	own := func(x solution.Alloc) int { return solution.Score(x.Bundle(me, g.Counts), g.Values[me]) }
	made := 0
	for _, e := range obs.GetHistory() {
		if int(e.GetSeat()) == me && !e.GetFromReferee() && e.GetMove().GetPropose() != nil {
			made++
		}
	}
	next := plan[min(made, len(plan)-1)]
	legal := obs.GetLegalMoves()
	if s := dealornodeal.DivisionOf(v.GetStanding()); s != nil && slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_ACCEPT) && own(s) >= own(next) {
		return reply.Accept(
			"Deal.",
			fmt.Sprintf("the offer is worth %d to me, at least the %d my next proposal would ask", own(s), own(next)),
		), nil
	}
	if !slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		return reply.Pass("", ""), nil
	}
	return reply.Propose(
		dealornodeal.Proposal(items, g.Counts, next),
		"How about this split?",
		fmt.Sprintf("proposal %d of my %d, worth %d to me", min(made, len(plan)-1)+1, len(plan), own(next)),
	), nil
}
