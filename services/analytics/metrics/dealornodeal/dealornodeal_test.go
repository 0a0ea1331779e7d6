package dealornodeal_test

import (
	"os"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/dealornodeal/corpus"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
	"github.com/parley-arena/parley/services/analytics/metrics"
	dondmetrics "github.com/parley-arena/parley/services/analytics/metrics/dealornodeal"
)

var items = []string{"book", "hat", "ball"}

// record plays the README's set-up: Alice passes with a belief note, Bob proposes that Alice
// gets the hats and balls, Alice accepts.
func record(t *testing.T) []*eventsv1.MatchEvent {
	t.Helper()
	g := dealornodeal.New()
	params, err := g.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := games.Start(g, params, 1)
	if err != nil {
		t.Fatal(err)
	}
	note := solution.FormatSupport([][]int{{8, 1, 0}, {10, 0, 0}, {0, 5, 0}})
	actions := []*agentv1.Action{
		{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}, PrivateNotes: "first guess\n" + solution.FormatSupport([][]int{{0, 0, 5}})},
		{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: dealornodeal.Proposal(items, []int{1, 2, 2}, solution.Alloc{0, 2, 2})}}}},
		{Move: &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}, PrivateNotes: note},
	}
	evs := []*eventsv1.MatchEvent{{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
		Game: dealornodeal.Name, Params: params, Seats: []*gamev1.SeatInfo{{Seat: 0, Name: "Alice"}, {Seat: 1, Name: "Bob"}},
	}}}}
	for i, a := range actions {
		turn := st.Turn()
		if _, err := st.Apply(games.Seat(i%2), a); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, &eventsv1.MatchEvent{Turn: turn, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: int32(i % 2), Action: a}}})
	}
	return append(evs, &eventsv1.MatchEvent{Turn: st.Turn(), Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: st.Outcome()}}})
}

// TestMatch: (0,2,2) pays 8 and 8, is EF and PO and the Best; 3 turns make 2 rounds; Alice's
// last support holds the truth and two other vectors, one of which has the same Best
// (worked in solution's TestEstimation).
func TestMatch(t *testing.T) {
	reg, err := metrics.NewRegistry(dondmetrics.New())
	if err != nil {
		t.Fatal(err)
	}
	row, err := metrics.NewRow(record(t), reg)
	if err != nil {
		t.Fatal(err)
	}
	w := metrics.WholeMatch
	for _, c := range []struct {
		name string
		seat int32
		want float64
	}{
		{metrics.ValueAgreement, w, 1}, {metrics.ValueTurns, w, 3}, {dondmetrics.ValueRounds, w, 2},
		{metrics.ValuePayoff, 0, 8}, {metrics.ValuePayoff, 1, 8}, {dondmetrics.ValuePO, w, 1}, {dondmetrics.ValueEF, w, 1},
		{dondmetrics.ValueTotal, w, 16}, {dondmetrics.ValueBestTotal, w, 16}, {dondmetrics.ValueHasEF, w, 1}, {dondmetrics.ValueDistance, w, 9},
		{dondmetrics.ValueEstPrecision, 0, 1}, {dondmetrics.ValueEstSupport, 0, 3}, {dondmetrics.ValueEstIndPrec, 0, 1},
	} {
		if got, ok := row.Value(c.name, c.seat); !ok || got != c.want {
			t.Errorf("%s (seat %d) = %v (%v), want %v", c.name, c.seat, got, ok, c.want)
		}
	}
	if _, ok := row.Value(dondmetrics.ValueEstPrecision, 1); ok {
		t.Error("Bob wrote no belief, yet has estimation values")
	}
}

// TestHumanAndBest: the sample's first dialogue (1 book, 2 hats, 2 balls; Alice values 4, 1, 2,
// Bob 0, 3, 2) ends with Alice taking the book and both balls: 8 to her, 6 to Bob, EF (both at
// least 5) and PO (only a ball could move, at equal value to both). The largest total is 14
// (book to Alice, hats to Bob, balls worth 2 to either); the first EF allocation of total 14
// in enumeration order is (1,0,1): Alice 6, Bob 8.
func TestHumanAndBest(t *testing.T) {
	b, err := os.ReadFile("../../../../referee/games/dealornodeal/corpus/testdata/sample_tagged.txt")
	if err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Parse("sample", b)
	if err != nil {
		t.Fatal(err)
	}
	points := c.Datapoints()
	human := dondmetrics.Summarize([][]metrics.Value{dondmetrics.HumanValues(points[0])})
	if human.Score != [2]float64{8, 6} || human.PO != 1 || human.EF != 1 || human.Total != 14 || human.Turns != 2 || human.Rounds != 1 {
		t.Errorf("human %+v", human)
	}
	best, ok := dondmetrics.BestValues(points[0].Game)
	if !ok {
		t.Fatal("no Best")
	}
	s := dondmetrics.Summarize([][]metrics.Value{best})
	if s.Score != [2]float64{6, 8} || s.Total != 14 || s.Agreement != 1 || s.Turns == s.Turns {
		t.Errorf("best %+v (turns must be NaN)", s)
	}
	// The no-agreement dialogue (2) counts 0 and neither PO nor EF; averaged with the first.
	both := dondmetrics.Summarize([][]metrics.Value{dondmetrics.HumanValues(points[0]), dondmetrics.HumanValues(points[1])})
	if both.Agreement != 0.5 || both.Score != [2]float64{4, 3} || both.PO != 0.5 || both.EF != 0.5 {
		t.Errorf("two dialogues %+v", both)
	}
}
