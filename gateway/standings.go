package gateway

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/nats-io/nats.go/jetstream"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/ratings"
	"github.com/parley-arena/parley/services/analytics/report"
	"github.com/parley-arena/parley/services/analytics/tables"
	"github.com/parley-arena/parley/services/tournament"
)

const (
	// maxTracked bounds the tournaments whose standings are kept in memory; the least recently
	// asked for is dropped first.
	maxTracked = 64
	// standingsBootstrap is the bootstrap sample count of the standings' ratings: fewer than
	// the leaderboard's default, since they are recomputed after every match.
	standingsBootstrap = 100
)

// retrySuffix is the suffix of a rerun's match id (tournament.RetryID).
var retrySuffix = regexp.MustCompile(`-r[0-9]+$`)

// tracker keeps the standings of the tournaments people look at, updated as their matches end
// (the match index tells it every match_ended).
type tracker struct {
	js       jetstream.JetStream
	families *metrics.Registry

	mu   sync.Mutex
	byID map[string]*tracked
}

func newTracker(js jetstream.JetStream, families *metrics.Registry) *tracker {
	return &tracker{js: js, families: families, byID: map[string]*tracked{}}
}

// get returns the tracked tournament id, loading its spec when it is not tracked yet.
func (tr *tracker) get(ctx context.Context, id string) (*tracked, error) {
	if err := bus.ValidMatchID(id); err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("tournament id %q: %w", id, err))
	}
	tr.mu.Lock()
	t, ok := tr.byID[id]
	if ok {
		t.used = time.Now()
	}
	tr.mu.Unlock()
	if ok {
		return t, nil
	}
	spec, err := tournament.LoadSpec(ctx, tr.js, id)
	switch {
	case errors.Is(err, tournament.ErrNotFound):
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no tournament %q", id))
	case err != nil:
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	t = newTracked(tr, spec)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if old, ok := tr.byID[id]; ok {
		return old, nil
	}
	if len(tr.byID) >= maxTracked {
		var oldest *tracked
		for _, c := range tr.byID {
			if oldest == nil || c.used.Before(oldest.used) {
				oldest = c
			}
		}
		delete(tr.byID, oldest.spec.GetTournamentId())
	}
	tr.byID[id] = t
	return t, nil
}

// ended is told every match_ended; it marks the scheduled match it plays for re-reading.
func (tr *tracker) ended(matchID string) {
	tr.mu.Lock()
	all := make([]*tracked, 0, len(tr.byID))
	for _, t := range tr.byID {
		all = append(all, t)
	}
	tr.mu.Unlock()
	scheduled := retrySuffix.ReplaceAllString(matchID, "")
	for _, t := range all {
		if i, ok := t.index[matchID]; ok {
			t.mark(i)
		} else if i, ok := t.index[scheduled]; ok {
			t.mark(i)
		}
	}
}

// tracked is one tournament's standings.
type tracked struct {
	tr    *tracker
	spec  *tournamentv1.TournamentSpec
	index map[string]int // scheduled match id -> index in spec.matches
	used  time.Time      // guarded by tracker.mu

	compute sync.Mutex // one computation at a time
	done    []*metrics.Row

	mu      sync.Mutex
	stale   map[int]bool // scheduled matches to look at again
	version int          // bumped by every mark
	cached  *tournamentv1.Standings
	changed chan struct{} // closed and replaced by every mark
}

func newTracked(tr *tracker, spec *tournamentv1.TournamentSpec) *tracked {
	t := &tracked{
		tr: tr, spec: spec, index: map[string]int{}, used: time.Now(),
		done: make([]*metrics.Row, len(spec.GetMatches())), stale: map[int]bool{}, changed: make(chan struct{}),
	}
	for i, m := range spec.GetMatches() {
		t.index[m.GetMatchId()] = i
		t.stale[i] = true
	}
	return t
}

func (t *tracked) mark(i int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stale[i] = true
	t.version++
	t.cached = nil
	close(t.changed)
	t.changed = make(chan struct{})
}

// changes returns a channel closed at the next change.
func (t *tracked) changes() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.changed
}

// standings returns the standings now, reading the records of the matches that ended since
// the last call.
func (t *tracked) standings(ctx context.Context) (*tournamentv1.Standings, error) {
	t.compute.Lock()
	defer t.compute.Unlock()
	t.mu.Lock()
	if t.cached != nil {
		st := t.cached
		t.mu.Unlock()
		return st, nil
	}
	stale := t.stale
	t.stale = map[int]bool{}
	version := t.version
	t.mu.Unlock()

	requeue := func(err error) (*tournamentv1.Standings, error) {
		t.mu.Lock()
		for i := range stale {
			t.stale[i] = true
		}
		t.mu.Unlock()
		return nil, err
	}
	for i := range stale {
		if t.done[i] != nil {
			continue
		}
		row, err := t.read(ctx, i)
		if err != nil {
			return requeue(connect.NewError(connect.CodeUnavailable, err))
		}
		t.done[i] = row
	}
	st := t.build()
	t.mu.Lock()
	if t.version == version {
		t.cached = st
	}
	t.mu.Unlock()
	return st, nil
}

// read returns the row of scheduled match i once the match that counts for it has ended, or
// nil.
func (t *tracked) read(ctx context.Context, i int) (*metrics.Row, error) {
	m := t.spec.GetMatches()[i]
	id, ended, err := tournament.Latest(ctx, t.tr.js, m.GetMatchId())
	if err != nil || ended == nil {
		return nil, err
	}
	events, err := bus.ReadMatch(ctx, t.tr.js, id)
	if err != nil {
		return nil, err
	}
	row, err := metrics.NewRow(events, t.tr.families)
	if err != nil {
		// A record the families cannot read still counts with the common values.
		if row, err = metrics.NewRow(events, nil); err != nil {
			return nil, fmt.Errorf("match %s: %w", id, err)
		}
	}
	// Name the agents by their entrant labels (records from before labels lack them).
	for s, e := range m.GetEntrants() {
		if s < len(row.Seats) && int(e) < len(t.spec.GetEntrants()) {
			row.Seats[s].Label = t.spec.GetEntrants()[e].GetLabel()
		}
	}
	return &row, nil
}

// build computes the standings from the rows read so far.
func (t *tracked) build() *tournamentv1.Standings {
	st := &tournamentv1.Standings{
		TournamentId: t.spec.GetTournamentId(),
		Game:         t.spec.GetGame(),
		Matches:      uint32(len(t.spec.GetMatches())),
	}
	var rows []metrics.Row
	for _, r := range t.done {
		if r == nil {
			continue
		}
		st.Ended++
		if r.Void() {
			st.Void++
		}
		rows = append(rows, *r)
	}
	st.Complete = st.Ended == st.Matches
	if len(rows) == 0 {
		return st
	}
	g := tables.BuildGame(rows, tables.Options{})
	st.Seats = g.Seats
	for _, a := range g.AgentStats {
		st.Agents = append(st.Agents, &tournamentv1.AgentStanding{
			Label: a.Agent, Matches: int32(a.Matches), Void: int32(a.Void), Decisive: int32(a.Decisive), Wins: int32(a.Wins),
			WinRate: meanOf(a.WinRate), MeanPayoff: meanOf(a.Payoff), AgreementRate: meanOf(a.Agreement),
			Refused: int32(a.Refused), Faulted: int32(a.Faulted),
		})
	}
	if p := g.Pairs; p != nil {
		pt := &tournamentv1.PairTable{Seat: p.Seat, SeatName: p.SeatName, Rows: p.Rows, Cols: p.Cols}
		for _, row := range p.Cells {
			pr := &tournamentv1.PairRow{}
			for _, c := range row {
				cell := &tournamentv1.PairCell{
					Matches: int32(c.Matches), Void: int32(c.Void), Decisive: int32(c.Decisive), Wins: int32(c.Wins),
					WinRate: meanOf(c.WinRate), AgreementRate: meanOf(c.Agreement),
				}
				if len(c.Payoff) > 0 {
					cell.PayoffSeat0 = meanOf(c.Payoff[0])
				}
				if len(c.Payoff) > 1 {
					cell.PayoffSeat1 = meanOf(c.Payoff[1])
				}
				pr.Cells = append(pr.Cells, cell)
			}
			pt.Cells = append(pt.Cells, pr)
		}
		st.Pairs = pt
	}
	opts := ratings.DefaultOptions()
	opts.Bootstrap = standingsBootstrap
	if lb, err := analytics.LeaderboardOf(t.spec.GetGame(), rows, opts); err == nil {
		for _, e := range lb.Entries {
			st.Leaderboard = append(st.Leaderboard, &analyticsv1.LeaderboardEntry{
				Agent: e.Agent, Rating: e.Rating.Rating, RatingLow: e.Low, RatingHigh: e.High,
				Matches: int32(e.Matches), Wins: int32(e.Wins), Losses: int32(e.Losses), Ties: int32(e.Ties),
				Score: e.Score, MeanPayoff: e.MeanPayoff,
			})
		}
	}
	for _, s := range report.Sections(g) {
		tb := &tournamentv1.Table{Title: s.Title, Note: s.Note, Header: s.Header}
		for _, r := range s.Rows {
			tb.Rows = append(tb.Rows, &tournamentv1.TableRow{Cells: r})
		}
		st.Tables = append(st.Tables, tb)
	}
	return st
}

// meanOf is a mean as an optional number: unset while there is nothing to average.
func meanOf(m tables.Mean) *float64 {
	v, ok := m.Value()
	if !ok {
		return nil
	}
	return &v
}
