// Package fixed is a scripted ultimatum player for experiments that probe the other player: it
// offers the opponent the same amount on every proposal and never accepts. With total=10 and
// max_turns 2 or 3, a run per amount from 0 to 10 estimates the decider's acceptance rate by
// amount, as in the published study.
package fixed

import (
	"context"
	"fmt"
	"slices"

	"github.com/parley-arena/parley/agents/reply"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// Agent always offers the opponent Offer units.
type Agent struct{ offer int64 }

// New returns an agent that offers the opponent offer units (at most the total).
func New(offer int64) (*Agent, error) {
	if offer < 0 {
		return nil, fmt.Errorf("fixed: offer must be 0 or more, got %d", offer)
	}
	return &Agent{offer: offer}, nil
}

// Stateless: the agent's answers depend on its settings and each observation alone.
func (*Agent) Stateless() bool { return true }

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	return &gamev1.AgentInfo{
		Name:        "fixed",
		Version:     "1",
		Author:      "parley",
		Games:       []string{ultimatum.Name},
		Description: fmt.Sprintf("Scripted: offers the opponent %d on every proposal and never accepts.", a.offer),
	}
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act proposes the fixed offer when it may, and rejects otherwise.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	view := obs.GetUltimatum()
	if view == nil {
		return nil, fmt.Errorf("fixed: plays only the ultimatum game, not %q", obs.GetGame())
	}
	if !slices.Contains(obs.GetLegalMoves(), gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		return reply.Reject("", ""), nil
	}
	total := view.GetParams().GetTotal()
	offer := min(a.offer, total)
	x := offer // x is what P1 gives P2
	if obs.GetSeat() == ultimatum.P2 {
		x = total - offer
	}
	return &agentv1.Action{
		Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: reply.Allocation(
			&gamev1.SeatShare{Seat: ultimatum.P1, Gives: map[string]int64{view.GetParams().GetCurrency(): x}},
		)}}},
		Messages: []*gamev1.Message{{Text: fmt.Sprintf("I offer you %d %s. Take it or leave it.", offer, view.GetParams().GetCurrency())}},
	}, nil
}
