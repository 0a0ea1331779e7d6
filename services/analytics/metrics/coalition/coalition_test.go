package coalition_test

import (
	"math"
	"testing"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	coalitionv1 "github.com/parley-arena/parley/gen/go/parley/games/coalition/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/coalition"
)

// split is a proposal: amounts by seat (only members listed).
type split map[int32]int64

// record builds a coalition record: the proposals resolved in order, then match_ended.
func record(values map[string]int64, proposals []split, accepted int, cause matchv1.EndCause, pay []float64) []*eventsv1.MatchEvent {
	params := &matchv1.GameParams{Family: &matchv1.GameParams_Coalition{Coalition: &coalitionv1.Params{Values: values}}}
	evs := []*eventsv1.MatchEvent{{MatchId: "c", Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
		Game: "coalition", Params: params,
		Seats: []*gamev1.SeatInfo{{Seat: 0, Name: "A"}, {Seat: 1, Name: "B"}, {Seat: 2, Name: "C"}}}}}}
	for k, sp := range proposals {
		var shares []*gamev1.SeatShare
		for seat := int32(0); seat < 3; seat++ {
			if amount, ok := sp[seat]; ok {
				shares = append(shares, &gamev1.SeatShare{Seat: seat, Receives: map[string]int64{"g": amount}})
			}
		}
		evs = append(evs, &eventsv1.MatchEvent{MatchId: "c", Seq: uint64(len(evs) + 1), Payload: &eventsv1.MatchEvent_ProposalResolved{ProposalResolved: &eventsv1.ProposalResolved{
			Proposal: &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: shares}}},
			Accepted: k+1 == accepted}}})
	}
	evs = append(evs, &eventsv1.MatchEvent{MatchId: "c", Seq: uint64(len(evs) + 1), Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{
		Outcome: &matchv1.Outcome{Cause: cause, Agreement: cause == matchv1.EndCause_END_CAUSE_AGREEMENT, Payoffs: pay}}}})
	return evs
}

type want struct {
	name string
	seat int32
	v    float64
}

const W = metrics.WholeMatch

func TestMatch(t *testing.T) {
	agree, limit := matchv1.EndCause_END_CAUSE_AGREEMENT, matchv1.EndCause_END_CAUSE_TURN_LIMIT
	// The default game: AB=AC=750, BC=500, ABC=1000. Shapley (1250/3, 875/3, 875/3); the core is
	// the single point (500, 250, 250).
	sh := []float64{1250.0 / 3, 875.0 / 3, 875.0 / 3}
	shapley := []want{{"shapley", 0, sh[0]}, {"shapley", 1, sh[1]}, {"shapley", 2, sh[2]}}
	tests := []struct {
		name   string
		evs    []*eventsv1.MatchEvent
		want   []want
		absent []want
	}{
		{
			name: "grand coalition at the core point, on the second proposal",
			evs:  record(nil, []split{{0: 800, 1: 200}, {0: 500, 1: 250, 2: 250}}, 2, agree, []float64{500, 250, 250}),
			want: append([]want{{"proposals_made", W, 2}, {"proposals_needed", W, 2}, {"winning_coalition", W, 7},
				{"winning_coalition_size", W, 3}, {"coalition_member", 0, 1}, {"coalition_member", 1, 1}, {"coalition_member", 2, 1},
				{"efficiency", W, 1},
				// |500-1250/3| + 2|250-875/3| = 250/3 + 250/3 = 500/3
				{"shapley_l1", W, 500.0 / 3},
				// sqrt((250/3)^2 + 2 (125/3)^2) = sqrt(93750)/3
				{"shapley_l2", W, math.Sqrt(93750) / 3},
				{"in_core", W, 1}, {"core_empty", W, 0}, {"core_distance", W, 0}}, shapley...),
		},
		{
			name: "A and B split 750 as 450/300",
			evs:  record(nil, []split{{0: 450, 1: 300}}, 1, agree, []float64{450, 300, 0}),
			want: []want{{"proposals_made", W, 1}, {"proposals_needed", W, 1}, {"winning_coalition", W, 3},
				{"winning_coalition_size", W, 2}, {"coalition_member", 0, 1}, {"coalition_member", 1, 1}, {"coalition_member", 2, 0},
				{"efficiency", W, 0.75},
				// |450-1250/3| + |300-875/3| + 875/3 = 100/3 + 25/3 + 875/3 = 1000/3
				{"shapley_l1", W, 1000.0 / 3},
				// sqrt((100/3)^2 + (25/3)^2 + (875/3)^2) = sqrt(776250)/3
				{"shapley_l2", W, math.Sqrt(776250) / 3},
				// from (500, 250, 250): sqrt(50^2 + 50^2 + 250^2)
				{"in_core", W, 0}, {"core_distance", W, math.Sqrt(67500)}},
		},
		{
			name: "every proposal rejected",
			evs:  record(nil, []split{{0: 900, 2: 100}, {1: 400, 2: 100}}, 0, limit, []float64{0, 0, 0}),
			want: []want{{"proposals_made", W, 2}, {"winning_coalition", W, 0}, {"coalition_member", 0, 0},
				{"efficiency", W, 0}, {"in_core", W, 0}, {"core_distance", W, math.Sqrt(500*500 + 2*250*250)},
				{"shapley_l1", W, 1000}},
			absent: []want{{name: "proposals_needed", seat: W}, {name: "winning_coalition_size", seat: W}},
		},
		{
			name: "an empty core: A+B is worth more than everyone together",
			evs:  record(map[string]int64{"AB": 120, "ABC": 90}, []split{{0: 60, 1: 60}}, 1, agree, []float64{60, 60, 0}),
			// Shapley: A = B = (120/3 + 120/6... ) computed by hand: see below.
			want: []want{{"core_empty", W, 1}, {"in_core", W, 0}, {"efficiency", W, 120.0 / 90}, {"winning_coalition", W, 3},
				// phi_C = (1/3)(0) + (1/6)(0 + 0) + (1/3)(90 - 120) = -10; phi_A = phi_B = 50
				{"shapley", 0, 50}, {"shapley", 1, 50}, {"shapley", 2, -10}, {"shapley_l1", W, 30}},
			absent: []want{{name: "core_distance", seat: W}},
		},
	}
	fam := coalition.New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := fam.Match(tc.evs)
			if err != nil {
				t.Fatal(err)
			}
			row := metrics.Row{Values: vals}
			for _, w := range tc.want {
				got, ok := row.Value(w.name, w.seat)
				if !ok || math.Abs(got-w.v) > 1e-9 {
					t.Errorf("%s seat %d = %v (present %v), want %v", w.name, w.seat, got, ok, w.v)
				}
			}
			for _, a := range tc.absent {
				if got, ok := row.Value(a.name, a.seat); ok {
					t.Errorf("%s seat %d = %v, want absent", a.name, a.seat, got)
				}
			}
		})
	}
}

func TestNearest(t *testing.T) {
	simplex := [][]float64{{90, 0, 0}, {0, 90, 0}, {0, 0, 90}}
	tests := []struct {
		name   string
		points [][]float64
		x      []float64
		want   []float64
	}{
		{"a single point", [][]float64{{500, 250, 250}}, []float64{0, 0, 0}, []float64{500, 250, 250}},
		{"inside the simplex", simplex, []float64{30, 50, 10}, []float64{30, 50, 10}},
		{"onto the simplex's face", simplex, []float64{0, 0, 0}, []float64{30, 30, 30}},
		// Projecting onto x1+x2+x3 = 90 gives (70, 30, -10), outside; the nearest point is on
		// the edge x3 = 0: (65, 25, 0), with multiplier 15 >= 0 for x3 >= 0.
		{"onto an edge", simplex, []float64{80, 40, 0}, []float64{65, 25, 0}},
		{"onto a vertex", simplex, []float64{200, -10, -10}, []float64{90, 0, 0}},
		{"a segment, from beyond an end", [][]float64{{0, 100}, {100, 0}}, []float64{150, -20}, []float64{100, 0}},
		{"a segment, from the side", [][]float64{{0, 100}, {100, 0}}, []float64{0, 0}, []float64{50, 50}},
		{"repeated points", [][]float64{{1, 1}, {1, 1}, {3, 1}, {3, 1}}, []float64{2, 5}, []float64{2, 1}},
		{"a square in 3-d, from above", [][]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}}, []float64{0.25, 0.75, 4}, []float64{0.25, 0.75, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			y, d := coalition.Nearest(tc.points, tc.x)
			wantD := 0.0
			for i := range y {
				if math.Abs(y[i]-tc.want[i]) > 1e-9 {
					t.Fatalf("nearest %v, want %v", y, tc.want)
				}
				wantD += (tc.x[i] - tc.want[i]) * (tc.x[i] - tc.want[i])
			}
			if math.Abs(d-math.Sqrt(wantD)) > 1e-9 {
				t.Errorf("distance %v, want %v", d, math.Sqrt(wantD))
			}
		})
	}
}
