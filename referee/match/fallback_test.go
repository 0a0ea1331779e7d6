package match_test

import (
	"context"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/match"
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

// TestVoidedByProvider: a match whose agent fell back because its model provider kept failing
// ends void and reads as voided by the provider (whoever holds it may play it again); one whose
// agent could not use its model's answers is the agent's fault and does not.
func TestVoidedByProvider(t *testing.T) {
	for cause, want := range map[agentv1.FallbackCause]bool{
		agentv1.FallbackCause_FALLBACK_CAUSE_PROVIDER: true,
		agentv1.FallbackCause_FALLBACK_CAUSE_AGENT:    false,
	} {
		giveUp := sdk.AgentFunc(func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
			a := accept()
			a.Usage = &agentv1.Usage{Model: "m", Fallback: true, Fallbacks: 1, FallbackCause: cause, FallbackDetail: "model call failed (rate limited)"}
			return a, nil
		})
		res := run(t, ultimatumSpec("provider-"+cause.String(), sdktest.Client(t, patient(40)), sdktest.Client(t, giveUp)))
		if got := match.VoidedByProvider(res.Events); got != want {
			t.Errorf("%s: outcome %v, VoidedByProvider %v, want %v", cause, res.Outcome, got, want)
		}
		if want && res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_VOID {
			t.Errorf("%s: outcome %v, want void", cause, res.Outcome)
		}
	}
}
