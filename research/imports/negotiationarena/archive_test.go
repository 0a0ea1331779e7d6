package negotiationarena_test

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
	"maps"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/negotiationarena"
	"github.com/parley-arena/parley/research/reproduce"
	"github.com/parley-arena/parley/research/studies"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// archiveDir holds the shared archives of NegotiationArena's published runs, beside the
// repository.
var archiveDir = filepath.Join("..", "..", "..", "..", "shared", "data", "transcripts", "negotiationarena")

// archives lists the shared archives, or skips the test with one line when they are not there.
func archives(t testing.TB) []string {
	t.Helper()
	got, _ := filepath.Glob(filepath.Join(archiveDir, "*.tar.gz"))
	if len(got) == 0 {
		t.Skipf("skipped: no archives in %s (../shared holds the published runs)", archiveDir)
	}
	return got
}

var (
	fixtureOnce sync.Once
	fixture     struct {
		dir string // the archives, extracted
		bus *bus.Bus
		sum *imports.Summary
		err error
	}
)

// imported extracts every shared archive into a temporary folder (for this test's own reading)
// and imports the archives themselves into an embedded store, once per test binary.
func imported(t *testing.T) (string, *bus.Bus, *imports.Summary) {
	t.Helper()
	paths := archives(t)
	fixtureOnce.Do(func() {
		f := &fixture
		if f.dir, f.err = os.MkdirTemp("", "na-runs-"); f.err != nil {
			return
		}
		for _, a := range paths {
			if f.err = untar(a, f.dir); f.err != nil {
				return
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		if f.bus, f.err = bus.Open(ctx, bus.Config{}, nil); f.err != nil {
			return
		}
		im := &imports.Importer{Format: negotiationarena.Format{}, Games: families.New(), Prefix: "na"}
		f.sum, f.err = im.Import(ctx, f.bus, paths)
	})
	if fixture.err != nil {
		t.Fatal(fixture.err)
	}
	return fixture.dir, fixture.bus, fixture.sum
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.bus != nil {
		fixture.bus.Close()
	}
	if fixture.dir != "" {
		os.RemoveAll(fixture.dir)
	}
	os.Exit(code)
}

func untar(archive, dir string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		name := path.Clean(h.Name)
		if !fs.ValidPath(name) || h.Typeflag != tar.TypeReg {
			continue
		}
		target := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return err
		}
	}
}

// expected is what this test reads from one log by itself, from the raw JSON.
type expected struct {
	folder  string // the last three steps of the game folder's parent
	setup   string // game, parameters and seat labels, as setupOf writes them
	void    bool   // the log has no END summary
	payoffs []float64
	answers int
	// Quirks of the platform this test tells by itself.
	acceptLike  int // answers whose word says accept but is not "ACCEPT" (the platform waited)
	negative    bool
	keepsOnNoUD string // ultimatum without a deal logged with P1 keeping money: "rejection" or "no deal"
}

func unwrap(v any) any {
	for {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		inner, ok := m["_value"]
		if !ok {
			return v
		}
		v = inner
	}
}

func bundle(v any) map[string]float64 {
	out := map[string]float64{}
	if m, ok := unwrap(v).(map[string]any); ok {
		for k, n := range m {
			if f, ok := n.(float64); ok {
				out[k] = f
			}
		}
	}
	return out
}

// rawLog is what this test reads of a log: none of the conversations.
type rawLog struct {
	Class      string  `json:"class"`
	Iterations float64 `json:"iterations"`
	Players    []struct {
		Class string `json:"class"`
		Model any    `json:"model"`
	} `json:"players"`
	GameState []struct {
		Iteration any            `json:"current_iteration"`
		Settings  map[string]any `json:"settings"`
		Public    map[string]any `json:"player_public_info_dict"`
		Summary   map[string]any `json:"summary"`
	} `json:"game_state"`
}

func readExpected(t *testing.T, root, file string) expected {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var log rawLog
	if err := jsonv2.Unmarshal(data, &log); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	rel, _ := filepath.Rel(root, filepath.Dir(filepath.Dir(file)))
	steps := strings.Split(filepath.ToSlash(rel), "/")
	e := expected{folder: strings.Join(steps[max(0, len(steps)-3):], "/")}
	settings := log.GameState[0].Settings
	init := settings["player_initial_resources"].([]any)
	social := settings["player_social_behaviour"].([]any)
	label := func(i int) string {
		model, _ := log.Players[i].Model.(string)
		if model == "" || model == "ClientObject" || model == "GenerativeModel" {
			model = strings.ToLower(strings.TrimSuffix(log.Players[i].Class, "Agent")) + " (model not logged)"
		}
		s := strings.ToLower(social[i].(string))
		switch {
		case strings.Contains(s, "cunning"):
			model += "/cunning"
		case strings.Contains(s, "desperat"):
			model += "/desperate"
		}
		return model
	}
	currency := ""
	var params string
	switch log.Class {
	case "TradingGame":
		params = fmt.Sprintf("trading %v %v turns %d", sorted(bundle(init[0])), sorted(bundle(init[1])), int(log.Iterations))
	case "MultiTurnUltimatumGame":
		for k, v := range bundle(init[0]) {
			currency = k
			params = fmt.Sprintf("ultimatum %s %d turns %d", k, int64(v), int(log.Iterations))
		}
	case "BuySellGame":
		vals := settings["player_valuation"].([]any)
		var budget float64
		for _, v := range bundle(init[1]) {
			budget = v
		}
		params = fmt.Sprintf("buysell cost %d willingness %d budget %d turns %d", int64(bundle(vals[0])["X"]), int64(bundle(vals[1])["X"]), int64(budget), int(log.Iterations))
	}
	e.setup = fmt.Sprintf("%s | %s | %s", params, label(0), label(1))
	for _, s := range log.GameState[1:] {
		if s.Public == nil {
			continue
		}
		e.answers++
		word, _ := s.Public["player answer"].(string)
		_, trade := unwrap(s.Public["newly proposed trade"]).(map[string]any)
		if word != "ACCEPT" && strings.Contains(strings.ToUpper(word), "ACCEPT") && !trade {
			e.acceptLike++
		}
	}
	last := log.GameState[len(log.GameState)-1]
	if last.Iteration != "END" {
		e.void = true
		return e
	}
	sum := last.Summary
	for _, o := range sum["player_outcome"].([]any) {
		switch log.Class {
		case "BuySellGame":
			e.payoffs = append(e.payoffs, o.(float64))
		case "TradingGame":
			total := 0.0
			for _, v := range bundle(o) {
				total += v
			}
			e.payoffs = append(e.payoffs, total)
		default:
			e.payoffs = append(e.payoffs, bundle(o)[currency])
		}
	}
	for _, fr := range sum["final_resources"].([]any) {
		for _, v := range bundle(fr) {
			e.negative = e.negative || v < 0
		}
	}
	if resp := sum["final_response"].(string); log.Class == "MultiTurnUltimatumGame" && resp != "ACCEPT" && e.payoffs[0] != 0 && !e.negative {
		e.keepsOnNoUD = "no deal"
		if resp == "REJECT" {
			e.keepsOnNoUD = "rejection"
		}
	}
	return e
}

func sorted(m map[string]float64) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s:%v", k, m[k]))
	}
	return strings.Join(parts, ",")
}

// setupOf writes a stored match's set-up as readExpected does.
func setupOf(start *eventsv1.MatchStarted) string {
	p := start.GetParams()
	var params string
	switch start.GetGame() {
	case "trading":
		tp := p.GetTrading()
		f := func(m map[string]int64) map[string]float64 {
			out := map[string]float64{}
			for k, v := range m {
				if v != 0 {
					out[k] = float64(v)
				}
			}
			return out
		}
		params = fmt.Sprintf("trading %v %v turns %d", sorted(f(tp.GetP1Holdings())), sorted(f(tp.GetP2Holdings())), tp.GetMaxTurns())
	case "ultimatum":
		u := p.GetUltimatum()
		params = fmt.Sprintf("ultimatum %s %d turns %d", u.GetCurrency(), u.GetTotal(), u.GetMaxTurns())
	case "buysell":
		b := p.GetBuysell()
		params = fmt.Sprintf("buysell cost %d willingness %d budget %d turns %d", b.GetCost(), b.GetWillingness(), b.GetBudget(), b.GetMaxTurns())
	}
	return fmt.Sprintf("%s | %s | %s", params, start.GetSeats()[0].GetLabel(), start.GetSeats()[1].GetLabel())
}

// TestArchivesImport imports every shared archive and checks the store against what this test
// reads from the JSON by itself: the games of each source folder and of each set-up, every
// game's payoffs (void for a game without its summary), every answer kept, and the platform's
// quirks counted among the disagreements.
func TestArchivesImport(t *testing.T) {
	dir, b, sum := imported(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	want := map[string]expected{} // by sha256
	perFolder := map[string]int{}
	perSetup := map[string]int{}
	var accepts, negatives, voids, answers int
	keeps := map[string]int{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "game_state.json" {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sha := sha256.Sum256(data)
		e := readExpected(t, dir, p)
		want[hex.EncodeToString(sha[:])] = e
		perFolder[e.folder]++
		if !e.void {
			perSetup[e.setup]++
		}
		accepts += e.acceptLike
		answers += e.answers
		if e.negative {
			negatives++
		}
		if e.void {
			voids++
		}
		if e.keepsOnNoUD != "" {
			keeps[e.keepsOnNoUD]++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 5000 {
		t.Fatalf("read %d logs from the archives; the README says about 5,000", len(want))
	}

	if sum.Imported != len(want) || len(sum.Refused) != 0 {
		t.Errorf("imported %d, refused %v; want all %d", sum.Imported, sum.Refused, len(want))
	}
	if v := sum.Void["cut short"]; v != voids {
		t.Errorf("%d void (cut short), want %d logs without a summary", v, voids)
	}
	// The quirks: each counted once among the disagreements, by its tag.
	for tag, n := range map[string]int{"negative_holdings": negatives, "rejection_keeps_holdings": keeps["rejection"], "no_deal_keeps_holdings": keeps["no deal"]} {
		if got := sum.Disagreements["outcome"][tag]; got != n {
			t.Errorf("outcome disagreements %s: %d, want %d", tag, got, n)
		}
	}
	if got := sum.Disagreements["parse"]["pass_read_as_accept"]; got != accepts {
		t.Errorf("answers the platform took for a wait that say accept: %d, want %d", got, accepts)
	}

	gotFolder := map[string]int{}
	gotSetup := map[string]int{}
	gotAnswers, parseDiff, outcomeDiff := 0, 0, 0
	var specs []*tournamentv1.TournamentSpec
	for _, tr := range sum.Tournaments {
		spec, err := tournament.LoadSpec(ctx, b.JetStream(), tr.ID)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	err = tournament.EachRecordOf(ctx, b.JetStream(), specs, func(rec tournament.Record) error {
		start := rec.Events[0].GetMatchStarted()
		end := rec.Events[len(rec.Events)-1].GetMatchEnded()
		e, ok := want[start.GetImported().GetSha256()]
		if !ok {
			t.Errorf("%s: sha256 %s is no log's", rec.MatchID, start.GetImported().GetSha256())
			return nil
		}
		gotFolder[e.folder]++
		if !strings.HasSuffix(rec.TournamentID, strings.NewReplacer("/", "-", ".", "").Replace(e.folder)) {
			t.Errorf("%s: in tournament %s, its folder is %s", rec.MatchID, rec.TournamentID, e.folder)
		}
		if end.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_VOID {
			if !e.void {
				t.Errorf("%s (%s): void, but its log has a summary", rec.MatchID, start.GetImported().GetSourceFile())
			}
		} else {
			gotSetup[setupOf(start)]++
			if !slices.EqualFunc(end.GetOutcome().GetPayoffs(), e.payoffs, func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }) {
				t.Errorf("%s: payoffs %v, the log's %v", start.GetImported().GetSourceFile(), end.GetOutcome().GetPayoffs(), e.payoffs)
			}
		}
		for _, ev := range rec.Events {
			if a := ev.GetActionTaken(); a != nil {
				gotAnswers++
				if a.GetAction().GetUsage().GetStyle() != "negotiationarena" {
					t.Errorf("%s: style %q", rec.MatchID, a.GetAction().GetUsage().GetStyle())
				}
			}
		}
		for _, d := range end.GetImportAudit().GetDisagreements() {
			switch d.GetKind() {
			case eventsv1.DisagreementKind_DISAGREEMENT_KIND_PARSE:
				parseDiff++
			case eventsv1.DisagreementKind_DISAGREEMENT_KIND_OUTCOME:
				outcomeDiff++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(gotFolder, perFolder) {
		t.Errorf("games per folder in the store:\n%v\nin the archives:\n%v", gotFolder, perFolder)
	}
	if !maps.Equal(gotSetup, perSetup) {
		for k := range perSetup {
			if gotSetup[k] != perSetup[k] {
				t.Errorf("set-up %s: %d stored, %d in the archives", k, gotSetup[k], perSetup[k])
			}
		}
		for k := range gotSetup {
			if perSetup[k] == 0 {
				t.Errorf("set-up %s: %d stored, none in the archives", k, gotSetup[k])
			}
		}
	}
	if gotAnswers != answers {
		t.Errorf("%d answers stored, %d in the logs", gotAnswers, answers)
	}
	total := func(kind string) int {
		n := 0
		for _, v := range sum.Disagreements[kind] {
			n += v
		}
		return n
	}
	if parseDiff != total("parse") || outcomeDiff != total("outcome") {
		t.Errorf("the records hold %d parse and %d outcome disagreements, the summary counts %d and %d", parseDiff, outcomeDiff, total("parse"), total("outcome"))
	}
	// The published set-ups this test knows, each with the games the README says.
	for setup, n := range map[string]int{
		"trading X:25,Y:5 X:5,Y:25 turns 8 | gpt-4-1106-preview | claude-2.1":                                    60,
		"ultimatum Dollars 100 turns 8 | claude-2.1 | gpt-4-1106-preview":                                        60,
		"buysell cost 40 willingness 60 budget 100 turns 10 | gpt-4-1106-preview | gpt-4-1106-preview/desperate": 80,
	} {
		if got := gotSetup[setup]; got < n {
			t.Errorf("set-up %s: %d games stored, want at least %d", setup, got, n)
		}
	}
}

// unequalHeading starts the README's list of the NegotiationArena cells the shared runs do not
// give at the paper's printed precision, one "- TABLE / ROW / COLUMN: reason" line each.
const unequalHeading = "Published NegotiationArena cells the shared runs do not give"

// TestArchivesReproduce fills the study's tables from the folders the paper's figures rest on
// (section_one/.logs, section_two/.logs, additional_experiments' ultimatum with other amounts)
// and checks every published cell: equal at the paper's printed precision (a bound holds, an
// "about" is within one printed unit), or listed with its reason in the README; a listed cell
// the runs do give fails too, so the list stays true.
func TestArchivesReproduce(t *testing.T) {
	_, b, _ := imported(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	study, err := studies.Load(negotiationarena.Study)
	if err != nil {
		t.Fatal(err)
	}
	imp, err := reproduce.ReadImported(ctx, b.JetStream(), study,
		[]string{"na-section_one-logs", "na-section_two-logs", "na-additional_experiments-logs-ultimatum_with_different_numbers"},
		families.New(), standard.New())
	if err != nil {
		t.Fatal(err)
	}
	tables, err := imp.Study.Select(nil)
	if err != nil {
		t.Fatal(err)
	}
	unequal := repodata.Listed(t, unequalHeading)
	checked := 0
	for _, tr := range studies.Compute(tables, imp.Results, nil, nil) {
		tb := tr.Table
		for i, row := range tb.Rows {
			for j, col := range tb.Columns {
				paper, ok := row.Paper[col.Key]
				if !ok {
					continue
				}
				key := fmt.Sprintf("%s / %s / %s", tb.ID, strings.Join(row.Keys, " / "), col.Label)
				p, _ := paper.(float64)
				if n, ok := paper.(int); ok {
					p = float64(n)
				}
				dec := 2
				if col.Dec != nil {
					dec = *col.Dec
				}
				if row.Dec != nil {
					dec = *row.Dec
				}
				our := tr.Ours[i][j]
				if m, ok := tb.MeasureFor(row, col); ok && m.AltShown && our.Alt != nil {
					our = *our.Alt // the reading the paper prints (the authors' computation)
				}
				unit := math.Pow(10, -float64(dec))
				equal := our.OK
				if equal {
					// Rounded as the tables print it (an exact half to even, as Go's and
					// Python's formatting do).
					ours := math.RoundToEven(our.Value/unit) * unit
					switch row.Qualifier[col.Key] {
					case "greater than":
						equal = our.Value > p && (our.Alt == nil || !our.Alt.OK || our.Alt.Value > p)
					case "about", "almost":
						equal = math.Abs(ours-p) <= unit+1e-9
					default:
						equal = math.Abs(ours-p) < unit/2
					}
				}
				why, listed := unequal[key]
				switch {
				case equal && listed:
					t.Errorf("%s: ours %.4g equals the paper's %v, yet the README lists it (%s)", key, our.Value, paper, why)
				case !equal && !listed:
					t.Errorf("%s: ours %v (n=%d; %s), the paper %v: neither equal at the paper's precision nor listed in the README", key, our.Value, our.N, our.Why, paper)
				}
				delete(unequal, key)
				checked++
			}
		}
	}
	if checked < 15 {
		t.Errorf("%d published cells checked; the study carries more", checked)
	}
	for key := range unequal {
		t.Errorf("the README lists %q, which the study's tables do not have", key)
	}
}
