package dondgreedy_test

import (
	"context"
	"slices"
	"testing"

	"github.com/parley-arena/parley/agents/dondgreedy"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// TestPlan: Alice of the README's set-up (values 2, 3, 1 for 1 book, 2 hats, 2 balls) asks
// for everything (10), then gives up a ball (9), then the book or a ball... each allocation
// worth at least 5 to her, best first, ties in her own counts ascending.
func TestPlan(t *testing.T) {
	g := solution.Game{Counts: []int{1, 2, 2}, Values: [2][]int{{2, 3, 1}, nil}}
	plan := dondgreedy.Plan(g, 0)
	want := []solution.Alloc{{1, 2, 2}, {1, 2, 1}, {0, 2, 2}, {1, 2, 0}}
	if !slices.EqualFunc(plan[:4], want, slices.Equal) {
		t.Errorf("plan starts %v, want %v", plan[:4], want)
	}
	for _, a := range plan {
		if solution.Score(a.Bundle(0, g.Counts), g.Values[0]) < 5 {
			t.Errorf("%v is worth less than half the pool to Alice", a)
		}
	}
}

// TestAct: the agent proposes its plan in order and accepts what is worth its next proposal.
func TestAct(t *testing.T) {
	st, err := games.Start(dealornodeal.New(), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	a := dondgreedy.New()
	act, err := a.Act(context.Background(), st.Observe(0))
	if err != nil {
		t.Fatal(err)
	}
	got, err := dealornodeal.Division([]string{"book", "hat", "ball"}, []int{1, 2, 2}, act.GetMove().GetPropose().GetProposal().GetAllocation())
	if err != nil || !slices.Equal(got, solution.Alloc{1, 2, 2}) {
		t.Fatalf("first proposal %v %v", got, err)
	}
	if _, err := st.Apply(0, act); err != nil {
		t.Fatal(err)
	}
	// Bob (values 8, 1, 0) next asks for everything; Alice then gets a proposal worth 0, below
	// her next ask (9), and counters.
	act, err = a.Act(context.Background(), st.Observe(1))
	if err != nil || act.GetMove().GetAccept() != nil {
		t.Fatalf("Bob accepts a split worth 0 to him: %v %v", act, err)
	}
	if _, err := st.Apply(1, act); err != nil {
		t.Fatal(err)
	}
	act, err = a.Act(context.Background(), st.Observe(0))
	if err != nil || act.GetMove().GetPropose() == nil {
		t.Fatalf("Alice: %v %v", act, err)
	}
}
