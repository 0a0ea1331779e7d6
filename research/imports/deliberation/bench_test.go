package deliberation_test

import (
	"context"
	"testing"

	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/deliberation"
)

// BenchmarkImportArchive imports the whole shared archive of the reproduction's runs (419
// runs, 73 MB of JSON) into a fresh embedded store: read, audited and stored as matches.
func BenchmarkImportArchive(b *testing.B) {
	archive := repodata.Shared(b, "transcripts", "deliberation", "reproduction.tar.gz")
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		nb, err := bus.Open(ctx, bus.Config{StoreDir: b.TempDir()}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		im := &imports.Importer{Format: deliberation.Format{}, Games: families.New(), Prefix: "delib"}
		sum, err := im.Import(ctx, nb, []string{archive})
		if err != nil || sum.Imported != 419 {
			b.Fatalf("imported %v: %v", sum, err)
		}
		b.StopTimer()
		nb.Close()
		b.StartTimer()
	}
}
