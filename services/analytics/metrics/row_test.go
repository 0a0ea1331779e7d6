package metrics_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

type fakeFamily struct{}

func (fakeFamily) Games() []string { return []string{"g"} }
func (fakeFamily) Match(evs []*eventsv1.MatchEvent) ([]metrics.Value, error) {
	return []metrics.Value{{Name: "events", Seat: metrics.WholeMatch, Value: float64(len(evs))}}, nil
}

func record(cause matchv1.EndCause) []*eventsv1.MatchEvent {
	seat := func(i int32, name, agent string) *gamev1.SeatInfo {
		return &gamev1.SeatInfo{Seat: i, Name: name, Agent: &gamev1.AgentInfo{Name: agent, Version: "2"}}
	}
	return []*eventsv1.MatchEvent{
		{MatchId: "m", Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
			Game: "g", Seed: 9, TournamentId: "t", Seats: []*gamev1.SeatInfo{seat(0, "P1", "a"), seat(1, "P2", "b")}}}},
		{MatchId: "m", Seq: 2, Turn: 1, Payload: &eventsv1.MatchEvent_ActionRefused{ActionRefused: &eventsv1.ActionRefused{Seat: 1}}},
		{MatchId: "m", Seq: 3, Turn: 1, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: 0}}},
		{MatchId: "m", Seq: 4, Turn: 2, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: 1}}},
		{MatchId: "m", Seq: 5, Turn: 2, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{
			Cause: cause, Agreement: cause == matchv1.EndCause_END_CAUSE_AGREEMENT, Payoffs: []float64{60, 40}, FaultedSeats: []int32{1}}}}},
	}
}

func TestNewRow(t *testing.T) {
	reg, err := metrics.NewRegistry(fakeFamily{})
	if err != nil {
		t.Fatal(err)
	}
	row, err := metrics.NewRow(record(matchv1.EndCause_END_CAUSE_AGREEMENT), reg)
	if err != nil {
		t.Fatal(err)
	}
	if row.MatchID != "m" || row.TournamentID != "t" || row.Game != "g" || row.Seed != 9 || row.Turns != 2 || !row.Agreement || row.Void() {
		t.Fatalf("row = %+v", row)
	}
	if k := row.Seats[1].AgentKey(); k != "b@2" || !row.Seats[1].Faulted || row.Seats[0].Faulted {
		t.Errorf("seat 1 = %+v (key %q)", row.Seats[1], k)
	}
	checks := []struct {
		name string
		seat int32
		want float64
	}{
		{metrics.ValueAgreement, metrics.WholeMatch, 1}, {metrics.ValueTurns, metrics.WholeMatch, 2},
		{metrics.ValuePayoff, 0, 60}, {metrics.ValuePayoff, 1, 40}, {metrics.ValueRefused, 1, 1},
		{metrics.ValueRefused, 0, 0}, {metrics.ValueFaulted, 1, 1}, {"events", metrics.WholeMatch, 5},
		{metrics.ValueMoves, 0, 1}, {metrics.ValueMoves, 1, 1},
	}
	for _, c := range checks {
		if got, ok := row.Value(c.name, c.seat); !ok || got != c.want {
			t.Errorf("%s seat %d = %v (present %v), want %v", c.name, c.seat, got, ok, c.want)
		}
	}
	// A void match keeps its common values but skips the family's metrics.
	void, err := metrics.NewRow(record(matchv1.EndCause_END_CAUSE_VOID), reg)
	if err != nil {
		t.Fatal(err)
	}
	if !void.Void() {
		t.Error("void match not reported void")
	}
	if _, ok := void.Value("events", metrics.WholeMatch); ok {
		t.Error("family metrics computed for a void match")
	}
	if _, err := metrics.NewRow(record(matchv1.EndCause_END_CAUSE_AGREEMENT)[:4], reg); err == nil {
		t.Error("a record without match_ended gave a row")
	}
	if _, err := metrics.NewRegistry(fakeFamily{}, fakeFamily{}); err == nil {
		t.Error("two families for one game were accepted")
	}
}

// Finished takes a whole record and refuses one that lacks its start or its end.
func TestFinished(t *testing.T) {
	evs := record(matchv1.EndCause_END_CAUSE_AGREEMENT)
	started, ended, err := metrics.Finished(evs)
	if err != nil || started != evs[0].GetMatchStarted() || ended != evs[len(evs)-1].GetMatchEnded() {
		t.Fatalf("Finished(whole record) = %v, %v, %v", started, ended, err)
	}
	if _, _, err := metrics.Finished(evs[:len(evs)-1]); err == nil {
		t.Error("a record without its end passed")
	}
	if _, _, err := metrics.Finished(evs[1:]); err == nil {
		t.Error("a record without its start passed")
	}
}

// TestRowFallbacks: a row counts the moves that were not its agents' own (reported fallbacks,
// or one for a faulted seat that reported none), says when a fault ended the match, and when a
// budget cut it short.
func TestRowFallbacks(t *testing.T) {
	usage := func(seat int32, u *agentv1.Usage) *eventsv1.SeatUsage {
		return &eventsv1.SeatUsage{Seat: seat, Total: u}
	}
	for _, tc := range []struct {
		name      string
		cause     matchv1.EndCause
		usage     []*eventsv1.SeatUsage
		fallbacks int
		cut       bool
	}{
		// Seat 1 faulted (record's faulted_seats) and reported nothing: one default.
		{"a faulted seat", matchv1.EndCause_END_CAUSE_AGENT_FAULT, nil, 1, false},
		{"reported fallbacks", matchv1.EndCause_END_CAUSE_AGREEMENT, []*eventsv1.SeatUsage{
			usage(0, &agentv1.Usage{Fallback: true, Fallbacks: 3}), usage(1, &agentv1.Usage{Fallback: true})}, 4, false},
		{"a budget cut it short", matchv1.EndCause_END_CAUSE_VOID, []*eventsv1.SeatUsage{
			usage(0, &agentv1.Usage{Fallback: true, Fallbacks: 1, BudgetFallbacks: 1, FallbackCause: agentv1.FallbackCause_FALLBACK_CAUSE_BUDGET})}, 2, true},
	} {
		evs := record(tc.cause)
		evs[len(evs)-1].GetMatchEnded().Usage = tc.usage
		row, err := metrics.NewRow(evs, nil)
		if err != nil {
			t.Fatal(err)
		}
		if row.Fallbacks() != tc.fallbacks || row.CutByBudget() != tc.cut || row.EndedByFault() != (tc.cause == matchv1.EndCause_END_CAUSE_AGENT_FAULT) {
			t.Errorf("%s: fallbacks %d, cut %v, ended by fault %v; want %d, %v", tc.name, row.Fallbacks(), row.CutByBudget(), row.EndedByFault(), tc.fallbacks, tc.cut)
		}
	}
}
