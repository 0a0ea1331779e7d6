package bayes_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/bayes"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	dondv1 "github.com/parley-arena/parley/gen/go/parley/games/dealornodeal/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
)

// newAgent returns a bayes agent with the default settings.
func newAgent(t *testing.T) *bayes.Agent {
	t.Helper()
	a, err := bayes.New(bayes.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// firstObservation returns Alice's first observation of a match with p.
func firstObservation(t *testing.T, p *dondv1.Params) *agentv1.Observation {
	t.Helper()
	g := dealornodeal.New()
	params, err := g.Resolve(&matchv1.GameParams{Family: &matchv1.GameParams_Dealornodeal{Dealornodeal: p}})
	if err != nil {
		t.Fatal(err)
	}
	st, err := games.Start(g, params, 1)
	if err != nil {
		t.Fatal(err)
	}
	return st.Observe(dealornodeal.Alice)
}

// A set-up whose belief no move could weigh is refused at once, saying why, instead of
// enumerating the opponent's value vectors for longer than any match lasts.
func TestRefusesSetUpsTooLargeToWeigh(t *testing.T) {
	// Five types of nine items, worth 1000 each to one side: over 10^10 value vectors.
	obs := firstObservation(t, &dondv1.Params{
		Items: []string{"a", "b", "c", "d", "e"}, Counts: []int64{9, 9, 9, 9, 9},
		AliceValues: []int64{1000, 0, 0, 0, 0}, BobValues: []int64{0, 0, 0, 0, 1000},
	})
	_, err := newAgent(t).Act(t.Context(), obs)
	if err == nil || !strings.Contains(err.Error(), "than one move can weigh") {
		t.Fatalf("Act = %v, want a refusal of the set-up's size", err)
	}
}

// Once its move's context has ended, the agent stops weighing and says why.
func TestStopsWhenTheMoveEnds(t *testing.T) {
	// 100,000 allocations and 5 value vectors: work of a good fraction of a second.
	obs := firstObservation(t, &dondv1.Params{
		Items: []string{"a", "b", "c", "d", "e"}, Counts: []int64{9, 9, 9, 9, 9},
		AliceValues: []int64{1, 0, 0, 0, 0}, BobValues: []int64{0, 0, 0, 0, 1},
	})
	a := newAgent(t)
	if _, err := a.Act(t.Context(), obs); err != nil {
		t.Fatalf("with time to think: %v", err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := a.Act(ctx, obs); !errors.Is(err, context.Canceled) {
		t.Fatalf("after its move ended: %v, want context.Canceled", err)
	}
}
