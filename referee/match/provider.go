package match

import (
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// VoidedByProvider reports whether a match's record ended void because a seat's model provider
// kept failing (rate limits, server errors, broken connections past the agent's retries): the
// runner voids a match at the first move an agent played as a provider fallback, so a void
// ending after such a move is that. Whoever holds the match can play it again once the
// provider answers; nothing of the match itself would fail the same way.
func VoidedByProvider(events []*eventsv1.MatchEvent) bool {
	if len(events) == 0 || events[len(events)-1].GetMatchEnded().GetOutcome().GetCause() != matchv1.EndCause_END_CAUSE_VOID {
		return false
	}
	for _, ev := range events {
		if ev.GetActionTaken().GetAction().GetUsage().GetFallbackCause() == agentv1.FallbackCause_FALLBACK_CAUSE_PROVIDER {
			return true
		}
	}
	return false
}
