package studies

import (
	"math"
	"regexp"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// TestRenderAltAndCounts: a cell with another reading shows it on a line under its row, with
// the note under the table; cells resting on different numbers of matches say theirs; a
// paper number that is ours truncated says so.
func TestRenderAltAndCounts(t *testing.T) {
	two := 2
	tb := Table{ID: "Table 9", Caption: "c", RowKeys: []string{"Model"},
		Columns: []Column{{Key: "six", Label: "6-way", Dec: &two}, {Key: "wrong", Label: "Wrong", Dec: &two}},
		Rows:    []Row{{Keys: []string{"M"}, Paper: map[string]any{"six": 0.0, "wrong": 37.4}, Vars: map[string]string{"run": "r"}}},
		Cells: map[string]Measure{
			"six":   {Stat: "mean", Run: "{run}", Value: "six", Scale: 100, Alt: &Measure{Stat: "mean", Run: "{run}", Value: "six_min", Scale: 100}, AltNote: "the study's code"},
			"wrong": {Stat: "mean", Run: "{run}", Value: "wrong", Scale: 100},
		},
	}
	row := func(vals map[string]float64) metrics.Row {
		var r metrics.Row
		for k, v := range vals {
			r.Values = append(r.Values, metrics.Value{Name: k, Seat: metrics.WholeMatch, Value: v})
		}
		return r
	}
	res := Results{"r": {
		row(map[string]float64{"six": 1, "six_min": 0, "wrong": 0.5}),
		row(map[string]float64{"six": 0, "six_min": 0}),
		row(map[string]float64{"six": 1, "six_min": 1, "wrong": 0.2492}),
	}}
	var b strings.Builder
	if err := Render(&b, &Study{Paper: "p.yaml", Title: "t"}, Compute([]*Table{&tb}, res, nil, nil)); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// 6-way: 2 of 3 by the definition, 1 of 3 by the other reading; Wrong: (50+24.92)/2 = 37.46
	// over 2 matches, which the paper's 37.4 cuts after one digit.
	for _, want := range []string{"66.67 (3)", "37.46 (truncated: 37.4) (2)", "per cell", "alt. reading", "33.33 (3)", "alt. reading, 6-way: the study's code"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table lacks %q:\n%s", want, out)
		}
	}
}

// TestFallbackGames: a cell counts the games behind it that had a fallback move; games a
// fallback ended are left out (unless the study counts them, as deliberation's failed runs),
// as are games a budget cut short; --exclude-fallback-games leaves out every game with one.
// The table says all of it.
func TestFallbackGames(t *testing.T) {
	tb := Table{ID: "Figure 9", Caption: "c", RowKeys: []string{"Offer"}, Columns: []Column{{Key: "acc", Label: "accepted"}},
		Rows:  []Row{{Keys: []string{"1..10"}, Paper: map[string]any{"acc": 1.0}}},
		Cells: map[string]Measure{"acc": {Stat: "mean", Run: "d", Value: "agreement"}},
	}
	game := func(id string, cause matchv1.EndCause, agreed bool, u *agentv1.Usage) metrics.Row {
		r := metrics.Row{MatchID: id, Cause: cause, Agreement: agreed,
			Seats:  []metrics.SeatResult{{Seat: 0, Label: "fixed"}, {Seat: 1, Label: "GPT-4"}},
			Values: []metrics.Value{{Name: "agreement", Seat: metrics.WholeMatch, Value: b2f(agreed)}}}
		if u != nil {
			u.Model = "m"
			r.Usage = []*eventsv1.SeatUsage{{Seat: 1, Total: u}}
		}
		return r
	}
	fb := func() *agentv1.Usage { return &agentv1.Usage{Fallback: true, Fallbacks: 1} }
	agreement, rejected, fault, void := matchv1.EndCause_END_CAUSE_AGREEMENT, matchv1.EndCause_END_CAUSE_REJECTED, matchv1.EndCause_END_CAUSE_AGENT_FAULT, matchv1.EndCause_END_CAUSE_VOID
	res := Results{"d": {
		game("g1", agreement, true, &agentv1.Usage{}),
		game("g2", agreement, true, fb()), // a fallback mid-game; the model accepted later
		game("g3", rejected, false, &agentv1.Usage{}),
		game("g4", fault, false, fb()), // the decider's fallback (a reject) ended it
		game("g5", void, false, &agentv1.Usage{Fallback: true, Fallbacks: 1, BudgetFallbacks: 1, FallbackCause: agentv1.FallbackCause_FALLBACK_CAUSE_BUDGET}),
	}}
	for _, tc := range []struct {
		name    string
		opts    Options
		counted bool
		// value and games of the cell, its fallback games; lines the table must print
		value float64
		n, fb int
		want  []string
	}{
		{"default", Options{}, false, 2.0 / 3, 3, 1, []string{"0.67 f1", "fallbacks: 1 of the 3 games",
			"left out: 1 game an agent's failure ended", "left out: 1 game a token budget cut short: g5"}},
		{"excluded", Options{ExcludeFallbackGames: true}, false, 0.5, 2, 0, []string{"0.50", "fallbacks: none of the 2 games",
			"left out: 1 other game with a fallback move"}},
		{"faults counted", Options{}, true, 2.0 / 4, 4, 2, []string{"0.50 f2", "fallbacks: 2 of the 4 games", "counted: 1 game an agent's failure ended"}},
	} {
		tb.countFaults = tc.counted
		out := Compute([]*Table{&tb}, res, nil, nil, tc.opts)
		c := out[0].Ours[0][0]
		if !c.OK || math.Abs(c.Value-tc.value) > 1e-9 || c.N != tc.n || c.Fallbacks != tc.fb {
			t.Errorf("%s: cell %+v; want %.3f over %d games, %d with a fallback", tc.name, c, tc.value, tc.n, tc.fb)
		}
		var b strings.Builder
		if err := Render(&b, &Study{Paper: "p.yaml", Title: "t"}, out); err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: the table lacks %q:\n%s", tc.name, w, b.String())
			}
		}
	}
	var b strings.Builder
	WriteFallbacks(&b, res, nil)
	// GPT-4's seat: 3 fallbacks (one of them the budget's) in 3 of 5 games.
	if !regexp.MustCompile(`GPT-4\s+0\s+3\s+1\s+0\s+3\s+5`).MatchString(b.String()) {
		t.Errorf("fallbacks by model:\n%s", b.String())
	}
}

// TestTruncatedDigits: the paper's digits are those of its number or the column's, since a data
// file drops trailing zeros (the paper's 0.5310 reads as 0.531).
func TestTruncatedDigits(t *testing.T) {
	for _, tc := range []struct {
		paper    float64
		ours     float64
		decimals int
		want     string // "" when the paper's number is not ours cut
	}{
		{0.531, 94.0 / 177, 4, "0.5310"}, // 0.53107: rounds to 0.5311, cut to 0.5310
		{0.5384, 7.0 / 13, 4, "0.5384"},  // 0.53846
		{0.5385, 7.0 / 13, 4, ""},        // rounded: nothing to say
		{37.4, 37.46, 2, "37.4"},         // the paper prints fewer digits than the column
		{0.53, 0.5311, 4, ""},            // 0.53 at two digits is rounded
		{0.6, 0.58, 2, ""},               // neither
	} {
		got, ok := truncated(tc.paper, Cell{Value: tc.ours, OK: true}, tc.decimals)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("truncated(%v, %v, %d) = %q, %v; want %q", tc.paper, tc.ours, tc.decimals, got, ok, tc.want)
		}
	}
}
