package main

import (
	"context"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/referee/games/gamefile"
)

// A seeded tournament of built-in agents, end to end: its printed tables, a second run with
// the same seed giving the same tables, then `parley report` from the records the first run
// left on its NATS store, checked for its tables and figure files, and the HTML report
// opened in a real headless browser.
func TestTournamentEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := filepath.Join(dir, "nats")
	args := []string{"tournament", "--game", "buysell", "--agent", "builtin:concede",
		"--agent", "boulware=builtin:concede?curve=boulware", "--games-per-pair", "3",
		"--param", "draw=true", "--self-play", "--seed", "7", "--concurrency", "3"}
	r := mustRun(t, nil, withArgs(args, "--id", "e2e-tour", "--store-dir", store)...)

	progress := regexp.MustCompile(`(?m)^\[\s*\d+/12\] e2e-tour-s[0-9a-f]{6}-a\d-g\d  \S+ \(P1\) vs \S+ \(P2\): `)
	if n := len(progress.FindAllString(r.stderr, -1)); n != 12 {
		t.Errorf("%d progress lines on stderr, want one per match (12):\n%s", n, r.stderr)
	}
	for _, want := range []string{
		"Tournament e2e-tour: buysell, 12 matches, seed 7",
		"Win rate of P2 by ordered pair", "P2 \\ P1", "Mean payoff by ordered pair (P2 / P1)",
		"Agents", "boulware", "concede", "turns to agreement", "opening as P1",
		"Outcomes", "Buyer and seller", "anchoring (Spearman rho, first vs final price)",
		"split the difference (Pearson r)", "P(p2 > p1)",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("tables lack %q:\n%s", want, r.stdout)
		}
	}
	t.Logf("tables:\n%s", r.stdout)

	// The same seed, another tournament id: the same tables.
	again := mustRun(t, nil, withArgs(args, "--id", "e2e-again", "--quiet")...)
	if strings.ReplaceAll(again.stdout, "e2e-again", "e2e-tour") != r.stdout {
		t.Errorf("the same seed gave other tables:\n%s\nthen\n%s", r.stdout, again.stdout)
	}

	out := filepath.Join(dir, "report")
	rep := mustRun(t, nil, "report", "--tournament", "e2e-tour", "--store-dir", store, "--out", out, "--format", "md,html,csv,jsonl")
	for _, f := range []string{"report.md", "report.html", "matches.csv", "matches.jsonl", "tables.jsonl",
		"buysell-agents.csv", "buysell-metagame.yaml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil || !strings.Contains(rep.stdout, filepath.Join(out, f)) {
			t.Errorf("report file %s: %v (listed: %v)", f, err, strings.Contains(rep.stdout, f))
		}
	}
	md := readFile(t, filepath.Join(out, "report.md"))
	for _, want := range []string{"# Tournament e2e-tour", "### Win rate of P2 by ordered pair", "| P2 \\ P1 | boulware | concede |",
		"![buysell: win rate of P2 (decisive matches)](buysell-heatmap-winrate.png)", "### Buyer and seller"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q:\n%s", want, md)
		}
	}
	if lines := strings.Count(readFile(t, filepath.Join(out, "matches.csv")), "\n"); lines != 13 {
		t.Errorf("matches.csv has %d lines, want a header and 12 matches", lines)
	}
	if lines := strings.Count(readFile(t, filepath.Join(out, "matches.jsonl")), "\n"); lines != 12 {
		t.Errorf("matches.jsonl has %d lines, want 12", lines)
	}
	for _, fig := range []string{"buysell-heatmap-winrate", "buysell-heatmap-payoff", "buysell-trajectories"} {
		if svg := readFile(t, filepath.Join(out, fig+".svg")); !strings.Contains(svg, "<svg") {
			t.Errorf("%s.svg is not SVG", fig)
		}
		f, err := os.Open(filepath.Join(out, fig+".png"))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil || img.Bounds().Dx() < 100 || img.Bounds().Dy() < 100 {
			t.Errorf("%s.png: %v, %v", fig, err, img)
		}
	}
	game, err := gamefile.Parse([]byte(readFile(t, filepath.Join(out, "buysell-metagame.yaml"))))
	if err != nil {
		t.Fatalf("the meta-game file is not a matrix game: %v", err)
	}
	if game.Table == nil || len(game.Table.GetRows()) != 2 || len(game.Table.GetCols()) != 2 {
		t.Errorf("meta-game %v, want a 2x2 matrix", game.Table)
	}

	// The equilibrium analysis answers the meta-game question: which variant to send.
	eq := mustRun(t, nil, "analyze", "equilibria", filepath.Join(out, "buysell-metagame.yaml"))
	if !strings.Contains(eq.stdout, "Pure Nash equilibria:") {
		t.Errorf("analyze equilibria on the meta-game:\n%s", eq.stdout)
	}

	t.Run("browser", func(t *testing.T) { checkInBrowser(t, filepath.Join(out, "report.html")) })
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkInBrowser opens an HTML report in headless chromium: the heat map and the other
// figures must have loaded (naturalWidth > 0) and the tables be there. It saves a screenshot.
func checkInBrowser(t *testing.T, page string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	actx, bin := headlessChromium(t, ctx, 1280, 1600)
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	fail := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("chromium (%s) on %s: %s: %v", bin, page, what, err)
		}
	}
	fail("open", chromedp.Do(bctx, chromedp.Navigate("file://"+page), chromedp.WaitReady("body")))
	_, err := chromedp.Run(bctx, chromedp.Poll[bool](`document.images.length > 0 && [...document.images].every(i => i.complete)`,
		chromedp.WithPollingTimeout(20*time.Second)))
	fail("wait for the images", err)
	images, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.images.length`))
	fail("count images", err)
	loaded, err := chromedp.Run(bctx, chromedp.Evaluate[int](`[...document.images].filter(i => i.naturalWidth > 0).length`))
	fail("count loaded images", err)
	heatmaps, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](
		`[...document.images].filter(i => i.naturalWidth > 0 && i.src.includes('heatmap')).map(i => i.getAttribute('src'))`))
	fail("find the heat maps", err)
	tableCount, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll('table').length`))
	fail("count tables", err)
	headings, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('h3')].map(h => h.textContent)`))
	fail("read headings", err)
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	fail("screenshot", err)
	path := filepath.Join(screenshotDir(t), "report.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of %s: %s (%d bytes)", page, path, len(shot))
	if images < 3 || loaded != images {
		t.Errorf("%d of %d images loaded, want all of at least 3", loaded, images)
	}
	if len(heatmaps) != 2 {
		t.Errorf("heat maps shown: %v, want the win-rate and the payoff one", heatmaps)
	}
	if tableCount < 4 {
		t.Errorf("%d tables on the page, want at least 4", tableCount)
	}
	joined := strings.Join(headings, "|")
	for _, want := range []string{"Win rate of P2 by ordered pair", "Agents", "Buyer and seller"} {
		if !strings.Contains(joined, want) {
			t.Errorf("page headings %q lack %q", headings, want)
		}
	}
	checkReportOnPhone(t, bctx, page)
}

// phoneFitJS reads the report laid out on a phone: the widths of the page and the viewport,
// the figures wider than the viewport, and the tables wider than the viewport that no box of
// theirs scrolls sideways (either would make the whole page scroll).
const phoneFitJS = `(() => {
  const vw = document.documentElement.clientWidth;
  const scrolls = (el) => { for (let a = el.parentElement; a; a = a.parentElement) { const o = getComputedStyle(a).overflowX; if ((o === 'auto' || o === 'scroll') && a.getBoundingClientRect().right <= vw + 1) return true; } return false; };
  return {
    Viewport: vw,
    Page: document.documentElement.scrollWidth,
    WideFigures: [...document.images].filter(i => i.getBoundingClientRect().right > vw + 1).map(i => i.getAttribute('src')),
    LooseTables: [...document.querySelectorAll('table')].filter(t => t.getBoundingClientRect().width > vw && !scrolls(t)).map(t => (t.querySelector('th') || t).textContent),
  };
})()`

// phoneFit is what phoneFitJS returns.
type phoneFit struct {
	Viewport, Page           float64
	WideFigures, LooseTables []string
}

// checkReportOnPhone lays the open report out at 390 px: the page must not scroll sideways,
// every figure fits the screen, and a table wider than the screen scrolls inside its own box.
func checkReportOnPhone(t *testing.T, bctx context.Context, page string) {
	t.Helper()
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatalf("chromium on %s: a 390 px viewport: %v", page, err)
	}
	fit, err := chromedp.Run(bctx, chromedp.Evaluate[phoneFit](phoneFitJS))
	if err != nil {
		t.Fatalf("chromium on %s at 390 px: %v", page, err)
	}
	if fit.Viewport < 300 || fit.Viewport > 390 {
		t.Fatalf("the phone viewport is %v px wide, want at most 390", fit.Viewport)
	}
	if fit.Page > fit.Viewport+1 {
		t.Errorf("at 390 px the report is %v px wide, wider than the screen (%v px)", fit.Page, fit.Viewport)
	}
	if len(fit.WideFigures) > 0 {
		t.Errorf("at 390 px these figures are wider than the screen: %v", fit.WideFigures)
	}
	if len(fit.LooseTables) > 0 {
		t.Errorf("at 390 px these tables are wider than the screen and scroll with the page, not in a box: %v", fit.LooseTables)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot at 390 px: %v", err)
	}
	path := filepath.Join(screenshotDir(t), "report-phone.png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of %s at 390 px: %s (%d bytes)", page, path, len(shot))
}

// Two `parley referee` processes share the matches of one tournament through the NATS work
// queue: every match is recorded once and both referees run some.
func TestTournamentTwoRefereeProcesses(t *testing.T) {
	t.Parallel()
	url := natstest.Start(t).URL
	var refs []*proc
	for range 2 {
		p := startProc(t, "", parleyBin, "referee", "--listen", "127.0.0.1:0", "--nats", url, "--worker-concurrency", "1", "--allow-dial", "127.0.0.1/32", "--log-level", "info")
		p.waitLine("referee worker taking match requests")
		refs = append(refs, p)
	}
	r := mustRun(t, nil, "tournament", "--game", "ultimatum", "--agent", "builtin:fair", "--agent", "builtin:random",
		"--agent", "r9=builtin:random?seed=9", "--games-per-pair", "2", "--seed", "3", "--id", "two-procs",
		"--nats", url, "--workers", "0", "--concurrency", "4")
	if !strings.Contains(r.stdout, "Tournament two-procs: ultimatum, 12 matches") {
		t.Errorf("tables:\n%s", r.stdout)
	}
	total := 0
	for i, p := range refs {
		if code, _ := p.interrupt(); code != 0 {
			t.Errorf("referee %d exited %d", i, code)
		}
		n := strings.Count(p.stderr.String(), `"msg":"match recorded"`)
		if n == 0 {
			t.Errorf("referee %d ran no match:\n%s", i, p.output())
		}
		if strings.Contains(p.stderr.String(), "interrupted") {
			t.Errorf("referee %d closed an interrupted match:\n%s", i, p.output())
		}
		t.Logf("referee %d ran %d matches", i, n)
		total += n
	}
	if total != 12 {
		t.Errorf("the referees ran %d matches in all, want 12", total)
	}
}

// A tournament of as many matches as the default policy allows (max_tournament_matches,
// 20,000) starts, with its schedule stored; stopped with Ctrl-C it prints the command that
// resumes it, which works as printed (through a shell) and picks up where it stopped; and the
// same id asked for with another seed is refused, naming the seed.
func TestTournamentLargeStoppedAndResumed(t *testing.T) {
	t.Parallel()
	store := t.TempDir()
	agents := []string{"--agent", "builtin:fair", "--agent", "builtin:random", "--agent", "r9=builtin:random?seed=9"}
	const games = 3333 // 6 ordered pairs: 19,998 matches
	first := startProc(t, "", parleyBin, append([]string{"tournament", "--game", "ultimatum", "--games-per-pair", fmt.Sprint(games), "--store-dir", store}, agents...)...)
	progress := regexp.MustCompile(`\[ *([0-9]+)/19998\]`)
	pollUntil(t, "the first matches of 19,998", func() bool { return len(progress.FindAllString(first.stderr.String(), -1)) >= 3 })
	if code, _ := first.interrupt(); code == 0 {
		t.Errorf("a stopped tournament exited 0\n%s", first.output())
	}
	hint := regexp.MustCompile(`stopped; resume with:\n  (parley tournament .*)\n`).FindStringSubmatch(first.stderr.String())
	if hint == nil {
		t.Fatalf("no resume hint after Ctrl-C\n%s", first.output())
	}
	seed := regexp.MustCompile(`--seed ([0-9]+)$`).FindStringSubmatch(hint[1])
	id := regexp.MustCompile(`--id ([^ ]+)`).FindStringSubmatch(hint[1])
	if seed == nil || id == nil || !strings.Contains(first.stderr.String(), "seed "+seed[1]+",") {
		t.Fatalf("the hint %q does not carry the tournament's id and the seed it printed\n%s", hint[1], first.output())
	}

	// As printed, through a shell, with the binary as `parley` on the PATH.
	path := "PATH=" + filepath.Dir(parleyBin) + string(os.PathListSeparator) + os.Getenv("PATH")
	again := startProcEnv(t, "", []string{path}, "/bin/sh", "-c", "exec "+hint[1])
	pollUntil(t, "the resumed tournament's next matches", func() bool { return len(progress.FindAllString(again.stderr.String(), -1)) >= 3 })
	if strings.Contains(again.stderr.String(), "different tournament") {
		t.Fatalf("the resume was refused\n%s", again.output())
	}
	if code, _ := again.interrupt(); code == 0 {
		t.Errorf("a stopped tournament exited 0\n%s", again.output())
	}

	other := runParley(t, nil, append([]string{"tournament", "--game", "ultimatum", "--games-per-pair", fmt.Sprint(games), "--store-dir", store, "--id", id[1], "--seed", "1"}, agents...)...)
	if other.code == 0 || !strings.Contains(other.stderr, "seed "+seed[1]+" (asked: 1)") {
		t.Errorf("the same id with another seed: the refusal does not name the seed\n%s", other)
	}
}
