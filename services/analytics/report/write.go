package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/tables"
)

// Formats are the report formats Write knows.
var Formats = []string{"md", "html", "csv", "jsonl"}

// ErrFormat reports an unknown format.
var ErrFormat = errors.New("report: unknown format")

// Input is what a report is made of.
type Input struct {
	// Title heads the report; Intro lines follow it.
	Title string
	Intro []string
	// ID names the tournament in file contents (the meta-game's title).
	ID string
	// Rows are the matches; Options how tables name agents and pick seats.
	Rows    []metrics.Row
	Options tables.Options
}

// Result lists what Write wrote.
type Result struct {
	// Files are the paths written, sorted.
	Files []string
	// Games are the tables the report shows.
	Games []*tables.Game
	// Notes say what was left out and why (e.g. a meta-game without self-play).
	Notes []string
}

// Write writes a report into dir (created if needed): the figures (SVG and PNG) always, then
// for each format: md: report.md; html: report.html; csv: matches.csv (one line per match)
// and one <game>-<table>.csv per table; jsonl: matches.jsonl (one object per match) and
// tables.jsonl (one object per table). For every two-player game whose every ordered pair,
// self-play included, was played it also writes <game>-metagame.yaml (MetaGameYAML).
func Write(dir string, in Input, formats []string) (*Result, error) {
	for _, f := range formats {
		if !contains(Formats, f) {
			return nil, fmt.Errorf("%w %q: want one of %s", ErrFormat, f, strings.Join(Formats, ", "))
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	res := &Result{Games: tables.Build(in.Rows, in.Options)}
	var sections []Section
	for _, g := range res.Games {
		sections = append(sections, Sections(g)...)
	}
	figures, err := Figures(dir, res.Games, in.Rows)
	if err != nil {
		return nil, err
	}
	for _, f := range figures {
		res.Files = append(res.Files, filepath.Join(dir, f.SVG), filepath.Join(dir, f.PNG))
	}
	for _, g := range res.Games {
		if g.Pairs == nil {
			continue
		}
		m, err := tables.MetaGameOf(g)
		if err != nil {
			res.Notes = append(res.Notes, fmt.Sprintf("no meta-game file for %s: %v (play self-play too)", g.Game, err))
			continue
		}
		if err := res.write(dir, fileName(g.Game, "metagame.yaml"), MetaGameYAML(m, in.ID)); err != nil {
			return nil, err
		}
	}
	intro := append(append([]string(nil), in.Intro...), res.Notes...)
	label := in.Options.Agent
	if label == nil {
		label = func(r metrics.Row, seat int) string { return r.Seats[seat].AgentKey() }
	}
	records := Records(in.Rows, label)
	for _, f := range formats {
		var buf bytes.Buffer
		switch f {
		case "md":
			if err := WriteMarkdown(&buf, in.Title, intro, figures, sections); err != nil {
				return nil, err
			}
			err = res.write(dir, "report.md", buf.Bytes())
		case "html":
			if err := WriteHTML(&buf, in.Title, intro, figures, sections); err != nil {
				return nil, err
			}
			err = res.write(dir, "report.html", buf.Bytes())
		case "csv":
			if err := WriteMatchesCSV(&buf, records); err != nil {
				return nil, err
			}
			err = res.write(dir, "matches.csv", buf.Bytes())
			for _, s := range sections {
				if err != nil {
					break
				}
				var b bytes.Buffer
				if err := WriteSectionCSV(&b, s); err != nil {
					return nil, err
				}
				err = res.write(dir, fileName(s.Game, slug(s.Title)+".csv"), b.Bytes())
			}
		case "jsonl":
			if err := WriteJSONL(&buf, records); err != nil {
				return nil, err
			}
			err = res.write(dir, "matches.jsonl", buf.Bytes())
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			for _, s := range sections {
				if err := enc.Encode(s); err != nil {
					return nil, err
				}
			}
			if err == nil {
				err = res.write(dir, "tables.jsonl", b.Bytes())
			}
		}
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(res.Files)
	return res, nil
}

func (r *Result) write(dir, name string, data []byte) error {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	r.Files = append(r.Files, path)
	return nil
}

func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortStrings(s []string) { sort.Strings(s) }
