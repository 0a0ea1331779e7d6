package sequential_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/sequential"
	"github.com/parley-arena/parley/services/analytics/metrics"
	seqmetrics "github.com/parley-arena/parley/services/analytics/metrics/sequential"
)

func record(t *testing.T, kvs []string, moves ...string) []*eventsv1.MatchEvent {
	t.Helper()
	gp, err := games.ParseParams(sequential.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	g := sequential.New()
	params, err := g.Resolve(gp)
	if err != nil {
		t.Fatal(err)
	}
	st, err := games.Start(g, params, 1)
	if err != nil {
		t.Fatal(err)
	}
	evs := []*eventsv1.MatchEvent{{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{Game: sequential.Name, Params: params}}}}
	for _, id := range moves {
		seat, turn := st.ToMove()[0], st.Turn()
		a := &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: id}}}}
		if _, err := st.Apply(seat, a); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, &eventsv1.MatchEvent{Turn: turn, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: seat, Action: a}}})
	}
	return append(evs, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: st.Outcome()}}})
}

func get(vals []metrics.Value, name string, seat int32) (float64, bool) {
	for _, v := range vals {
		if v.Name == name && v.Seat == seat {
			return v.Value, true
		}
	}
	return 0, false
}

// TestMonopoly: staying out is a Nash outcome but not the subgame-perfect path; entering and
// accommodating is both.
func TestMonopoly(t *testing.T) {
	for _, tc := range []struct {
		moves    []string
		eq, nash float64
		path     string
	}{
		{[]string{"a1"}, 0, 1, "path:a1"},
		{[]string{"a2", "b1"}, 1, 1, "path:a2,b1"},
		{[]string{"a2", "b2"}, 0, 0, "path:a2,b2"},
	} {
		vals, err := seqmetrics.New().Match(record(t, []string{"game=monopoly"}, tc.moves...))
		if err != nil {
			t.Fatal(err)
		}
		eq, _ := get(vals, "equilibrium", metrics.WholeMatch)
		nash, _ := get(vals, "nash_outcome", metrics.WholeMatch)
		path, ok := get(vals, tc.path, metrics.WholeMatch)
		if eq != tc.eq || nash != tc.nash || !ok || path != 1 {
			t.Errorf("%v: values %v", tc.moves, vals)
		}
	}
}

// TestTrigameNeutral: the SPE path played under neutral labels, named by the tree's own ids.
func TestTrigameNeutral(t *testing.T) {
	vals, err := seqmetrics.New().Match(record(t, []string{"game=trigame", "neutral_labels=true"}, "choice_2", "choice_1", "choice_2"))
	if err != nil {
		t.Fatal(err)
	}
	if eq, _ := get(vals, "equilibrium", metrics.WholeMatch); eq != 1 {
		t.Errorf("equilibrium %v", vals)
	}
	if a, _ := get(vals, "action:a2", 0); a != 1 {
		t.Errorf("Alice's a2 share %v: %v", a, vals)
	}
	if _, ok := get(vals, "path:a2,b1,a2", metrics.WholeMatch); !ok {
		t.Errorf("no path value: %v", vals)
	}
}

// TestTrustChainThreePlayers: in the three-player trust chain, invest-forward-share is a
// subgame-perfect outcome (Cat and Ben indifferent, Ann then invests: 2 > 1) and nothing
// dominates it; invest-grab is not (Ann would keep: 1 > 0), nor a Nash outcome.
func TestTrustChainThreePlayers(t *testing.T) {
	for _, tc := range []struct {
		moves        []string
		eq, po, nash float64
		seat         int32
		action       string
		actionShare  float64
	}{
		{[]string{"invest", "forward", "share"}, 1, 1, 1, 2, "action:share", 1},
		{[]string{"invest", "grab"}, 0, 0, 0, 1, "action:grab", 1},
	} {
		vals, err := seqmetrics.New().Match(record(t, []string{"game=trust_chain"}, tc.moves...))
		if err != nil {
			t.Fatal(err)
		}
		eq, _ := get(vals, "equilibrium", metrics.WholeMatch)
		po, _ := get(vals, "po_equilibrium", metrics.WholeMatch)
		nash, _ := get(vals, "nash_outcome", metrics.WholeMatch)
		share, ok := get(vals, tc.action, tc.seat)
		if eq != tc.eq || po != tc.po || nash != tc.nash || !ok || share != tc.actionShare {
			t.Errorf("%v: equilibrium %v po %v nash %v %s %v, values %v", tc.moves, eq, po, nash, tc.action, share, vals)
		}
	}
}
