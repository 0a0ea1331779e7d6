package tables

import (
	"errors"
	"math"
	"strings"
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

const eps = 1e-9

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

func TestRanksAndSpearmanWithTies(t *testing.T) {
	ranks := Ranks([]float64{10, 20, 20, 30, 20})
	want := []float64{1, 3, 3, 5, 3}
	for i := range want {
		if ranks[i] != want[i] {
			t.Fatalf("Ranks = %v, want %v", ranks, want)
		}
	}
	// x ranks 1, 2.5, 2.5, 4; y ranks 1, 3, 2, 4: r = 4.5 / sqrt(4.5 * 5) = 3/sqrt(10).
	if got := Spearman([]float64{1, 2, 2, 3}, []float64{1, 3, 2, 4}); !near(got, 3/math.Sqrt(10)) {
		t.Errorf("Spearman with ties = %v, want %v", got, 3/math.Sqrt(10))
	}
	if got := Spearman([]float64{1, 2, 3}, []float64{10, 100, 1000}); !near(got, 1) {
		t.Errorf("Spearman of a monotone relation = %v, want 1", got)
	}
	for _, c := range []struct {
		name string
		x, y []float64
	}{{"one pair", []float64{1}, []float64{2}}, {"constant", []float64{1, 1, 1}, []float64{1, 2, 3}}, {"lengths", []float64{1, 2}, []float64{1}}} {
		if got := Spearman(c.x, c.y); !math.IsNaN(got) {
			t.Errorf("Spearman %s = %v, want NaN", c.name, got)
		}
	}
}

func TestBinomialTail(t *testing.T) {
	cases := []struct {
		k, n int
		p    float64
		want float64
	}{
		{3, 5, 0.5, 16.0 / 32}, // C(5,3)+C(5,4)+C(5,5) = 16
		{2, 4, 0.11, 1 - math.Pow(0.89, 4) - 4*0.11*math.Pow(0.89, 3)},    // 0.0623912...
		{1, 4, 0.11, 1 - math.Pow(0.89, 4)},                               // 0.3725776
		{0, 4, 0.11, 1}, {5, 4, 0.5, 0}, {10, 10, 0.5, math.Pow(0.5, 10)}, // edges
		{41, 100, 0.11, 0}, // far in the tail: tiny
	}
	for _, c := range cases {
		got := BinomialTail(c.k, c.n, c.p)
		if c.want == 0 && c.k <= c.n {
			if got > 1e-12 {
				t.Errorf("BinomialTail(%d, %d, %v) = %v, want about 0", c.k, c.n, c.p, got)
			}
			continue
		}
		if math.Abs(got-c.want) > eps {
			t.Errorf("BinomialTail(%d, %d, %v) = %v, want %v", c.k, c.n, c.p, got, c.want)
		}
	}
}

// row builds a two-player match between p1 and p2 with the given payoffs.
func row(id, p1, p2 string, pay1, pay2 float64, cause matchv1.EndCause, values ...metrics.Value) metrics.Row {
	r := metrics.Row{
		MatchID: id, Game: "ultimatum", Cause: cause, Agreement: cause == matchv1.EndCause_END_CAUSE_AGREEMENT, Turns: 3,
		Seats: []metrics.SeatResult{{Seat: 0, Name: "P1", Agent: p1, Payoff: pay1}, {Seat: 1, Name: "P2", Agent: p2, Payoff: pay2}},
	}
	if cause == matchv1.EndCause_END_CAUSE_VOID {
		r.Seats[0].Payoff, r.Seats[1].Payoff = 0, 0
	}
	r.Values = append(r.Values, metrics.Value{Name: metrics.ValueRefused, Seat: 1, Value: 1})
	r.Values = append(r.Values, values...)
	return r
}

const (
	agree  = matchv1.EndCause_END_CAUSE_AGREEMENT
	reject = matchv1.EndCause_END_CAUSE_REJECTED
	void   = matchv1.EndCause_END_CAUSE_VOID
)

func ultimatumRows() []metrics.Row {
	return []metrics.Row{
		row("m1", "a", "b", 60, 40, agree), // P1 (a) wins
		row("m2", "a", "b", 50, 50, agree), // tie
		row("m3", "a", "b", 0, 0, reject),  // tie, no deal
		row("m4", "a", "b", 90, 10, void),  // void: listed, left out
		row("m5", "b", "a", 70, 30, agree), // P1 (b) wins
		row("m6", "b", "a", 20, 80, agree), // P2 (a) wins
		row("m7", "a", "a", 55, 45, agree), // self-play: diagonal only
		row("m8", "b", "b", 40, 60, agree), // self-play
	}
}

func TestWinRatesWithTiesAndVoid(t *testing.T) {
	games := Build(ultimatumRows(), Options{})
	if len(games) != 1 {
		t.Fatalf("%d games, want 1", len(games))
	}
	g := games[0]
	if g.Matches != 8 || len(g.Void) != 1 || g.Void[0] != "m4" {
		t.Fatalf("matches %d, void %v; want 8 and [m4]", g.Matches, g.Void)
	}
	if g.Pairs == nil || g.Pairs.Seat != 0 || g.Pairs.SeatName != "P1" {
		t.Fatalf("pairs = %+v, want the P1 seat (ultimatum)", g.Pairs)
	}
	// a in P1, b in P2 (row b, column a): m1 won, m2 and m3 tied, m4 void.
	c, ok := g.Pairs.Cell("b", "a")
	if !ok {
		t.Fatal("no cell for b (P2) vs a (P1)")
	}
	if c.Matches != 3 || c.Void != 1 || c.Decisive != 1 || c.Wins != 1 {
		t.Errorf("cell b/a = %+v, want 3 matches, 1 void, 1 decisive, 1 win", c)
	}
	if v, _ := c.WinRate.Value(); v != 1 {
		t.Errorf("cell b/a win rate = %v, want 1", v)
	}
	if v, _ := c.Payoff[0].Value(); !near(v, 110.0/3) {
		t.Errorf("cell b/a P1 payoff = %v, want 36.67 (void left out)", v)
	}
	if v, _ := c.Payoff[1].Value(); !near(v, 30) {
		t.Errorf("cell b/a P2 payoff = %v, want 30", v)
	}
	// b in P1, a in P2: m5 (P1 wins), m6 (P2 wins).
	c, _ = g.Pairs.Cell("a", "b")
	if v, _ := c.WinRate.Value(); c.Decisive != 2 || v != 0.5 {
		t.Errorf("cell a/b = %+v, want P1 win rate 1/2 over 2 decisive", c)
	}
	if c, ok := g.Pairs.Cell("a", "a"); !ok || c.Matches != 1 {
		t.Errorf("self-play cell a/a = %+v (%v), want 1 match", c, ok)
	}

	stats := map[string]AgentStats{}
	for _, s := range g.AgentStats {
		stats[s.Agent] = s
	}
	a, b := stats["a"], stats["b"]
	if a.Matches != 5 || a.Void != 1 || a.Decisive != 3 || a.Wins != 2 {
		t.Errorf("a = %+v, want 5 matches (self-play left out), 1 void, 2 wins of 3 decisive", a)
	}
	if v, _ := a.Payoff.Value(); !near(v, 44) {
		t.Errorf("a mean payoff = %v, want 44", v)
	}
	if v, _ := a.Agreement.Value(); !near(v, 0.8) {
		t.Errorf("a agreement = %v, want 0.8", v)
	}
	if v, _ := b.WinRate.Value(); !near(v, 1.0/3) || b.Wins != 1 {
		t.Errorf("b win rate = %v (%d wins), want 1/3", v, b.Wins)
	}
	if v, _ := b.Payoff.Value(); !near(v, 36) {
		t.Errorf("b mean payoff = %v, want 36", v)
	}
	// Refused actions: 1 per match in seat 1 (P2); b sat there in m1, m2, m3.
	if b.Refused != 3 || a.Refused != 2 {
		t.Errorf("refused: a %d, b %d; want 2 and 3", a.Refused, b.Refused)
	}
	// Outcomes: 7 non-void; ties m2, m3; no deal m3.
	o := g.Outcomes
	if o.NonVoid != 7 || o.Ties != 2 || o.NoDeal != 1 {
		t.Errorf("outcomes = %+v, want 7 non-void, 2 ties, 1 no deal", o)
	}
	if v, _ := o.TieRate.Value(); !near(v, 2.0/7) {
		t.Errorf("tie rate = %v, want 2/7", v)
	}
}

func TestMetaGame(t *testing.T) {
	g := BuildGame(ultimatumRows(), Options{})
	m, err := MetaGameOf(g)
	if err != nil {
		t.Fatal(err)
	}
	// a vs b: a as P1 averages 110/3, as P2 55; b as P2 averages 30, as P1 45.
	if got := m.Payoffs[0][1]; !near(got[0], (110.0/3+55)/2) || !near(got[1], (30+45)/2.0) {
		t.Errorf("a vs b = %v", got)
	}
	if got := m.Payoffs[1][0]; !near(got[0], 37.5) || !near(got[1], (110.0/3+55)/2) {
		t.Errorf("b vs a = %v, want the transpose", got)
	}
	if got := m.Payoffs[0][0]; got != [2]float64{50, 50} {
		t.Errorf("a vs a = %v, want 50, 50", got)
	}
	// Without self-play the diagonal is unknown.
	_, err = MetaGameOf(BuildGame(ultimatumRows()[:6], Options{}))
	if !errors.Is(err, ErrIncomplete) {
		t.Errorf("meta-game without self-play: %v, want ErrIncomplete", err)
	}
	// A scripted first player that never sits second (reproduce's decider set-ups): its
	// cells as P2 do not exist; the meta-game is incomplete, not a panic.
	_, err = MetaGameOf(BuildGame([]metrics.Row{row("d1", "fixed", "model", 5, 5, agree), row("d2", "fixed", "model", 10, 0, reject)}, Options{}))
	if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), "no match with model as P1") {
		t.Errorf("meta-game of a one-sided tournament: %v, want ErrIncomplete naming the missing seat", err)
	}
}

func whole(name string, v float64) metrics.Value {
	return metrics.Value{Name: name, Seat: metrics.WholeMatch, Value: v}
}

func prices(ps ...float64) []metrics.Value {
	var out []metrics.Value
	for i, p := range ps {
		out = append(out, whole("price_"+string(rune('1'+i)), p))
	}
	out = append(out, whole("first_price", ps[0]))
	if len(ps) > 1 {
		out = append(out, whole("bad_counter_offer", b2f(ps[1] > ps[0])))
	}
	return out
}

func TestBuySell(t *testing.T) {
	sale := func(id string, final float64, ps ...float64) metrics.Row {
		r := row(id, "s", "b", final-40, 60-final, agree, prices(ps...)...)
		r.Game = "buysell"
		r.Values = append(r.Values, whole("final_price", final))
		return r
	}
	noSale := row("r3", "s", "b2", 0, 0, reject, prices(60, 45)...)
	noSale.Game = "buysell"
	rows := []metrics.Row{
		sale("r1", 50, 60, 40, 50),
		sale("r2", 57, 55, 58, 56, 57),
		noSale,
		sale("r4", 50, 60, 50),
	}
	g := BuildGame(rows, Options{})
	bs := g.BuySell
	if bs == nil {
		t.Fatal("no buyer/seller table")
	}
	// first vs final: (60,50), (55,57), (60,50): ranks (2.5,1,2.5) vs (1.5,3,1.5): -1.
	if bs.Anchoring.N != 3 || !near(bs.Anchoring.R, -1) {
		t.Errorf("anchoring = %+v, want -1 over 3", bs.Anchoring)
	}
	// (mean of two before, price): (50,50), (56.5,56), (57,57).
	wantSplit := 29.5 / math.Sqrt(30.5*86.0/3)
	if bs.SplitDifference.N != 3 || !near(bs.SplitDifference.R, wantSplit) {
		t.Errorf("split the difference = %+v, want %v over 3", bs.SplitDifference, wantSplit)
	}
	if bs.BadCounter.K != 1 || bs.BadCounter.N != 4 || !near(bs.BadCounter.PValue, 1-math.Pow(0.89, 4)) {
		t.Errorf("bad counter = %+v, want 1 of 4, p = 1-0.89^4", bs.BadCounter)
	}
	if len(bs.BadCounterByBuyer) != 2 || bs.BadCounterByBuyer[0].Agent != "b" || bs.BadCounterByBuyer[0].K != 1 || bs.BadCounterByBuyer[0].N != 3 {
		t.Errorf("by buyer = %+v", bs.BadCounterByBuyer)
	}
	if v, _ := bs.FinalPrice.Value(); !near(v, 157.0/3) {
		t.Errorf("final price = %v", v)
	}
	// The pair table of buysell shows the buyer's seat.
	if g.Pairs.Seat != 1 {
		t.Errorf("buysell pair seat = %d, want 1 (buyer)", g.Pairs.Seat)
	}
	// Without the family's values there is no table.
	if BuildGame(ultimatumRows(), Options{}).BuySell != nil {
		t.Error("buyer/seller table from rows without prices")
	}
}

func TestCoalition(t *testing.T) {
	mk := func(id string, set float64, pay [3]float64, core float64, agents ...string) metrics.Row {
		r := metrics.Row{MatchID: id, Game: "coalition", Cause: agree, Agreement: set != 0}
		for i, n := range []string{"A", "B", "C"} {
			r.Seats = append(r.Seats, metrics.SeatResult{Seat: int32(i), Name: n, Agent: agents[i], Payoff: pay[i]})
			r.Values = append(r.Values, metrics.Value{Name: "coalition_member", Seat: int32(i), Value: float64(int(set) >> i & 1)})
		}
		r.Values = append(r.Values, whole("winning_coalition", set), whole("core_distance", core), whole("shapley_l2", 2*core))
		return r
	}
	rows := []metrics.Row{
		mk("c1", 3, [3]float64{600, 400, 0}, 10, "x", "y", "z"),
		mk("c2", 3, [3]float64{500, 500, 0}, 20, "y", "z", "x"),
		mk("c3", 7, [3]float64{500, 250, 250}, 0, "z", "x", "y"),
	}
	c := BuildGame(rows, Options{}).Coalition
	if c == nil {
		t.Fatal("no coalition table")
	}
	if len(c.Winning) != 2 || c.Winning[0].Members != "A+B" || c.Winning[0].N != 2 || c.Winning[1].Members != "A+B+C" {
		t.Errorf("winning coalitions = %+v", c.Winning)
	}
	if v, _ := c.PayoffBySeat[0].Value(); !near(v, 1600.0/3) {
		t.Errorf("seat A payoff = %v", v)
	}
	if v, _ := c.CoreDistance.Value(); !near(v, 10) {
		t.Errorf("core distance = %v, want 10", v)
	}
	if v, _ := c.ShapleyL2.Value(); !near(v, 20) {
		t.Errorf("shapley distance = %v, want 20", v)
	}
	// x: member in c1 (A), not in c2 (C), member in c3 (B): 2/3.
	if c.MemberRate[0].Agent != "x" || !near(c.MemberRate[0].Sum/float64(c.MemberRate[0].N), 2.0/3) {
		t.Errorf("member rate = %+v", c.MemberRate)
	}
}
