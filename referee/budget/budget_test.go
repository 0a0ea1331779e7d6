package budget

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parley-arena/parley/referee/policy"
)

func anon(addr string) policy.Caller { return policy.Caller{Role: policy.Spectator, Client: addr} }
func team(name string) policy.Caller { return policy.Caller{Role: policy.Team, Team: name} }

var organiser = policy.Caller{Role: policy.Organiser}

// refused checks that err is a budget refusal naming key.
func refused(t *testing.T, what string, err error, key string) {
	t.Helper()
	switch {
	case err == nil:
		t.Fatalf("%s: admitted, want a refusal naming %s", what, key)
	case !errors.Is(err, ErrExhausted) || !errors.Is(err, policy.ErrRefused):
		t.Fatalf("%s: %v does not wrap ErrExhausted and ErrRefused", what, err)
	case !strings.Contains(err.Error(), key):
		t.Fatalf("%s: %q does not name %s", what, err, key)
	}
}

func ok(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func TestBudgetsPerCaller(t *testing.T) {
	p := policy.Policy{MaxQueued: 33, MaxMatchTime: 10 * time.Minute, Budgets: policy.Budgets{
		Client:    policy.Budget{Matches: 10, HumanSeats: 2},
		Anonymous: policy.Budget{Matches: 25},
		Team:      policy.Budget{Matches: 1000, WorkerTime: 50 * time.Minute},
	}}
	l := New(&p)

	// One address: a tournament counts as all its matches.
	_, err := l.HoldTournament(anon("a"), "t1", 8, 0)
	ok(t, "8 matches of 10", err)
	_, err = l.HoldTournament(anon("a"), "t2", 3, 0)
	refused(t, "8+3 matches of 10", err, "budgets.client.matches")
	_, err = l.HoldMatch(anon("a"), "m1", 0)
	ok(t, "one more match: 9 of 10", err)
	_, err = l.HoldMatch(anon("a"), "m2", 0)
	ok(t, "10 of 10", err)
	_, err = l.HoldMatch(anon("a"), "m3", 0)
	refused(t, "11 of 10", err, "budgets.client.matches")
	if got := l.Held(anon("a")); got.Matches != 10 || got.WorkerTime != 100*time.Minute {
		t.Fatalf("held by a: %+v, want 10 matches and 100m (10 x 10m)", got)
	}

	// Other addresses share the anonymous pool: 10 held, 15 left.
	_, err = l.HoldTournament(anon("b"), "t3", 10, 0)
	ok(t, "b: 10 of its own 10, pool 20 of 25", err)
	_, err = l.HoldTournament(anon("c"), "t4", 6, 0)
	refused(t, "c: pool 26 of 25", err, "budgets.anonymous.matches")
	_, err = l.HoldTournament(anon("c"), "t4", 5, 0)
	ok(t, "c: pool 25 of 25", err)

	// Teams have their own budget; the worst-case worker time binds first here (6 x 10m > 50m).
	_, err = l.HoldTournament(team("x"), "t5", 6, 0)
	refused(t, "team: 60m of worker time", err, "budgets.team.worker_time")
	_, err = l.HoldTournament(team("x"), "t5", 5, 0)
	ok(t, "team: 50m", err)

	// max_queued bounds everyone but the organiser together: 25 + 5 held, 3 left.
	_, err = l.HoldTournament(team("y"), "t6", 4, 0)
	refused(t, "team y: 30+4 of max_queued 33", err, "max_queued")
	_, err = l.HoldTournament(organiser, "t7", 1_000_000, 1000)
	ok(t, "the organiser is not bound", err)

	// Seats for people.
	_, err = l.HoldMatch(anon("d"), "h1", 2)
	refused(t, "d: a match in the full anonymous pool", err, "budgets.anonymous.matches")
	l.MatchEnded("m1", "", "")
	l.MatchEnded("m2", "", "")
	_, err = l.HoldMatch(anon("d"), "h1", 3)
	refused(t, "d: 3 human seats of 2", err, "budgets.client.human_seats")
	_, err = l.HoldMatch(anon("d"), "h1", 2)
	ok(t, "d: 2 human seats of 2", err)
}

func TestBudgetsGivenBack(t *testing.T) {
	p := policy.Policy{MaxMatchTime: time.Minute, Budgets: policy.Budgets{Client: policy.Budget{Matches: 4, HumanSeats: 2}}}
	l := New(&p)
	a := anon("a")
	_, err := l.HoldTournament(a, "t", 4, 2)
	ok(t, "4 of 4", err)
	// Asked for again: held once.
	undo, err := l.HoldTournament(a, "t", 4, 2)
	ok(t, "the same tournament again", err)
	undo()
	if got := l.Held(a); got != (Cost{Matches: 4, WorkerTime: 4 * time.Minute, HumanSeats: 2}) {
		t.Fatalf("after asking twice and undoing the second: %+v, want the first hold whole", got)
	}
	// Each ended match gives its share; an interrupted one (naming its rerun) does not.
	l.MatchEnded("t-0", "t", "")
	l.MatchEnded("t-1", "t", "t-1-r1")
	l.MatchEnded("t-1-r1", "t", "")
	if got := l.Held(a); got != (Cost{Matches: 2, WorkerTime: 2 * time.Minute, HumanSeats: 2}) {
		t.Fatalf("after two matches ended: %+v, want 2 matches, 2m, the 2 seats (held until the last)", got)
	}
	l.ReleaseTournament("t")
	if got := l.Held(a); got != (Cost{}) {
		t.Fatalf("after the tournament stopped: %+v, want nothing", got)
	}

	// A single match moves to its rerun and is given back when that ends.
	_, err = l.HoldMatch(a, "m", 1)
	ok(t, "a match", err)
	l.MatchEnded("m", "", "m-r1")
	if got := l.Held(a).Matches; got != 1 {
		t.Fatalf("after an interrupted run: %d matches held, want 1 (its rerun)", got)
	}
	l.MatchEnded("m-r1", "", "")
	if got := l.Held(a); got != (Cost{}) {
		t.Fatalf("after the rerun ended: %+v, want nothing", got)
	}
	undo, err = l.HoldMatch(a, "n", 0)
	ok(t, "another", err)
	undo()
	undo() // twice gives back once
	if got := l.Held(a); got != (Cost{}) || len(l.pools) != 0 {
		t.Fatalf("after undo: held %+v, %d pools kept; want none", got, len(l.pools))
	}
}
