package match_test

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// TestTokenBudgetShared: with Limits.token_budget every seat is told the tokens the match has
// left, counted from the usage both seats reported (cached tokens included); without a budget
// the field is unset. Fallback counts and costs are summed per seat in MatchEnded. A budget
// fallback ends the match there, void, saying so.
func TestTokenBudgetShared(t *testing.T) {
	const budget = 1000
	metered := func(prompt, cached int64, fallback bool) sdk.AgentFunc {
		return func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
			a, _ := patient(40)(ctx, obs)
			a.Usage = &agentv1.Usage{Model: "m", PromptTokens: prompt, CompletionTokens: 5, CachedTokens: cached, CostMicrodollars: 7}
			if fallback {
				a.Usage.Fallback, a.Usage.Fallbacks, a.Usage.BudgetFallbacks = true, 1, 1
				a.Usage.FallbackCause = agentv1.FallbackCause_FALLBACK_CAUSE_BUDGET
			}
			return a, nil
		}
	}
	var p1, p2 obsLog
	spec := ultimatumSpec("budget", sdktest.Client(t, logged(&p1, metered(20, 0, false))), sdktest.Client(t, logged(&p2, metered(0, 30, true))))
	spec.Limits = &matchv1.Limits{MoveTimeout: durationpb.New(waitLimit), TokenBudget: budget}
	res := run(t, spec)
	// A budget fallback cuts the match short: what follows would be played by fallbacks, not
	// by the model. It is void (left out of the tables), its summary says why.
	if res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(res.Outcome.GetSummary(), "budget cut the match short") {
		t.Fatalf("a budget fallback did not cut the match short: %v", res.Outcome)
	}
	if last := taken(res.Events); len(last) != 2 || last[1].GetDefaultReason() == "" || last[1].GetAction().GetUsage().GetBudgetFallbacks() != 1 {
		t.Fatalf("want P1's move, then P2's budget fallback recorded as a default with its usage: %v", last)
	}
	// Turns alternate P1, P2: before turn k, P1 has spent 25 per earlier turn of its own and
	// P2 35 per earlier turn of its own.
	want := func(turn int32) int64 {
		p1Turns, p2Turns := int64(turn/2), int64((turn-1)/2)
		return budget - 25*p1Turns - 35*p2Turns
	}
	n := 0
	for _, l := range []*obsLog{&p1, &p2} {
		for _, o := range l.all() {
			n++
			if o.TokensLeft == nil || o.GetTokensLeft() != want(o.GetTurn()) {
				t.Errorf("turn %d seat %d: tokens_left %v, want %d", o.GetTurn(), o.GetSeat(), o.TokensLeft, want(o.GetTurn()))
			}
		}
	}
	if n == 0 {
		t.Fatal("no observation")
	}
	ended := res.Events[len(res.Events)-1].GetMatchEnded()
	for _, su := range ended.GetUsage() {
		tot := su.GetTotal()
		moves := int32(0)
		for _, a := range taken(res.Events) {
			if a.GetSeat() == su.GetSeat() {
				moves++
			}
		}
		wantFallbacks := int32(0)
		if su.GetSeat() == 1 {
			wantFallbacks = moves
		}
		if tot.GetFallbacks() != wantFallbacks || tot.GetBudgetFallbacks() != wantFallbacks || tot.GetCostMicrodollars() != int64(7*moves) {
			t.Errorf("seat %d total %v: want %d fallbacks, cost %d", su.GetSeat(), tot, wantFallbacks, 7*moves)
		}
	}

	var free obsLog
	run(t, ultimatumSpec("no-budget", sdktest.Client(t, logged(&free, metered(20, 0, false))), sdktest.Client(t, accepter(30))))
	for _, o := range free.all() {
		if o.TokensLeft != nil {
			t.Fatalf("tokens_left %d without a budget", o.GetTokensLeft())
		}
	}
}
