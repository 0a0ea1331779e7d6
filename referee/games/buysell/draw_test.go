package buysell_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
)

// TestDrawnValuesAreRecordedPrivately checks that with draw=true the state opens with one
// chance_drawn event per private value, visible only to its owner and equal to what the rules
// use; with fixed values there is nothing to record.
func TestDrawnValuesAreRecordedPrivately(t *testing.T) {
	g := buysell.New()
	for seed := uint64(1); seed <= 20; seed++ {
		gp, err := g.Resolve(&matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{Draw: proto.Bool(true), Scale: proto.Int64(3)}}})
		if err != nil {
			t.Fatal(err)
		}
		st, err := g.NewState(gp, seed)
		if err != nil {
			t.Fatal(err)
		}
		cost, willingness, err := buysell.Values(gp, seed)
		if err != nil {
			t.Fatal(err)
		}
		if cost < 20*3 || cost > 40*3 || willingness < 60*3 || willingness > 80*3 {
			t.Fatalf("seed %d: drew cost %d, willingness %d outside the scaled ranges", seed, cost, willingness)
		}
		opener, ok := st.(games.Opener)
		if !ok {
			t.Fatal("the buysell state records no opening events")
		}
		evs := opener.OpeningEvents()
		if len(evs) != 2 {
			t.Fatalf("seed %d: %d opening events, want 2", seed, len(evs))
		}
		for i, want := range []struct {
			seat  int32
			value int64
		}{{0, cost}, {1, willingness}} {
			d := evs[i].GetChanceDrawn()
			if d.GetSeat() != want.seat || d.GetValue() != want.value || len(d.GetVisibleTo()) != 1 || d.GetVisibleTo()[0] != want.seat {
				t.Errorf("seed %d: event %d = %v, want seat %d's value %d visible to it alone", seed, i, d, want.seat, want.value)
			}
		}
	}
	st, err := games.Start(g, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if evs := st.(games.Opener).OpeningEvents(); len(evs) != 0 {
		t.Errorf("fixed values recorded %d draws", len(evs))
	}
}
