package analytics

import (
	"context"
	"errors"
	"fmt"

	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/ratings"
)

// ErrNoGame is returned for a leaderboard asked for without a game: ratings of different
// games do not mix.
var ErrNoGame = errors.New("analytics: a leaderboard is per game; name one")

// Leaderboard is the ratings of the agents of one game.
type Leaderboard struct {
	// Game rated.
	Game string
	// Matches rated, and Void: matches left out because they were void.
	Matches, Void int
	// Entries, best rating first.
	Entries []LeaderboardEntry
	// Options the ratings were computed with.
	Options ratings.Options
}

// LeaderboardEntry is one agent's line.
type LeaderboardEntry struct {
	ratings.Rating
	// MeanPayoff is the agent's mean payoff per seat played in the rated matches.
	MeanPayoff float64
}

// Leaderboard rates the agents (by AgentKey) of the game f names in the non-void matches f
// selects (see package ratings for the method). A game with no rated comparison gives an
// empty leaderboard.
func (s *Store) Leaderboard(ctx context.Context, f Filter, opts ratings.Options) (Leaderboard, error) {
	if f.Game == "" {
		return Leaderboard{}, ErrNoGame
	}
	rows, err := s.Rows(ctx, f)
	if err != nil {
		return Leaderboard{}, err
	}
	return LeaderboardOf(f.Game, rows, opts)
}

// LeaderboardOf rates the agents of game in rows (rows of other games and void rows are left
// out).
func LeaderboardOf(game string, rows []metrics.Row, opts ratings.Options) (Leaderboard, error) {
	lb := Leaderboard{Game: game, Options: opts}
	var ms []ratings.Match
	sum := make(map[string]float64)
	seats := make(map[string]int)
	for _, r := range rows {
		if r.Game != game {
			continue
		}
		if r.Void() {
			lb.Void++
			continue
		}
		m := ratings.Match{}
		for _, s := range r.Seats {
			m.Agents = append(m.Agents, s.AgentKey())
			m.Payoffs = append(m.Payoffs, s.Payoff)
			sum[s.AgentKey()] += s.Payoff
			seats[s.AgentKey()]++
		}
		ms = append(ms, m)
	}
	lb.Matches = len(ms)
	rs, err := ratings.Rate(ms, opts)
	switch {
	case errors.Is(err, ratings.ErrNoResults):
		return lb, nil
	case err != nil:
		return Leaderboard{}, fmt.Errorf("analytics: leaderboard of %s: %w", game, err)
	}
	for _, r := range rs {
		e := LeaderboardEntry{Rating: r}
		if n := seats[r.Agent]; n > 0 {
			e.MeanPayoff = sum[r.Agent] / float64(n)
		}
		lb.Entries = append(lb.Entries, e)
	}
	return lb, nil
}
