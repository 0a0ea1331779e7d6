package match_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// TestAgentFallbackIsTheGamesDefault: an agent that gives up on its own answers (its usage says
// fallback) does not decide the game, whatever move it sends with it: the game's default stands
// in (the ultimatum's reject here, never the accept it sent), recorded as a default move with the
// agent's usage, reasoning and notes; the seat is faulted, and a match ended that way is an
// agent fault, not a rejection, nor an agreement.
func TestAgentFallbackIsTheGamesDefault(t *testing.T) {
	giveUp := sdk.AgentFunc(func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		a := accept()
		a.PrivateReasoning, a.PrivateNotes = "FALLBACK: nothing usable", "keep calm"
		a.Usage = &agentv1.Usage{Model: "m", PromptTokens: 9, Fallback: true, Fallbacks: 1,
			FallbackCause: agentv1.FallbackCause_FALLBACK_CAUSE_AGENT, FallbackDetail: "3 replies could not be used"}
		return a, nil
	})
	res := run(t, ultimatumSpec("fallback", sdktest.Client(t, patient(40)), sdktest.Client(t, giveUp)))
	out := res.Outcome
	if out.GetCause() != matchv1.EndCause_END_CAUSE_AGENT_FAULT || out.GetAgreement() || len(out.GetFaultedSeats()) != 1 || out.GetFaultedSeats()[0] != 1 {
		t.Fatalf("outcome %v; want an agent fault of P2, no agreement", out)
	}
	moves := taken(res.Events)
	if len(moves) != 2 {
		t.Fatalf("want P1's offer and P2's fallback, got %v", moves)
	}
	fb := moves[1]
	a := fb.GetAction()
	if a.GetMove().GetReject() == nil || !strings.Contains(fb.GetDefaultReason(), "could not use its model's answers (3 replies could not be used)") {
		t.Errorf("fallback recorded as %v (reason %q); want the game's default (reject) with the agent's reason", a.GetMove(), fb.GetDefaultReason())
	}
	if a.GetPrivateReasoning() != "FALLBACK: nothing usable" || a.GetPrivateNotes() != "keep calm" || a.GetUsage().GetPromptTokens() != 9 || !a.GetUsage().GetFallback() {
		t.Errorf("the agent's reasoning, notes and usage are not kept: %v", a)
	}
	if len(faults(res.Events)) != 0 {
		t.Errorf("a fallback is not an agent fault event: %v", faults(res.Events))
	}
}
