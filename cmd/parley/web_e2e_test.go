package main

// Browser tests of the web page and the human seat, in Debian's headless chromium driven by
// chromedp, against a real `parley up` (gateway, referee, analytics, embedded NATS). Each view
// is saved as a PNG under $TMPDIR/parley-screenshots, whose paths the test logs.

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/referee/record"
)

// webUnits is the page's JavaScript unit tests: an async function body returning failures.
//
//go:embed testdata/web_units.js
var webUnits string

// holdMatchStreamOpen, run in the page before its scripts, holds back the 'open' event of the
// page's streams of a match (/api/v1/matches/...) until releaseOpens() is called; heldOpens
// lists what is held.
const holdMatchStreamOpen = `(() => {
  const Real = window.EventSource;
  window.heldOpens = [];
  window.releaseOpens = () => window.heldOpens.splice(0).forEach((f) => f());
  const Held = function (url, opts) {
    const es = new Real(url, opts);
    if (!String(url).includes('/api/v1/matches/')) return es;
    let onopen = null;
    Object.defineProperty(es, 'onopen', { get: () => onopen, set: (f) => { onopen = f; } });
    es.addEventListener('open', (e) => window.heldOpens.push(() => onopen && onopen(e)));
    return es;
  };
  Object.assign(Held, { CONNECTING: Real.CONNECTING, OPEN: Real.OPEN, CLOSED: Real.CLOSED });
  window.EventSource = Held;
})();`

// browserTimeout bounds waiting for the page to show something.
const browserTimeout = 2 * time.Minute

// browser is one headless chromium with one tab, which the tests take in turn (a tab in the
// background gets no frames, so screenshots of it would wait forever).
type browser struct {
	t     *testing.T
	ctx   context.Context // the browser's tab, run once
	shots string          // screenshot directory
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	actx, bin := headlessChromium(t, context.Background(), 1280, 1000)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium (%s): %v", bin, err)
	}
	return &browser{t: t, ctx: ctx, shots: screenshotDir(t)}
}

// screenshotDir is where the browser tests save their screenshots: outside the repository, kept
// after the test so that a person can look at them.
func screenshotDir(t *testing.T) string {
	t.Helper()
	shots := filepath.Join(os.TempDir(), "parley-screenshots")
	if err := os.MkdirAll(shots, 0o755); err != nil {
		t.Fatal(err)
	}
	return shots
}

// tab is the browser's tab, for one test.
type tab struct {
	t   *testing.T
	b   *browser
	ctx context.Context
}

func (b *browser) tab(t *testing.T) *tab {
	return &tab{t: t, b: b, ctx: b.ctx}
}

func (tb *tab) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		tb.fail("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) into out.
func eval[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserTimeout)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.fail("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it is true. It survives navigations: the
// condition is evaluated again in the new page.
func (tb *tab) waitFor(what, cond string) {
	tb.t.Helper()
	deadline := time.Now().Add(browserTimeout)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(tb.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+cond+")"))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	tb.fail("waiting for %s (%s): %v", what, cond, last)
}

// fail saves a screenshot of what the page shows, then fails the test.
func (tb *tab) fail(format string, args ...any) {
	tb.t.Helper()
	path := tb.screenshot("failed-" + regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(tb.t.Name(), "-"))
	text, _ := chromedp.Run(tb.ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 3000) : ''`))
	tb.t.Fatalf(format+"\nscreenshot: %s\npage text:\n%s", append(args, path, text)...)
}

// screenshot saves the whole page as NAME.png in the screenshot directory.
func (tb *tab) screenshot(name string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		tb.t.Logf("screenshot %s: %v", name, err)
		return ""
	}
	path := filepath.Join(tb.b.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", path)
	return path
}

// shotOf saves one element (the first sel matches) as NAME.png in the screenshot directory.
func (tb *tab) shotOf(sel, name string) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, browserTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		tb.t.Logf("screenshot %s: %v", name, err)
		return
	}
	path := filepath.Join(tb.b.shots, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		tb.t.Fatal(err)
	}
	tb.t.Logf("screenshot: %s", path)
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// setValue sets a form control's value and tells the page, as typing or picking would.
func (tb *tab) setValue(sel, value string) {
	tb.t.Helper()
	ok := eval[bool](tb, fmt.Sprintf(`(() => { const e = document.querySelector(%s); if (!e) return false;
		e.value = %s; e.dispatchEvent(new Event('input', {bubbles: true})); e.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`, jsString(sel), jsString(value)))
	if !ok {
		tb.fail("no element %s to set to %q", sel, value)
	}
}

func (tb *tab) click(sel string) {
	tb.t.Helper()
	tb.do("click "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.Click(chromedp.CSS(sel)))
}

// recordOf reads a match's record from the gateway, as a spectator.
// exportedSeed is the seed analytics recorded for a finished match, "" while it has none.
func exportedSeed(t *testing.T, base, matchID string) string {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/exports/matches.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var row struct {
			MatchID string `json:"match_id"`
			Seed    string `json:"seed"`
		}
		if err := dec.Decode(&row); err != nil {
			return ""
		}
		if row.MatchID == matchID {
			return row.Seed
		}
	}
}

func recordOf(t *testing.T, base, matchID string) []*eventsv1.MatchEvent {
	t.Helper()
	resp := &refereev1.GetMatchResponse{}
	apiCall(t, base, "/parley.referee.v1.RefereeService/GetMatch", fmt.Sprintf(`{"matchId":%q}`, matchID), resp)
	return resp.GetEvents()
}

// TestWebPage plays through the web page of `parley up` in chromium: the page's JavaScript
// units, a match started from the form and watched to its end, a tournament's live standings
// and the leaderboard, a full ultimatum match played as the human seat against a built-in
// agent, and a coalition turn with its required private messages.
func TestWebPage(t *testing.T) {
	dir := t.TempDir()
	up := startProc(t, "", parleyBin, "up", "--data-dir", dir, "--listen", "127.0.0.1:0", "--referee-listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0", "--allow-dial", "127.0.0.1/32")
	base := strings.TrimSuffix(up.waitLine("Parley is up: "), "/")
	b := newBrowser(t)

	t.Run("javascript units", func(t *testing.T) {
		tb := b.tab(t)
		tb.do("open the page", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS("#nav")))
		fails := eval[[]string](tb, "(async () => {\n"+webUnits+"\n})()")
		for _, f := range fails {
			t.Error(f)
		}
	})

	t.Run("match from the form, watched to its end", func(t *testing.T) {
		tb := b.tab(t)
		tb.do("open the form", chromedp.Navigate(base+"/#/new"), chromedp.WaitVisible(chromedp.CSS("#start-match")))
		tb.setValue("#game", "ultimatum")
		tb.setValue("[data-agent=seat-0]", "builtin:fair")
		tb.setValue("[data-agent=seat-1]", "builtin:random")
		tb.setValue("input[name=seed]", "11")
		tb.setValue("input[data-param=max_turns]", "6")
		tb.screenshot("new-match-form")
		tb.click("#start-match")
		tb.waitFor("the match view", `location.hash.startsWith('#/match/')`)
		tb.waitFor("the outcome", `!document.querySelector('#match-outcome').hidden && document.querySelectorAll('#payoffs tbody tr').length === 2`)
		lines := eval[int](tb, `document.querySelectorAll('#transcript li').length`)
		head := eval[string](tb, `document.querySelector('#match-head').innerText`)
		tb.screenshot("match")
		id := strings.TrimPrefix(eval[string](tb, `decodeURIComponent(location.hash)`), "#/match/")
		evs := recordOf(t, base, id)
		if lines != len(evs) {
			t.Errorf("the transcript shows %d lines, the record has %d events", lines, len(evs))
		}
		if !strings.Contains(head, "fair") || !strings.Contains(head, "random") {
			t.Errorf("match header %q does not name the agents", head)
		}
		checkTranscriptWords(t, tb, evs)
		started := evs[0].GetMatchStarted()
		if started.GetSeed() != 0 && started.GetSeed() != 11 || started.GetParams().GetUltimatum().GetMaxTurns() != 6 {
			t.Errorf("the form's seed and max_turns did not reach the match: %v", started)
		}

		// The list shows it among the finished matches.
		tb.do("open the list", chromedp.Navigate(base+"/#/"), chromedp.WaitVisible(chromedp.CSS("#finished-matches")))
		tb.waitFor("the match in the list", fmt.Sprintf(`document.querySelector('#finished-matches').innerText.includes(%s)`, jsString(id)))
		tb.screenshot("matches")
	})

	t.Run("a match without a seed gets a fresh one, shown to whoever started it", func(t *testing.T) {
		tb := b.tab(t)
		tb.do("open the form", chromedp.Navigate(base+"/#/new"), chromedp.WaitVisible(chromedp.CSS("#start-match")))
		tb.setValue("#game", "ultimatum")
		tb.setValue("[data-agent=seat-0]", "builtin:fair")
		tb.setValue("[data-agent=seat-1]", "builtin:random")
		tb.click("#start-match")
		tb.waitFor("the match view", `location.hash.startsWith('#/match/') && /seed \d+/.test(document.querySelector('#match-head').textContent)`)
		id := strings.TrimPrefix(eval[string](tb, `decodeURIComponent(location.hash)`), "#/match/")
		shown := eval[string](tb, `document.querySelector('#match-head').textContent.match(/seed (\d+)/)[1]`)
		if shown == "0" {
			t.Fatalf("match %s shows seed 0", id)
		}
		// The record hides the seed from spectators; analytics has it once the match ended.
		if s := recordOf(t, base, id)[0].GetMatchStarted().GetSeed(); s != 0 {
			t.Errorf("a spectator's record shows seed %d", s)
		}
		var recorded string
		for deadline := time.Now().Add(waitTimeout); recorded == "" && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			recorded = exportedSeed(t, base, id)
		}
		if recorded != shown {
			t.Errorf("match %s: the page shows seed %s, analytics recorded %q", id, shown, recorded)
		}
	})

	t.Run("a registered bot from the form", func(t *testing.T) {
		// A team's dial-out bot appears in the form's list of registered bots and plays.
		add := runParley(t, nil, "admin", "team", "add", "webteam", "--data-dir", dir)
		token := strings.TrimSpace(add.stdout)
		if add.code != 0 {
			t.Fatalf("admin team add: %s", add)
		}
		if code, data := teamCall(t, base, token, "/parley.registry.v1.RegistryService/RegisterBot",
			`{"name":"fair","version":"7","games":["ultimatum"],"endpoint":"dialout"}`); code != http.StatusOK {
			t.Fatalf("register: %d %s", code, data)
		}
		bot := startProc(t, "", parleyBin, "agent", "fair", "--dial-out", base, "--token", token, "--bot", "fair")
		bot.waitLine("agent fair connected as ")

		tb := b.tab(t)
		tb.do("open the form afresh", chromedp.Navigate("about:blank"), chromedp.Navigate(base+"/#/new"), chromedp.WaitVisible(chromedp.CSS("#start-match")))
		tb.setValue("#game", "ultimatum")
		tb.waitFor("the registered bot among the choices", `[...document.querySelectorAll('[data-agent=seat-0] option')].some((o) => o.value === 'bot:webteam/fair')`)
		tb.setValue("[data-agent=seat-0]", "bot:webteam/fair")
		tb.setValue("[data-agent=seat-1]", "builtin:random")
		tb.click("#start-match")
		tb.waitFor("the outcome", `!document.querySelector('#match-outcome').hidden`)
		if head := eval[string](tb, `document.querySelector('#match-head').innerText`); !strings.Contains(head, "webteam/fair@7") {
			t.Errorf("match header %q does not name the registered bot by team/name@version", head)
		}
	})

	t.Run("a spectator sees each move as it is made", func(t *testing.T) {
		// P2 is a seat the test plays through the seat's API, so the match waits for it while
		// the page watches: what the page shows after that came over the live stream.
		tb := b.tab(t)
		tb.do("open the form", chromedp.Navigate(base+"/#/new"), chromedp.WaitVisible(chromedp.CSS("#start-match")))
		tb.setValue("#game", "ultimatum")
		tb.setValue("[data-agent=seat-0]", "builtin:fair")
		tb.setValue("[data-agent=seat-1]", "human")
		tb.setValue("input[data-param=max_turns]", "4")
		tb.click("#start-match")
		tb.waitFor("the seat page", `location.pathname.startsWith('/seat/') && document.querySelector('#seat-title a')`)
		token := strings.TrimPrefix(eval[string](tb, `location.pathname`), "/seat/")
		id := eval[string](tb, `document.querySelector('#seat-title a').textContent`)

		tb.do("open the list", chromedp.Navigate(base+"/#/"), chromedp.WaitVisible(chromedp.CSS("#live-matches")))
		tb.waitFor("the match among the live ones", fmt.Sprintf(`document.querySelector('#live-matches').innerText.includes(%s)`, jsString(id)))
		tb.screenshot("matches-live")
		checkPhone(tb, "the home page", "matches-live")
		tb.click(fmt.Sprintf(`#live-matches a[href="#/match/%s"]`, id))
		tb.waitFor("P1's opening offer", `document.querySelector('#transcript').innerText.includes('P1 proposes') && document.querySelector('#match-state').textContent === 'live'`)
		if eval[bool](tb, `!document.querySelector('#match-outcome').hidden`) {
			t.Fatal("the outcome is shown before P2 has moved")
		}
		tb.screenshot("match-live")
		checkPhone(tb, "a live match", "match-live")

		awaitSeat(t, base, token, "acting", 2)
		seatAction(t, base, token, 2, 1, `{"move":{"accept":{}},"messages":[{"text":"Sixty-forty it is."}]}`)
		tb.waitFor("P2's accept, live", `document.querySelector('#transcript').innerText.includes('Sixty-forty it is.') && document.querySelector('#match-state').textContent === 'finished' && !document.querySelector('#match-outcome').hidden`)
		if out := eval[string](tb, `document.querySelector('#match-outcome').innerText`); !strings.Contains(out, "Agreement") {
			t.Errorf("outcome %q, want an agreement", out)
		}
		if n := eval[int](tb, `document.querySelectorAll('#transcript li').length`); n != len(recordOf(t, base, id)) {
			t.Errorf("the transcript shows %d lines, the record has %d events", n, len(recordOf(t, base, id)))
		}
		tb.screenshot("match-finished-live")
	})

	t.Run("tournament and leaderboard", func(t *testing.T) {
		// One entrant is an agent served here that holds its first move of each match until
		// the test lets it go, so the page is seen updating while the tournament runs.
		gate := serveGatedFair(t)
		tb := b.tab(t)
		tb.do("open the form", chromedp.Navigate(base+"/#/new/tournament"), chromedp.WaitVisible(chromedp.CSS("#start-tournament")))
		tb.setValue("[data-agent=entrant-0]", "other")
		tb.setValue("input[name=entrant-0-address]", gate.address)
		tb.setValue("input[name=entrant-0-label]", "gated")
		tb.setValue("[data-agent=entrant-1]", "builtin:fair")
		tb.setValue("input[name=games]", "2")
		tb.setValue("input[name=concurrency]", "1")
		// Generous: the held first move must not time out while the page is looked at.
		tb.setValue("input[name=move-timeout]", "120")
		tb.setValue("input[name=seed]", "5")
		tb.screenshot("new-tournament-form")
		tb.click("#start-tournament")
		tb.waitFor("the tournament view", `location.hash.startsWith('#/tournament/')`)
		for ended := 1; ended <= 4; ended++ {
			gate.release(t)
			tb.waitFor(fmt.Sprintf("%d matches ended, live", ended), fmt.Sprintf(`document.querySelector('#progress').textContent.startsWith('%d of 4 matches ended')`, ended))
			if ended == 2 {
				tb.waitFor("the leaderboard so far", `document.querySelector('#tournament-state').textContent === 'live' && document.querySelectorAll('.leaderboard tbody tr').length === 2 && document.querySelectorAll('[data-heat] tbody tr').length === 6`)
				tb.screenshot("tournament-live")
			}
		}
		tb.waitFor("the complete standings", `document.querySelector('#tournament-state').textContent === 'complete'`)
		tb.waitFor("the heat maps", `document.querySelectorAll('[data-heat] tbody tr').length === 6 && document.querySelectorAll('.leaderboard tbody tr').length === 2`)
		tb.waitFor("the four matches, ended", `document.querySelectorAll('#tournament-matches tr').length === 4 && !document.querySelector('#tournament-matches .tag.live')`)
		// Every move was the agents' own, within the 120 s the form set.
		tid := strings.TrimPrefix(eval[string](tb, `decodeURIComponent(location.hash)`), "#/tournament/")
		ms := &refereev1.ListMatchesResponse{}
		apiCall(t, base, "/parley.referee.v1.RefereeService/ListMatches", fmt.Sprintf(`{"tournamentId":%q}`, tid), ms)
		for _, m := range ms.GetMatches() {
			if o := m.GetOutcome(); len(o.GetFaultedSeats()) != 0 || o.GetCause() == matchv1.EndCause_END_CAUSE_AGENT_FAULT {
				t.Errorf("match %s ended by %v with faulted seats %v, want no fault", m.GetMatchId(), o.GetCause(), o.GetFaultedSeats())
			}
		}
		if len(ms.GetMatches()) != 4 {
			t.Errorf("the tournament lists %d matches, want 4", len(ms.GetMatches()))
		}
		if first := recordOf(t, base, ms.GetMatches()[0].GetMatchId())[0].GetMatchStarted(); first.GetLimits().GetMoveTimeout().AsDuration() != 120*time.Second {
			t.Errorf("move timeout %v, want the form's 120 s", first.GetLimits().GetMoveTimeout().AsDuration())
		}
		progress := eval[string](tb, `document.querySelector('#progress').textContent`)
		if !strings.HasPrefix(progress, "4 of 4 matches ended") {
			t.Errorf("progress %q, want 4 of 4 matches ended", progress)
		}
		if cells := eval[string](tb, `[...document.querySelectorAll('[data-heat=payoff-seat0] td.cell')].map(c => c.textContent).join(' ')`); strings.Count(cells, "–") != 2 {
			t.Errorf("payoff heat map cells %q, want two off the diagonal filled", cells)
		}
		tb.screenshot("tournament")

		tb.do("open the leaderboard", chromedp.Navigate(base+"/#/leaderboard?game=ultimatum"), chromedp.WaitVisible(chromedp.CSS("#lb-game")))
		tb.waitFor("rated agents", `document.querySelectorAll('.leaderboard tbody tr').length >= 2 && [...document.querySelectorAll('.leaderboard')].some((t) => t.innerText.includes('gated'))`)
		tb.screenshot("leaderboard")
	})

	t.Run("many entrants", func(t *testing.T) { testManyEntrants(t, b, base) })

	t.Run("bargaining transcripts in the game's words", func(t *testing.T) {
		for _, req := range []string{
			`{"game":"buysell","agents":["builtin:concede","builtin:concede?curve=boulware"],"seed":"4"}`,
			`{"game":"trading","agents":["builtin:trader","builtin:random"],"seed":"4"}`,
		} {
			started := &refereev1.StartMatchResponse{}
			apiCall(t, base, "/parley.referee.v1.RefereeService/StartMatch", req, started)
			tb := b.tab(t)
			tb.do("open the match", chromedp.Navigate(base+"/#/match/"+started.GetMatchId()), chromedp.WaitVisible(chromedp.CSS("#transcript")))
			tb.waitFor("the outcome", `!document.querySelector('#match-outcome').hidden`)
			checkTranscriptWords(t, tb, recordOf(t, base, started.GetMatchId()))
		}
	})

	t.Run("human plays a full ultimatum match", func(t *testing.T) {
		tb := b.tab(t)
		tb.do("open the form", chromedp.Navigate(base+"/#/new"), chromedp.WaitVisible(chromedp.CSS("#start-match")))
		tb.setValue("#game", "ultimatum")
		tb.setValue("[data-agent=seat-0]", "human")
		tb.setValue("[data-agent=seat-1]", "builtin:fair")
		tb.setValue("input[name=person]", "ada")
		// Left empty, the seconds per move are the organiser's time for people.
		if v := eval[string](tb, `document.querySelector('input[name="move-timeout"]').value`); v != "" {
			t.Errorf("seconds per move with a human seat = %q, want it left to the organiser's time for people", v)
		}
		tb.click("#start-match")
		tb.waitFor("the seat page", `location.pathname.startsWith('/seat/')`)

		// Turn 1: a low offer with a message.
		tb.waitFor("my turn", `document.querySelector('#status').dataset.state === 'acting' && document.querySelector('[data-editor=propose] input[data-bound="0"]')`)
		if snap := awaitSeat(t, base, strings.TrimPrefix(eval[string](tb, `location.pathname`), "/seat/"), "acting", 1); snap.Observation.TimeLimit != "120s" {
			t.Errorf("a person's time per move is %q, want the policy's 120s", snap.Observation.TimeLimit)
		}
		tb.waitFor("the countdown", `/[0-9]+:[0-9]{2} left/.test(document.querySelector('#clock').textContent)`)
		if brief := eval[string](tb, `document.querySelector('#briefing').textContent`); !strings.Contains(brief, "You are P1") {
			t.Errorf("briefing %q", brief)
		}
		// An illegal action sent to the seat's API (nothing to accept on turn 1) is refused by
		// the referee, and the page shows why and asks again.
		token := strings.TrimPrefix(eval[string](tb, `location.pathname`), "/seat/")
		resp, err := http.Post(base+"/api/v1/seats/"+token+"/action?turn=1&attempt=1", "application/json", strings.NewReader(`{"move":{"accept":{}}}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST an action = %d, want 202", resp.StatusCode)
		}
		tb.waitFor("the refusal", `!document.querySelector('#rejection').hidden && document.querySelector('#status-text').textContent.includes('attempt 2')`)
		tb.setValue("[data-editor=propose] input[data-bound='0']", "20")
		tb.setValue("textarea[data-message='0']", "Twenty for you, take it or leave it.")
		tb.screenshot("seat-ultimatum-turn1")
		checkPhone(tb, "the seat, its move to make", "seat-ultimatum-turn1")
		tb.click("button[data-kind=MOVE_KIND_PROPOSE]")

		// Turn 3: fair counter-offered; accept it.
		tb.waitFor("my second turn", `document.querySelector('#status').dataset.state === 'acting' && document.querySelector('button[data-kind=MOVE_KIND_ACCEPT]')`)
		history := eval[string](tb, `document.querySelector('#history').innerText`)
		if !strings.Contains(history, "Twenty for you") || !strings.Contains(history, "P2 proposes") {
			t.Errorf("history after turn 2 lacks my message or P2's proposal:\n%s", history)
		}
		if got := eval[string](tb, `document.querySelector("[data-editor=propose] input[data-bound='0']").value`); got != "20" {
			t.Errorf("the split editor starts at %q on turn 3, want my last offer, 20", got)
		}
		offer := eval[string](tb, `document.querySelector('.act .offer') ? document.querySelector('.act .offer').textContent : ''`)
		tb.screenshot("seat-ultimatum-turn3")
		tb.click("button[data-kind=MOVE_KIND_ACCEPT]")
		tb.waitFor("the outcome", `document.querySelector('#status').dataset.state === 'ended' && !document.querySelector('#outcome').hidden`)
		outcome := eval[string](tb, `document.querySelector('#outcome').innerText`)
		tb.screenshot("seat-ultimatum-end")
		if !strings.Contains(outcome, "Agreement") {
			t.Errorf("outcome box %q, want an agreement", outcome)
		}
		// After the last observation, the gateway's view of the match for this seat tells the
		// rest: the person's own accept, in the rules' words.
		tb.waitFor("the last move in the history", `document.querySelector('#history').innerText.includes("P1 accepted P2's offer")`)

		matchID := eval[string](tb, `document.querySelector('#seat-title a') ? document.querySelector('#seat-title a').textContent : ''`)
		if matchID == "" {
			tb.fail("the seat page does not link its match")
		}
		evs := recordOf(t, base, matchID)
		var moves []string
		var taken []*eventsv1.ActionTaken
		refused := 0
		for _, ev := range evs {
			if ev.GetActionRefused() != nil {
				refused++
			}
			if a := ev.GetActionTaken(); a != nil {
				taken = append(taken, a)
				if a.GetDefaultReason() != "" {
					t.Errorf("turn %d: a default move (%s); the person's action should have been taken", ev.GetTurn(), a.GetDefaultReason())
				}
				moves = append(moves, fmt.Sprintf("%d:%s", a.GetSeat(), moveKind(a.GetAction().GetMove())))
			}
		}
		if got := strings.Join(moves, " "); got != "0:propose 1:propose 0:accept" {
			t.Fatalf("moves %q, want P1 propose, P2 propose, P1 accept", got)
		}
		// Beside the accept button, the offer it takes: P2's, in the rules' words.
		if x := taken[1].GetAction().GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[0].GetGives()["Dollars"]; !strings.HasPrefix(offer, "On the table: P2 proposes") || !strings.Contains(offer, fmt.Sprintf("gives %d Dollars", x)) {
			t.Errorf("the offer to accept reads %q, want P2's proposal of %d Dollars", offer, x)
		}
		// The accept posted on turn 1 is in the record as refused, then the person's offer.
		if refused != 1 || taken[0].GetAttempt() != 2 {
			t.Errorf("%d refusals, first action on attempt %d; want the illegal accept refused once", refused, taken[0].GetAttempt())
		}
		first := taken[0].GetAction()
		if g := first.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[0].GetGives()["Dollars"]; g != 20 || len(first.GetMessages()) != 1 || first.GetMessages()[0].GetText() != "Twenty for you, take it or leave it." {
			t.Errorf("turn 1 = %v, want 20 Dollars and the message", first)
		}
		if name := evs[0].GetMatchStarted().GetSeats()[0].GetAgent().GetName(); name != "human:ada" {
			t.Errorf("seat 0 is played by %q, want human:ada", name)
		}
		ended := evs[len(evs)-1].GetMatchEnded().GetOutcome()
		if p := ended.GetPayoffs(); len(p) != 2 || p[0]+p[1] != 100 || !strings.Contains(outcome, fmt.Sprint(p[0])) {
			t.Errorf("payoffs %v (page: %q)", p, outcome)
		}
	})

	t.Run("a person named in a match started through the API gets the time for people", func(t *testing.T) {
		status, out := post(t, base, "/parley.referee.v1.RefereeService/StartMatch", strings.NewReader(`{"game":"ultimatum","agents":["human:ann","builtin:fair"]}`))
		if status != http.StatusOK {
			t.Fatalf("StartMatch: %d %s", status, out)
		}
		started := &refereev1.StartMatchResponse{}
		if err := protojson.Unmarshal([]byte(out), started); err != nil {
			t.Fatal(err)
		}
		token := strings.TrimPrefix(started.GetSeatLinks()[0], "/seat/")
		if snap := awaitSeat(t, base, token, "acting", 1); snap.Observation.TimeLimit != "120s" {
			t.Errorf("ann's time per move is %q, want the policy's 120s", snap.Observation.TimeLimit)
		}
		// A spectator who opens the match while it waits for ann sees whose turn it is and the
		// time left, counting down.
		tb := b.tab(t)
		tb.do("open the match", chromedp.Navigate(base+"/#/match/"+started.GetMatchId()), chromedp.WaitVisible(chromedp.CSS("#transcript")))
		tb.waitFor("whose turn, with the time left", `!document.querySelector('#match-turn').hidden && document.querySelector('#match-turn .status-text').textContent === 'P1 to move: turn 1.' && /^[0-9]:[0-9]{2} left$/.test(document.querySelector('#match-turn .clock').textContent)`)
		first := eval[string](tb, `document.querySelector('#match-turn .clock').textContent`)
		tb.waitFor("the clock running", fmt.Sprintf(`document.querySelector('#match-turn .clock').textContent !== %s`, jsString(first)))
		seatAction(t, base, token, 1, 1, `{"move":{"propose":{"proposal":{"allocation":{"shares":[{"seat":0,"gives":{"Dollars":"50"}}]}}}}}`)
		tb.waitFor("the answer in the transcript, the turn bar following", `document.querySelector('#transcript').innerText.includes('P1 proposes') && (document.querySelector('#match-turn').hidden || !document.querySelector('#match-turn .status-text').textContent.startsWith('P1 to move: turn 1.'))`)
		// ann takes P2's counter-offer (else the match would end only when her 120 s ran out,
		// no sooner than the wait below gives up).
		awaitSeat(t, base, token, "acting", 3)
		seatAction(t, base, token, 3, 1, `{"move":{"accept":{}}}`)
		tb.waitFor("the end: nobody to wait for", `document.querySelector('#match-state').textContent === 'finished' && document.querySelector('#match-turn').hidden`)
	})

	t.Run("a seat opened mid-match shows the latest observation", func(t *testing.T) {
		status, out := post(t, base, "/parley.referee.v1.RefereeService/StartMatch", strings.NewReader(`{"game":"ultimatum","agents":["human:mid","builtin:fair"]}`))
		if status != http.StatusOK {
			t.Fatalf("StartMatch: %d %s", status, out)
		}
		started := &refereev1.StartMatchResponse{}
		if err := protojson.Unmarshal([]byte(out), started); err != nil {
			t.Fatal(err)
		}
		token := strings.TrimPrefix(started.GetSeatLinks()[0], "/seat/")
		low := `{"move":{"propose":{"proposal":{"allocation":{"shares":[{"seat":0,"gives":{"Dollars":"20"}}]}}}}}`
		awaitSeat(t, base, token, "acting", 1)
		seatAction(t, base, token, 1, 1, low) // fair counters a low offer
		awaitSeat(t, base, token, "acting", 3)

		// The page's stream of the match opens only when the test says, so that the page has
		// seen a newer observation by then, whatever the machine's speed.
		tb := b.tab(t)
		hold, err := chromedp.Call(tb.ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: holdMatchStreamOpen})
		if err != nil {
			t.Fatal(err)
		}
		defer chromedp.Call(tb.ctx, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: hold.Identifier})
		tb.do("open the seat mid-match", chromedp.Navigate(base+"/seat/"+token), chromedp.WaitVisible(chromedp.CSS("#status")))
		tb.waitFor("turn 3, the current one", `document.querySelector('#status').dataset.state === 'acting' && document.querySelector('#status-text').textContent.includes('turn 3')`)
		tb.waitFor("the match's stream open, held", `window.heldOpens.length > 0`)
		seatAction(t, base, token, 3, 1, low)
		awaitSeat(t, base, token, "acting", 5)
		tb.waitFor("turn 5 on the page", `document.querySelector('#status-text').textContent.includes('turn 5') && document.querySelector('#history').innerText.includes('turn 4')`)
		eval[bool](tb, `(window.releaseOpens(), true)`)
		tb.waitFor("the match linked", `!!document.querySelector('#seat-title a')`)
		if h := eval[string](tb, `document.querySelector('#history').innerText`); !strings.Contains(h, "turn 4") {
			t.Errorf("once the match's stream opened, the history went back to an older observation:\n%s", h)
		}
		if s := eval[string](tb, `document.querySelector('#status-text').textContent`); !strings.Contains(s, "turn 5") {
			t.Errorf("status %q, want turn 5", s)
		}
	})

	t.Run("human in a coalition writes the required private messages", func(t *testing.T) {
		tb := b.tab(t)
		tb.do("open the form", chromedp.Navigate(base+"/#/new"), chromedp.WaitVisible(chromedp.CSS("#start-match")))
		tb.setValue("#game", "coalition")
		tb.setValue("[data-agent=seat-0]", "human")
		tb.setValue("[data-agent=seat-1]", "builtin:coalition")
		tb.setValue("[data-agent=seat-2]", "builtin:coalition")
		tb.click("#start-match")
		tb.waitFor("the seat page", `location.pathname.startsWith('/seat/')`)
		tb.waitFor("my turn", `document.querySelector('#status').dataset.state === 'acting' && document.querySelectorAll('textarea[data-message]').length === 2`)
		labels := eval[string](tb, `[...document.querySelectorAll('.act .message .label')].map(e => e.textContent).join('|')`)
		if labels != "Message to B (private)|Message to C (private)" {
			t.Errorf("message boxes %q, want one to B and one to C", labels)
		}
		// Sending with a box left empty is refused on the page.
		tb.setValue("textarea[data-message='0']", "B, let us split A+B's 750 evenly.")
		tb.click("button[data-kind=MOVE_KIND_SAY]")
		if e := eval[string](tb, `document.querySelector('#act-error').textContent`); !strings.Contains(e, "write the message to C") {
			t.Errorf("error with a message missing = %q", e)
		}
		// An offer attached to the first message, with the total checked on the page.
		tb.click("input[data-attach='0']")
		tb.setValue("select[data-forms='terms-0']", "1") // coalition A+B
		tb.setValue("[data-editor='terms-0'] input[data-bound='0']", "400")
		if p := eval[string](tb, `document.querySelector('[data-editor="terms-0"] .problems').textContent`); !strings.Contains(p, "must add up to 750") {
			t.Errorf("problems with 400 + 375 = %q, want the total of 750 named", p)
		}
		tb.setValue("[data-editor='terms-0'] input[data-bound='1']", "350")
		tb.setValue("textarea[data-message='1']", "C, I will hear your offer.")
		tb.screenshot("seat-coalition-turn1")
		tb.click("button[data-kind=MOVE_KIND_SAY]")

		// Round 2: B writes to A, who must reply to B alone.
		tb.waitFor("my reply turn", `document.querySelector('#status').dataset.state === 'acting' && document.querySelectorAll('textarea[data-message]').length === 1 && document.querySelector('#history').innerText.includes('B wrote privately')`)
		tb.screenshot("seat-coalition-turn4")
		history := eval[string](tb, `document.querySelector('#history').innerText`)
		if !strings.Contains(history, "evenly") || !strings.Contains(history, "offer: A receives 400 g; B receives 350 g") {
			t.Errorf("history lacks my message with its offer:\n%s", history)
		}
		matchID := eval[string](tb, `document.querySelector('#seat-title a').textContent`)
		evs := recordOf(t, base, matchID)
		var mine *eventsv1.ActionTaken
		for _, ev := range evs {
			if a := ev.GetActionTaken(); a != nil && a.GetSeat() == 0 {
				mine = a
				break
			}
		}
		if mine == nil {
			t.Fatal("A's first action is not in the record")
		}
		// A spectator's record drops private messages; the move is there.
		if mine.GetAction().GetMove().GetSay() == nil || mine.GetDefaultReason() != "" || len(mine.GetAction().GetMessages()) != 0 {
			t.Errorf("A's first action = %v, want its own say move without its private messages", mine)
		}

		// The match view shows a spectator that A spoke, never what.
		tb.do("open the match as a spectator", chromedp.Navigate(base+"/#/match/"+matchID), chromedp.WaitVisible(chromedp.CSS("#transcript")))
		tb.waitFor("B's and C's replies in the transcript", `document.querySelectorAll('#transcript li.ev-action').length >= 3`)
		text := eval[string](tb, `document.querySelector('#transcript').innerText`)
		if !strings.Contains(text, "A wrote privately to B and C") || strings.Contains(text, "evenly") || strings.Contains(text, "hear your offer") || eval[int](tb, `document.querySelectorAll('#transcript .msg, #transcript .reasoning').length`) != 0 {
			t.Errorf("a spectator's transcript should hide every private message:\n%s", text)
		}
		tb.screenshot("match-coalition-spectator")
	})

	t.Run("a deliberation seat is told what its options are worth, from its form", func(t *testing.T) {
		// The reference: the default scenario's first party, its points for the opening deal.
		g, err := families.New().Lookup("deliberation")
		if err != nil {
			t.Fatal(err)
		}
		resolved, err := g.Resolve(nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := deliberation.NewSetup(resolved)
		if err != nil {
			t.Fatal(err)
		}
		worth := 0
		for i, k := range s.Opening {
			worth += s.Parties[0].Points[i][k]
		}
		want := fmt.Sprintf("This proposal is worth %d points to you (your minimum is %d).", worth, s.Parties[0].Threshold)
		firstOption := fmt.Sprintf("(%d points)", s.Parties[0].Points[0][s.Opening[0]])

		tb := b.tab(t)
		tb.do("open the form", chromedp.Navigate(base+"/#/new"), chromedp.WaitVisible(chromedp.CSS("#start-match")))
		tb.setValue("#game", "deliberation")
		tb.setValue("[data-agent=seat-0]", "human")
		tb.click("#start-match")
		tb.waitFor("the seat page", `location.pathname.startsWith('/seat/')`)
		tb.waitFor("my opening proposal", `document.querySelector('#status').dataset.state === 'acting' && document.querySelector('[data-editor=propose] .preview')`)
		if got := eval[string](tb, `document.querySelector('[data-editor=propose] .preview').textContent`); got != want {
			t.Errorf("the deal editor says %q, want %q", got, want)
		}
		if got := eval[string](tb, `document.querySelector('[data-editor=propose] select option').textContent`); !strings.HasSuffix(got, firstOption) {
			t.Errorf("the first issue's option reads %q, want it to end %q", got, firstOption)
		}
		tb.screenshot("seat-deliberation-worth")
	})

	t.Run("private talk shown where the match reveals it", func(t *testing.T) {
		tb := b.tab(t)
		tb.do("open the form", chromedp.Navigate(base+"/#/new"), chromedp.WaitVisible(chromedp.CSS("#start-match")))
		tb.setValue("#game", "coalition")
		for i := range 3 {
			tb.setValue(fmt.Sprintf("[data-agent=seat-%d]", i), "builtin:coalition")
		}
		tb.click("input[name=reveal]")
		tb.click("#start-match")
		tb.waitFor("the outcome", `location.hash.startsWith('#/match/') && !document.querySelector('#match-outcome').hidden`)
		id := strings.TrimPrefix(eval[string](tb, `decodeURIComponent(location.hash)`), "#/match/")
		private := eval[int](tb, `document.querySelectorAll('#transcript .msg.private').length`)
		reasoning := eval[int](tb, `document.querySelectorAll('#transcript .reasoning').length`)
		var want, wantReasoning int
		for _, ev := range recordOf(t, base, id) {
			if ev.GetActionTaken().GetAction().GetPrivateReasoning() != "" {
				wantReasoning++
			}
			for _, m := range ev.GetActionTaken().GetAction().GetMessages() {
				if len(m.GetTo()) > 0 {
					want++
				}
			}
		}
		if want == 0 || private != want {
			t.Errorf("the page shows %d private messages, the revealed record has %d (want some)", private, want)
		}
		if wantReasoning == 0 || reasoning != wantReasoning {
			t.Errorf("the page shows %d private reasonings, the revealed record has %d (want some)", reasoning, wantReasoning)
		}
		if tag := eval[string](tb, `document.querySelector('#match-head').innerText`); !strings.Contains(tag, "private parts shown") {
			t.Errorf("the header does not say private parts are shown: %q", tag)
		}
		tb.screenshot("match-revealed")
	})
}

// TestPlayHuman plays `parley play --agent human` through the seat's HTTP API: the command
// prints the seat's URL, serves the page and the API on it, and takes the person's action.
func TestPlayHuman(t *testing.T) {
	p := startProc(t, "", parleyBin, "play", "ultimatum", "--agent", "builtin:fair", "--agent", "human", "--seed", "1", "--param", "max_turns=4")
	re := regexp.MustCompile(`P2 is yours: open (http://127\.0\.0\.1:[0-9]+)(/seat/[A-Za-z0-9_-]+) \(2m0s per move\)`)
	var m []string
	pollUntil(t, "the seat's URL on stderr", func() bool {
		m = re.FindStringSubmatch(p.stderr.String())
		return m != nil
	})
	base, page := m[1], m[2]
	api := base + "/api/v1/seats/" + strings.TrimPrefix(page, "/seat/")

	get := func(url string) (int, string) {
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get(base + page); code != 200 || !strings.Contains(body, "/static/js/seat.js") {
		t.Errorf("GET %s = %d, want the seat page", page, code)
	}
	if code, _ := get(base + "/api/v1/seats/wrong"); code != 404 {
		t.Errorf("GET a wrong token = %d, want 404", code)
	}
	var snap struct {
		State       string          `json:"state"`
		Observation json.RawMessage `json:"observation"`
	}
	pollUntil(t, "P2's turn", func() bool {
		_, body := get(api)
		if err := json.Unmarshal([]byte(body), &snap); err != nil {
			t.Fatalf("snapshot %s: %v", body, err)
		}
		return snap.State == "acting"
	})
	if !strings.Contains(string(snap.Observation), `"standingOffer"`) {
		t.Errorf("P2's observation has no standing offer: %s", snap.Observation)
	}
	if !strings.Contains(string(snap.Observation), `"timeLimit":"120s"`) {
		t.Errorf("P2's observation does not give the time for people, 120s: %s", snap.Observation)
	}
	resp, err := http.Post(api+"/action?turn=2&attempt=1", "application/json", strings.NewReader(`{"move":{"accept":{}},"messages":[{"text":"deal"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST action = %d, want 202", resp.StatusCode)
	}
	select {
	case <-p.exited:
	case <-time.After(waitTimeout):
		t.Fatalf("parley play did not end after the accept\n%s", p.output())
	}
	out := p.output()
	for _, want := range []string{"Seats: P1 = fair 1, P2 = human\n", "Turn 2  P2 accepts", `P2 to all: "deal"`, "Outcome: P2 accepted"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// seatSnapshot is what GET /api/v1/seats/{token} answers, in part.
type seatSnapshot struct {
	State       string `json:"state"`
	Observation struct {
		Turn      int    `json:"turn"`
		Attempt   int    `json:"attempt"`
		TimeLimit string `json:"timeLimit"`
	} `json:"observation"`
}

// awaitSeat polls a human seat's API until it is in state (on turn, unless 0), and returns
// its snapshot.
func awaitSeat(t *testing.T, base, token, state string, turn int) seatSnapshot {
	t.Helper()
	var snap seatSnapshot
	pollUntil(t, fmt.Sprintf("the seat %s on turn %d", state, turn), func() bool {
		resp, err := http.Get(base + "/api/v1/seats/" + token)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		snap = seatSnapshot{}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &snap) != nil {
			t.Fatalf("GET seat = %d %s", resp.StatusCode, b)
		}
		return snap.State == state && (turn == 0 || snap.Observation.Turn == turn)
	})
	return snap
}

// seatAction posts a person's action (protojson) to a human seat, which must take it.
func seatAction(t *testing.T, base, token string, turn, attempt int, action string) {
	t.Helper()
	resp, err := http.Post(fmt.Sprintf("%s/api/v1/seats/%s/action?turn=%d&attempt=%d", base, token, turn, attempt), "application/json", strings.NewReader(action))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST action %s = %d %s, want 202", action, resp.StatusCode, b)
	}
}

// gatedFair is the built-in fair agent served on loopback, holding its first move of each
// match until release is called.
type gatedFair struct {
	address string
	inner   sdk.Agent
	mu      sync.Mutex
	seen    map[string]bool
	waiting chan string
	next    chan struct{}
}

func serveGatedFair(t *testing.T) *gatedFair {
	t.Helper()
	var inner sdk.Agent
	for _, e := range builtin.Catalog() {
		if e.Name == "fair" {
			// Tougher than the plain fair agent it meets, so that one of them wins.
			a, err := e.New(url.Values{"open": {"0.8"}, "target": {"0.7"}})
			if err != nil {
				t.Fatal(err)
			}
			inner = a
		}
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedFair{address: "grpc://" + lis.Addr().String(), inner: inner, seen: map[string]bool{}, waiting: make(chan string), next: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		sdk.ServeListener(ctx, lis, g, sdk.WithInfo(&gamev1.AgentInfo{Name: "gated", Version: "1", Description: "a tough fair, one match at a time when the test says"}))
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return g
}

func (g *gatedFair) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	g.mu.Lock()
	first := !g.seen[obs.GetMatchId()]
	g.seen[obs.GetMatchId()] = true
	g.mu.Unlock()
	if first {
		select {
		case g.waiting <- obs.GetMatchId():
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		select {
		case <-g.next:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.inner.Act(ctx, obs)
}

// release waits for a match to reach the agent's first move, then lets that move be made.
func (g *gatedFair) release(t *testing.T) {
	t.Helper()
	select {
	case <-g.waiting:
	case <-time.After(waitTimeout):
		t.Fatal("no match reached the gated agent")
	}
	g.next <- struct{}{}
}

// TestPlayHumanBuysell plays a whole buy-sell match as the person in P1 (the seller) through
// the seat's API, against the built-in concede buyer: two asks, then the buyer's offer taken.
func TestPlayHumanBuysell(t *testing.T) {
	p := startProc(t, "", parleyBin, "play", "buysell", "--agent", "human:bo", "--agent", "builtin:concede", "--seed", "1")
	re := regexp.MustCompile(`P1 is yours: open (http://127\.0\.0\.1:[0-9]+)/seat/([A-Za-z0-9_-]+) `)
	var m []string
	pollUntil(t, "the seat's URL on stderr", func() bool {
		m = re.FindStringSubmatch(p.stderr.String())
		return m != nil
	})
	base, token := m[1], m[2]
	ask := func(price int, message string) string {
		return fmt.Sprintf(`{"move":{"propose":{"proposal":{"allocation":{"shares":[{"gives":{"X":"1"}},{"seat":1,"gives":{"ZUP":"%d"}}]}}}},"messages":[{"text":%q}]}`, price, message)
	}

	awaitSeat(t, base, token, "acting", 1)
	seatAction(t, base, token, 1, 1, ask(70, "70 and it is yours."))
	awaitSeat(t, base, token, "acting", 3)
	seatAction(t, base, token, 3, 1, ask(50, "Fifty, then."))
	awaitSeat(t, base, token, "acting", 5)
	seatAction(t, base, token, 5, 1, `{"move":{"accept":{}}}`)
	select {
	case <-p.exited:
	case <-time.After(waitTimeout):
		t.Fatalf("parley play did not end after the accept\n%s", p.output())
	}
	out := p.output()
	for _, want := range []string{
		"Seats: P1 = human:bo, P2 = concede 1",
		"Turn 1  P1 proposes: P1 sells 1 X to P2 for 70 ZUP",
		`P1 to all: "70 and it is yours."`,
		"Turn 3  P1 proposes: P1 sells 1 X to P2 for 50 ZUP",
		"Turn 5  P1 accepts",
		"Outcome: P1 accepted P2's offer: P1 sells 1 X to P2 for 40 ZUP.",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// moveKind names the kind of a move: "propose", "accept", ...
func moveKind(m *gamev1.Move) string {
	r := m.ProtoReflect()
	if fd := r.WhichOneof(r.Descriptor().Oneofs().ByName("kind")); fd != nil {
		return string(fd.Name())
	}
	return "none"
}

// checkTranscriptWords compares the page's transcript of a finished match with its record:
// each move reads as the record's summary (the rules' words, the seats' histories'), and each
// proposal as the text transcript of the same record (parley replay's) words it, in the game's
// own words.
func checkTranscriptWords(t *testing.T, tb *tab, evs []*eventsv1.MatchEvent) {
	t.Helper()
	var text bytes.Buffer
	if err := record.Transcript(&text, evs, record.TranscriptOptions{Games: families.New()}); err != nil {
		t.Fatal(err)
	}
	proposed := map[string]string{} // "turn N" -> the proposal the text transcript says the seat made
	for _, line := range strings.Split(text.String(), "\n") {
		if m := regexp.MustCompile(`^Turn (\d+)  (P\d proposes: .*)$`).FindStringSubmatch(line); m != nil {
			proposed["turn "+m[1]] = m[2]
		}
	}
	worded := map[string]string{} // "turn N" -> the record's summary of the move
	for _, ev := range evs {
		if a := ev.GetActionTaken(); a != nil {
			if a.GetSummary() == "" {
				t.Errorf("turn %d: the record does not word seat %d's move", ev.GetTurn(), a.GetSeat())
			}
			worded[fmt.Sprintf("turn %d", ev.GetTurn())] = strings.TrimSuffix(a.GetSummary(), ".")
		}
	}
	got := eval[[]string](tb, `[...document.querySelectorAll('#transcript li.ev-action')].map((li) => li.querySelector('.turn').textContent + '|' + li.querySelector('.who').textContent + ' ' + li.querySelector('.summary').textContent)`)
	proposals := 0
	for _, g := range got {
		turn, said, _ := strings.Cut(g, "|")
		if worded[turn] != said {
			t.Errorf("%s: the page says %q, the record %q", turn, said, worded[turn])
		}
		if want, ok := proposed[turn]; ok {
			proposals++
			if want != said {
				t.Errorf("%s: the page says %q, the text transcript %q", turn, said, want)
			}
		}
	}
	if len(got) != len(worded) || proposals == 0 {
		t.Errorf("the page shows %d moves (%d proposals), the record %d (want some proposals): %v", len(got), proposals, len(worded), got)
	}
}
