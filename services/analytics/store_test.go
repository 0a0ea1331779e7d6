package analytics

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
	"github.com/parley-arena/parley/services/analytics/ratings"
)

// ultimatumRecord is a hand-written ultimatum match: P1 (agent a) offers x, P2 (agent b)
// accepts, or rejects when x < 0 (then nobody gets anything). Seat 1 reports LLM usage.
func ultimatumRecord(id, tournament, a, b string, x int64, cause matchv1.EndCause) []*eventsv1.MatchEvent {
	seat := func(i int32, name, agent string) *gamev1.SeatInfo {
		return &gamev1.SeatInfo{Seat: i, Name: name, Agent: &gamev1.AgentInfo{Name: agent, Version: "1"}}
	}
	offer := max(x, 0)
	evs := []*eventsv1.MatchEvent{
		{MatchId: id, Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
			Game: "ultimatum", Seed: 7, TournamentId: tournament, RulesVersion: "1",
			Seats: []*gamev1.SeatInfo{seat(0, "P1", a), seat(1, "P2", b)}}}},
		{MatchId: id, Seq: 2, Turn: 1, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: 0,
			Action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
				Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"Dollars": offer}}}}}}}}}}}}},
	}
	move := &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}
	pay := []float64{float64(100 - offer), float64(offer)}
	if x < 0 {
		move, pay = &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, []float64{0, 0}
	}
	if cause == matchv1.EndCause_END_CAUSE_VOID {
		pay = nil
	}
	evs = append(evs,
		&eventsv1.MatchEvent{MatchId: id, Seq: 3, Turn: 2, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: 1,
			Action: &agentv1.Action{Move: move}}}},
		&eventsv1.MatchEvent{MatchId: id, Seq: 4, Turn: 2, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{
			Outcome: &matchv1.Outcome{Cause: cause, Agreement: cause == matchv1.EndCause_END_CAUSE_AGREEMENT, Payoffs: pay, Summary: "done"},
			Usage: []*eventsv1.SeatUsage{{Seat: 1, Total: &agentv1.Usage{Model: "m-1", PromptTokens: 100, CompletionTokens: 10,
				Retries: 1, FormatFailures: 1, Calls: 4, RawOutputs: []string{"secret"},
				Fallback: true, Fallbacks: 3, BudgetFallbacks: 2, CachedTokens: 7, CostMicrodollars: 11}}}}}})
	return evs
}

func delivered(evs ...*eventsv1.MatchEvent) []Delivered {
	out := make([]Delivered, len(evs))
	for i, ev := range evs {
		out[i] = Delivered{Event: ev}
	}
	return out
}

func openTestStore(t *testing.T) *Store {
	t.Helper()
	s, err := OpenStore(context.Background(), filepath.Join(t.TempDir(), "analytics.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestIngestOutOfOrderAndTwice(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	reg := standard.New()
	rec := ultimatumRecord("m1", "t1", "a", "b", 40, matchv1.EndCause_END_CAUSE_AGREEMENT)

	// match_ended and match_started first, seq 2 and 3 missing: nothing to compute yet.
	st, err := s.Ingest(ctx, reg, delivered(rec[3], rec[0]))
	if err != nil {
		t.Fatal(err)
	}
	if st.Stored != 2 || len(st.Computed) != 0 {
		t.Fatalf("first batch: %+v", st)
	}
	if _, err := s.Row(ctx, "m1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("row of an incomplete match: %v", err)
	}
	// seq 3 and again match_ended: still incomplete; the copy is ignored.
	st, err = s.Ingest(ctx, reg, delivered(rec[2], rec[3]))
	if err != nil {
		t.Fatal(err)
	}
	if st.Stored != 1 || st.Duplicates != 1 || len(st.Computed) != 0 {
		t.Fatalf("second batch: %+v", st)
	}
	// seq 2 completes it, together with copies of everything.
	st, err = s.Ingest(ctx, reg, delivered(rec[1], rec[0], rec[1], rec[3]))
	if err != nil {
		t.Fatal(err)
	}
	if st.Stored != 1 || st.Duplicates != 3 || len(st.Computed) != 1 || st.Computed[0] != "m1" {
		t.Fatalf("third batch: %+v", st)
	}
	// The whole record again: nothing changes, nothing is computed twice.
	st, err = s.Ingest(ctx, reg, delivered(rec...))
	if err != nil {
		t.Fatal(err)
	}
	if st.Stored != 0 || st.Duplicates != 4 || len(st.Computed) != 0 {
		t.Fatalf("replayed record: %+v", st)
	}

	want, err := metrics.NewRow(rec, reg)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Row(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if d := diffRows(got, want); d != "" {
		t.Fatalf("stored row differs from the record's: %s", d)
	}
	if v, ok := got.Value("opening_proposal", 0); !ok || v != 40 {
		t.Errorf("family value opening_proposal = %v, %v", v, ok)
	}
	evs, err := s.Events(ctx, "m1")
	if err != nil || len(evs) != 4 {
		t.Fatalf("events: %d, %v", len(evs), err)
	}
	status, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if status != (Status{Events: 4, MatchesSeen: 1, Matches: 1}) {
		t.Errorf("status %+v", status)
	}
}

func TestQueries(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	reg := standard.New()
	var all []Delivered
	// Tournament t1: a beats b twice (a keeps 60 and 70), b beats a once (a, as P2, gets 30 of
	// 100... b keeps 70), one rejection (a tie at 0), one void match.
	all = append(all, delivered(ultimatumRecord("m1", "t1", "a", "b", 40, matchv1.EndCause_END_CAUSE_AGREEMENT)...)...)
	all = append(all, delivered(ultimatumRecord("m2", "t1", "a", "b", 30, matchv1.EndCause_END_CAUSE_AGREEMENT)...)...)
	all = append(all, delivered(ultimatumRecord("m3", "t1", "b", "a", 30, matchv1.EndCause_END_CAUSE_AGREEMENT)...)...)
	all = append(all, delivered(ultimatumRecord("m4", "t1", "b", "a", -1, matchv1.EndCause_END_CAUSE_REJECTED)...)...)
	all = append(all, delivered(ultimatumRecord("m5", "t1", "b", "a", 0, matchv1.EndCause_END_CAUSE_VOID)...)...)
	all = append(all, delivered(ultimatumRecord("x1", "t2", "c", "b", 50, matchv1.EndCause_END_CAUSE_AGREEMENT)...)...)
	if _, err := s.Ingest(ctx, reg, all); err != nil {
		t.Fatal(err)
	}

	rows, err := s.Rows(ctx, Filter{TournamentID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 || rows[0].MatchID != "m1" || rows[4].MatchID != "m5" || !rows[4].Void() {
		t.Fatalf("rows of t1: %d", len(rows))
	}
	if rows, _ := s.Rows(ctx, Filter{TournamentID: "t1", ExcludeVoid: true}); len(rows) != 4 {
		t.Errorf("non-void rows of t1: %d", len(rows))
	}
	if rows, _ := s.Rows(ctx, Filter{Agent: "c"}); len(rows) != 1 || rows[0].MatchID != "x1" {
		t.Errorf("rows of agent c: %v", rows)
	}
	if rows, _ := s.Rows(ctx, Filter{Agent: "c@1"}); len(rows) != 1 {
		t.Errorf("rows of agent c@1: %v", rows)
	}
	if rows, _ := s.Rows(ctx, Filter{Agent: "c@2"}); len(rows) != 0 {
		t.Errorf("rows of agent c@2: %v", rows)
	}
	if rows, _ := s.Rows(ctx, Filter{Game: "buysell"}); len(rows) != 0 {
		t.Errorf("rows of buysell: %v", rows)
	}

	// Paging: 6 matches, 4 then 2.
	page1, next, err := s.Matches(ctx, Filter{}, Page{Size: 4})
	if err != nil || len(page1) != 4 || next == "" {
		t.Fatalf("page 1: %d, %q, %v", len(page1), next, err)
	}
	page2, next2, err := s.Matches(ctx, Filter{}, Page{Size: 4, Token: next})
	if err != nil || len(page2) != 2 || next2 != "" || page2[1].MatchID != "x1" || len(page2[1].Seats) != 2 {
		t.Fatalf("page 2: %+v, %q, %v", page2, next2, err)
	}
	if _, _, err := s.Matches(ctx, Filter{}, Page{Token: "zzz"}); !errors.Is(err, ErrBadPageToken) {
		t.Errorf("bad token: %v", err)
	}

	// Usage: seat 1 of every match reported model m-1.
	us, err := s.Usage(ctx, Filter{TournamentID: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(us) != 1 || us[0].Model != "m-1" || us[0].Matches != 5 || us[0].PromptTokens != 500 || us[0].Calls != 20 ||
		us[0].FormatFailures != 5 || us[0].FormatFailureRate != 0.25 || us[0].RetryRate != 0.25 ||
		us[0].Fallbacks != 5 || us[0].FallbackActions != 15 || us[0].BudgetFallbacks != 10 || us[0].CachedTokens != 35 || us[0].CostMicrodollars != 55 {
		t.Errorf("usage %+v", us)
	}

	// Leaderboard of t1 without the void match: comparisons a>b (m1, m2), b>a (m3), tie (m4):
	// a scores 2.5 of 4, so with no prior p_a/p_b = 2.5/1.5.
	lb, err := s.Leaderboard(ctx, Filter{TournamentID: "t1", Game: "ultimatum"}, ratings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if lb.Matches != 4 || lb.Void != 1 || len(lb.Entries) != 2 || lb.Entries[0].Agent != "a@1" {
		t.Fatalf("leaderboard %+v", lb)
	}
	if r := lb.Entries[0].Strength / lb.Entries[1].Strength; r < 5.0/3-1e-9 || r > 5.0/3+1e-9 {
		t.Errorf("strength ratio %v, want 5/3", r)
	}
	// a's payoffs: 60, 70, 30, 0 -> mean 40.
	if lb.Entries[0].MeanPayoff != 40 || lb.Entries[0].Wins != 2 || lb.Entries[0].Ties != 1 {
		t.Errorf("a's entry %+v", lb.Entries[0])
	}
	if _, err := s.Leaderboard(ctx, Filter{}, ratings.Options{}); !errors.Is(err, ErrNoGame) {
		t.Errorf("leaderboard without a game: %v", err)
	}

	// Export.
	var buf bytes.Buffer
	if err := s.Export(ctx, &buf, Filter{TournamentID: "t1"}, CSV); err != nil {
		t.Fatal(err)
	}
	table, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 6 {
		t.Fatalf("csv has %d lines, want header + 5", len(table))
	}
	col := map[string]int{}
	for i, name := range table[0] {
		col[name] = i
	}
	for _, name := range []string{"match_id", "seed", "cause", "seat0_agent", "payoff_seat0", "opening_proposal_seat0", "turns_to_agreement", "seat1_model", "seat1_prompt_tokens"} {
		if _, ok := col[name]; !ok {
			t.Errorf("csv has no column %s: %v", name, table[0])
		}
	}
	if got := table[1][col["payoff_seat0"]]; got != "60" {
		t.Errorf("m1 payoff_seat0 = %q", got)
	}
	if got := table[4][col["turns_to_agreement"]]; got != "" {
		t.Errorf("m4 (rejected) turns_to_agreement = %q, want empty", got)
	}
	if got := table[5][col["cause"]]; got != "END_CAUSE_VOID" {
		t.Errorf("m5 cause = %q", got)
	}
	buf.Reset()
	if err := s.Export(ctx, &buf, Filter{TournamentID: "t1"}, JSONL); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("jsonl has %d lines", len(lines))
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &obj); err != nil {
		t.Fatal(err)
	}
	if obj["match_id"] != "m1" || obj["seed"] != "7" || obj["payoff_seat0"] != 60.0 || obj["agreement"] != true {
		t.Errorf("jsonl line 1: %v", obj)
	}
	if strings.Contains(buf.String(), "secret") {
		t.Error("raw model output exported")
	}
}

// TestBrokenRecords keeps matches whose metrics fail or whose record is unreadable, once.
func TestBrokenRecords(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	reg := standard.New()
	// A buysell record whose proposal names a third seat: the family fails, the row keeps the
	// common values.
	bad := ultimatumRecord("b1", "", "a", "b", 40, matchv1.EndCause_END_CAUSE_AGREEMENT)
	bad[0].GetMatchStarted().Game = "buysell"
	bad[1].GetActionTaken().GetAction().GetMove().GetPropose().GetProposal().GetAllocation().Shares[0].Seat = 5
	// A record whose first event is not match_started.
	worse := ultimatumRecord("b2", "", "a", "b", 40, matchv1.EndCause_END_CAUSE_AGREEMENT)
	worse[0] = &eventsv1.MatchEvent{MatchId: "b2", Seq: 1, Payload: &eventsv1.MatchEvent_PhaseStarted{PhaseStarted: &eventsv1.PhaseStarted{Phase: "x"}}}
	st, err := s.Ingest(ctx, reg, append(delivered(bad...), delivered(worse...)...))
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Computed) != 2 {
		t.Fatalf("computed %v", st.Computed)
	}
	row, err := s.Row(ctx, "b1")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := row.Value(metrics.ValuePayoff, 0); !ok {
		t.Error("common values missing")
	}
	if _, ok := row.Value("price_1", metrics.WholeMatch); ok {
		t.Error("family values present")
	}
	info, err := s.Match(ctx, "b1")
	if err != nil || !strings.Contains(info.Error, "seat") {
		t.Errorf("b1 info %+v, %v", info, err)
	}
	if _, err := s.Row(ctx, "b2"); !errors.Is(err, ErrNotFound) {
		t.Errorf("row of an unreadable record: %v", err)
	}
	ms, _, err := s.Matches(ctx, Filter{}, Page{})
	if err != nil || len(ms) != 2 || ms[1].Error == "" {
		t.Errorf("listing %+v, %v", ms, err)
	}
	status, _ := s.Status(ctx)
	if status.Errors != 2 {
		t.Errorf("status %+v", status)
	}
}

func TestSchemaVersion(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "a.db")
	s, err := OpenStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := OpenStore(ctx, path); !errors.Is(err, ErrSchema) {
		t.Errorf("a database of another version was opened: %v", err)
	}
}

// TestLabelsKeyRatings: seats with an organiser's label are rated under it, so two variants of
// one program (same name and version) stay apart; seats without one keep name@version.
func TestLabelsKeyRatings(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	reg := standard.New()
	label := func(evs []*eventsv1.MatchEvent, labels ...string) []*eventsv1.MatchEvent {
		for i, l := range labels {
			evs[0].GetMatchStarted().GetSeats()[i].Label = l
		}
		return evs
	}
	var all []*eventsv1.MatchEvent
	// "concede" as tough (asks 70) beats itself as soft; an unlabelled concede plays too.
	all = append(all, label(ultimatumRecord("l1", "", "concede", "concede", 30, matchv1.EndCause_END_CAUSE_AGREEMENT), "tough", "soft")...)
	all = append(all, label(ultimatumRecord("l2", "", "concede", "concede", 30, matchv1.EndCause_END_CAUSE_AGREEMENT), "tough", "soft")...)
	all = append(all, ultimatumRecord("l3", "", "concede", "fair", 50, matchv1.EndCause_END_CAUSE_AGREEMENT)...)
	if _, err := s.Ingest(ctx, reg, delivered(all...)); err != nil {
		t.Fatal(err)
	}
	lb, err := s.Leaderboard(ctx, Filter{Game: "ultimatum"}, ratings.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range lb.Entries {
		keys = append(keys, e.Agent)
	}
	if got := strings.Join(keys, " "); got != "tough concede@1 fair@1 soft" && got != "tough fair@1 concede@1 soft" {
		t.Errorf("leaderboard keys %q, want tough first, soft last, concede@1 and fair@1 apart", got)
	}
	row, err := s.Row(ctx, "l1")
	if err != nil {
		t.Fatal(err)
	}
	if row.Seats[0].Label != "tough" || row.Seats[0].AgentKey() != "tough" || row.Seats[0].Agent != "concede" {
		t.Errorf("seat 0 of l1: %+v", row.Seats[0])
	}
	for _, tc := range []struct {
		agent string
		want  int
	}{{"tough", 2}, {"concede@1", 1}, {"concede", 3}, {"soft", 2}} {
		ms, _, err := s.Matches(ctx, Filter{Agent: tc.agent}, Page{})
		if err != nil || len(ms) != tc.want {
			t.Errorf("matches of agent %q: %d (%v), want %d", tc.agent, len(ms), err, tc.want)
		}
	}
}

// TestSchemaUpgrade opens a database of version 1 (no labels) and finds it upgraded.
func TestSchemaUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.db")
	s, err := OpenStore(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Ingest(ctx, standard.New(), delivered(ultimatumRecord("old", "", "a", "b", 40, matchv1.EndCause_END_CAUSE_AGREEMENT)...)); err != nil {
		t.Fatal(err)
	}
	// Make it a version 1 file: seats without the label column.
	for _, q := range []string{
		"CREATE TABLE seats1 AS SELECT match_id, seat, name, role, agent, agent_version, agent_key, payoff, faulted FROM seats",
		"DROP TABLE seats",
		"ALTER TABLE seats1 RENAME TO seats",
		"PRAGMA user_version = 1",
	} {
		if _, err := s.db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	s.Close()
	s, err = OpenStore(ctx, path)
	if err != nil {
		t.Fatalf("opening a version 1 database: %v", err)
	}
	defer s.Close()
	row, err := s.Row(ctx, "old")
	if err != nil || row.Seats[0].AgentKey() != "a@1" {
		t.Fatalf("row of the old match: %+v, %v", row, err)
	}
	var version int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version != SchemaVersion {
		t.Fatalf("version %d (%v), want %d", version, err, SchemaVersion)
	}
}
