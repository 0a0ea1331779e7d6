// Package repodata finds, for tests, the data they read: the repository's own data/ folder,
// which every clone has, and the project's shared data folder beside the repository
// (../shared/data), which a clone may not have. Checks against the shared folder are
// acceptance checks: they run where it is (CI) and are skipped, saying so, elsewhere.
package repodata

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
)

// module is the line of go.mod that marks the repository's root.
const module = "module github.com/parley-arena/parley\n"

// Root returns the repository's root, found upwards from the test's working directory.
func Root(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte(module)) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("repodata: no repository root above the test's directory")
		}
		dir = parent
	}
}

// Path returns the path of elem under the repository's data/ folder. It fails the test when
// nothing is there: the repository ships it.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	path := filepath.Join(append([]string{Root(t), "data"}, elem...)...)
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("repodata: %v (the repository's data/ folder ships it)", err)
	}
	return path
}

// Shared returns the path of elem under the shared data folder beside the repository, or
// skips the test, naming what is missing, when it is not there.
func Shared(t testing.TB, elem ...string) string {
	t.Helper()
	path, ok := SharedPath(t, elem...)
	if !ok {
		t.Skipf("%s is not here (the project's shared data folder beside the repository): this acceptance check runs where it is", path)
	}
	return path
}

// SharedPath returns the path of elem under the shared data folder and whether it exists.
func SharedPath(t testing.TB, elem ...string) (string, bool) {
	t.Helper()
	path := filepath.Join(append([]string{filepath.Dir(Root(t)), "shared", "data"}, elem...)...)
	_, err := os.Stat(path)
	return path, err == nil
}

// Untar extracts a .tar.gz archive (the shared folder's published runs) into a temporary
// folder of the test, removed when it ends, and returns the folder. An entry that would land
// outside it fails the test.
func Untar(t testing.TB, archive string) string {
	t.Helper()
	dir := t.TempDir()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("repodata: %s: %v", archive, err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return dir
		}
		if err != nil {
			t.Fatalf("repodata: %s: %v", archive, err)
		}
		name := path.Clean(h.Name)
		if !fs.ValidPath(name) {
			t.Fatalf("repodata: %s: entry %q would land outside the folder", archive, h.Name)
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(target, 0o755)
		case tar.TypeReg:
			if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
				err = writeFile(target, tr)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func writeFile(name string, r io.Reader) error {
	out, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, r); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Listed reads the README's list that follows the line holding heading: one "- KEY: reason"
// line each, up to the first blank line after an item. A listed item without its reason
// fails the test, as does a README without the heading.
func Listed(t testing.TB, heading string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Root(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	i := strings.Index(text, heading)
	if i < 0 {
		t.Fatalf("README.md has no list %q", heading)
	}
	out := map[string]string{}
	for _, line := range strings.Split(text[i:], "\n")[1:] {
		if !strings.HasPrefix(line, "- ") {
			if len(out) > 0 && strings.TrimSpace(line) == "" {
				break
			}
			continue
		}
		key, why, ok := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
		if !ok || strings.TrimSpace(why) == "" {
			t.Fatalf("README.md: %q lists an item without its reason", line)
		}
		out[key] = why
	}
	return out
}
