package studies

import (
	"strings"
	"testing"

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
