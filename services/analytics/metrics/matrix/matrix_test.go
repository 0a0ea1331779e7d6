package matrix_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/matrix"
	"github.com/parley-arena/parley/services/analytics/metrics"
	matrixmetrics "github.com/parley-arena/parley/services/analytics/metrics/matrix"
)

// record plays choices (one option id per seat, one list per round) on the rules and writes the
// record as the runner would: match_started with resolved params, action_taken per move,
// match_ended.
func record(t *testing.T, kvs []string, rounds ...[]string) []*eventsv1.MatchEvent {
	t.Helper()
	gp, err := games.ParseParams(matrix.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	g := matrix.New()
	params, err := g.Resolve(gp)
	if err != nil {
		t.Fatal(err)
	}
	st, err := games.Start(g, params, 1)
	if err != nil {
		t.Fatal(err)
	}
	evs := []*eventsv1.MatchEvent{{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{Game: matrix.Name, Params: params}}}}
	for _, r := range rounds {
		for seat, id := range r {
			turn := st.Turn()
			a := &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: id}}}}
			if _, err := st.Apply(games.Seat(seat), a); err != nil {
				t.Fatal(err)
			}
			evs = append(evs, &eventsv1.MatchEvent{Turn: turn, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: int32(seat), Action: a}}})
		}
	}
	return append(evs, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: st.Outcome()}}})
}

func get(t *testing.T, vals []metrics.Value, name string, seat int32) float64 {
	t.Helper()
	for _, v := range vals {
		if v.Name == name && v.Seat == seat {
			return v.Value
		}
	}
	t.Fatalf("no value %s for seat %d in %v", name, seat, vals)
	return 0
}

// TestRepeatedPD: three rounds (D,D), (C,D), (C,C). Only (D,D) is an equilibrium, and, being
// the only one, counts as Pareto-optimal among equilibria: 1/3 each. (C,D) and (C,C) are
// Pareto-optimal profiles, (D,D) is not: 2/3.
func TestRepeatedPD(t *testing.T) {
	evs := record(t, []string{"rounds=3"}, []string{"defect", "defect"}, []string{"cooperate", "defect"}, []string{"cooperate", "cooperate"})
	vals, err := matrixmetrics.New().Match(evs)
	if err != nil {
		t.Fatal(err)
	}
	w := metrics.WholeMatch
	expect(t, vals, []want{
		{"rounds", w, 3}, {"equilibrium", w, 1.0 / 3}, {"po_equilibrium", w, 1.0 / 3}, {"pareto_optimal", w, 2.0 / 3},
		{"profile:defect,defect", w, 1.0 / 3}, {"profile:defect,cooperate", w, 0},
		{"action:cooperate", 0, 2.0 / 3}, {"action:defect", 1, 2.0 / 3},
	})
}

type want struct {
	name  string
	seat  int32
	value float64
}

func expect(t *testing.T, vals []metrics.Value, wants []want) {
	t.Helper()
	for _, c := range wants {
		if got := get(t, vals, c.name, c.seat); got != c.value {
			t.Errorf("%s (seat %d) = %v, want %v", c.name, c.seat, got, c.value)
		}
	}
}

// TestStagHuntNeutral: (hare, hare) is an equilibrium but not the Pareto-optimal one; under
// neutral labels the values still use the table's own ids.
func TestStagHuntNeutral(t *testing.T) {
	evs := record(t, []string{"game=stag_hunt", "neutral_labels=true"}, []string{"choice_2", "choice_2"})
	vals, err := matrixmetrics.New().Match(evs)
	if err != nil {
		t.Fatal(err)
	}
	if get(t, vals, "equilibrium", metrics.WholeMatch) != 1 || get(t, vals, "po_equilibrium", metrics.WholeMatch) != 0 || get(t, vals, "profile:hare,hare", metrics.WholeMatch) != 1 || get(t, vals, "action:hare", 1) != 1 {
		t.Errorf("values %v", vals)
	}
}

// TestVolunteersThreePlayers: two rounds of the three-player volunteer's dilemma. (volunteer,
// wait, wait) has exactly one volunteer: an equilibrium, Pareto-optimal, undominated. (wait,
// wait, wait) is none of these (anyone volunteering gains: 1 > 0; (v, w, w) dominates it).
func TestVolunteersThreePlayers(t *testing.T) {
	evs := record(t, []string{"game=volunteer_dilemma", "rounds=2"}, []string{"volunteer", "wait", "wait"}, []string{"wait", "wait", "wait"})
	vals, err := matrixmetrics.New().Match(evs)
	if err != nil {
		t.Fatal(err)
	}
	w := metrics.WholeMatch
	expect(t, vals, []want{
		{"rounds", w, 2}, {"equilibrium", w, 0.5}, {"po_equilibrium", w, 0.5}, {"pareto_optimal", w, 0.5},
		{"profile:volunteer,wait,wait", w, 0.5}, {"profile:wait,wait,wait", w, 0.5}, {"profile:wait,volunteer,wait", w, 0},
		{"action:volunteer", 0, 0.5}, {"action:wait", 1, 1}, {"action:wait", 2, 1},
	})
}
