package reproduce

import (
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/research/studies"
)

// TestArenaDrawnSetUpNeedsVaryingValues: a set-up that draws the seller's cost and the buyer's
// willingness per game (Figure 8's anchoring) takes the matches of a tournament whose values
// vary, and not those of a tournament of fixed values that merely fall within its ranges
// (Figure 4's cost 40 and willingness 60 between two GPT-4 seats).
func TestArenaDrawnSetUpNeedsVaryingValues(t *testing.T) {
	study, err := studies.Load("negotiationarena")
	if err != nil {
		t.Fatal(err)
	}
	built, err := newArenaMatcher(study, families.New())
	if err != nil {
		t.Fatal(err)
	}
	m := built.(*arenaMatcher)
	i := slices.IndexFunc(m.runs, func(r arenaRun) bool { return r.id == "anchoring" })
	if i < 0 {
		t.Fatal("the study has no anchoring set-up")
	}
	set := m.runs[i].params.GetBuysell()
	if set.GetCostMin() == set.GetCostMax() {
		t.Fatalf("anchoring draws no cost: %v", set)
	}
	// A match of the set-up as the import records it: the values it drew, no draw left.
	match := func(tid string, cost int64) *eventsv1.MatchStarted {
		gp := proto.Clone(m.runs[i].params).(*matchv1.GameParams)
		b := gp.GetBuysell()
		b.Draw, b.Cost, b.Willingness = proto.Bool(false), proto.Int64(cost), proto.Int64(set.GetWillingnessMax())
		return &eventsv1.MatchStarted{TournamentId: tid, Game: m.runs[i].game, Params: gp, Seats: []*gamev1.SeatInfo{
			{Label: "gpt-4-1106-preview"}, {Label: "gpt-4-1106-preview"},
		}}
	}
	fixed := []*eventsv1.MatchStarted{match("na-fixed", set.GetCostMin()), match("na-fixed", set.GetCostMin())}
	drawn := []*eventsv1.MatchStarted{match("na-drawn", set.GetCostMin()), match("na-drawn", set.GetCostMax())}
	m.Prepare(append(slices.Clone(fixed), drawn...))
	for _, s := range fixed {
		if runs, _ := m.Runs(s); slices.Contains(runs, "anchoring") {
			t.Errorf("a match of a tournament of fixed values (cost %d) filed under anchoring: %v", s.GetParams().GetBuysell().GetCost(), runs)
		}
	}
	for _, s := range drawn {
		if runs, why := m.Runs(s); !slices.Contains(runs, "anchoring") {
			t.Errorf("a match of a tournament of drawn values (cost %d) not filed under anchoring: %v %s", s.GetParams().GetBuysell().GetCost(), runs, why)
		}
	}
}
