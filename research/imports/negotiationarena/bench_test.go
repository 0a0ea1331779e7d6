package negotiationarena_test

import (
	"context"
	"io"
	"testing"

	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/negotiationarena"
	"github.com/parley-arena/parley/research/reproduce"
	"github.com/parley-arena/parley/research/studies"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// importAll imports every shared archive of the published runs into a fresh store.
func importAll(ctx context.Context, b *testing.B, paths []string) (*bus.Bus, *imports.Summary) {
	b.Helper()
	nb, err := bus.Open(ctx, bus.Config{StoreDir: b.TempDir()}, nil)
	if err != nil {
		b.Fatal(err)
	}
	im := &imports.Importer{Format: negotiationarena.Format{}, Games: families.New(), Prefix: "na"}
	sum, err := im.Import(ctx, nb, paths)
	if err != nil {
		nb.Close()
		b.Fatal(err)
	}
	return nb, sum
}

// BenchmarkImportArchives imports the four shared archives (about 5,200 games, read from the
// .tar.gz as a user would pass them) into a fresh embedded store: each log read, re-played
// through Parley's rules and parser, and stored as a match.
func BenchmarkImportArchives(b *testing.B) {
	paths := archives(b)
	ctx := context.Background()
	for b.Loop() {
		nb, sum := importAll(ctx, b, paths)
		b.ReportMetric(float64(sum.Imported), "games/op")
		b.StopTimer()
		nb.Close()
		b.StartTimer()
	}
}

// BenchmarkTablesFromStore reads every imported NegotiationArena tournament back from the
// store and prints all of the study's tables, as `parley reproduce negotiationarena
// --from-runs na` does once the runs are imported.
func BenchmarkTablesFromStore(b *testing.B) {
	ctx := context.Background()
	nb, _ := importAll(ctx, b, archives(b))
	defer nb.Close()
	study, err := studies.Load(negotiationarena.Study)
	if err != nil {
		b.Fatal(err)
	}
	reg := families.New()
	for b.Loop() {
		imp, err := reproduce.ReadImported(ctx, nb.JetStream(), study, []string{"na"}, reg, standard.New())
		if err != nil {
			b.Fatal(err)
		}
		if err := imp.WriteTables(io.Discard, nil, studies.Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
