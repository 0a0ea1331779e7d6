package reproduce

import (
	"context"
	"fmt"
	"io"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/deliberation"
	"github.com/parley-arena/parley/research/studies"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// knownGapsHeading starts the README's list of the deliberation cells the published runs do not
// give, one "- TABLE / ROW / COLUMN: reason" line each.
const knownGapsHeading = "Published cells the shared runs do not give"

// TestPublishedDeliberationCells imports the shared archive of the reproduction's runs into a
// store, fills the study's tables from it as `parley reproduce deliberation --from-runs` does,
// and checks every published number of the tables the runs play: equal to ours at the
// precision the paper prints (rounded; ours is the reading the paper shows, see alt_shown), or
// listed with its reason in the README's deliberation section. A listed cell that the runs do
// give fails too, so the list stays true.
func TestPublishedDeliberationCells(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	b, reg := importDeliberationRuns(ctx, t)
	study, err := studies.Load("deliberation")
	if err != nil {
		t.Fatal(err)
	}
	imp, err := ReadImported(ctx, b.JetStream(), study, []string{"delib"}, reg, standard.New())
	if err != nil {
		t.Fatal(err)
	}
	checkFiling(ctx, t, b, imp)
	gaps := repodata.Listed(t, knownGapsHeading)
	tables, err := imp.Study.Select([]string{"2", "3", "5", "6", "7", "8"})
	if err != nil {
		t.Fatal(err)
	}
	equal, checked, published := map[string]int{}, map[string]int{}, map[string]int{}
	for _, tr := range studies.Compute(tables, imp.Results, nil, nil) {
		tb := tr.Table
		for i, row := range tb.Rows {
			for j, col := range tb.Columns {
				paper, ok := row.Paper[col.Key].(float64)
				if iv, isInt := row.Paper[col.Key].(int); isInt {
					paper, ok = float64(iv), true
				}
				m, measured := tb.MeasureFor(row, col)
				if !ok || !measured || m.Stat == "flag" {
					continue
				}
				cell := tr.Ours[i][j]
				if m.AltShown && cell.Alt != nil {
					cell = *cell.Alt
				}
				key := fmt.Sprintf("%s / %s / %s", tb.ID, strings.Join(row.Keys, " / "), col.Label)
				published[tb.ID]++
				if !cell.OK {
					// No run of the archive plays it: only the models the archive lacks may.
					if tb.ID == "Table 2" && !absentModels[row.Keys[0]] {
						t.Errorf("%s: no run gives it, yet the archive holds %s's runs", key, row.Keys[0])
					}
					continue
				}
				checked[tb.ID]++
				// The paper's own precision: the digits the papers' file carries, and for ratios
				// (the Gini) the two decimals they are printed with.
				dec := printedDecimals(paper)
				if col.Unit == "ratio" && col.Dec != nil {
					dec = max(dec, *col.Dec)
				}
				same := roundTo(cell.Value, dec) == roundTo(paper, dec)
				_, listed := gaps[key]
				switch {
				case same && listed:
					t.Errorf("%s: ours %.4g equals the paper's %v, yet the README lists it as not given", key, cell.Value, paper)
				case same:
					equal[tb.ID]++
				case !listed:
					t.Errorf("%s: ours %.4g (n=%d), the paper %v: neither equal at the paper's precision nor listed in the README", key, cell.Value, cell.N, paper)
				}
				delete(gaps, key)
			}
		}
	}
	for key := range gaps {
		t.Errorf("the README lists %q, which the runs do not play or the tables do not have", key)
	}
	for _, id := range []string{"Table 2", "Table 3", "Table 5", "Table 6", "Table 7", "Table 8"} {
		t.Logf("%s: %d of %d published cells the runs give are equal at printed precision (%d published)", id, equal[id], checked[id], published[id])
	}
	// Table 2 prints 55 numbers; the 24 of its four models whose base-game runs the archive
	// leaves out (the shared transcripts' README) rest on runs no one here can read.
	if published["Table 2"] != 55 || checked["Table 2"] != 31 {
		t.Errorf("Table 2: %d published numbers, %d of them given by the runs; want 55 and 31 (24 of the models the archive lacks)", published["Table 2"], checked["Table 2"])
	}
}

// absentModels are the Table 2 models whose runs the shared archive does not hold.
var absentModels = map[string]bool{"Phi-4 14B": true, "Llama 3.1-8B": true, "Qwen 2.5 7B": true, "DeepSeek-R1 7B": true}

// checkFiling checks the set-ups each imported match was filed under against what its source
// folder holds (filing), and that every folder of the archive was seen.
func checkFiling(ctx context.Context, t *testing.T, b *bus.Bus, imp *Imported) {
	t.Helper()
	m, err := newDeliberationMatcher(imp.Study, families.New())
	if err != nil {
		t.Fatal(err)
	}
	want := filing()
	seen := map[string]bool{}
	var specs []*tournamentv1.TournamentSpec
	for _, id := range imp.Tournaments {
		spec, err := tournament.LoadSpec(ctx, b.JetStream(), id)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	err = tournament.EachRecordOf(ctx, b.JetStream(), specs, func(rec tournament.Record) error {
		started := rec.Events[0].GetMatchStarted()
		_, rel, _ := strings.Cut(started.GetImported().GetSourceFile(), "games_descriptions/")
		folder := path.Dir(rel)
		w, known := want[folder]
		if !known {
			t.Fatalf("%s: a folder the test does not know", started.GetImported().GetSourceFile())
		}
		seen[folder] = true
		got, why := m.Runs(started)
		sort.Strings(got)
		sort.Strings(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s: filed under %q (%s), want %q", started.GetImported().GetSourceFile(), got, why, w)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != len(want) {
		t.Errorf("%d folders seen, the test knows %d", len(seen), len(want))
	}
}

// printedDecimals is how many digits after the point the paper prints a number with, as the
// papers' file keeps them (80 has none, 11.15 two).
func printedDecimals(v float64) int {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

func roundTo(v float64, dec int) float64 {
	p := math.Pow(10, float64(dec))
	return math.Round(v*p) / p
}

// BenchmarkTablesFromStore reads the imported runs back from the store and fills the study's
// tables, as `parley reproduce deliberation --from-runs` does once the runs are imported.
func BenchmarkTablesFromStore(b *testing.B) {
	ctx := context.Background()
	nb, reg := importDeliberationRuns(ctx, b)
	study, err := studies.Load("deliberation")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		imp, err := ReadImported(ctx, nb.JetStream(), study, []string{"delib"}, reg, standard.New())
		if err != nil {
			b.Fatal(err)
		}
		if err := imp.WriteTables(io.Discard, nil, studies.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// importDeliberationRuns imports the shared archive of the reproduction's runs into a fresh
// store (skipping tb when ../shared is absent) and checks that every run was imported.
func importDeliberationRuns(ctx context.Context, tb testing.TB) (*bus.Bus, *games.Registry) {
	tb.Helper()
	archive := repodata.Shared(tb, "transcripts", "deliberation", "reproduction.tar.gz")
	b, err := bus.Open(ctx, bus.Config{StoreDir: tb.TempDir()}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { b.Close() })
	reg := families.New()
	im := &imports.Importer{Format: deliberation.Format{}, Games: reg, Prefix: "delib"}
	sum, err := im.Import(ctx, b, []string{archive})
	if err != nil {
		tb.Fatal(err)
	}
	if sum.Imported != 419 || len(sum.Void) != 0 || len(sum.Refused) != 0 {
		tb.Fatalf("imported %d, void %v, refused %v; want all 419 runs imported", sum.Imported, sum.Void, sum.Refused)
	}
	return b, reg
}
