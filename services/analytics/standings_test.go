package analytics

import (
	"context"
	"fmt"
	"testing"
	"time"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// interrupted is a match of tournament closed void by the queue and played again as rerun.
func interrupted(id, tournament, rerun string) []*eventsv1.MatchEvent {
	evs := ultimatumRecord(id, tournament, "fair", "tough", 40, matchv1.EndCause_END_CAUSE_VOID)
	evs[len(evs)-1].GetMatchEnded().GetOutcome().RerunMatchId = rerun
	return evs
}

func TestStandingsCountEachScheduledMatchOnce(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	reg := standard.New()
	var evs []*eventsv1.MatchEvent
	evs = append(evs, ultimatumRecord("cup-a", "cup", "fair", "tough", 40, matchv1.EndCause_END_CAUSE_AGREEMENT)...)
	evs = append(evs, interrupted("cup-b", "cup", "cup-b-r1")...)
	evs = append(evs, ultimatumRecord("cup-b-r1", "cup", "fair", "tough", -1, matchv1.EndCause_END_CAUSE_REJECTED)...)
	evs = append(evs, ultimatumRecord("cup-c", "cup", "tough", "fair", 0, matchv1.EndCause_END_CAUSE_VOID)...) // void for a cause of its own
	evs = append(evs, ultimatumRecord("other", "not-cup", "fair", "tough", 40, matchv1.EndCause_END_CAUSE_AGREEMENT)...)
	if _, err := s.Ingest(ctx, reg, delivered(evs...)); err != nil {
		t.Fatal(err)
	}
	// A first read that may not wait answers at once with the counts, marked pending; the
	// whole standings follow. Three scheduled matches ended: a, b (as its rerun) and c; c is
	// void, b's interruption is not counted at all.
	s.standings.wait = -1
	for i := 0; ; i++ {
		st, err := s.CachedStandings(ctx, "cup")
		if err != nil {
			t.Fatal(err)
		}
		if st.GetEnded() != 3 || st.GetVoid() != 1 || st.GetGame() != "ultimatum" {
			t.Fatalf("read %d: ended %d void %d game %q; want 3, 1, ultimatum", i, st.GetEnded(), st.GetVoid(), st.GetGame())
		}
		if i == 0 && (!st.GetPending() || len(st.GetAgents()) > 0) {
			t.Fatalf("first read: pending %v with %d agents; want the counts alone, pending", st.GetPending(), len(st.GetAgents()))
		}
		if (len(st.GetAgents()) > 0) == st.GetPending() {
			t.Fatalf("read %d: pending %v with %d agents", i, st.GetPending(), len(st.GetAgents()))
		}
		if !st.GetPending() {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := s.CachedStandings(ctx, "nobody"); err == nil {
		t.Error("standings of a tournament with no match")
	}

	// A new match makes the next reads compute again, in the background; reads meanwhile get
	// the last standings.
	if _, err := s.Ingest(ctx, reg, delivered(ultimatumRecord("cup-d", "cup", "tough", "fair", 50, matchv1.EndCause_END_CAUSE_AGREEMENT)...)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, err := s.CachedStandings(ctx, "cup")
		if err != nil {
			t.Fatal(err)
		}
		if st.GetEnded() == 4 {
			break
		}
		if st.GetEnded() != 3 {
			t.Fatalf("ended %d, want the last standings (3) until the new ones (4)", st.GetEnded())
		}
		if time.Now().After(deadline) {
			t.Fatal("the standings never caught up with the new match")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// BenchmarkStandingsRead measures reading a tournament's standings at 1k, 10k and 100k
// matches, the store seeded directly: "cold" is the first read (it computes), "warm" a read of
// an unchanged tournament, "changed" a read right after one more match ended (it answers with
// the last standings and computes again in the background).
func BenchmarkStandingsRead(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			if testing.Short() && n > 10_000 {
				b.Skip("seeding 100k matches takes a while")
			}
			s, err := OpenStore(context.Background(), b.TempDir()+"/analytics.db")
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			ctx := context.Background()
			reg := standard.New()
			agents := []string{"fair", "tough", "spe", "random", "boulware"}
			for lo := 0; lo < n; lo += 1000 {
				var batch []Delivered
				for i := lo; i < min(lo+1000, n); i++ {
					a, c := agents[i%5], agents[(i/5+1+i%5)%5]
					if a == c {
						c = agents[(i+1)%5]
					}
					batch = append(batch, delivered(ultimatumRecord(fmt.Sprintf("t-%d", i), "t", a, c, int64(i%100)-10, matchv1.EndCause_END_CAUSE_AGREEMENT)...)...)
				}
				if _, err := s.Ingest(ctx, reg, batch); err != nil {
					b.Fatal(err)
				}
			}
			start := time.Now()
			if _, err := s.CachedStandings(ctx, "t"); err != nil {
				b.Fatal(err)
			}
			first := time.Since(start)
			for {
				st, err := s.CachedStandings(ctx, "t")
				if err != nil {
					b.Fatal(err)
				}
				if len(st.GetAgents()) > 0 {
					break
				}
				time.Sleep(time.Millisecond)
			}
			b.Logf("%d matches: the first read answered in %s; the whole standings were ready after %s", n,
				first.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
			b.Run("warm", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.CachedStandings(ctx, "t"); err != nil {
						b.Fatal(err)
					}
				}
			})
			if _, err := s.Ingest(ctx, reg, delivered(ultimatumRecord("t-extra", "t", "fair", "tough", 30, matchv1.EndCause_END_CAUSE_AGREEMENT)...)); err != nil {
				b.Fatal(err)
			}
			b.Run("changed", func(b *testing.B) {
				for b.Loop() {
					if _, err := s.CachedStandings(ctx, "t"); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// TestStandingsCacheBounded reads more tournaments than the cache keeps: it keeps at most its
// bound, and a tournament it forgot is computed again when read again.
func TestStandingsCacheBounded(t *testing.T) {
	s := openTestStore(t)
	ctx := context.Background()
	reg := standard.New()
	n := maxCachedStandings + 20
	var evs []*eventsv1.MatchEvent
	for i := range n {
		evs = append(evs, ultimatumRecord(fmt.Sprintf("m-%d", i), fmt.Sprintf("cup-%d", i), "fair", "tough", 40, matchv1.EndCause_END_CAUSE_AGREEMENT)...)
	}
	if _, err := s.Ingest(ctx, reg, delivered(evs...)); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if st, err := s.CachedStandings(ctx, fmt.Sprintf("cup-%d", i)); err != nil || st.GetEnded() != 1 {
			t.Fatalf("cup-%d: ended %d, %v", i, st.GetEnded(), err)
		}
	}
	s.standings.mu.Lock()
	kept := len(s.standings.byID)
	s.standings.mu.Unlock()
	if kept > maxCachedStandings {
		t.Errorf("the cache keeps %d tournaments after %d were read, want at most %d", kept, n, maxCachedStandings)
	}
	if st, err := s.CachedStandings(ctx, "cup-0"); err != nil || st.GetEnded() != 1 || len(st.GetAgents()) != 2 {
		t.Errorf("the first tournament read again: ended %d, %d agents, %v; want 1, 2", st.GetEnded(), len(st.GetAgents()), err)
	}
}
