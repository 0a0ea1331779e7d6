package studies

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/parley-arena/parley/internal/repodata"
)

type paperFile struct {
	Tables []struct {
		ID      string                 `yaml:"id"`
		Kind    string                 `yaml:"kind"`
		RowKeys []struct{ Key string } `yaml:"row_keys"`
		Columns []struct {
			Key      string `yaml:"key"`
			Decimals *int   `yaml:"decimals"`
		} `yaml:"columns"`
		Decimals *int             `yaml:"decimals"`
		Rows     []map[string]any `yaml:"rows"`
	} `yaml:"tables"`
}

// TestCarriedNumbers: every published number a study carries equals the papers' file's (row
// by row, column by column, printed precision included), every row of a carried table is
// carried, and every results table of the paper is either carried or said not reproducible.
func TestCarriedNumbers(t *testing.T) {
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			s, err := Load(name)
			if err != nil {
				t.Fatal(err)
			}
			// An acceptance check: the papers' files are in the shared data folder only.
			b, err := os.ReadFile(repodata.Shared(t, "papers", s.Paper))
			if err != nil {
				t.Fatalf("the papers' file: %v", err)
			}
			var pf paperFile
			if err := yaml.Unmarshal(b, &pf); err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, pt := range pf.Tables {
				i := slices.IndexFunc(s.Tables, func(tb Table) bool { return tb.ID == pt.ID })
				if i < 0 {
					if pt.Kind == "results" && !slices.ContainsFunc(s.NotReproduced, func(sk Skipped) bool { return mentions(sk.Table, pt.ID) }) {
						t.Errorf("results table %q is neither carried nor said not reproducible", pt.ID)
					}
					continue
				}
				tb := s.Tables[i]
				if len(tb.Rows) != len(pt.Rows) {
					t.Errorf("%s: %d rows, the paper %d", pt.ID, len(tb.Rows), len(pt.Rows))
				}
				for _, pr := range pt.Rows {
					var keys []string
					for _, k := range pt.RowKeys {
						keys = append(keys, yamlString(pr[k.Key]))
					}
					j := slices.IndexFunc(tb.Rows, func(r Row) bool { return slices.Equal(r.Keys, keys) })
					if j < 0 {
						t.Errorf("%s: row %v is not carried", pt.ID, keys)
						continue
					}
					row := tb.Rows[j]
					for _, pc := range pt.Columns {
						c := slices.IndexFunc(tb.Columns, func(c Column) bool { return c.Key == pc.Key })
						want, inPaper := pr[pc.Key]
						got, carried := row.Paper[pc.Key]
						if c < 0 {
							if inPaper {
								t.Errorf("%s %v: column %s is not carried", pt.ID, keys, pc.Key)
							}
							continue
						}
						if inPaper != carried || !reflect.DeepEqual(got, want) {
							t.Errorf("%s %v %s: carried %v (%v), the paper %v (%v)", pt.ID, keys, pc.Key, got, carried, want, inPaper)
						}
						wantDec := pc.Decimals
						if d, ok := pr["decimals"].(int); ok {
							wantDec = &d
						} else if wantDec == nil {
							wantDec = pt.Decimals
						}
						if wantDec != nil && decimals(row, tb.Columns[c]) != *wantDec {
							t.Errorf("%s %v %s: printed with %d decimals, the paper %d", pt.ID, keys, pc.Key, decimals(row, tb.Columns[c]), *wantDec)
						}
						checked++
					}
				}
			}
			if checked == 0 {
				t.Fatal("no number checked")
			}
			t.Logf("%d cells checked", checked)
		})
	}
}

func mentions(list, id string) bool {
	if strings.Contains(list, id) {
		return true
	}
	// "Tables 14-16", "Figures 1-3, 5-7" and the like name ranges.
	short, _, _ := strings.Cut(id, " (")
	kind, num, ok := strings.Cut(short, " ")
	if !ok || !strings.HasPrefix(list, kind+"s ") {
		return false
	}
	for _, part := range strings.Split(strings.TrimPrefix(list, kind+"s "), ",") {
		part = strings.TrimSpace(strings.Split(part, " ")[0])
		lo, hi, isRange := strings.Cut(part, "-")
		if !isRange {
			hi = lo
		}
		if num >= lo && num <= hi && len(num) <= len(hi) || num == lo || num == hi {
			return true
		}
	}
	return false
}

func yamlString(v any) string {
	b, _ := yaml.Marshal(v)
	return strings.TrimSpace(string(b))
}

// TestStudiesExpand: every study expands, its runs name games and seats, and every cell of
// every table is measured from runs the study has (or from data alone).
func TestStudiesExpand(t *testing.T) {
	for _, name := range Names() {
		s, err := Load(name)
		if err != nil {
			t.Fatal(err)
		}
		runs, err := s.ExpandRuns()
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, r := range runs {
			ids[r.ID] = true
			if r.Game == "" || strings.Contains(r.ID, "{") || (len(r.Seats) == 0 && !r.Pairs) {
				t.Errorf("%s: run %+v", name, r.RunSpec)
			}
		}
		tables, _ := s.Select(nil)
		for id := range RunsOf(tables) {
			if !ids[id] {
				t.Errorf("%s: a cell reads run %q, which the study lacks", name, id)
			}
		}
	}
}
