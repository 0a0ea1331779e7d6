package analytics

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

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
	// Entries, ranked (see LeaderboardOf).
	Entries []LeaderboardEntry
	// Options the ratings were computed with.
	Options ratings.Options
}

// LeaderboardEntry is one agent's line.
type LeaderboardEntry struct {
	ratings.Rating
	// MeanPayoff is the agent's mean payoff per seat played in the rated matches.
	MeanPayoff float64
	// Provisional is set for an agent with fewer than MinRatedMatches rated matches: listed
	// after every established agent and not ranked among them.
	Provisional bool
	// Rank is the place among the established agents, from 1 (agents with equal Low share
	// one); 0 when provisional.
	Rank int
}

// MinRatedMatches is how many rated matches an agent needs before the leaderboard ranks it:
// with fewer, its interval is too wide (or, from a single match, collapsed to a point) for its
// place to mean anything, and a lucky start would put it above agents that played thousands.
const MinRatedMatches = 10

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
// out) and ranks them: established agents (MinRatedMatches or more) before provisional ones,
// each group by the lower end of the rating interval (Rating.Low), highest first, so that an
// agent ranks high only when its rating is high for sure. An agent with no rated match (only
// self-play so far) has no rating and no entry.
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
		if r.Matches == 0 {
			continue
		}
		e := LeaderboardEntry{Rating: r, Provisional: r.Matches < MinRatedMatches}
		if n := seats[r.Agent]; n > 0 {
			e.MeanPayoff = sum[r.Agent] / float64(n)
		}
		lb.Entries = append(lb.Entries, e)
	}
	rank(lb.Entries)
	return lb, nil
}

// rank orders entries (established first, then by Low, Rating and name) and numbers the
// established ones.
func rank(es []LeaderboardEntry) {
	slices.SortStableFunc(es, func(a, b LeaderboardEntry) int {
		switch {
		case a.Provisional != b.Provisional && a.Provisional:
			return 1
		case a.Provisional != b.Provisional:
			return -1
		}
		if c := cmp.Compare(b.Low, a.Low); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Rating.Rating, a.Rating.Rating); c != 0 {
			return c
		}
		return cmp.Compare(a.Agent, b.Agent)
	})
	for i := range es {
		switch {
		case es[i].Provisional:
		case i > 0 && !es[i-1].Provisional && es[i-1].Low == es[i].Low:
			es[i].Rank = es[i-1].Rank
		default:
			es[i].Rank = i + 1
		}
	}
}
