package reproduce

import (
	"context"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/negotiationarena"
	"github.com/parley-arena/parley/research/studies"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// TestArenaUnseenSetUps imports NegotiationArena set-ups whose logs are not among the released
// ones (Figure 8's drawn costs and over-valued buyers, plain and self-interested; Figure 9's
// one-shot ultimatum), from synthetic logs in the released layout (testdata/arena-unseen: see
// its README), and checks that each game is filed under its set-up by what the log holds. Every
// folder is named after another of these set-ups than the one its games play, so a reader that
// went by folder names would file them wrongly.
func TestArenaUnseenSetUps(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{StoreDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	reg := families.New()
	im := &imports.Importer{Format: negotiationarena.Format{}, Games: reg, Prefix: "na"}
	sum, err := im.Import(ctx, b, []string{"testdata/arena-unseen"})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Imported != 9 || len(sum.Void) != 0 || len(sum.Refused) != 0 {
		t.Fatalf("imported %d, void %v, refused %v; want the 9 games imported", sum.Imported, sum.Void, sum.Refused)
	}
	study, err := studies.Load(negotiationarena.Study)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := ReadImported(ctx, b.JetStream(), study, []string{"na"}, reg, standard.New())
	if err != nil {
		t.Fatal(err)
	}
	// What each folder holds, from the logs (the folder names say otherwise).
	want := map[string]int{
		"anchoring":                  3, // ultimatum_one_shot: cost 24..37, willingness 66..79, 100 ZUP
		"overvalued":                 2, // split_the_difference: willingness 480 and 550, 1000 ZUP
		"overvalued/self-interested": 2, // over_valued_buyer: the same, the buyer told to be self-interested
		"decider/3":                  1, // over_valued_buyer_self_interested: 10 ZUP in two turns, the
		"decider/7":                  1, // proposer told to offer 3 (accepted) or 7 (rejected)
	}
	got := map[string]int{}
	for run, rows := range imp.Results {
		if len(rows) > 0 {
			got[run] = len(rows)
		}
	}
	for run, n := range want {
		if got[run] != n {
			t.Errorf("set-up %s: %d games filed, want %d", run, got[run], n)
		}
	}
	for run, n := range got {
		if _, ok := want[run]; !ok {
			t.Errorf("set-up %s: %d games filed, want none", run, n)
		}
	}
	if len(imp.Unfiled) != 0 {
		t.Errorf("games filed under no set-up: %v", imp.Unfiled)
	}

	// The figures' cells from those games, worked out by hand from the logs' numbers.
	// Figure 8a: openings 70, 75, 68 and agreed prices 45, 52, 71: ranks (2,3,1) against (1,2,3),
	// rho = 1 - 6*(1+1+4)/(3*(9-1)) = -0.5.
	// Figure 8b: the buyer's counter above the opening in one of the three drawn games (71 > 68)
	// and one of the two over-valued ones (120 > 90); none of the self-interested buyers'.
	// Figure 9: the offer of 3 accepted, the offer of 7 rejected (the rate over the offers the
	// games have).
	tables, err := imp.Study.Select([]string{"Figure 8a (text)", "Figure 8b (text)", "Figure 8b test", "Figure 9 (text)"})
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]float64{
		"Figure 8a (text) / opening price vs final price / Spearman correlation":               -0.5,
		"Figure 8b (text) / default / P(counter-price above opening price)":                    1.0 / 3,
		"Figure 8b (text) / over-valued / P(counter-price above opening price)":                0.5,
		"Figure 9 (text) / classic (2 turns) / 1..10 / Estimated acceptance probability":       0.5,
		"Figure 8b test / over-valued / P(counter-price above opening price)":                  0.5,
		"Figure 8b test / over-valued, self-interested / P(counter-price above opening price)": 0,
		// One bad counter of two against the default buyers' 1/3: P(X >= 1) = 1 - (2/3)^2.
		"Figure 8b test / over-valued / one-sided binomial p against the default buyer's rate": 1 - 4.0/9,
	}
	seen := map[string]float64{}
	for _, tr := range studies.Compute(tables, imp.Results, nil, nil) {
		for i, row := range tr.Table.Rows {
			for j, col := range tr.Table.Columns {
				if c := tr.Ours[i][j]; c.OK {
					seen[tr.Table.ID+" / "+strings.Join(row.Keys, " / ")+" / "+col.Label] = c.Value
				}
			}
		}
	}
	keys := make([]string, 0, len(cells))
	for k := range cells {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v, ok := seen[k]
		if !ok || math.Abs(v-cells[k]) > 1e-9 {
			t.Errorf("%s: %v (given %v), want %v; cells: %v", k, v, ok, cells[k], slices.Sorted(maps.Keys(seen)))
		}
	}
}
