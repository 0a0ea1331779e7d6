// Package importtest holds what the tests of the study formats share: building an archive of
// logs (bad entries included), checking an import's refusals, and reading its matches back.
package importtest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/imports"
)

// Entry is one entry of a test archive: a regular file unless Kind says otherwise (for a
// symlink, Content is its target).
type Entry struct {
	Name, Content string
	Kind          byte
}

// WriteTarGz writes entries, in their order, as a gzipped tar at p.
func WriteTarGz(t testing.TB, p string, entries []Entry) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		kind := e.Kind
		if kind == 0 {
			kind = tar.TypeReg
		}
		h := &tar.Header{Name: e.Name, Mode: 0o644, Size: int64(len(e.Content)), Typeflag: kind}
		if kind == tar.TypeSymlink {
			h.Size, h.Linkname = 0, e.Content
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if kind == tar.TypeReg {
			if _, err := tw.Write([]byte(e.Content)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CheckRefused fails t unless sum refused exactly one file per key of want (a part of its
// path), each in one line whose reason contains the key's value.
func CheckRefused(t testing.TB, sum *imports.Summary, want map[string]string) {
	t.Helper()
	if len(sum.Refused) != len(want) {
		t.Errorf("refused %q; want one line for each of %v", sum.Refused, want)
	}
	for key, reason := range want {
		if !slices.ContainsFunc(sum.Refused, func(r imports.Refusal) bool {
			return strings.Contains(r.Path, key) && strings.Contains(r.Reason, reason) && !strings.Contains(r.String(), "\n")
		}) {
			t.Errorf("no refusal of %s saying %q among %q", key, reason, sum.Refused)
		}
	}
}

// Records reads back every stored match of the tournaments sum imported into.
func Records(ctx context.Context, t testing.TB, js jetstream.JetStream, sum *imports.Summary) []tournament.Record {
	t.Helper()
	var out []tournament.Record
	for _, tr := range sum.Tournaments {
		spec, err := tournament.LoadSpec(ctx, js, tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := tournament.LoadRecords(ctx, js, spec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recs...)
	}
	return out
}
