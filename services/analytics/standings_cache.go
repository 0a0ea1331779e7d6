package analytics

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
)

// standingsTimeout bounds one computation of a tournament's standings in the background.
const standingsTimeout = 5 * time.Minute

// standingsCache keeps each tournament's last standings, computed once for every reader: a
// read answers at once from the cache, and when the tournament's matches changed since, one
// computation in the background brings the cache up to date for the next reads. Only the first
// read of a tournament waits for its computation. A tournament of 100,000 matches is thus read
// in the time of one indexed count, however long its standings take to compute.
type standingsCache struct {
	mu   sync.Mutex
	byID map[string]*cachedStandings
}

type cachedStandings struct {
	version   standingsVersion // of the matches st was computed from
	st        *analyticsv1.Standings
	computing bool
}

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
// read of a tournament computes them. ErrNotFound as Standings.
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
		st := e.st
		if e.version != v && !e.computing {
			e.computing = true
			go s.refreshStandings(id, e)
		}
		c.mu.Unlock()
		return proto.CloneOf(st), nil
	}
	c.mu.Unlock()
	st, err := s.Standings(ctx, id)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.byID[id] == nil {
		c.byID[id] = &cachedStandings{version: v, st: st}
	}
	c.mu.Unlock()
	return proto.CloneOf(st), nil
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
	if err != nil {
		return // the next read tries again; meanwhile the last standings stand
	}
	e.version, e.st = v, st
}
