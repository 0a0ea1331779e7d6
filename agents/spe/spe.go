// Package spe is a built-in ultimatum agent that plays the subgame-perfect equilibrium: it
// solves the game by backward induction (ultimatum.Solve) for the match's total and turn limit
// and follows that plan on every turn, accepting exactly the offers the equilibrium accepts.
// Against another such agent it reproduces the game-theory benchmark; against people and
// language models it shows what pure rationality earns.
//
// The agent is deterministic and keeps no state between calls.
package spe

import (
	"context"
	"fmt"
	"slices"

	"github.com/parley-arena/parley/agents/reply"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// Agent plays subgame-perfect ultimatum strategies.
type Agent struct {
	// acceptIndifferent is the responder convention: accept offers exactly as good as
	// playing on (true) or only strictly better ones (false).
	acceptIndifferent bool
}

// New returns an agent with the given responder convention.
func New(acceptIndifferent bool) *Agent { return &Agent{acceptIndifferent: acceptIndifferent} }

// Stateless: the agent's answers depend on its settings and each observation alone.
func (*Agent) Stateless() bool { return true }

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	conv := "accepts only offers better than playing on"
	if a.acceptIndifferent {
		conv = "accepts offers at least as good as playing on"
	}
	return &gamev1.AgentInfo{
		Name:        "spe",
		Version:     "1",
		Author:      "parley",
		Games:       []string{ultimatum.Name},
		Description: "Plays the subgame-perfect equilibrium found by backward induction; " + conv + ".",
	}
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act decides one move.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	view := obs.GetUltimatum()
	if view == nil {
		return nil, fmt.Errorf("spe: plays only the ultimatum game, not %q", obs.GetGame())
	}
	total, currency := view.GetParams().GetTotal(), view.GetParams().GetCurrency()
	eq, err := ultimatum.Solve(total, view.GetParams().GetMaxTurns(), a.acceptIndifferent)
	if err != nil {
		return nil, fmt.Errorf("spe: %w", err)
	}
	turn := obs.GetTurn()
	step, ok := eq.Step(turn)
	if !ok {
		return nil, fmt.Errorf("spe: no equilibrium step for turn %d", turn)
	}
	legal := obs.GetLegalMoves()
	if view.StandingOffer != nil && slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_ACCEPT) && eq.ShouldAccept(turn, view.GetStandingOffer()) {
		return reply.Accept(
			"",
			fmt.Sprintf("the offer beats playing on, which is worth %d to me", step.Value[obs.GetSeat()]),
		), nil
	}
	if step.Plan == ultimatum.PlanReject || !slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		return reply.Reject("", "nothing acceptable is on the table and no proposal is allowed"), nil
	}
	why := "the responder accepts this"
	if step.Plan == ultimatum.PlanStall {
		why = "waiting for the counter-proposal pays more than any offer the responder would take"
	}
	return reply.Propose(
		reply.Allocation(&gamev1.SeatShare{Seat: ultimatum.P1, Gives: map[string]int64{currency: step.Offer}}),
		fmt.Sprintf("My proposal: P1 gives P2 %d %s.", step.Offer, currency),
		fmt.Sprintf("subgame-perfect plan on turn %d: %s (%s)", turn, step.Plan, why),
	), nil
}
