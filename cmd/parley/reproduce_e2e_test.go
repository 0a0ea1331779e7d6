package main

// End-to-end tests of `parley reproduce`: each study played with --games 1 against the
// scripted model (the fake chat-completions server's autoplayer), its tables printed with the
// paper's numbers and ours side by side.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-arena/parley/cmd/parley/internal/reportcmd"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/studies"
)

// dondData is the repository's copy of the public Deal-or-No-Deal corpus.
var dondData, _ = filepath.Abs("../../data/dealornodeal")

// studyFormats is a tag that only each study's own reply format asks for.
var studyFormats = map[string]string{"deliberation": "</ANSWER>", "negotiationarena": "<player answer>"}

// oursNumber finds a number in an "ours" position: a table line holds paper and ours cells.
var numberRe = regexp.MustCompile(`-?\d+(\.\d+)?`)

func TestReproduceEveryStudy(t *testing.T) {
	t.Parallel()
	for _, name := range studies.Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, err := studies.Load(name)
			if err != nil {
				t.Fatal(err)
			}
			srv := autoplayServer(t)
			store := t.TempDir()
			args := []string{"reproduce", name, "--games", "1", "--base-url", srv.URL, "--cache", t.TempDir(),
				"--dond-data", dondData, "--quiet", "--concurrency", "4", "--store-dir", store}
			// A model of its own in every slot, none's name inside another's.
			models := map[string]bool{}
			for i, slot := range s.Slots {
				m := fmt.Sprintf("seatmodel-%c", 'a'+i)
				models[m] = true
				args = append(args, "--model", slot+"="+m)
			}
			start := time.Now()
			r := mustRun(t, nil, args...)
			t.Logf("%s --games 1: %s, %d model calls", name, time.Since(start).Round(time.Millisecond), srv.Count())
			if srv.Count() == 0 {
				t.Fatal("the model was never called")
			}
			// The studies told no model who its opponent was: no prompt names another model.
			for _, req := range srv.Requests() {
				for m := range models {
					if m != req.Model && strings.Contains(req.Text(), m) {
						t.Fatalf("a prompt to %s names %s:\n%s", req.Model, m, req.Text())
					}
				}
			}
			// A study played in its own reply format asks every model for it.
			if format, ok := studyFormats[s.Agent.Style]; ok {
				for _, req := range srv.Requests() {
					if !strings.Contains(req.System(), format) {
						t.Fatalf("a model was asked without the %s format (%q):\n%s", s.Agent.Style, format, req.System())
					}
				}
			}
			out := r.stdout
			if dump := getenvTest("PARLEY_REPRODUCE_DUMP"); dump != "" {
				os.WriteFile(filepath.Join(dump, name+".txt"), []byte(out), 0o644)
			}
			filled := 0
			for _, tb := range s.Tables {
				i := strings.Index(out, tb.ID+": ")
				if i < 0 {
					t.Errorf("table %q is not printed", tb.ID)
					continue
				}
				block := out[i:]
				if j := strings.Index(block, "\n\n"); j > 0 {
					block = block[:j]
				}
				lines := strings.Split(block, "\n")
				if len(lines) < 4+len(tb.Rows) || !strings.Contains(lines[3], "paper") || !strings.Contains(lines[3], "ours") {
					t.Errorf("table %q lacks its paper and ours columns:\n%s", tb.ID, block)
					continue
				}
				// Every row is printed, and the table has at least one number of ours: the
				// count column holds the matches behind the row's cells.
				ours := 0
				for _, row := range lines[4 : 4+len(tb.Rows)] {
					f := strings.Fields(row)
					if n := f[len(f)-1]; n != "0" && numberRe.MatchString(n) {
						ours++
					}
				}
				// A cell of ours left empty says why (one game cannot correlate prices, a
				// scripted model that accepts at once never counters, ...).
				if ours == 0 && !strings.Contains(block, "\n  – ") {
					t.Errorf("table %q has no cell of ours and no reason:\n%s", tb.ID, block)
				}
				if ours > 0 {
					filled++
				}
			}
			if filled*3 < len(s.Tables)*2 {
				t.Errorf("only %d of %d tables have numbers of ours:\n%s", filled, len(s.Tables), out)
			}
			if strings.Contains(out, "no model for") {
				t.Errorf("a slot was left without a model:\n%s", out)
			}
			reportEverySetUp(t, store)
		})
	}
}

// reportEverySetUp writes `parley report` of a tournament of each shape in the store (its
// game, its seats and what sits in them, amounts aside): each renders, none panics. One per
// shape, not all: each report reads the match stream from its tournament's start, and the
// study's set-ups of one shape differ only in numbers.
func reportEverySetUp(t *testing.T, store string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{StoreDir: store}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	shapes := map[string]*tournamentv1.TournamentSpec{}
	if err := tournament.EachSpec(ctx, b.JetStream(), func(s *tournamentv1.TournamentSpec) {
		if k := setUpShape(s); shapes[k] == nil {
			shapes[k] = s
		}
	}); err != nil {
		t.Fatal(err)
	}
	if len(shapes) == 0 {
		t.Fatal("no tournament in the store")
	}
	dir := t.TempDir()
	for _, spec := range shapes {
		res, err := reportcmd.Write(ctx, b.JetStream(), spec, filepath.Join(dir, spec.GetTournamentId()), []string{"md"})
		if err != nil {
			t.Errorf("report of %s: %v", spec.GetTournamentId(), err)
		} else if len(res.Files) == 0 {
			t.Errorf("report of %s wrote nothing", spec.GetTournamentId())
		}
	}
}

var digits = regexp.MustCompile(`[0-9]+`)

// setUpShape is the game, whether a seat may be filled twice, and each match's entrants by
// label, numbers left out.
func setUpShape(s *tournamentv1.TournamentSpec) string {
	var seats []string
	for _, m := range s.GetMatches() {
		var l []string
		for _, e := range m.GetEntrants() {
			l = append(l, s.GetEntrants()[e].GetLabel())
		}
		seats = append(seats, strings.Join(l, ","))
	}
	slices.Sort(seats)
	return digits.ReplaceAllString(fmt.Sprint(s.GetGame(), s.GetSelfPlay(), slices.Compact(seats)), "#")
}

// TestReproduceDryRunAndNoModel: --dry-run plans without a model or a network and prints the
// matches, calls, tokens and cost; tables that need no model print without one.
func TestReproduceDryRunAndNoModel(t *testing.T) {
	t.Parallel()
	r := mustRun(t, nil, "reproduce", "negotiationarena", "--dry-run", "--model", "gpt-4o", "--base-url", "http://127.0.0.1:1/v1")
	for _, want := range []string{"Figure 3a (text)", "model calls", "tokens", "cost", "total"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, r.stdout)
		}
	}
	if !regexp.MustCompile(`total\s+\d+\s+[1-9]\d*\s+[1-9]\d*\s+[1-9]\d*\s+\$[1-9]`).MatchString(r.stdout) {
		t.Errorf("dry run totals are empty:\n%s", r.stdout)
	}
	// With a budget the plan says what it allows: no match more than its budget, and the
	// matches whose estimate passes it are counted as cut short.
	const budget = 1000
	r = mustRun(t, nil, "reproduce", "negotiationarena", "--dry-run", "--model", "gpt-4o", "--base-url", "http://127.0.0.1:1/v1", "--token-budget", fmt.Sprint(budget))
	total := regexp.MustCompile(`(?m)^\s*total\s+\d+\s+(\d+)\s+\d+\s+(\d+)\s+\$\S+\s+(\d+)\s+(\d+)$`).FindStringSubmatch(r.stdout)
	if total == nil || !strings.Contains(r.stdout, "budgets allow") {
		t.Fatalf("the dry run does not say what the budget allows:\n%s", r.stdout)
	}
	var matches, tokens, allowed, cut int64
	for i, p := range []*int64{&matches, &tokens, &allowed, &cut} {
		*p, _ = strconv.ParseInt(total[i+1], 10, 64)
	}
	if allowed > budget*matches || allowed >= tokens || cut == 0 || cut > matches {
		t.Errorf("budget %d over %d matches: estimated %d tokens, allowed %d, %d cut short:\n%s", budget, matches, tokens, allowed, cut, r.stdout)
	}
	r = mustRun(t, nil, "reproduce", "deliberation", "--table", "4", "--quiet")
	if !strings.Contains(r.stdout, "Game 3") || !strings.Contains(r.stdout, "ours") {
		t.Errorf("the deal space did not print without a model:\n%s", r.stdout)
	}
	for _, args := range [][]string{{"--model", "GPT-5=x"}, {"--move-timeout", "0s"}, {"--move-timeout", "31m"}} {
		bad := runParley(t, nil, append([]string{"reproduce", "coalition"}, args...)...)
		if bad.code != 2 || strings.Count(strings.TrimSpace(bad.stderr), "\n") != 0 {
			t.Errorf("%v: want a one-line usage error:\n%s", args, bad)
		}
	}
}

func getenvTest(k string) string { return os.Getenv(k) }
