package imports

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Walk calls game with every game log found in paths, in a stable order (a folder's entries
// sorted by name, an archive's in its order), and bad with every file or entry it cannot read:
// a path that does not exist, a file over MaxFileBytes, an archive that is not a gzipped tar,
// an archive entry whose name is absolute or steps out with "..", a symbolic link. A path may
// be a folder (read recursively; archives in it are read too), a game log, or a .tar.gz (or
// .tgz) of either; archives inside archives are not opened. Walk writes nothing anywhere.
//
// It stops at the first error game returns, and when ctx ends.
func Walk(ctx context.Context, paths []string, format Format, game func(File, AuxReader) error, bad func(path, reason string)) error {
	w := &walker{ctx: ctx, format: format, game: game, bad: bad}
	for _, p := range paths {
		if err := w.root(p); err != nil {
			return err
		}
	}
	return nil
}

type walker struct {
	ctx    context.Context
	format Format
	game   func(File, AuxReader) error
	bad    func(path, reason string)
}

// root walks one path given by the user.
func (w *walker) root(p string) error {
	info, err := os.Stat(p)
	if err != nil {
		w.bad(p, plainErr(err))
		return nil
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		w.bad(p, plainErr(err))
		return nil
	}
	if !info.IsDir() {
		return w.file(abs, filepath.ToSlash(abs), p, true)
	}
	// Shown paths start at the folder given, as the user named it.
	return filepath.WalkDir(abs, func(full string, d fs.DirEntry, err error) error {
		if cerr := w.ctx.Err(); cerr != nil {
			return cerr
		}
		rel, _ := filepath.Rel(abs, full)
		shown := filepath.Join(p, rel)
		if err != nil {
			w.bad(shown, plainErr(err))
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			return nil
		case d.Type()&fs.ModeSymlink != 0:
			if w.format.Kind(filepath.ToSlash(full)) == GameLog || isArchive(full) {
				w.bad(shown, "a symbolic link is not followed")
			}
			return nil
		case !d.Type().IsRegular():
			return nil
		}
		return w.file(full, filepath.ToSlash(full), shown, false)
	})
}

// file reads one regular file: an archive, a game log, or (given by name) neither.
func (w *walker) file(full, name, shown string, given bool) error {
	if isArchive(full) {
		return w.archive(full, shown)
	}
	if w.format.Kind(name) != GameLog {
		if given {
			w.bad(shown, fmt.Sprintf("neither a %s game log nor a .tar.gz archive", w.format.Study()))
		}
		return nil
	}
	data, err := readFile(full)
	if err != nil {
		w.bad(shown, plainErr(err))
		return nil
	}
	return w.game(newFile(filepath.ToSlash(shown), name, data), diskAux{format: w.format})
}

func readFile(full string) ([]byte, error) {
	f, err := os.Open(full)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readBounded(f)
}

// readBounded reads all of r, refusing more than MaxFileBytes.
func readBounded(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("%w: larger than %d MiB, the most a file may hold", ErrRefused, MaxFileBytes>>20)
	}
	return data, nil
}

func newFile(shown, name string, data []byte) File {
	sum := sha256.Sum256(data)
	return File{Path: shown, Name: name, Data: data, SHA256: hex.EncodeToString(sum[:])}
}

func isArchive(name string) bool {
	lower := strings.ToLower(name)
	return strings.HasSuffix(lower, ".tar.gz") || strings.HasSuffix(lower, ".tgz")
}

// diskAux reads Aux files from disk, by their absolute slash path.
type diskAux struct{ format Format }

func (a diskAux) ReadAux(name string) ([]byte, error) {
	if a.format.Kind(name) != Aux {
		return nil, fmt.Errorf("%s is not a file the format reads", name)
	}
	return readFile(filepath.FromSlash(name))
}

// memAux holds an archive's Aux files.
type memAux map[string][]byte

func (a memAux) ReadAux(name string) ([]byte, error) {
	data, ok := a[name]
	if !ok {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	return data, nil
}

// archive reads a .tar.gz twice: once for its Aux files, once for its games.
func (w *walker) archive(full, shown string) error {
	aux := memAux{}
	held := 0
	err := w.entries(full, shown, false, func(name string, r io.Reader) error {
		if w.format.Kind(name) != Aux {
			return nil
		}
		data, err := readBounded(r)
		if err != nil {
			w.bad(shown+"!"+name, plainErr(err))
			return nil
		}
		if held+len(data) > MaxAuxBytes {
			w.bad(shown+"!"+name, fmt.Sprintf("the archive's other files already take %d MiB, the most held for its games", MaxAuxBytes>>20))
			return nil
		}
		held += len(data)
		aux[name] = data
		return nil
	})
	if err != nil {
		return err
	}
	return w.entries(full, shown, true, func(name string, r io.Reader) error {
		if isArchive(name) {
			w.bad(shown+"!"+name, "an archive inside an archive is not opened; extract it first")
			return nil
		}
		if w.format.Kind(name) != GameLog {
			return nil
		}
		data, err := readBounded(r)
		if err != nil {
			w.bad(shown+"!"+name, plainErr(err))
			return nil
		}
		return w.game(newFile(shown+"!"+name, name, data), aux)
	})
}

// entries calls fn with every regular entry of the archive whose name is safe; with report, it
// tells bad about the others (once per archive: the first pass stays quiet).
func (w *walker) entries(full, shown string, report bool, fn func(name string, r io.Reader) error) error {
	f, err := os.Open(full)
	if err != nil {
		if report {
			w.bad(shown, plainErr(err))
		}
		return nil
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		if report {
			w.bad(shown, "not a gzipped tar archive: "+plainErr(err))
		}
		return nil
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	for {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if report {
				w.bad(shown, "the archive is damaged: "+plainErr(err))
			}
			return nil
		}
		name, ok := safeName(h.Name)
		switch {
		case !ok:
			if report {
				w.bad(shown+"!"+h.Name, "an entry named outside the archive (an absolute path or a \"..\" step) is refused")
			}
			continue
		case h.Typeflag == tar.TypeDir:
			continue
		case h.Typeflag != tar.TypeReg:
			if report && (w.format.Kind(name) == GameLog || isArchive(name)) {
				w.bad(shown+"!"+h.Name, "only regular files are read from an archive (links are not followed)")
			}
			continue
		}
		if err := fn(name, tr); err != nil {
			return err
		}
	}
}

// safeName cleans an archive entry's name; ok is false for a name that is absolute or leaves
// the archive's folder.
func safeName(name string) (string, bool) {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasPrefix(name, `\`) || filepath.IsAbs(name) || strings.Contains(name, `\`) {
		return "", false
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", false
		}
	}
	clean := path.Clean(name)
	if clean == "." || strings.HasPrefix(clean, "../") {
		return "", false
	}
	return clean, true
}

// plainErr words an error for a "path: reason" line: without the path os errors repeat.
func plainErr(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	msg := err.Error()
	if errors.Is(err, ErrRefused) {
		msg = strings.TrimPrefix(msg, ErrRefused.Error()+": ")
	}
	return msg
}
