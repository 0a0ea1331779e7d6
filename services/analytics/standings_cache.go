package analytics

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"

	"google.golang.org/protobuf/proto"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// standingsTimeout bounds one computation of a tournament's standings in the background.
const standingsTimeout = 5 * time.Minute

// standingsCache keeps each tournament's last standings, computed once for every reader: a
// read answers at once from the cache, and when the tournament's matches changed since, one
// computation in the background brings the cache up to date for the next reads. Only the first
// read of a tournament waits, and at most firstReadWait, for its computation. A tournament of
// 100,000 matches is thus read in the time of a few indexed counts, however long its standings
// take to compute.
type standingsCache struct {
	mu   sync.Mutex
	byID map[string]*cachedStandings
	wait time.Duration // how long a first read waits: firstReadWait when zero, not at all when negative
}

type cachedStandings struct {
	used      time.Time        // last read, for forgetting the least read first
	version   standingsVersion // of the matches st was computed from
	st        *analyticsv1.Standings
	computing bool
	first     chan struct{} // closed when the first computation ends
}

// maxCachedStandings bounds the tournaments whose standings are kept: the least recently read
// one not being computed is forgotten first (and computed again if read again).
const maxCachedStandings = 256

// firstReadWait is how long the first read of a tournament waits for its whole standings
// before it answers with the counts alone: small tournaments are answered whole, and a large
// one is answered within a second (the wait plus a few indexed counts) whatever its size.
const firstReadWait = 800 * time.Millisecond

// standingsVersion identifies the set of a tournament's finished matches in the store: rows
// are only ever added, each with a larger order number, so the last one's changes with any
// change (one index lookup, whatever the tournament's size).
type standingsVersion struct{ last int64 }

func (s *Store) standingsVersion(ctx context.Context, id string) (standingsVersion, error) {
	var v standingsVersion
	err := s.db.QueryRowContext(ctx, `SELECT COALESCE(MAX(n), 0) FROM matches WHERE tournament_id = ?`, id).Scan(&v.last)
	if err != nil {
		return v, fmt.Errorf("analytics: standings of %s: %w", id, err)
	}
	return v, nil
}

// CachedStandings returns a tournament's standings as of the last computation, and starts a
// new one in the background when its matches changed since (see standingsCache). The first
// read of a tournament waits up to firstReadWait for its whole standings, then answers with
// its counts alone (Standings.pending) while the computation goes on for the next reads.
// ErrNotFound as Standings.
func (s *Store) CachedStandings(ctx context.Context, id string) (*analyticsv1.Standings, error) {
	v, err := s.standingsVersion(ctx, id)
	if err != nil {
		return nil, err
	}
	c := &s.standings
	c.mu.Lock()
	if c.byID == nil {
		c.byID = map[string]*cachedStandings{}
	}
	e := c.byID[id]
	if e != nil {
		e.used = time.Now()
		st := e.st
		if e.version != v && !e.computing {
			e.computing = true
			go s.refreshStandings(id, e)
		}
		c.mu.Unlock()
		return proto.CloneOf(st), nil
	}
	c.mu.Unlock()
	st, err := s.standingsCounts(ctx, id)
	if err != nil {
		return nil, err
	}
	st.Pending = true
	c.mu.Lock()
	e = c.byID[id]
	if e == nil {
		c.forgetLeastRead()
		e = &cachedStandings{used: time.Now(), st: st, computing: true, first: make(chan struct{})}
		c.byID[id] = e
		go s.refreshStandings(id, e)
	}
	first := e.first
	c.mu.Unlock()
	wait := c.wait
	if wait == 0 {
		wait = firstReadWait
	}
	if first != nil && wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		select {
		case <-first:
		case <-t.C:
		case <-ctx.Done():
		}
	}
	c.mu.Lock()
	st = e.st
	c.mu.Unlock()
	return proto.CloneOf(st), nil
}

// forgetLeastRead makes room for one more tournament when the cache is full. c.mu is held.
func (c *standingsCache) forgetLeastRead() {
	if len(c.byID) < maxCachedStandings {
		return
	}
	var oldest string
	var at time.Time
	for id, e := range c.byID {
		if !e.computing && (oldest == "" || e.used.Before(at)) {
			oldest, at = id, e.used
		}
	}
	if oldest != "" {
		delete(c.byID, oldest)
	}
}

// standingsCounts are the standings of a tournament with its counts only: quick to read at
// any size, while the rest is computed.
func (s *Store) standingsCounts(ctx context.Context, id string) (*analyticsv1.Standings, error) {
	var n, void int64
	var game sql.NullString
	err := s.db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(void), 0), MIN(game) FROM matches WHERE tournament_id = ? AND readable = 1`, id).Scan(&n, &void, &game)
	if err != nil {
		return nil, fmt.Errorf("analytics: standings of %s: %w", id, err)
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no match of tournament %q", ErrNotFound, id)
	}
	// Void rows are few: look each up to leave out the interrupted ones, as Standings does.
	rows, err := s.db.QueryContext(ctx, `SELECT match_id FROM matches WHERE tournament_id = ? AND readable = 1 AND void = 1`, id)
	if err != nil {
		return nil, fmt.Errorf("analytics: standings of %s: %w", id, err)
	}
	var voids []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			rows.Close()
			return nil, fmt.Errorf("analytics: standings of %s: %w", id, err)
		}
		voids = append(voids, m)
	}
	rows.Close()
	for _, m := range voids {
		superseded, err := s.superseded(ctx, metrics.Row{MatchID: m, Cause: matchv1.EndCause_END_CAUSE_VOID})
		if err != nil {
			return nil, err
		}
		if superseded {
			n--
			void--
		}
	}
	return &analyticsv1.Standings{TournamentId: id, Game: game.String, Ended: uint32(n), Void: uint32(void)}, nil
}

// refreshStandings computes id's standings anew and puts them in e.
func (s *Store) refreshStandings(id string, e *cachedStandings) {
	ctx, cancel := context.WithTimeout(context.Background(), standingsTimeout)
	defer cancel()
	// The version first: matches added while computing make the next read compute again.
	v, err := s.standingsVersion(ctx, id)
	var st *analyticsv1.Standings
	if err == nil {
		st, err = s.Standings(ctx, id)
	}
	c := &s.standings
	c.mu.Lock()
	defer c.mu.Unlock()
	e.computing = false
	if e.first != nil {
		close(e.first)
		e.first = nil
	}
	if err != nil {
		return // the next read tries again; meanwhile the last standings stand
	}
	e.version, e.st = v, st
}
