package llm_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/llm/llmtest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// TestBudgetHardCap: the agent's own token budget is a cap even when it plays many matches at
// once against a model that always writes to the cap: calls in flight hold their worst case,
// so the tokens spent (as the server counts them) never pass the budget, and the moves no call
// fits for fall back with FALLBACK_CAUSE_BUDGET.
func TestBudgetHardCap(t *testing.T) {
	srv := llmtest.New(t, llmtest.AtMaximum(llmtest.Sequence(llmtest.Text("<reasoning>fine</reasoning><move>accept</move>"))))
	// How long one move's prompt is: the budget below fits a few such calls, not eight.
	act(t, newAgent(t, llm.Config{BaseURL: srv.URL}), p2Turn2(t))
	promptBytes := int64(len(srv.Requests()[0].Text()))
	const maxTokens, moves = 50, 8
	budget := 3 * (promptBytes/2 + maxTokens)
	before := srv.Count()

	a := newAgent(t, llm.Config{BaseURL: srv.URL, MaxTokens: maxTokens, BudgetTokens: budget, Concurrency: moves})
	actions := make([]*agentv1.Action, moves)
	var wg sync.WaitGroup
	for i := range moves {
		wg.Go(func() {
			obs := p2Turn2(t)
			obs.MatchId = fmt.Sprint("m-", i)
			var err error
			if actions[i], err = a.Act(context.Background(), obs); err != nil {
				t.Errorf("Act: %v", err)
			}
		})
	}
	wg.Wait()
	var spent int64
	fallbacks := 0
	for _, action := range actions {
		u := action.GetUsage()
		spent += u.GetPromptTokens() + u.GetCompletionTokens()
		if u.GetFallbackCause() == agentv1.FallbackCause_FALLBACK_CAUSE_BUDGET {
			fallbacks++
			if u.GetCalls() != 0 || !strings.Contains(action.GetPrivateReasoning(), "budget") {
				t.Errorf("a budget fallback made %d calls or did not say why: %q", u.GetCalls(), action.GetPrivateReasoning())
			}
		}
	}
	var counted int64
	reqs := srv.Requests()[before:]
	for _, r := range reqs {
		if r.MaxTokens < 1 || r.MaxTokens > maxTokens {
			t.Errorf("call %d asked for %d completion tokens, want 1 to %d", r.Seq, r.MaxTokens, maxTokens)
		}
		counted += int64(len(strings.Fields(r.Text())) + r.MaxTokens)
	}
	if counted > budget || spent != counted {
		t.Errorf("%d calls spent %d tokens by the server's count, %d by the agent's; the budget is %d", len(reqs), counted, spent, budget)
	}
	if len(reqs) == 0 || fallbacks == 0 || len(reqs)+fallbacks != moves {
		t.Errorf("%d calls and %d budget fallbacks for %d moves: want some of each, one per move", len(reqs), fallbacks, moves)
	}
}
