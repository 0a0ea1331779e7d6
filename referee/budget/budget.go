// Package budget keeps, per caller, what the matches and tournaments it asked for may still
// cost: the matches queued or running, their worst-case worker time, and the seats they hold
// open for people. A request is admitted only while its cost fits the caller's budgets of the
// organiser's policy (policy.Budgets): each anonymous address's, all anonymous callers'
// together, each team's, and everyone's but the organiser's (max_queued). The organiser is
// never bound. A tournament counts as all its matches, held from the moment it is accepted;
// each match gives its share back when its record ends (MatchEnded), the rest when the
// tournament stops requesting (ReleaseTournament).
//
// The ledger is the preparing process's: launch.Preparer holds, the referee's match index
// releases. It starts empty, so matches accepted before a restart are not counted again.
package budget

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parley-arena/parley/referee/policy"
)

// ErrExhausted is wrapped (with policy.ErrRefused) by every refusal for want of budget: the
// caller may ask again once some of its matches have ended.
var ErrExhausted = errors.New("budget exhausted")

// Cost is what one request holds while its matches are outstanding.
type Cost struct {
	// Matches queued or running.
	Matches int
	// WorkerTime is the worst-case time the matches hold a worker: each its wall-clock bound
	// (see MatchTime).
	WorkerTime time.Duration
	// HumanSeats are the seats held open for people at once.
	HumanSeats int
}

func (c Cost) add(d Cost) Cost {
	return Cost{Matches: c.Matches + d.Matches, WorkerTime: c.WorkerTime + d.WorkerTime, HumanSeats: c.HumanSeats + d.HumanSeats}
}

func (c Cost) sub(d Cost) Cost {
	return Cost{Matches: c.Matches - d.Matches, WorkerTime: c.WorkerTime - d.WorkerTime, HumanSeats: c.HumanSeats - d.HumanSeats}
}

// MatchTime is the worst-case time one match holds a worker: the policy's max_match_time,
// its wall-clock bound. (No game bounds its moves below the runner's 100,000 events, so moves
// times the move timeout is never less.) 0 when the policy sets no bound: worker time is then
// not counted.
func MatchTime(p *policy.Policy) time.Duration {
	if p == nil {
		return 0
	}
	return p.MaxMatchTime
}

// pool is one budget and what is held of it.
type pool struct {
	id    string // its key in Ledger.pools
	name  string // as refusals name it: "this address", "anonymous callers together", ...
	key   string // the policy key of its bound: "budgets.client", ...
	bound policy.Budget
	used  Cost
}

// hold is what one match or tournament holds.
type hold struct {
	pools []*pool
	each  Cost // given back per match ended (HumanSeats stay until the last)
	total Cost
}

// Ledger is the budgets of every caller. Its zero value is not usable: make one with New.
type Ledger struct {
	pol *policy.Policy

	mu    sync.Mutex
	pools map[string]*pool
	holds map[string]*hold
}

// New returns an empty ledger bounded by p (nil: no bound but for nothing held).
func New(p *policy.Policy) *Ledger {
	return &Ledger{pol: p, pools: map[string]*pool{}, holds: map[string]*hold{}}
}

// Keys of the holds: a match's own id and a tournament's id never meet.
func matchKey(id string) string      { return "match/" + id }
func tournamentKey(id string) string { return "tournament/" + id }

// HoldMatch holds one match's cost (MatchTime of a worker, humanSeats seats for people) for
// caller c until MatchEnded; it refuses, wrapping ErrExhausted, when a budget of c's would be
// passed. undo gives the hold back, for a match refused after all.
func (l *Ledger) HoldMatch(c policy.Caller, matchID string, humanSeats int) (undo func(), err error) {
	return l.hold(c, matchKey(matchID), 1, humanSeats, "this match")
}

// HoldTournament holds the cost of a tournament's matches (each MatchTime of a worker) and of
// the seats for people its matches open at once, for caller c, until every match has ended
// or ReleaseTournament. A tournament held already (asked for again) is held once: undo then
// gives back nothing.
func (l *Ledger) HoldTournament(c policy.Caller, id string, matches, humanSeats int) (undo func(), err error) {
	return l.hold(c, tournamentKey(id), matches, humanSeats, fmt.Sprintf("this tournament's %d matches", matches))
}

func (l *Ledger) hold(c policy.Caller, key string, matches, humanSeats int, what string) (func(), error) {
	nothing := func() {}
	if l == nil || c.Role == policy.Organiser {
		return nothing, nil
	}
	each := Cost{Matches: 1, WorkerTime: MatchTime(l.pol)}
	total := Cost{Matches: matches, WorkerTime: each.WorkerTime * time.Duration(matches), HumanSeats: humanSeats}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.holds[key] != nil {
		return nothing, nil
	}
	pools := l.poolsOf(c)
	for _, p := range pools {
		if err := p.admit(total, what); err != nil {
			l.forgetEmpty(pools)
			return nil, err
		}
	}
	for _, p := range pools {
		p.used = p.used.add(total)
	}
	h := &hold{pools: pools, each: each, total: total}
	l.holds[key] = h
	return func() {
		l.locked(func() {
			if l.holds[key] == h {
				l.release(key)
			}
		})
	}, nil
}

// HoldSeat holds one seat for a person, reserved by caller c ahead of its match (POST
// /api/v1/seats) under key; undo gives it back (the reservation was refused, used or dropped).
func (l *Ledger) HoldSeat(c policy.Caller, key string) (undo func(), err error) {
	return l.hold(c, "seat/"+key, 0, 1, "this seat")
}

// poolsOf returns the budgets c's requests are charged to. Callers hold l.mu.
func (l *Ledger) poolsOf(c policy.Caller) []*pool {
	var b policy.Budgets
	queued := policy.Budget{}
	if l.pol != nil {
		b = l.pol.Budgets
		queued.Matches = l.pol.MaxQueued
	}
	get := func(id, name, key string, bound policy.Budget) *pool {
		p := l.pools[id]
		if p == nil {
			p = &pool{id: id, name: name, key: key, bound: bound}
			l.pools[id] = p
		}
		return p
	}
	// The caller's own budget first: a refusal names the narrowest bound passed.
	var out []*pool
	switch c.Role {
	case policy.Team:
		out = append(out, get("team/"+c.Team, "team "+c.Team, "budgets.team", b.Team))
	default:
		out = append(out,
			get("client/"+c.Client, "this address", "budgets.client", b.Client),
			get("anonymous", "anonymous callers together", "budgets.anonymous", b.Anonymous))
	}
	return append(out, get("queued", "callers other than the organiser together", "max_queued", queued))
}

// admit refuses what would take p past its bound.
func (p *pool) admit(c Cost, what string) error {
	over := func(name string, used, asked, bound any) error {
		return fmt.Errorf("%w: %w: %s hold %v %s queued or running, and %s add %v, over %s.%s %v; ask again once some have ended, or cancel some",
			policy.ErrRefused, ErrExhausted, p.name, used, name, what, asked, p.key, name, bound)
	}
	switch b := p.bound; {
	case b.Matches > 0 && p.used.Matches+c.Matches > b.Matches:
		if p.key == "max_queued" {
			return fmt.Errorf("%w: %w: %d matches are queued or running for callers other than the organiser, and %s add %d, over max_queued %d; try again later",
				policy.ErrRefused, ErrExhausted, p.used.Matches, what, c.Matches, b.Matches)
		}
		return over("matches", p.used.Matches, c.Matches, b.Matches)
	case b.WorkerTime > 0 && p.used.WorkerTime+c.WorkerTime > b.WorkerTime:
		return over("worker_time", p.used.WorkerTime, c.WorkerTime, b.WorkerTime)
	case b.HumanSeats > 0 && p.used.HumanSeats+c.HumanSeats > b.HumanSeats:
		return over("human_seats", p.used.HumanSeats, c.HumanSeats, b.HumanSeats)
	}
	return nil
}

// MatchEnded gives back what one ended match held: its own hold, or its share of its
// tournament's. A void ending that names its rerun (rerunID) gives nothing back: the rerun
// holds it on, and gives it back when it ends.
func (l *Ledger) MatchEnded(matchID, tournamentID, rerunID string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if tournamentID != "" {
		if rerunID != "" {
			return
		}
		h := l.holds[tournamentKey(tournamentID)]
		if h == nil {
			return
		}
		if h.total.Matches <= 1 {
			l.release(tournamentKey(tournamentID))
			return
		}
		l.give(h, h.each)
		return
	}
	key := matchKey(matchID)
	if h := l.holds[key]; h != nil && rerunID != "" {
		delete(l.holds, key)
		l.holds[matchKey(rerunID)] = h
		return
	}
	l.release(key)
}

// give gives c of h back to its pools, forgetting a pool nothing is held of. Callers hold
// l.mu.
func (l *Ledger) give(h *hold, c Cost) {
	h.total = h.total.sub(c)
	for _, p := range h.pools {
		p.used = p.used.sub(c)
	}
	l.forgetEmpty(h.pools)
}

// forgetEmpty forgets the pools of pools nothing is held of: an address seen once costs
// nothing once its matches have ended. Callers hold l.mu.
func (l *Ledger) forgetEmpty(pools []*pool) {
	for _, p := range pools {
		if p.used == (Cost{}) {
			delete(l.pools, p.id)
		}
	}
}

// ReleaseMatch gives back what a match holds: it was refused after all, or cancelled.
func (l *Ledger) ReleaseMatch(matchID string) { l.locked(func() { l.release(matchKey(matchID)) }) }

// ReleaseTournament gives back what is left of a tournament's hold: it stopped requesting
// matches (all ended, refused after all, or cancelled).
func (l *Ledger) ReleaseTournament(id string) { l.locked(func() { l.release(tournamentKey(id)) }) }

func (l *Ledger) locked(f func()) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	f()
}

// release drops a hold. Callers hold l.mu.
func (l *Ledger) release(key string) {
	h := l.holds[key]
	if h == nil {
		return
	}
	l.give(h, h.total)
	delete(l.holds, key)
}

// Held returns what caller c holds of its own budget (its address's for an anonymous caller,
// its team's for a team).
func (l *Ledger) Held(c policy.Caller) Cost {
	if l == nil || c.Role == policy.Organiser {
		return Cost{}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	pools := l.poolsOf(c)
	defer l.forgetEmpty(pools) // looked at, maybe never held
	return pools[0].used
}
