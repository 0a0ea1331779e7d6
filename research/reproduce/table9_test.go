package reproduce

import (
	"math"
	"testing"

	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/research/studies"
)

// TestTable9FromTheCorpus computes the game-theory study's Table 9 (human dialogues by
// difficulty, no model) from the test split shipped in data/dealornodeal and checks all of
// its published numbers: each count equal, each rate equal to k/n at the paper's four
// decimals, rounded or cut (the paper cuts some of them; the table then says so).
func TestTable9FromTheCorpus(t *testing.T) {
	study, err := studies.Load("gametheory")
	if err != nil {
		t.Fatal(err)
	}
	tables, err := study.Select([]string{"9"})
	if err != nil {
		t.Fatal(err)
	}
	data := &Data{Dir: repodata.Path(t, "dealornodeal")}
	checked := 0
	for _, tr := range studies.Compute(tables, nil, data, nil) {
		for i, row := range tr.Table.Rows {
			for j, col := range tr.Table.Columns {
				paper, ok := row.Paper[col.Key]
				if !ok {
					continue
				}
				p, isFloat := paper.(float64)
				if n, isInt := paper.(int); isInt {
					p = float64(n)
				} else if !isFloat {
					t.Fatalf("%v / %s: paper number %v", row.Keys, col.Label, paper)
				}
				ours := tr.Ours[i][j]
				scale := math.Pow(10, 4)
				if col.Key == "n" {
					scale = 1
				}
				rounded, cut := math.Round(ours.Value*scale)/scale, math.Trunc(ours.Value*scale)/scale
				if !ours.OK || (rounded != p && cut != p) {
					t.Errorf("Table 9 / %v / %s: ours %v (rests on %d datapoints, %s), the paper's %v", row.Keys, col.Label, ours.Value, ours.N, ours.Why, p)
				}
				checked++
			}
		}
	}
	if checked != 50 {
		t.Errorf("checked %d published numbers of Table 9, want its 50", checked)
	}
}
