package reproduce

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/importtest"
	"github.com/parley-arena/parley/research/imports/negotiationarena"
	"github.com/parley-arena/parley/research/studies"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// A tournament whose schedule is too large for one message of the store is stored in parts;
// ReadImported reads all of its matches (it once read such a schedule as empty). Made from the
// sample of published games the repository ships, so a fresh clone runs it: one resource
// exchange game copied under 700 run times (each copy a game of its own: another sha256), all
// in one folder, so one tournament.
func TestReadImportedSplitSchedule(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	game := sampleGame(t, "TradingGame")
	const copies = 700
	var entries []importtest.Entry
	for i := range copies {
		run := 1700000000000 + int64(i)
		game["run_epoch_time_ms"] = run
		data, err := json.Marshal(game)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, importtest.Entry{Name: fmt.Sprintf("split/.logs/trading_copies/%d/game_state.json", run), Content: string(data)})
	}
	archive := filepath.Join(t.TempDir(), "copies.tar.gz")
	importtest.WriteTarGz(t, archive, entries)
	b, err := bus.Open(ctx, bus.Config{StoreDir: t.TempDir()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	reg := families.New()
	im := &imports.Importer{Format: negotiationarena.Format{}, Games: reg, Prefix: "na"}
	sum, err := im.Import(ctx, b, []string{archive})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Imported != copies || len(sum.Tournaments) != 1 {
		t.Fatalf("imported %d games in %d tournaments; want %d in one", sum.Imported, len(sum.Tournaments), copies)
	}
	var stored *tournamentv1.TournamentSpec
	if err := tournament.EachSpec(ctx, b.JetStream(), func(s *tournamentv1.TournamentSpec) { stored = s }); err != nil {
		t.Fatal(err)
	}
	if stored.GetScheduleParts() == 0 {
		t.Fatalf("the schedule of %d matches was stored whole: the test needs more copies to store it in parts", copies)
	}
	study, err := studies.Load(negotiationarena.Study)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := ReadImported(ctx, b.JetStream(), study, []string{"na"}, reg, standard.New())
	if err != nil {
		t.Fatal(err)
	}
	filed := 0
	for _, rows := range imp.Results {
		filed += len(rows)
	}
	if imp.Matches != copies || filed == 0 {
		t.Errorf("read %d matches (%d filed under the study's set-ups); want all %d, filed", imp.Matches, filed, copies)
	}
}

// sampleGame returns the first game of class in the repository's sample of NegotiationArena's
// published games, decoded (numbers kept as written).
func sampleGame(t *testing.T, class string) map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(repodata.Root(t), "data", "negotiationarena", "sample.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("the sample has no %s", class)
		}
		if err != nil {
			t.Fatal(err)
		}
		if path.Base(h.Name) != "game_state.json" {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		var game map[string]any
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		if err := dec.Decode(&game); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		if game["class"] == class {
			return game
		}
	}
}
