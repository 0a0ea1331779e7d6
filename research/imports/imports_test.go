package imports_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/record"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/importtest"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// toyFormat is a log format made for these tests: a file NAME.game holds an ultimatum game,
//
//	total 10            (or "total @", read from the Aux file total.txt beside it)
//	seat MODEL[/PERSONA]  (twice)
//	SEAT MOVE | ANSWER  (per answer: the move the platform played, then the model's answer)
//	outcome CAUSE P1 P2 (or "void CAUSE")
//
// where a move is "propose X" (P1 gives X), "accept", "reject" or "pass", and Parse reads an
// answer written the same way.
type toyFormat struct{}

func (toyFormat) Study() string { return "toy" }

func (toyFormat) Kind(p string) imports.FileKind {
	switch {
	case strings.HasSuffix(p, ".game"):
		return imports.GameLog
	case path.Base(p) == "total.txt":
		return imports.Aux
	}
	return imports.Skip
}

func (toyFormat) Folder(p string) string { return path.Dir(p) }

func toyMove(s string) (*gamev1.Move, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return nil, errors.New("no move")
	}
	switch f[0] {
	case "accept":
		return &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}, nil
	case "reject":
		return &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, nil
	case "pass":
		return &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}, nil
	case "propose":
		if len(f) != 2 {
			return nil, errors.New("propose needs an amount")
		}
		x, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, err
		}
		return &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
			Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"Dollars": x}}}}},
		}}}}, nil
	}
	return nil, fmt.Errorf("unknown move %q", f[0])
}

func (toyFormat) Parse(_ *agentv1.Observation, answer string) (*agentv1.Action, error) {
	m, err := toyMove(answer)
	if err != nil {
		return nil, err
	}
	return &agentv1.Action{Move: m}, nil
}

func (toyFormat) Read(f imports.File, aux imports.AuxReader) (*imports.Game, error) {
	g := &imports.Game{Game: "ultimatum", Style: "toy"}
	for n, line := range strings.Split(strings.TrimSpace(string(f.Data)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "total":
			v := fields[1]
			if v == "@" {
				data, err := aux.ReadAux(path.Join(path.Dir(f.Name), "total.txt"))
				if err != nil {
					return nil, err
				}
				v = strings.TrimSpace(string(data))
			}
			total, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n+1, err)
			}
			g.Params = &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{Total: proto.Int64(total), MaxTurns: proto.Int32(4)}}}
		case "seat":
			model, persona, _ := strings.Cut(fields[1], "/")
			g.Seats = append(g.Seats, imports.Seat{Model: model, Persona: persona})
		case "0", "1":
			played, answer, _ := strings.Cut(line[2:], "|")
			m, err := toyMove(played)
			if err != nil {
				return nil, fmt.Errorf("line %d: %v", n+1, err)
			}
			seat, _ := strconv.Atoi(fields[0])
			g.Turns = append(g.Turns, imports.Turn{Seat: int32(seat), Answer: strings.TrimSpace(answer), Played: &agentv1.Action{Move: m, Messages: []*gamev1.Message{{Text: "msg " + strconv.Itoa(n)}}}})
		case "outcome":
			p1, _ := strconv.ParseFloat(fields[2], 64)
			p2, _ := strconv.ParseFloat(fields[3], 64)
			cause := map[string]matchv1.EndCause{"agreement": matchv1.EndCause_END_CAUSE_AGREEMENT, "rejected": matchv1.EndCause_END_CAUSE_REJECTED}[fields[1]]
			g.Outcome = &matchv1.Outcome{Cause: cause, Agreement: cause == matchv1.EndCause_END_CAUSE_AGREEMENT, Payoffs: []float64{p1, p2}}
		case "void":
			g.Void = strings.Join(fields[1:], " ")
		default:
			return nil, fmt.Errorf("line %d: unknown line %q", n+1, fields[0])
		}
	}
	return g, nil
}

// Games of the toy format: a deal Parley reads alike; a game whose answer Parley reads
// otherwise; one the platform scores otherwise; a void one.
// longAnswer is longer than an action's private reasoning may be, and kept whole all the same.
var longAnswer = strings.Repeat("so long ", 3000)

const (
	gameAlike = `total 10
seat model-a
seat model-b/sly
0 propose 3 | propose 3
1 accept | accept
outcome agreement 7 3`
	gameParse = `total @
seat model-a
seat model-b
0 propose 4 | propose 5
1 accept | accept
outcome agreement 6 4`
	gameRefused = `total 10
seat model-b
seat model-a
0 propose 11 | propose 11
1 accept | accept
outcome agreement -1 11`
	gameVoid = `total 10
seat model-a
seat model-b
0 propose 2 | propose 2
void cut short: no end`
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func openBus(t *testing.T) *bus.Bus {
	t.Helper()
	ctx := context.Background()
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

func streamMessages(t *testing.T, b *bus.Bus) uint64 {
	t.Helper()
	s, err := b.JetStream().Stream(context.Background(), natsname.MatchStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Msgs
}

func TestImportStoresEachGameAsAMatchOfItsFoldersTournament(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	write(t, dir, "runs/left/a.game", gameAlike)
	write(t, dir, "runs/left/b.game", gameParse)
	write(t, dir, "runs/left/total.txt", "10\n")
	write(t, dir, "runs/right/c.game", gameRefused)
	write(t, dir, "runs/right/d.game", gameVoid)
	write(t, dir, "runs/right/notes.md", "not a game")
	write(t, dir, "runs/right/e.game", strings.Replace(gameAlike, "| accept", "| accept "+longAnswer, 1))
	b := openBus(t)
	im := &imports.Importer{Format: toyFormat{}, Games: families.New(), Prefix: "toy"}
	sum, err := im.Import(ctx, b, []string{filepath.Join(dir, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Imported != 5 || sum.Stored != 0 || len(sum.Refused) != 0 || sum.Void["cut short"] != 1 {
		t.Fatalf("summary: imported %d, stored %d, refused %v, void %v; want 5, 0, none, 1 cut short", sum.Imported, sum.Stored, sum.Refused, sum.Void)
	}
	// b.game: Parley reads 5 where the platform played 4; c.game: P1 gives 11 of 10 (refused), and
	// the platform scored the deal (-1, 11) where Parley ends with nothing agreed.
	if got := sum.Disagreements["parse"]["terms_differ"]; got != 1 {
		t.Errorf("parse disagreements: %v, want one terms_differ", sum.Disagreements["parse"])
	}
	if got := sum.Disagreements["refused"]["invalid_terms"]; got != 1 {
		t.Errorf("refused: %v, want one invalid_terms", sum.Disagreements["refused"])
	}
	// Both change the outcome Parley reads: (5, 5) for b.game, no deal for c.game.
	if got := sum.Disagreements["outcome"]; got["after_refusal"] != 1 || got["after_parse_difference"] != 1 || len(got) != 2 {
		t.Errorf("outcome disagreements: %v, want one after_refusal and one after_parse_difference", got)
	}
	var ids []string
	for _, tr := range sum.Tournaments {
		ids = append(ids, tr.ID)
	}
	wantIDs := []string{imports.TournamentID("toy", filepath.ToSlash(filepath.Join(dir, "runs/left")), ""),
		imports.TournamentID("toy", filepath.ToSlash(filepath.Join(dir, "runs/right")), "")}
	if !slices.Equal(ids, wantIDs) {
		t.Fatalf("tournaments %v, want %v", ids, wantIDs)
	}
	if !strings.HasSuffix(ids[0], "-runs-left") {
		t.Errorf("tournament %s is not named after its folder", ids[0])
	}

	// Each match, read back from the store, is the game: provenance, every answer, the outcome.
	files := map[string]string{"a.game": gameAlike, "b.game": gameParse, "c.game": gameRefused, "d.game": gameVoid,
		"e.game": strings.Replace(gameAlike, "| accept", "| accept "+longAnswer, 1)}
	seen := 0
	for _, id := range ids {
		spec, err := tournament.LoadSpec(ctx, b.JetStream(), id)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := tournament.LoadRecords(ctx, b.JetStream(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(spec.GetMatches()) || len(recs) < 2 {
			t.Fatalf("tournament %s: %d records of %d scheduled matches", id, len(recs), len(spec.GetMatches()))
		}
		for _, rec := range recs {
			if err := record.Validate(rec.Events); err != nil {
				t.Fatalf("%s: %v", rec.MatchID, err)
			}
			start := rec.Events[0].GetMatchStarted()
			src := start.GetImported()
			name := path.Base(src.GetSourceFile())
			content, ok := files[name]
			if !ok {
				t.Fatalf("%s: source %q is none of the games", rec.MatchID, src.GetSourceFile())
			}
			seen++
			if src.GetSha256() != sha(content) || src.GetStudy() != "toy" || start.GetTournamentId() != id {
				t.Errorf("%s: provenance %v in tournament %s", name, src, start.GetTournamentId())
			}
			if rec.MatchID != imports.MatchID(id, name, sha(content)) {
				t.Errorf("%s: match id %s, want %s", name, rec.MatchID, imports.MatchID(id, name, sha(content)))
			}
			var answers []string
			for _, line := range strings.Split(content, "\n") {
				if _, a, ok := strings.Cut(line, "|"); ok {
					answers = append(answers, strings.TrimSpace(a))
				}
			}
			var got []string
			for _, ev := range rec.Events {
				if a := ev.GetActionTaken(); a != nil {
					raw := a.GetAction().GetUsage().GetRawOutputs()
					if len(raw) != 1 {
						t.Fatalf("%s: raw outputs %q", name, raw)
					}
					got = append(got, raw[0])
					reasoning := a.GetAction().GetPrivateReasoning()
					if len(reasoning) > 8<<10 || !strings.HasPrefix(raw[0], strings.TrimSuffix(reasoning, " …[cut]")) {
						t.Errorf("%s: private reasoning %d bytes, not the answer's start", name, len(reasoning))
					}
					if a.GetAction().GetUsage().GetStyle() != "toy" {
						t.Errorf("%s: style %q", name, a.GetAction().GetUsage().GetStyle())
					}
					if len(a.GetAction().GetMessages()) != 1 {
						t.Errorf("%s: messages %v", name, a.GetAction().GetMessages())
					}
				}
			}
			if !slices.Equal(got, answers) {
				t.Errorf("%s: answers %q, want %q", name, got, answers)
			}
			end := rec.Events[len(rec.Events)-1].GetMatchEnded()
			if end == nil {
				t.Fatalf("%s: no ending", name)
			}
			switch name {
			case "d.game":
				if end.GetOutcome().GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(end.GetOutcome().GetSummary(), "cut short") {
					t.Errorf("void game ended %v", end.GetOutcome())
				}
			case "c.game":
				if p := end.GetOutcome().GetPayoffs(); !slices.Equal(p, []float64{-1, 11}) {
					t.Errorf("c.game: payoffs %v, want the platform's (-1, 11)", p)
				}
				if p := end.GetImportAudit().GetParleyOutcome(); p.GetAgreement() {
					t.Errorf("c.game: Parley's reading %v agrees to a trade its rules refuse", p)
				}
			case "a.game":
				if start.GetSeats()[1].GetLabel() != "model-b/sly" || start.GetSeats()[0].GetAgent().GetName() != "model-a" {
					t.Errorf("a.game seats %v", start.GetSeats())
				}
				if au := end.GetImportAudit(); au.GetAnswers() != 2 || au.GetAnswersAgreed() != 2 || len(au.GetDisagreements()) != 0 {
					t.Errorf("a.game audit %v", au)
				}
			}
			if _, err := metrics.NewRow(rec.Events, nil); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
	if seen != 5 {
		t.Fatalf("read back %d matches, want 5", seen)
	}

	// Importing again changes nothing.
	before := streamMessages(t, b)
	again, err := im.Import(ctx, b, []string{filepath.Join(dir, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	if again.Imported != 0 || again.Stored != 5 {
		t.Errorf("second import: imported %d, already stored %d; want 0 and 5", again.Imported, again.Stored)
	}
	if after := streamMessages(t, b); after != before {
		t.Errorf("the second import stored %d more messages", after-before)
	}
}

func TestWalkReadsArchivesAndRefusesWhatItCannotUseInOneLineEach(t *testing.T) {
	dir := t.TempDir()
	inside := filepath.Join(dir, "in")
	if err := os.Mkdir(inside, 0o755); err != nil {
		t.Fatal(err)
	}
	importtest.WriteTarGz(t, filepath.Join(inside, "runs.tar.gz"), []importtest.Entry{
		{Name: "runs/left/a.game", Content: gameAlike},
		{Name: "runs/left/b.game", Content: gameParse},
		{Name: "runs/left/total.txt", Content: "10"},
		{Name: "../escape.game", Content: gameAlike},
		{Name: "/abs/escape.game", Content: gameAlike},
		{Name: "runs/link.game", Content: "../../etc/passwd", Kind: tar.TypeSymlink},
		{Name: "runs/inner.tar.gz", Content: "not opened"},
	})
	write(t, inside, "broken.tgz", "this is not gzip")
	write(t, inside, "plain/c.game", gameRefused)
	missing := filepath.Join(dir, "nowhere")

	var games []string
	var bad []string
	err := imports.Walk(context.Background(), []string{inside, missing}, toyFormat{}, func(f imports.File, aux imports.AuxReader) error {
		if f.SHA256 != sha(string(f.Data)) {
			t.Errorf("%s: sha256 %s", f.Path, f.SHA256)
		}
		if _, err := (toyFormat{}).Read(f, aux); err != nil {
			t.Errorf("%s: %v", f.Path, err)
		}
		games = append(games, f.Path)
		return nil
	}, func(p, reason string) { bad = append(bad, p+": "+reason) })
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(games)
	want := []string{filepath.Join(inside, "plain/c.game"), filepath.Join(inside, "runs.tar.gz") + "!runs/left/a.game", filepath.Join(inside, "runs.tar.gz") + "!runs/left/b.game"}
	slices.Sort(want)
	if !slices.Equal(games, want) {
		t.Errorf("games %q, want %q", games, want)
	}
	wantBad := []string{"!../escape.game: an entry named outside", "!/abs/escape.game: an entry named outside", "!runs/link.game: only regular files",
		"!runs/inner.tar.gz: an archive inside an archive", "broken.tgz: not a gzipped tar", "nowhere: no such file or directory"}
	if len(bad) != len(wantBad) {
		t.Errorf("refusals %q, want one per %q", bad, wantBad)
	}
	for _, w := range wantBad {
		if !slices.ContainsFunc(bad, func(b string) bool { return strings.Contains(b, w) }) {
			t.Errorf("no refusal %q among %q", w, bad)
		}
	}
	for _, b := range bad {
		if strings.Contains(b, "\n") {
			t.Errorf("refusal on several lines: %q", b)
		}
	}
	// Nothing was written outside: the only files are the ones the test made.
	var all []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			all = append(all, p)
		}
		return nil
	})
	if len(all) != 3 {
		t.Errorf("files under the test's folder: %q", all)
	}
}

func TestImportRefusesFilesTheFormatCannotRead(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	write(t, dir, "runs/a.game", gameAlike)
	write(t, dir, "runs/bad.game", "total ten\n")
	write(t, dir, "runs/long.game", strings.Replace(gameAlike, "| accept", "| accept "+strings.Repeat("x", imports.MaxAnswerBytes), 1))
	write(t, dir, "runs/threeseats.game", "total 10\nseat a\nseat b\nseat c\n0 pass | pass\noutcome agreement 0 0")
	b := openBus(t)
	im := &imports.Importer{Format: toyFormat{}, Games: families.New(), Prefix: "toy"}
	sum, err := im.Import(ctx, b, []string{filepath.Join(dir, "runs")})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Imported != 1 || len(sum.Refused) != 3 {
		t.Fatalf("imported %d, refused %q; want 1 and 3", sum.Imported, sum.Refused)
	}
	for _, r := range sum.Refused {
		if !strings.HasPrefix(r.Path, filepath.Join(dir, "runs")) || r.Reason == "" || strings.Contains(r.String(), "\n") {
			t.Errorf("refusal %q", r)
		}
	}
	var out bytes.Buffer
	if err := sum.Write(&out, true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "imported 1, already stored 0, void 0, refused 3") || !strings.Contains(out.String(), "model-a (toy): 1 of 1 answers read alike") {
		t.Errorf("summary:\n%s", out.String())
	}
	_ = eventsv1.DisagreementKind_DISAGREEMENT_KIND_PARSE
}

func TestSameActionComparesTheMoveAndTheTermsAMessageCarries(t *testing.T) {
	say := &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}
	deal := func(opts ...string) *gamev1.Proposal {
		d := &gamev1.Deal{}
		for _, o := range opts {
			d.Choices = append(d.Choices, &gamev1.IssueChoice{Issue: o[:1], Option: o})
		}
		return &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: d}}
	}
	talk := func(p *gamev1.Proposal) *agentv1.Action {
		return &agentv1.Action{Move: say, Messages: []*gamev1.Message{{Text: "hi", Proposal: p}}}
	}
	for _, tc := range []struct {
		name string
		a, b *agentv1.Action
		same bool
	}{
		{"talk alike", talk(nil), talk(nil), true},
		{"the same deal in any order", talk(deal("A1", "B2")), talk(deal("B2", "A1")), true},
		{"another deal", talk(deal("A1", "B2")), talk(deal("A1", "B3")), false},
		{"a deal read as none", talk(deal("A1")), talk(nil), false},
		{"zero amounts do not count", &agentv1.Action{Move: proposeX(0, 3)}, &agentv1.Action{Move: proposeX(0, 3, "Y", 0)}, true},
	} {
		if got := imports.SameAction(tc.a, tc.b); got != tc.same {
			t.Errorf("%s: SameAction %v, want %v", tc.name, got, tc.same)
		}
	}
}

func proposeX(seat int32, x int64, more ...any) *gamev1.Move {
	gives := map[string]int64{"X": x}
	for i := 0; i+1 < len(more); i += 2 {
		gives[more[i].(string)] = int64(more[i+1].(int))
	}
	return &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: seat, Gives: gives}}}},
	}}}}
}
