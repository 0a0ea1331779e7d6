package analytics

import (
	"context"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
)

// ModelUsage is the summed resource use of the seats played by one model (as the agents
// reported it in action metadata), over the matches a filter selects.
type ModelUsage struct {
	// Model id as the provider reported it; empty for agents that reported usage without one.
	Model string
	// Matches with at least one seat of the model, and Seats: the model's seat-matches.
	Matches, Seats int64
	// Sums over those seats.
	PromptTokens, CompletionTokens, Retries, FormatFailures, Calls, CacheHits int64
	// LatencyMS is the summed time spent waiting for the model, in milliseconds.
	LatencyMS float64
	// Fallbacks counts seat-matches in which the agent returned its fallback action at least
	// once; FallbackActions counts the fallback actions one by one, BudgetFallbacks those
	// played because a budget was spent.
	Fallbacks, FallbackActions, BudgetFallbacks int64
	// CachedTokens are the tokens of replies served from the cache, at what they cost when
	// made; CostMicrodollars the cost by the agents' price tables.
	CachedTokens, CostMicrodollars int64
	// FormatFailureRate is FormatFailures / Calls: the share of the model's replies that
	// could not be parsed or parsed to an illegal move (0 when no call was made).
	FormatFailureRate float64
	// RetryRate is Retries / Calls (0 when no call was made).
	RetryRate float64
}

// Usage returns the usage of every model in the matches f selects, by model name.
func (s *Store) Usage(ctx context.Context, f Filter) ([]ModelUsage, error) {
	where, args := f.where()
	rows, err := s.db.QueryContext(ctx, `SELECT u.model, count(DISTINCT u.match_id), count(*),
		sum(u.prompt_tokens), sum(u.completion_tokens), sum(u.retries), sum(u.format_failures),
		sum(u.calls), sum(u.cache_hits), sum(u.latency_ms), sum(u.fallback)
		FROM usage u JOIN matches m ON m.match_id = u.match_id
		WHERE `+where+` GROUP BY u.model ORDER BY u.model`, args...)
	if err != nil {
		return nil, fmt.Errorf("analytics: usage: %w", err)
	}
	defer rows.Close()
	var out []ModelUsage
	for rows.Next() {
		var u ModelUsage
		if err := rows.Scan(&u.Model, &u.Matches, &u.Seats, &u.PromptTokens, &u.CompletionTokens, &u.Retries,
			&u.FormatFailures, &u.Calls, &u.CacheHits, &u.LatencyMS, &u.Fallbacks); err != nil {
			return nil, fmt.Errorf("analytics: usage: %w", err)
		}
		if u.Calls > 0 {
			u.FormatFailureRate = float64(u.FormatFailures) / float64(u.Calls)
			u.RetryRate = float64(u.Retries) / float64(u.Calls)
		}
		out = append(out, u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("analytics: usage: %w", err)
	}
	if err := s.usageExtras(ctx, where, args, out); err != nil {
		return nil, err
	}
	return out, nil
}

// usageExtras adds the sums kept only in each seat's stored SeatUsage (fallback actions,
// budget fallbacks, cached tokens, cost), so files written before those fields still open.
func (s *Store) usageExtras(ctx context.Context, where string, args []any, out []ModelUsage) error {
	rows, err := s.db.QueryContext(ctx, `SELECT u.model, u.data FROM usage u JOIN matches m ON m.match_id = u.match_id WHERE `+where, args...)
	if err != nil {
		return fmt.Errorf("analytics: usage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var model string
		var data []byte
		if err := rows.Scan(&model, &data); err != nil {
			return fmt.Errorf("analytics: usage: %w", err)
		}
		su := new(eventsv1.SeatUsage)
		if err := proto.Unmarshal(data, su); err != nil {
			return fmt.Errorf("analytics: usage of model %s: %w", model, err)
		}
		i := slices.IndexFunc(out, func(u ModelUsage) bool { return u.Model == model })
		if i < 0 {
			continue
		}
		t := su.GetTotal()
		fallbacks := int64(t.GetFallbacks())
		if fallbacks == 0 && t.GetFallback() {
			fallbacks = 1
		}
		out[i].FallbackActions += fallbacks
		out[i].BudgetFallbacks += int64(t.GetBudgetFallbacks())
		out[i].CachedTokens += t.GetCachedTokens()
		out[i].CostMicrodollars += t.GetCostMicrodollars()
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("analytics: usage: %w", err)
	}
	return nil
}
