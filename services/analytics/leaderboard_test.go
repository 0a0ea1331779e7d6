package analytics

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
	"github.com/parley-arena/parley/services/analytics/ratings"
)

// seat is one seat of a hand-made row: an agent (name@1), its label and payoff.
type seat struct {
	agent, label string
	payoff       float64
}

func row(id string, seats ...seat) metrics.Row {
	r := metrics.Row{MatchID: id, Game: "ultimatum", Cause: matchv1.EndCause_END_CAUSE_AGREEMENT}
	for i, s := range seats {
		r.Seats = append(r.Seats, metrics.SeatResult{Seat: int32(i), Agent: s.agent, AgentVersion: "1", Label: s.label, Payoff: s.payoff})
	}
	return r
}

// duel adds n matches of a against b, a winning the first wins of them.
func duel(rows []metrics.Row, a, b string, n, wins int) []metrics.Row {
	for i := range n {
		pa, pb := 40.0, 60.0
		if i < wins {
			pa, pb = 60, 40
		}
		rows = append(rows, row(fmt.Sprintf("%s-%s-%d", a, b, i), seat{agent: a, payoff: pa}, seat{agent: b, payoff: pb}))
	}
	return rows
}

// TestLeaderboardRanksByCertainty: an agent's place comes from the lower end of its interval,
// and agents with too few rated matches are listed apart, after the established ones.
func TestLeaderboardRanksByCertainty(t *testing.T) {
	var rows []metrics.Row
	// "hot" won 7 of its 10 matches against the anchor; "steady" 130 of its 200. Hot's point
	// rating is higher, but ten matches say little: steady's rating is surely high, hot's not.
	rows = duel(rows, "hot", "anchor", 10, 7)
	rows = duel(rows, "steady", "anchor", 200, 130)
	// "lucky" won its only match, against steady; "idle" played only itself.
	rows = duel(rows, "lucky", "steady", 1, 1)
	rows = append(rows, row("self", seat{agent: "idle", payoff: 50}, seat{agent: "idle", payoff: 50}))
	// "loser" lost 40 of 40: established, and last of them.
	rows = duel(rows, "loser", "anchor", 40, 0)

	lb, err := LeaderboardOf("ultimatum", rows, ratings.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]LeaderboardEntry{}
	var order []string
	for _, e := range lb.Entries {
		by[e.Agent] = e
		order = append(order, e.Agent)
	}
	if _, ok := by["idle@1"]; ok {
		t.Errorf("an agent with no rated match is on the leaderboard: %v", order)
	}
	hot, steady, lucky := by["hot@1"], by["steady@1"], by["lucky@1"]
	if !(hot.Rating.Rating > steady.Rating.Rating) || !(hot.Low < steady.Low) {
		t.Fatalf("the set-up should give hot the higher rating and the lower bound: hot %.0f [%.0f, %.0f], steady %.0f [%.0f, %.0f]",
			hot.Rating.Rating, hot.Low, hot.High, steady.Rating.Rating, steady.Low, steady.High)
	}
	if !(steady.Rank < hot.Rank) || steady.Rank == 0 || hot.Rank == 0 {
		t.Errorf("steady ranked %d, hot %d: want steady (surely good) above hot (maybe good)", steady.Rank, hot.Rank)
	}
	if !lucky.Provisional || lucky.Rank != 0 || lucky.Matches != 1 {
		t.Errorf("lucky (one match) = %+v, want provisional and unranked", lucky)
	}
	if order[len(order)-1] != "lucky@1" {
		t.Errorf("order %v: want the provisional agent after every established one", order)
	}
	// Established agents come first, numbered 1.. in order of their lower bounds.
	established := 0
	for i, e := range lb.Entries {
		if e.Provisional != (e.Matches < MinRatedMatches) {
			t.Errorf("%s: %d matches, provisional %v (minimum %d)", e.Agent, e.Matches, e.Provisional, MinRatedMatches)
		}
		if e.Provisional {
			continue
		}
		established++
		if e.Rank != i+1 {
			t.Errorf("%s at %d has rank %d", e.Agent, i+1, e.Rank)
		}
		if i > 0 && lb.Entries[i-1].Low < e.Low {
			t.Errorf("%s (low %.0f) below %s (low %.0f)", e.Agent, e.Low, lb.Entries[i-1].Agent, lb.Entries[i-1].Low)
		}
	}
	if established != 4 || by["loser@1"].Rank != 4 {
		t.Errorf("established %d, loser's rank %d: want anchor, hot, steady, loser ranked, loser last; order %v", established, by["loser@1"].Rank, order)
	}
}

// TestOneIdentityPerAgent: a label that only repeats the agent's name (a tournament's default
// "fair" for builtin:fair) is the same agent as the unlabelled fair@1, in the leaderboard and
// in the standings; a label that says more (a variant) stays apart.
func TestOneIdentityPerAgent(t *testing.T) {
	var rows []metrics.Row
	for i := range 6 {
		rows = append(rows,
			row(fmt.Sprintf("t%d", i), seat{agent: "fair", label: "fair", payoff: 60}, seat{agent: "concede", label: "boulware", payoff: 40}),
			row(fmt.Sprintf("m%d", i), seat{agent: "fair", payoff: 50}, seat{agent: "concede", payoff: 50}),
			row(fmt.Sprintf("v%d", i), seat{agent: "fair", label: "fair@1", payoff: 70}, seat{agent: "concede", label: "concede", payoff: 30}))
	}
	lb, err := LeaderboardOf("ultimatum", rows, ratings.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, e := range lb.Entries {
		got[e.Agent] = e.Matches
	}
	want := map[string]int{"fair@1": 18, "concede@1": 12, "boulware": 6}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("leaderboard agents and matches %v, want %v", got, want)
	}
	st := standingsOf("cup", "ultimatum", rows)
	names := map[string]int32{}
	for _, a := range st.GetAgents() {
		names[a.GetLabel()] = a.GetMatches()
	}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("standings agents %v, want %v", names, want)
	}
	for _, e := range st.GetLeaderboard() {
		if _, ok := want[e.GetAgent()]; !ok {
			t.Errorf("standings' leaderboard has agent %q", e.GetAgent())
		}
	}
	if st.GetMinMatches() != MinRatedMatches {
		t.Errorf("standings' minimum %d, want %d", st.GetMinMatches(), MinRatedMatches)
	}
}

// TestSchemaUpgradeRekeys opens a version 2 database whose seats were keyed by a label that
// repeats the agent's name, and finds them under the agent's one key.
func TestSchemaUpgradeRekeys(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v2.db")
	s, err := OpenStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	evs := ultimatumRecord("old", "cup", "fair", "random", 40, matchv1.EndCause_END_CAUSE_AGREEMENT)
	evs[0].GetMatchStarted().GetSeats()[0].Label = "fair"
	if _, err := s.Ingest(ctx, standard.New(), delivered(evs...)); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`UPDATE seats SET agent_key = 'fair' WHERE seat = 0`, `PRAGMA user_version = 2`} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	if s, err = OpenStore(ctx, path); err != nil {
		t.Fatalf("opening a version 2 database: %v", err)
	}
	defer s.Close()
	for agent, want := range map[string]int{"fair@1": 1, "random@1": 1} {
		ms, _, err := s.Matches(ctx, Filter{Agent: agent}, Page{})
		if err != nil || len(ms) != want {
			t.Errorf("matches of %s after the upgrade: %d (%v), want %d", agent, len(ms), err, want)
		}
	}
	var key string
	if err := s.db.QueryRow(`SELECT agent_key FROM seats WHERE match_id = 'old' AND seat = 0`).Scan(&key); err != nil || key != "fair@1" {
		t.Errorf("stored key %q (%v), want fair@1", key, err)
	}
}
