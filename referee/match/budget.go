package match

import (
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// tokenBudget is a match's shared token budget (Limits.token_budget): what the seats' actions
// have reported spending so far, safe for seats answering at the same time.
type tokenBudget struct {
	limit int64 // 0: no budget
	spent atomic.Int64
}

// spentBy is what one answer counts against a token budget: its fresh tokens and the tokens
// its cached replies cost when made, so a replay runs out where the original run did.
func spentBy(u *agentv1.Usage) int64 {
	return u.GetPromptTokens() + u.GetCompletionTokens() + u.GetCachedTokens()
}

func (b *tokenBudget) spend(u *agentv1.Usage) { b.spent.Add(spentBy(u)) }

// left is Observation.tokens_left for one of movers seats moving at once: nil without a
// budget. Seats that answer together each get an even share of what is left, so that together
// they cannot pass it.
func (b *tokenBudget) left(movers int) *int64 {
	if b.limit <= 0 {
		return nil
	}
	return proto.Int64((b.limit - b.spent.Load()) / int64(max(movers, 1)))
}

// addUsageExtras sums the usage fields about caching, fallbacks and cost into a seat's total.
func addUsageExtras(t, u *agentv1.Usage) {
	t.CachedTokens += u.GetCachedTokens()
	t.CostMicrodollars += u.GetCostMicrodollars()
	fallbacks := u.GetFallbacks()
	if fallbacks == 0 && u.GetFallback() {
		fallbacks = 1 // an agent that only sets the flag
	}
	t.Fallbacks += fallbacks
	t.BudgetFallbacks += u.GetBudgetFallbacks()
	if u.GetFallbackCause() != agentv1.FallbackCause_FALLBACK_CAUSE_UNSPECIFIED {
		t.FallbackCause = u.GetFallbackCause()
	}
}
