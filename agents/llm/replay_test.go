package llm_test

import (
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/llm"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/deliberation"
)

// TestReplay reads recorded answers through the agent, with no model behind it: a usable
// answer becomes the model's own action, an unusable one the agent's fallback, marked; the
// answer is kept as the raw output either way.
func TestReplay(t *testing.T) {
	// Nothing listens here: a replay must never call the endpoint.
	a := newAgent(t, llm.Config{BaseURL: "http://127.0.0.1:1/v1", Model: "recorded-model", Style: "deliberation"})
	st, err := deliberation.New().NewState(mustResolve(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	obs := st.Observe(0)
	good := "Hello all. <DEAL>A1, B1, C4, D1, E5</DEAL>"
	act, r := a.Replay(obs, good)
	if !r.Usable || act.GetUsage().GetFallback() {
		t.Fatalf("usable answer read as %+v, action %v", r, act)
	}
	if got := act.GetMove().GetPropose().GetProposal().GetDeal(); len(got.GetChoices()) != 5 || got.GetChoices()[2].GetOption() != "C4" {
		t.Fatalf("deal %v", got)
	}
	if raw := act.GetUsage().GetRawOutputs(); len(raw) != 1 || raw[0] != good || act.GetUsage().GetModel() != "recorded-model" || act.GetUsage().GetCalls() != 0 {
		t.Fatalf("usage %v", act.GetUsage())
	}
	if _, err := st.Apply(0, act); err != nil {
		t.Fatalf("the rules refuse the replayed opening: %v", err)
	}
	// A talk turn answered with nothing public: the agent's fallback, marked as the agent's.
	seat := st.ToMove()[0]
	bad := "<SCRATCHPAD>I should say that my minimum is 55."
	act, r = a.Replay(st.Observe(seat), bad)
	if r.Usable || r.Kind != llm.FailUnparsable || !act.GetUsage().GetFallback() ||
		act.GetUsage().GetFallbackCause() != agentv1.FallbackCause_FALLBACK_CAUSE_AGENT || act.GetUsage().GetFormatFailures() != 1 {
		t.Fatalf("unusable answer read as %+v, usage %v", r, act.GetUsage())
	}
	for _, m := range act.GetMessages() {
		if strings.Contains(m.GetText(), "55") {
			t.Fatalf("the scratchpad reached a public message: %q", m.GetText())
		}
	}
	if _, err := st.Apply(seat, act); err != nil {
		t.Fatalf("the rules refuse the fallback: %v", err)
	}
}

func mustResolve(t *testing.T) *matchv1.GameParams {
	t.Helper()
	p, err := deliberation.New().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
