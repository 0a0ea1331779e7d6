package server

import (
	"fmt"
	"testing"

	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
)

// seeded is an index holding n matches, started in order; every third one is a tournament's,
// every other one has ended.
func seeded(n int) *matchIndex {
	x := newMatchIndex(nil, nil, nil)
	for i := range n {
		s := &refereev1.MatchSummary{MatchId: fmt.Sprintf("m-%d", i), Game: "ultimatum", State: refereev1.MatchState_MATCH_STATE_RUNNING}
		if i%3 == 0 {
			s.TournamentId = "cup"
		}
		if i%2 == 0 {
			s.State = refereev1.MatchState_MATCH_STATE_ENDED
		}
		e := &indexEntry{sum: s}
		x.byID[s.GetMatchId()] = e
		x.order = append(x.order, e)
	}
	return x
}

// Paging through a listing returns every selected match once, newest first, whatever the
// page size and filter.
func TestListPagesThroughEverything(t *testing.T) {
	x := seeded(1000)
	for _, tc := range []struct {
		name string
		req  *refereev1.ListMatchesRequest
		want func(i int) bool
	}{
		{"all", &refereev1.ListMatchesRequest{PageSize: 7}, func(int) bool { return true }},
		{"no tournament matches", &refereev1.ListMatchesRequest{PageSize: 50, ExcludeTournaments: true}, func(i int) bool { return i%3 != 0 }},
		{"one tournament's ended", &refereev1.ListMatchesRequest{PageSize: 500, TournamentId: "cup", State: refereev1.MatchState_MATCH_STATE_ENDED}, func(i int) bool { return i%6 == 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want []string
			for i := 999; i >= 0; i-- {
				if tc.want(i) {
					want = append(want, fmt.Sprintf("m-%d", i))
				}
			}
			var got []string
			req := tc.req
			for pages := 0; ; pages++ {
				resp, err := x.list(req)
				if err != nil {
					t.Fatal(err)
				}
				if len(resp.GetMatches()) > int(req.GetPageSize()) {
					t.Fatalf("a page of %d, asked for %d", len(resp.GetMatches()), req.GetPageSize())
				}
				for _, m := range resp.GetMatches() {
					got = append(got, m.GetMatchId())
				}
				if resp.GetNextPageToken() == "" {
					break
				}
				req.PageToken = resp.GetNextPageToken()
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("paged through %d matches, want %d (first %v)", len(got), len(want), got[:min(5, len(got))])
			}
		})
	}
	if _, err := x.list(&refereev1.ListMatchesRequest{PageToken: "nope"}); err == nil {
		t.Error("a page token naming no match")
	}
}

// BenchmarkListMatches reads the first page, a page deep in the listing, and a filtered page of
// an index of 1k, 10k and 100k matches seeded directly.
func BenchmarkListMatches(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		x := seeded(n)
		deep := fmt.Sprintf("m-%d", n/10)
		for _, c := range []struct {
			name string
			req  *refereev1.ListMatchesRequest
		}{
			{"first", &refereev1.ListMatchesRequest{}},
			{"deep", &refereev1.ListMatchesRequest{PageToken: deep}},
			{"no-tournaments", &refereev1.ListMatchesRequest{ExcludeTournaments: true, State: refereev1.MatchState_MATCH_STATE_ENDED}},
		} {
			b.Run(fmt.Sprintf("%d/%s", n, c.name), func(b *testing.B) {
				for b.Loop() {
					if _, err := x.list(c.req); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
