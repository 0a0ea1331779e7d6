package deliberation_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/deliberation"
	"github.com/parley-arena/parley/research/imports/importtest"
)

// base's parties as the config names them, and a slot assignment that gives every one a turn.
var (
	baseConfig = "Mayor,mayor,player,cooperative,toy-model\nOther cities,other_cities,player,cooperative,toy-model\n" +
		"Local Labour Union,union,player,cooperative,toy-model\nSportCo,SportCo,p1,cooperative,toy-model\n" +
		"Department of Tourism,DoT,p2,cooperative,toy-model\nEnvironmental League,enviroment,player,cooperative,toy-model\n"
	slots = []string{"Mayor", "Other cities", "SportCo", "Local Labour Union", "Environmental League", "Department of Tourism"}
)

// history writes a run of the base game in the platform's format: SportCo opens, every slot
// speaks with talk, SportCo ends with final (nothing once final is "-"), the rounds cut after
// keep (0: all).
func history(t *testing.T, final string, keep int) []byte {
	t.Helper()
	type round struct {
		Agent  string `json:"agent"`
		Prompt string `json:"prompt"`
		Full   string `json:"full_answer"`
		Public string `json:"public_answer"`
	}
	answer := func(deal string) string {
		return "<SCRATCHPAD>weighing</SCRATCHPAD><ANSWER>I propose <DEAL>" + deal + "</DEAL>.</ANSWER><PLAN>hold</PLAN>"
	}
	rounds := []round{{Agent: "SportCo", Full: "We start with <DEAL>A1,B1,C4,D1,E5</DEAL>."}}
	for _, s := range slots {
		rounds = append(rounds, round{Agent: s, Prompt: "Now it is your turn to talk. Enclose the notes between <PLAN> and </PLAN>.", Full: answer("A2,B3,C2,D2,E3")})
	}
	last := answer(final)
	if final == "-" {
		last = "<SCRATCHPAD>no idea</SCRATCHPAD><ANSWER>Thank you all.</ANSWER>"
	}
	rounds = append(rounds, round{Agent: "SportCo", Prompt: "Now it is your turn to talk.", Full: last})
	if keep > 0 {
		rounds = rounds[:keep]
	}
	for i := range rounds {
		rounds[i].Public = rounds[i].Full
	}
	b, err := json.Marshal(map[string]any{"slot_assignment": slots, "rounds": rounds, "plan": map[string]any{}, "finished_rounds": len(rounds) - 1})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestBadInput imports an archive holding a game folder, good runs and bad ones, and a path
// that does not exist: each bad file gets one line, the rest is imported, a run with no final
// deal is a failed run, and an entry that would land outside the archive's folder is refused
// without anything being written.
func TestBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	files := map[string][]byte{}
	game := repodata.Path(t, "deliberation", "base")
	err := filepath.WalkDir(game, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(game, p)
		b, err := os.ReadFile(p)
		files["games_descriptions/base/"+filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	run := "games_descriptions/base/output/toy/coop/"
	good := history(t, "A2,B3,C2,D2,E3", 0)
	files[run+"config.txt"] = []byte(baseConfig)
	files[run+"history01.json"] = good
	files[run+"history02.json"] = history(t, "A1,B1,C4,D1,E5", 0)
	files[run+"history03.json"] = good[:len(good)/2]                                         // truncated
	files[run+"history04.json"] = history(t, "-", 0)                                         // no final deal
	files[run+"history05.json"] = history(t, "A2,B3,C2,D2,E3"+strings.Repeat("x", 1<<20), 0) // a 1 MB answer
	files[run+"history06.json"] = history(t, "A2,B3,C2,D2,E3", 4)                            // cut short
	// A run with no config of its own reads the game folder's; this one has a stranger speak.
	files["games_descriptions/base/output/noconfig/history07.json"] = []byte(strings.Replace(string(good), `"agent":"Mayor"`, `"agent":"Nobody"`, 1))
	archive := filepath.Join(t.TempDir(), "runs.tar.gz")
	var entries []importtest.Entry
	for _, n := range slices.Sorted(maps.Keys(files)) {
		entries = append(entries, importtest.Entry{Name: n, Content: string(files[n])})
	}
	entries = append(entries, importtest.Entry{Name: "../escape/history08.json", Content: string(good)})
	importtest.WriteTarGz(t, archive, entries)

	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	im := &imports.Importer{Format: deliberation.Format{}, Games: families.New(), Prefix: "delib"}
	sum, err := im.Import(ctx, b, []string{archive, filepath.Join(t.TempDir(), "missing")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"history03.json": "not a history file", "history05.json": "bytes; an answer is at most",
		"history07.json": `"Nobody" is no party`, "escape": "", "missing": "no such file",
	}
	importtest.CheckRefused(t, sum, want)
	if sum.Imported != 4 || len(sum.Void) != 0 {
		t.Fatalf("imported %d (void %v); want the two good runs, the one with no final deal and the one cut short, none void", sum.Imported, sum.Void)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(archive), "..", "escape")); err == nil {
		t.Fatal("the ../ entry was written")
	}
	outcomes := map[string]*matchv1.Outcome{}
	for _, rec := range importtest.Records(ctx, t, b.JetStream(), sum) {
		src := rec.Events[0].GetMatchStarted().GetImported().GetSourceFile()
		outcomes[path.Base(src)] = rec.Events[len(rec.Events)-1].GetMatchEnded().GetOutcome()
	}
	// A2,B3,C2,D2,E3 passes unanimously only through SportCo's bonus (52 + 10 against its 55):
	// every party's score for it; the opening deal fails: every party's minimum.
	checks := []struct {
		file  string
		cause matchv1.EndCause
		pay   []float64
	}{
		{"history01.json", matchv1.EndCause_END_CAUSE_AGREEMENT, []float64{62, 79, 60, 50, 81, 77}},
		{"history02.json", matchv1.EndCause_END_CAUSE_TURN_LIMIT, []float64{55, 65, 30, 31, 50, 55}},
		{"history04.json", matchv1.EndCause_END_CAUSE_AGENT_FAULT, []float64{55, 65, 30, 31, 50, 55}},
		{"history06.json", matchv1.EndCause_END_CAUSE_AGENT_FAULT, []float64{55, 65, 30, 31, 50, 55}},
	}
	for _, c := range checks {
		o := outcomes[c.file]
		if o.GetCause() != c.cause || !slices.Equal(o.GetPayoffs(), c.pay) {
			t.Errorf("%s: outcome %v, want %v with payoffs %v", c.file, o, c.cause, c.pay)
		}
	}
	if s := outcomes["history04.json"].GetSummary(); !strings.Contains(s, "names no deal") {
		t.Errorf("the run with no final deal says %q", s)
	}
	if s := outcomes["history06.json"].GetSummary(); !strings.Contains(s, "stops after answer 4 of 8") {
		t.Errorf("the run cut short says %q", s)
	}
}
