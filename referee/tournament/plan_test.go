package tournament

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
)

func entrants(n int) []*tournamentv1.Entrant {
	out := make([]*tournamentv1.Entrant, n)
	for i := range out {
		out[i] = &tournamentv1.Entrant{Label: fmt.Sprintf("e%d", i), Address: "builtin:random"}
	}
	return out
}

func TestPlanAssignments(t *testing.T) {
	cases := []struct {
		name          string
		agents, seats int
		selfPlay      bool
		want          [][]int32
	}{
		{"two agents, ordered pairs", 2, 2, false, [][]int32{{0, 1}, {1, 0}}},
		{"two agents with self-play", 2, 2, true, [][]int32{{0, 0}, {0, 1}, {1, 0}, {1, 1}}},
		{"three agents, three seats", 3, 3, false, [][]int32{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, err := Plan(PlanConfig{ID: "t", Game: "g", Seats: tc.seats, Entrants: entrants(tc.agents), GamesPerAssignment: 2, Seed: 5, SelfPlay: tc.selfPlay})
			if err != nil {
				t.Fatal(err)
			}
			if len(spec.Matches) != 2*len(tc.want) || spec.AssignmentsPossible != uint64(len(tc.want)) {
				t.Fatalf("%d matches of %d assignments, want %d of %d", len(spec.Matches), spec.AssignmentsPossible, 2*len(tc.want), len(tc.want))
			}
			for i, m := range spec.Matches {
				a := i % len(tc.want)
				if !slices.Equal(m.Entrants, tc.want[a]) || m.Assignment != uint32(a) || m.GameIndex != uint32(i/len(tc.want)) {
					t.Errorf("match %d = %v", i, m)
				}
				if m.Seed != MatchSeed(5, a, int(m.GameIndex)) {
					t.Errorf("match %s seed %d, want MatchSeed(5, %d, %d)", m.MatchId, m.Seed, a, m.GameIndex)
				}
			}
			if m := spec.Matches[0].MatchId; !strings.HasPrefix(m, "t-s") || !strings.HasSuffix(m, "-a0-g0") || len(m) != len("t-s123456-a0-g0") {
				t.Errorf("first id %q, want t-s<6 hex digits>-a0-g0", m)
			}
		})
	}
	if MatchSeed(5, 0, 0) == MatchSeed(5, 0, 1) || MatchSeed(5, 0, 0) == MatchSeed(6, 0, 0) || MatchSeed(5, 0, 0) == MatchSeed(5, 1, 0) {
		t.Error("match seeds collide")
	}
}

// TestPlanSeedsEveryGame: no two matches of a tournament share a seed, so no entrant meets in
// one game the chance draws (private values) of another: with two entrants, game k of the
// assignment (A, B) and of (B, A) would otherwise deal B as seller the cost A held as seller.
func TestPlanSeedsEveryGame(t *testing.T) {
	spec, err := Plan(PlanConfig{ID: "t", Game: "g", Seats: 2, Entrants: entrants(4), GamesPerAssignment: 5, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[uint64]string{}
	for _, m := range spec.Matches {
		if other, ok := seen[m.Seed]; ok {
			t.Errorf("%s and %s share seed %d", other, m.MatchId, m.Seed)
		}
		seen[m.Seed] = m.MatchId
	}
}

func TestPlanSample(t *testing.T) {
	cfg := PlanConfig{ID: "big", Game: "g", Seats: 3, Entrants: entrants(8), GamesPerAssignment: 1, Seed: 1, MaxAssignments: 10}
	a, err := Plan(cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Plan(cfg)
	if a.AssignmentsPossible != 8*7*6 || len(a.Matches) != 10 {
		t.Fatalf("%d of %d assignments, want 10 of 336", len(a.Matches), a.AssignmentsPossible)
	}
	seen := map[string]bool{}
	for i, m := range a.Matches {
		if !slices.Equal(m.Entrants, b.Matches[i].Entrants) {
			t.Fatal("the same seed gave another sample")
		}
		key := fmt.Sprint(m.Entrants)
		if seen[key] || m.Entrants[0] == m.Entrants[1] || m.Entrants[1] == m.Entrants[2] || m.Entrants[0] == m.Entrants[2] {
			t.Errorf("assignment %v repeated or not distinct", m.Entrants)
		}
		seen[key] = true
	}
	cfg.Seed = 2
	c, _ := Plan(cfg)
	same := 0
	for i := range c.Matches {
		if slices.Equal(c.Matches[i].Entrants, a.Matches[i].Entrants) {
			same++
		}
	}
	if same == len(c.Matches) {
		t.Error("another seed gave the same sample")
	}
}

func TestPlanErrors(t *testing.T) {
	cases := []struct {
		name string
		cfg  PlanConfig
	}{
		{"too few agents", PlanConfig{ID: "t", Seats: 3, Entrants: entrants(2), GamesPerAssignment: 1}},
		{"bad id", PlanConfig{ID: "a.b", Seats: 2, Entrants: entrants(2), GamesPerAssignment: 1}},
		{"no games", PlanConfig{ID: "t", Seats: 2, Entrants: entrants(2)}},
		{"duplicate label", PlanConfig{ID: "t", Seats: 2, Entrants: append(entrants(2), entrants(1)...), GamesPerAssignment: 1}},
	}
	for _, tc := range cases {
		if _, err := Plan(tc.cfg); !errors.Is(err, ErrPlan) {
			t.Errorf("%s: %v, want ErrPlan", tc.name, err)
		}
	}
}

// TestPlanIDsPerSeed: one tournament id planned with two seeds schedules no match id twice (an
// agent keeping anything by match id, a reply cache, would carry one seed's match into the
// other's); planned again with the same seed, the same ids.
func TestPlanIDsPerSeed(t *testing.T) {
	plan := func(seed uint64) []string {
		spec, err := Plan(PlanConfig{ID: "t", Game: "g", Seats: 2, Entrants: entrants(2), GamesPerAssignment: 3, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range spec.Matches {
			ids = append(ids, m.MatchId)
		}
		return ids
	}
	one, again, two := plan(1), plan(1), plan(2)
	if !slices.Equal(one, again) {
		t.Errorf("the same seed planned other ids: %v, %v", one, again)
	}
	for _, id := range two {
		if slices.Contains(one, id) {
			t.Errorf("seeds 1 and 2 both schedule %s", id)
		}
	}
}
