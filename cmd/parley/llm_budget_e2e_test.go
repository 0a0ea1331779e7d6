package main

// End-to-end tests of what makes language-model runs trustworthy and affordable: replays that
// are byte-identical, a cache that never copies one match into another, token budgets, and a
// fast one-line failure when the endpoint or key is wrong.

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/llm/llmtest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// stripUsage removes from JSON lines the usage that says how replies were got (calls, cache
// hits, latency), which is all a replay may change.
func stripUsage(t *testing.T, out string) string {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		var ev map[string]any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if a, ok := ev["actionTaken"].(map[string]any); ok {
			if act, ok := a["action"].(map[string]any); ok {
				delete(act, "usage")
			}
		}
		if e, ok := ev["matchEnded"].(map[string]any); ok {
			delete(e, "usage")
		}
		out, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(out)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestLLMReplayByteIdentical: a match against a careless model behind a flaky server (429s,
// 500s, unusable replies, corrections) replays from the cache with no call, and its --json
// record is the same byte for byte but for the usage of each action; a replay of the replay is
// the same byte for byte, usage included.
func TestLLMReplayByteIdentical(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.Sloppy{Unusable: 0.4, ServerErrors: 0.3, Good: llmtest.Autoplay{Secret: llmSecret, Public: llmPublic}}.Responder())
	cache := t.TempDir()
	for _, game := range []string{"ultimatum", "coalition"} {
		var args []string
		args = append(args, "play", game, "--seed", "12", "--json")
		seats := 2
		if game == "coalition" {
			seats = 3
		}
		for i := range seats {
			args = append(args, "--agent", llmAgentSpec(srv, "cache="+cache, "temperature=0.9", "style="+[]string{"tagged", "json"}[i%2]))
		}
		first := mustRun(t, nil, args...).stdout
		calls := srv.Count()
		second := mustRun(t, nil, args...).stdout
		if srv.Count() != calls {
			t.Fatalf("%s: the replay called the model %d times", game, srv.Count()-calls)
		}
		if a, b := stripUsage(t, first), stripUsage(t, second); a != b {
			t.Errorf("%s: the replay differs beyond usage:\n%s\n%s", game, a, b)
		}
		if third := mustRun(t, nil, args...).stdout; third != second {
			t.Errorf("%s: a replay of the replay differs", game)
		}
		if !strings.Contains(first, "retries") {
			t.Logf("%s: no call was retried this time", game)
		}
	}
}

// TestLLMCacheNeverCopiesMatches: two matches of a game without chance, at a positive
// temperature, each ask the model (the second does not replay the first) by default; only
// with cache_scope=global, asked for, does the second reuse the first's replies.
func TestLLMCacheNeverCopiesMatches(t *testing.T) {
	t.Parallel()
	for _, scope := range []string{"", "global"} {
		srv := autoplayServer(t)
		cache := t.TempDir()
		extra := []string{"cache=" + cache, "temperature=0.8"}
		if scope != "" {
			extra = append(extra, "cache_scope="+scope)
		}
		args := []string{"play", "ultimatum", "--seed", "11", "--matches", "2", "--json",
			"--agent", llmAgentSpec(srv, extra...), "--agent", llmAgentSpec(srv, extra...)}
		evs := decodeRecords(t, mustRun(t, nil, args...).stdout)
		var hits, calls [2]int32
		for m, rec := range evs {
			for _, ev := range rec {
				u := ev.GetActionTaken().GetAction().GetUsage()
				hits[m] += u.GetCacheHits()
				calls[m] += u.GetCalls()
			}
		}
		switch scope {
		case "":
			if hits != [2]int32{} || calls[1] == 0 {
				t.Errorf("default scope: cache hits %v, calls %v; want the second match to ask the model", hits, calls)
			}
		case "global":
			if hits[1] == 0 || calls[1] != 0 {
				t.Errorf("global scope: cache hits %v, calls %v; want the second match replayed", hits, calls)
			}
		}
	}
}

// decodeRecords splits the JSON lines of several matches into one record per match.
func decodeRecords(t *testing.T, out string) [][]*eventsv1.MatchEvent {
	t.Helper()
	var recs [][]*eventsv1.MatchEvent
	for _, ev := range decodeRecord(t, out) {
		if ev.GetMatchStarted() != nil {
			recs = append(recs, nil)
		}
		recs[len(recs)-1] = append(recs[len(recs)-1], ev)
	}
	return recs
}

// TestLLMTokenBudget: --token-budget is a hard cap. Against a model that always writes as
// long as it is allowed, a call starts only when its worst case (the prompt and the
// completion cap, sized down to what is left) fits: the tokens the match spent never pass the
// budget, the last calls ask for less than the agent's max_tokens, and once no call fits the
// seat falls back with FALLBACK_CAUSE_BUDGET (the record says so, match_ended counts it) and
// the match is cut short there, void, its summary saying a budget did it.
func TestLLMTokenBudget(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.AtMaximum(llmtest.Autoplay{Secret: llmSecret, Public: llmPublic}.Responder()))
	const budget = 4000
	r := mustRun(t, nil, "play", "ultimatum", "--seed", "4", "--json", "--token-budget", fmt.Sprint(budget),
		"--param", "max_turns=8", "--agent", llmAgentSpec(srv, "no_cache=true", "reasoning=cot"),
		"--agent", llmAgentSpec(srv, "no_cache=true", "reasoning=cot"))
	evs := decodeRecord(t, r.stdout)
	started, ended := checkRecord(t, evs, 2)
	if started.GetLimits().GetTokenBudget() != budget {
		t.Errorf("limits %v lack the budget", started.GetLimits())
	}
	if ended.GetOutcome().GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(ended.GetOutcome().GetSummary(), "budget cut the match short") {
		t.Fatalf("the budget did not cut the match short: %v", ended.GetOutcome())
	}
	var spent int64
	budgetFallbacks := 0
	for _, ev := range evs {
		u := ev.GetActionTaken().GetAction().GetUsage()
		if u == nil {
			continue
		}
		if u.GetFallbackCause() == agentv1.FallbackCause_FALLBACK_CAUSE_BUDGET {
			budgetFallbacks++
			if !strings.Contains(ev.GetActionTaken().GetAction().GetPrivateReasoning(), "budget") {
				t.Errorf("turn %d: the reasoning does not say the budget is spent", ev.GetTurn())
			}
		}
		spent += u.GetPromptTokens() + u.GetCompletionTokens()
	}
	if budgetFallbacks == 0 {
		t.Fatalf("no budget fallback; %d tokens spent of %d", spent, budget)
	}
	if spent > budget {
		t.Errorf("%d tokens spent, over the budget of %d", spent, budget)
	}
	// What the server was asked for, counted as it counts: every call's prompt and the
	// completion it wrote (all it was allowed). With a budget every call sends a cap, though
	// the agent sets none, sized to what the budget leaves.
	var asked int64
	for _, req := range srv.Requests() {
		if req.MaxTokens < 1 || req.MaxTokens >= budget {
			t.Errorf("call %d asked for %d completion tokens, want 1 to less than the budget", req.Seq, req.MaxTokens)
		}
		asked += int64(len(strings.Fields(req.Text())) + req.MaxTokens)
	}
	if asked != spent || srv.Count() == 0 {
		t.Errorf("the server counted %d tokens in %d calls, the record %d", asked, srv.Count(), spent)
	}
	var counted int32
	for _, su := range ended.GetUsage() {
		counted += su.GetTotal().GetBudgetFallbacks()
	}
	if int(counted) != budgetFallbacks {
		t.Errorf("match_ended counts %d budget fallbacks, the actions %d", counted, budgetFallbacks)
	}
}

// TestLLMEndpointFailsFast: an endpoint that cannot be reached, or that wants a key none is
// set for, is refused in one line before any match starts.
func TestLLMEndpointFailsFast(t *testing.T) {
	t.Parallel()
	keyed := llmtest.New(t, llmtest.Autoplay{}.Responder(), llmtest.WithAPIKey(llmKey))
	for _, tc := range []struct {
		name, agent, want string
		env               []string
	}{
		{"unreachable", "builtin:llm?model=m&base_url=http://127.0.0.1:1/v1", "cannot be reached", nil},
		{"no key", llmAgentSpec(keyed), "OPENAI_API_KEY", []string{"OPENAI_API_KEY="}},
		{"wrong key", llmAgentSpec(keyed), "refused the API key", []string{"OPENAI_API_KEY=sk-wrong"}},
	} {
		r := runParley(t, tc.env, "play", "ultimatum", "--json", "--agent", tc.agent, "--agent", "builtin:fair")
		if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, tc.want) || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
			t.Errorf("%s: want a one-line error naming %q before the match:\n%s", tc.name, tc.want, r)
		}
		if strings.Contains(r.stderr, "sk-wrong") {
			t.Errorf("%s: the key is printed", tc.name)
		}
	}
	if keyed.Count() != 0 {
		t.Errorf("%d chat calls were made", keyed.Count())
	}
	// With the key the same endpoint plays.
	mustRun(t, []string{"OPENAI_API_KEY=" + llmKey}, "play", "ultimatum", "--json", "--agent", llmAgentSpec(keyed, "no_cache=true"), "--agent", "builtin:fair")
}
