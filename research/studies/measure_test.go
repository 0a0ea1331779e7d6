package studies

import (
	"math"
	"testing"

	"github.com/parley-arena/parley/services/analytics/metrics"
)

// A winrate by the definition compares payoffs over decisive games; with Start it compares each
// seat's change in holdings (the first seat starting with the whole amount), and with TiesCount
// a game neither wins stays in the denominator.
func TestWinRateOfChanges(t *testing.T) {
	game := func(p1, p2 float64, deal bool) metrics.Row {
		return metrics.Row{Agreement: deal, Seats: []metrics.SeatResult{{Seat: 0, Payoff: p1}, {Seat: 1, Payoff: p2}},
			Values: []metrics.Value{{Name: "total", Seat: metrics.WholeMatch, Value: 100}}}
	}
	// A fair split, a game without a deal (the first player keeps its 100), a 99/1 split and a
	// 30/70 one.
	c := computer{res: Results{"u": {game(50, 50, true), game(100, 0, false), game(99, 1, true), game(30, 70, true)}}}
	for _, k := range []struct {
		m    Measure
		want float64
		n    int
	}{
		// Payoffs: the fair split is a tie; the second player wins only the 30/70 game.
		{Measure{Stat: "winrate", Run: "u", Seat: "1"}, 1.0 / 3, 3},
		// Changes: without a deal neither changes (a tie); every deal that gives the second
		// player something is its win.
		{Measure{Stat: "winrate", Run: "u", Seat: "1", Start: map[string]string{"0": "total"}}, 1, 3},
		{Measure{Stat: "winrate", Run: "u", Seat: "1", Start: map[string]string{"0": "total"}, TiesCount: true}, 3.0 / 4, 4},
		{Measure{Stat: "winrate", Run: "u", Seat: "0", Start: map[string]string{"0": "total"}, TiesCount: true}, 0, 4},
	} {
		got := c.stat(k.m)
		if !got.OK || math.Abs(got.Value-k.want) > 1e-12 || got.N != k.n {
			t.Errorf("%+v: %v over %d games (%s), want %v over %d", k.m, got.Value, got.N, got.Why, k.want, k.n)
		}
	}
}
