package deliberation_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/deliberation"
)

// TestImportPublishedFolders imports the four folders as they are and checks them against the
// copies shipped with Parley: the same parties in the same seats with the same names, score
// sheets and thresholds, the same issues with as many options, the same opening deal.
func TestImportPublishedFolders(t *testing.T) {
	for _, name := range deliberation.ShippedNames() {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(dataDir, name)
			got, err := deliberation.Import(os.DirFS(dir), dir)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := deliberation.Shipped(name)
			if got.GetOpeningDeal() != want.GetOpeningDeal() || got.GetSource() != dir {
				t.Errorf("opening %q source %q, want %q %q", got.GetOpeningDeal(), got.GetSource(), want.GetOpeningDeal(), dir)
			}
			if len(got.GetIssues()) != len(want.GetIssues()) {
				t.Fatalf("%d issues, want %d", len(got.GetIssues()), len(want.GetIssues()))
			}
			for i, is := range got.GetIssues() {
				if len(is.GetOptions()) != len(want.GetIssues()[i].GetOptions()) || is.GetId() != want.GetIssues()[i].GetId() {
					t.Errorf("issue %s: %d options, want %d", is.GetId(), len(is.GetOptions()), len(want.GetIssues()[i].GetOptions()))
				}
				for _, o := range is.GetOptions() {
					if o.GetLabel() == "" || strings.HasPrefix(o.GetLabel(), "option ") {
						t.Errorf("option %s has no name from the prose: %q", o.GetId(), o.GetLabel())
					}
				}
			}
			if len(got.GetParties()) != len(want.GetParties()) {
				t.Fatalf("%d parties, want %d", len(got.GetParties()), len(want.GetParties()))
			}
			for seat, p := range got.GetParties() {
				w := want.GetParties()[seat]
				if p.GetName() != w.GetName() || p.GetRole() != w.GetRole() || p.GetThreshold() != w.GetThreshold() {
					t.Errorf("seat %d: %s %v %d, want %s %v %d", seat, p.GetName(), p.GetRole(), p.GetThreshold(), w.GetName(), w.GetRole(), w.GetThreshold())
				}
				for i, row := range p.GetPoints() {
					if !slices.Equal(row.GetPoints(), w.GetPoints()[i].GetPoints()) {
						t.Errorf("seat %d issue %s: %v, want %v", seat, deliberation.IssueID(i), row.GetPoints(), w.GetPoints()[i].GetPoints())
					}
				}
				if p.GetBriefing() == "" || strings.Contains(p.GetBriefing(), "_NUM") {
					t.Errorf("seat %d: briefing not imported or placeholders left: %.80q", seat, p.GetBriefing())
				}
			}
			// And it plays: Resolve through game=PATH.
			s := setup(t, "game="+dir)
			if s.N() != 6 || s.DealCount() != 720 || s.Game != dir {
				t.Errorf("resolved: %d parties, %d deals, game %q", s.N(), s.DealCount(), s.Game)
			}
		})
	}
}

// TestImportQuirks: option names come from the prose where it gives them, counts from the score
// sheets (game3's prose announces 5 options for C and 4 for D, but scores 4 and 5), and the
// placeholders are filled from the party's own sheet.
func TestImportQuirks(t *testing.T) {
	base := importFolder(t, "base")
	a := base.GetIssues()[0]
	if a.GetLabel() != "Infrastructure Mix" || a.GetOptions()[0].GetLabel() != "water-based" || base.GetIssues()[3].GetOptions()[0].GetLabel() != "$3 billion" {
		t.Errorf("base issue A %v, D1 %q", a, base.GetIssues()[3].GetOptions()[0].GetLabel())
	}
	if e1 := base.GetIssues()[4].GetOptions()[0].GetLabel(); e1 != "SportCo pays $600 million to Other cities" {
		t.Errorf("base E1 %q", e1)
	}
	// SportCo sits in seat 0 although config.txt lists it fourth; its briefing has D1's score.
	if p := base.GetParties()[0]; p.GetId() != "SportCo" || !strings.Contains(p.GetBriefing(), "D1 (35)") || !strings.Contains(p.GetBriefing(), "(max score 35)") {
		t.Errorf("base seat 0: %s, briefing %.200q", p.GetId(), p.GetBriefing())
	}
	g3 := importFolder(t, "game3")
	if c, d := len(g3.GetIssues()[2].GetOptions()), len(g3.GetIssues()[3].GetOptions()); c != 4 || d != 5 {
		t.Errorf("game3: C has %d options, D %d; want 4 and 5 from the score sheets", c, d)
	}
	if p := g3.GetParties()[0]; p.GetName() != "Private investors" || p.GetThreshold() != 63 {
		t.Errorf("game3 p1: %s %d", p.GetName(), p.GetThreshold())
	}
}

func importFolder(t *testing.T, name string) *deliberationv1.Scenario {
	t.Helper()
	dir := filepath.Join(dataDir, name)
	sc, err := deliberation.Import(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestImportBrokenFolders breaks copies of the base folder in one place each and checks the
// error names the file and line.
func TestImportBrokenFolders(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(dir string) error
		file  string
		line  int
		match string
	}{
		{"missing config", remove("config.txt"), "config.txt", 0, "missing"},
		{"short config line", replaceLine("config.txt", 2, "Other cities"), "config.txt", 2, "want NAME,STEM,ROLE"},
		{"unknown role", replaceLine("config.txt", 3, "Local Labour Union,union,boss,cooperative,gpt-4"), "config.txt", 3, `role "boss"`},
		{"two p1", replaceLine("config.txt", 1, "Mayor,mayor,p1,cooperative,gpt-4"), "config.txt", 4, "second party with role p1"},
		{"no p2", replaceLine("config.txt", 5, "Department of Tourism,DoT,player,greedy,gpt-4"), "config.txt", 0, "one role p2"},
		{"missing score sheet", remove("scores_files/union.txt"), "scores_files/union.txt", 0, "missing"},
		{"not a number", replaceLine("scores_files/mayor.txt", 3, "24, 18, x, 0"), "scores_files/mayor.txt", 3, `issue C: want whole numbers`},
		{"option count", replaceLine("scores_files/DoT.txt", 2, "0, 20, 25, 3"), "scores_files/DoT.txt", 2, "issue B has 4 options here but 3 in"},
		{"threshold", replaceLine("scores_files/SportCo.txt", 6, "fifty-five"), "scores_files/SportCo.txt", 6, "the last line is the threshold"},
		{"missing issue", replaceLine("scores_files/union.txt", 5, ""), "scores_files/union.txt", 6, "scores 4 issues, but"},
		{"bad opening", replaceLine("initial_deal.txt", 1, "A1,B1,C9,D1,E5"), "initial_deal.txt", 1, `"C9", which is no option`},
		{"opening twice", replaceLine("initial_deal.txt", 1, "A1,B1,C4,D1,E5\nA2,B1,C4,D1,E5"), "initial_deal.txt", 2, "want one line"},
		{"bad placeholder", replaceLine("individual_instructions/cooperative/mayor.txt", 2, "You score #F1_NUM on F."), "individual_instructions/cooperative/mayor.txt", 2, "placeholder #F1_NUM names issue F"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyFolder(t, filepath.Join(dataDir, "base"))
			if err := tc.edit(dir); err != nil {
				t.Fatal(err)
			}
			_, err := deliberation.Import(os.DirFS(dir), dir)
			var ie *deliberation.ImportError
			if !errors.As(err, &ie) {
				t.Fatalf("Import: %v, want an *ImportError", err)
			}
			if ie.File != filepath.ToSlash(filepath.Join(dir, tc.file)) || (tc.line >= 0 && ie.Line != tc.line) || !strings.Contains(ie.Problem, tc.match) {
				t.Fatalf("Import: %v; want %s:%d with %q", err, tc.file, tc.line, tc.match)
			}
			// Through the game, the same error reaches the user.
			if _, err := newGame().Resolve(params(t, "game="+dir)); err == nil || !strings.Contains(err.Error(), tc.file) {
				t.Fatalf("Resolve: %v", err)
			}
		})
	}
}

// TestImportLenient: Windows line ends, a byte-order mark, blank lines and trailing spaces are
// accepted; incentive and model may be left out of config.txt.
func TestImportLenient(t *testing.T) {
	dir := copyFolder(t, filepath.Join(dataDir, "game1"))
	for _, f := range []string{"config.txt", "scores_files/bank.txt", "initial_deal.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		text := "\uFEFF\n" + strings.ReplaceAll(string(b), "\n", "  \r\n\r\n") + "\r\n"
		if f == "config.txt" {
			text = strings.ReplaceAll(text, ",cooperative,gpt-4-0613", "")
		}
		if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := deliberation.Import(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	want := importFolder(t, "game1")
	got.Source = want.GetSource()
	if got.String() != want.String() {
		t.Fatalf("lenient import differs:\n%v\n%v", got, want)
	}
}

// copyFolder copies a game folder into a temporary directory.
func copyFolder(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "game")
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func remove(file string) func(string) error {
	return func(dir string) error { return os.Remove(filepath.Join(dir, file)) }
}

// replaceLine replaces line n (1-based) of file.
func replaceLine(file string, n int, text string) func(string) error {
	return func(dir string) error {
		path := filepath.Join(dir, file)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(b), "\n")
		lines[n-1] = text
		return os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644)
	}
}

// TestLoad: games.Loader imports a folder through the host's ReadFile, leaves shipped games and
// params that carry a scenario alone, and names the shipped games when the folder is not one.
func TestLoad(t *testing.T) {
	l := deliberation.New().(games.Loader)
	dir := filepath.Join(dataDir, "game2")
	loaded, err := l.Load(params(t, "game="+dir, "quorum=4"), 1, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	want, err := deliberation.Import(os.DirFS(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(loaded.GetDeliberation().GetScenario(), want) || loaded.GetDeliberation().GetQuorum() != 4 {
		t.Fatalf("loaded %v", loaded)
	}
	resolved, err := deliberation.New().Resolve(loaded)
	if err != nil || resolved.GetDeliberation().GetGame() != dir {
		t.Fatalf("Resolve(loaded): %v, %v", resolved, err)
	}
	shipped := params(t, "game=game2")
	if got, err := l.Load(shipped, 1, os.ReadFile); err != nil || got != shipped {
		t.Fatalf("a shipped game was loaded: %v, %v", got, err)
	}
	if _, err := l.Load(params(t, "game=gmae2"), 1, os.ReadFile); err == nil || !strings.Contains(err.Error(), `game "gmae2" is not one of base, game1, game2, game3, nor a game folder`) {
		t.Fatalf("a typo: %v", err)
	}
}

// TestShippedFoldersAreTheSource checks the repository's copies of the authors' folders
// (data/deliberation) against the shared data folder's, file for file and byte for byte,
// where that folder is.
func TestShippedFoldersAreTheSource(t *testing.T) {
	shared := repodata.Shared(t, "deliberation")
	for _, name := range deliberation.ShippedNames() {
		theirs, ours := os.DirFS(filepath.Join(shared, name)), os.DirFS(filepath.Join(dataDir, name))
		files := 0
		err := fs.WalkDir(theirs, ".", func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			want, err := fs.ReadFile(theirs, path)
			if err != nil {
				return err
			}
			got, err := fs.ReadFile(ours, path)
			if err != nil || string(got) != string(want) {
				t.Errorf("data/deliberation/%s/%s differs from the shared copy (%v)", name, path, err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := fs.WalkDir(ours, ".", func(_ string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				n++
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if n != files {
			t.Errorf("data/deliberation/%s holds %d files, the shared copy %d", name, n, files)
		}
	}
}
