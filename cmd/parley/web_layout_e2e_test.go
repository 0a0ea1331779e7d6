package main

// Layout and contrast checks of the web page with many entrants, measured in chromium: heat
// maps that fit their cards (or scroll inside them) at any width, text that passes WCAG AA
// contrast, a leaderboard ranked as analytics ranks it, and match lists that page and keep
// long ids on one line. Screenshots go to the screenshot directory (outside the repository).

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
)

// ultimatumEntrants are twelve distinct ultimatum agents, some with long labels.
var ultimatumEntrants = []struct{ label, address string }{
	{"", "builtin:fair"},
	{"", "builtin:spe"},
	{"tough-fair-opening-at-ninety-percent", "builtin:fair?open=0.9&target=0.7"},
	{"random-7", "builtin:random?seed=7"},
	{"stingy", "builtin:fixed?offer=10"},
	{"even", "builtin:fixed?offer=50"},
	{"soft", "builtin:fair?open=0.55&floor=0.1"},
	{"random-8", "builtin:random?seed=8"},
	{"spe-indifferent", "builtin:spe?indifferent=true"},
	{"generous-fixed-offer-of-seventy", "builtin:fixed?offer=70"},
	{"fair-hard-floor", "builtin:fair?floor=0.45"},
	{"random-9", "builtin:random?seed=9"},
}

// startEntrantsTournament starts a complete ultimatum round robin of the first n entrants
// through the API and returns its id.
func startEntrantsTournament(t *testing.T, base string, n, games int) string {
	t.Helper()
	var es []string
	for _, e := range ultimatumEntrants[:n] {
		es = append(es, fmt.Sprintf(`{"label":%q,"address":%q}`, e.label, e.address))
	}
	id := fmt.Sprintf("page-%d", n)
	resp := &tournamentv1.StartTournamentResponse{}
	apiCall(t, base, "/parley.tournament.v1.TournamentService/StartTournament", fmt.Sprintf(
		`{"tournamentId":%q,"game":"ultimatum","entrants":[%s],"gamesPerAssignment":%d,"concurrency":8,"seed":"3","params":{"ultimatum":{"maxTurns":4}}}`,
		id, strings.Join(es, ","), games), resp)
	return id
}

// layout is what measureLayout reads off the tournament page.
type layout struct {
	ViewportWidth, PageWidth float64
	Card                     rect
	Boxes                    []struct {
		Box, Scroll            rect
		TableWidth, ScrollSeen float64
		Overflow               string
	}
	Texts []textColour
	Wide  []string
}

type rect struct{ L, R, T, B float64 }

// textColour is one element's text: its colour, the colour behind it, its size and weight.
type textColour struct {
	Color, Background, Text, Where string
	Size, Weight                   float64
}

// measureLayoutJS collects the facts measureLayout returns. Backgrounds are found by walking up
// to the first ancestor that paints one, blending translucent ones over what is beneath.
const measureLayoutJS = `(() => {
  const rgba = (s) => { const m = s.match(/[\d.]+/g) || ['0','0','0','0']; return m.map(Number).concat(m.length === 3 ? [1] : []); };
  const over = (top, under) => { const a = top[3]; return [0,1,2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]); };
  const bgOf = (el) => {
    const chain = [];
    for (let e = el; e; e = e.parentElement) chain.push(rgba(getComputedStyle(e).backgroundColor));
    let c = [255, 255, 255, 1];
    for (let i = chain.length - 1; i >= 0; i--) if (chain[i][3] > 0) c = over(chain[i], c);
    return c;
  };
  const rect = (e) => { const r = e.getBoundingClientRect(); return { L: r.left, R: r.right, T: r.top, B: r.bottom }; };
  const visible = (e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(e).visibility !== 'hidden'; };
  const texts = [];
  for (const e of document.querySelectorAll('body *')) {
    if (!visible(e) || e.closest('[disabled], option, script, style')) continue;
    const own = [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent.trim()).join(' ').trim();
    if (!own) continue;
    const cs = getComputedStyle(e);
    const bg = bgOf(e);
    const fg = over(rgba(cs.color), bg);
    texts.push({ Color: 'rgb(' + fg.slice(0, 3).join(',') + ')', Background: 'rgb(' + bg.slice(0, 3).join(',') + ')', Text: own.slice(0, 40),
      Where: e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).replace(/ /g, '.') : ''), Size: parseFloat(cs.fontSize), Weight: Number(cs.fontWeight) || 400 });
  }
  const heat = document.querySelector('#heatmaps');
  return JSON.stringify({
    ViewportWidth: window.innerWidth, PageWidth: document.documentElement.scrollWidth,
    Card: heat ? rect(heat.closest('.card')) : null,
    Boxes: [...document.querySelectorAll('.heatbox')].map((b) => { const s = b.querySelector('.heatscroll');
      return { Box: rect(b), Scroll: rect(s), TableWidth: b.querySelector('table').getBoundingClientRect().width, ScrollSeen: s.clientWidth, Overflow: getComputedStyle(s).overflowX }; }),
    Texts: texts,
    // What sticks out of the window, leaving out what scrolls inside its own box.
    Wide: [...document.querySelectorAll('body *')].filter((e) => visible(e) && e.getBoundingClientRect().right > window.innerWidth + 1 && !(e.parentElement && e.parentElement.closest('.scroll, .heatscroll')))
      .slice(0, 8).map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + String(e.className).replace(/ /g, '.') : '')),
  });
})()`

func measureLayout(tb *tab) layout {
	tb.t.Helper()
	var l layout
	if err := json.Unmarshal([]byte(eval[string](tb, measureLayoutJS)), &l); err != nil {
		tb.fail("reading the layout: %v", err)
	}
	return l
}

var rgbRE = regexp.MustCompile(`rgb\(([\d.]+),([\d.]+),([\d.]+)\)`)

// relativeLuminance is WCAG 2's, from "rgb(r,g,b)".
func relativeLuminance(t *testing.T, c string) float64 {
	t.Helper()
	m := rgbRE.FindStringSubmatch(strings.ReplaceAll(c, " ", ""))
	if m == nil {
		t.Fatalf("colour %q", c)
	}
	lum := 0.0
	for i, w := range []float64{0.2126, 0.7152, 0.0722} {
		v, _ := strconv.ParseFloat(m[i+1], 64)
		s := v / 255
		if s <= 0.04045 {
			s /= 12.92
		} else {
			s = math.Pow((s+0.055)/1.055, 2.4)
		}
		lum += w * s
	}
	return lum
}

// contrastRatio is WCAG 2's contrast ratio of two colours.
func contrastRatio(t *testing.T, a, b string) float64 {
	x, y := relativeLuminance(t, a), relativeLuminance(t, b)
	return (max(x, y) + 0.05) / (min(x, y) + 0.05)
}

// checkContrast fails for text under WCAG AA: 4.5:1, or 3:1 for large text (24px, or 18.66px
// bold). It returns the lowest ratio seen.
func checkContrast(t *testing.T, where string, texts []textColour) float64 {
	t.Helper()
	worst := 21.0
	for _, x := range texts {
		need := 4.5
		if x.Size >= 24 || x.Size >= 18.66 && x.Weight >= 700 {
			need = 3
		}
		r := contrastRatio(t, x.Color, x.Background)
		worst = min(worst, r)
		if r < need {
			t.Errorf("%s: %q (%s) is %s on %s: contrast %.2f, want %.1f", where, x.Text, x.Where, x.Color, x.Background, r, need)
		}
	}
	return worst
}

// checkHeatLayout checks that no heat map spills out of its card or into another, and that
// the page never scrolls sideways; a heat map wider than its box scrolls inside it. It
// returns how many heat maps share the first row.
func checkHeatLayout(t *testing.T, where string, l layout, wantFit bool) int {
	t.Helper()
	const slack = 1
	if l.PageWidth > l.ViewportWidth+slack {
		t.Errorf("%s: the page is %.0f px wide in a %.0f px window; sticking out: %v", where, l.PageWidth, l.ViewportWidth, l.Wide)
	}
	if len(l.Boxes) != 3 {
		t.Fatalf("%s: %d heat maps, want 3", where, len(l.Boxes))
	}
	perRow := 0
	for i, b := range l.Boxes {
		if b.Box.L < l.Card.L-slack || b.Box.R > l.Card.R+slack || b.Scroll.R > l.Card.R+slack {
			t.Errorf("%s: heat map %d (%.0f–%.0f) spills out of its card (%.0f–%.0f)", where, i+1, b.Box.L, b.Box.R, l.Card.L, l.Card.R)
		}
		if b.TableWidth > b.ScrollSeen+slack && b.Overflow != "auto" && b.Overflow != "scroll" {
			t.Errorf("%s: heat map %d is %.0f px wide in %.0f px and does not scroll", where, i+1, b.TableWidth, b.ScrollSeen)
		}
		if wantFit && b.TableWidth > b.ScrollSeen+slack {
			t.Errorf("%s: heat map %d needs scrolling (%.0f px in %.0f px) on a wide screen", where, i+1, b.TableWidth, b.ScrollSeen)
		}
		for j, c := range l.Boxes[:i] {
			if b.Box.L < c.Box.R-slack && c.Box.L < b.Box.R-slack && b.Box.T < c.Box.B-slack && c.Box.T < b.Box.B-slack {
				t.Errorf("%s: heat maps %d and %d overlap", where, j+1, i+1)
			}
		}
		if math.Abs(b.Box.T-l.Boxes[0].Box.T) < 1 {
			perRow++
		}
	}
	return perRow
}

// checkEntrantsPage opens tournament id (n entrants) and checks it at a desktop and a phone
// width, saving a screenshot of each.
func checkEntrantsPage(t *testing.T, b *browser, base, id string, n int) {
	tb := b.tab(t)
	tb.do("open the tournament", chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(base+"/#/tournament/"+id), chromedp.WaitVisible(chromedp.CSS("#heatmaps")))
	tb.waitFor("the complete standings", fmt.Sprintf(`document.querySelector('#tournament-state').textContent === 'complete' && document.querySelectorAll('[data-heat] tbody tr').length === %d`, 3*n))
	tour := &tournamentv1.GetTournamentResponse{}
	apiCall(t, base, "/parley.tournament.v1.TournamentService/GetTournament", fmt.Sprintf(`{"tournamentId":%q}`, id), tour)
	st := tour.GetStandings()

	// The leaderboard as analytics ranks it: established agents numbered, provisional apart.
	var ranked, provisional []string
	for _, e := range st.GetLeaderboard() {
		if e.GetProvisional() {
			provisional = append(provisional, e.GetAgent())
		} else {
			ranked = append(ranked, e.GetAgent())
		}
		if e.GetProvisional() != (e.GetMatches() < st.GetMinMatches()) {
			t.Errorf("%s: %d rated matches, provisional %v (minimum %d)", e.GetAgent(), e.GetMatches(), e.GetProvisional(), st.GetMinMatches())
		}
	}
	shownRanked := eval[[]string](tb, `[...document.querySelectorAll('#leaderboard tbody td:nth-child(2)')].map((td) => td.textContent)`)
	shownProvisional := eval[[]string](tb, `[...document.querySelectorAll('#leaderboard-provisional tbody td:nth-child(2)')].map((td) => td.textContent)`)
	if fmt.Sprint(shownRanked) != fmt.Sprint(ranked) || fmt.Sprint(shownProvisional) != fmt.Sprint(provisional) {
		t.Errorf("the page ranks %v then provisional %v; analytics %v then %v", shownRanked, shownProvisional, ranked, provisional)
	}
	if len(ranked)+len(provisional) != n {
		t.Errorf("%d agents on the leaderboard, want %d", len(ranked)+len(provisional), n)
	}
	text := eval[string](tb, `document.querySelector('main').innerText`)
	if m := regexp.MustCompile(`\b1 (matches|games|rated matches)\b`).FindString(text); m != "" {
		t.Errorf("the page says %q", m)
	}
	for _, m := range regexp.MustCompile(`\b(\d{3,4})–(\d{3,4})\b`).FindAllStringSubmatch(text, -1) {
		if m[1] == m[2] {
			t.Errorf("the page shows the degenerate interval %q", m[0])
		}
	}

	for _, w := range []struct {
		name          string
		width, height int64
		wantFit       bool
	}{{"desktop", 1280, 1000, true}, {"phone", 390, 900, false}} {
		tb.do("resize", chromedp.EmulateViewport(w.width, w.height))
		tb.waitFor("the new width", fmt.Sprintf(`window.innerWidth === %d`, w.width))
		where := fmt.Sprintf("%d entrants, %s", n, w.name)
		l := measureLayout(tb)
		perRow := checkHeatLayout(t, where, l, w.wantFit)
		worst := checkContrast(t, where, l.Texts)
		t.Logf("%s: %d of 3 heat maps side by side, widest %.0f px; lowest text contrast %.2f:1", where, perRow, widest(l), worst)
		tb.screenshot(fmt.Sprintf("tournament-%d-entrants-%s", n, w.name))
		tb.shotOf("#heatmaps", fmt.Sprintf("heatmaps-%d-entrants-%s", n, w.name))
		tb.shotOf("#leaderboard-card", fmt.Sprintf("leaderboard-%d-entrants-%s", n, w.name))
	}
	if n == 12 {
		checkPhone(tb, "12 entrants", "tournament-12-entrants")
	}
	tb.do("back to the desktop width", chromedp.EmulateViewport(1280, 1000))
}

func widest(l layout) float64 {
	w := 0.0
	for _, b := range l.Boxes {
		w = max(w, b.TableWidth)
	}
	return w
}

// testManyEntrants plays round robins of 2, 5 and 12 entrants and checks their pages, then the
// home page's lists and the game's leaderboard. A subtest of TestWebPage, on its parley up.
func testManyEntrants(t *testing.T, b *browser, base string) {
	games := map[int]int{2: 2, 5: 2, 12: 1}
	ids := map[int]string{}
	for _, n := range []int{2, 5, 12} {
		ids[n] = startEntrantsTournament(t, base, n, games[n])
	}
	for _, n := range []int{2, 5, 12} {
		t.Run(fmt.Sprintf("%d entrants", n), func(t *testing.T) { checkEntrantsPage(t, b, base, ids[n], n) })
	}

	t.Run("home page lists", func(t *testing.T) {
		single := &refereev1.StartMatchResponse{}
		apiCall(t, base, "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["builtin:fair","builtin:random"]}`, single)
		pollUntil(t, "the single match to end", func() bool {
			ms := &refereev1.ListMatchesResponse{}
			apiCall(t, base, "/parley.referee.v1.RefereeService/ListMatches", `{"state":"MATCH_STATE_ENDED","excludeTournaments":true,"pageSize":500}`, ms)
			for _, m := range ms.GetMatches() {
				if m.GetMatchId() == single.GetMatchId() {
					return true
				}
			}
			return false
		})
		tb := b.tab(t)
		tb.do("open the list", chromedp.Navigate(base+"/#/"), chromedp.WaitVisible(chromedp.CSS("#finished-matches")))
		tb.waitFor("the finished matches", `document.querySelectorAll('#finished-matches tbody a.id').length > 0`)
		// Tournament matches are on their tournaments' pages, not here, until asked for.
		if n := eval[int](tb, `document.querySelectorAll('#finished-matches .in-tournament').length`); n != 0 {
			t.Errorf("%d tournament matches among the finished ones by default", n)
		}
		tb.click("#show-tournament-matches")
		tb.waitFor("the tournament matches", `document.querySelectorAll('#finished-matches .in-tournament').length > 0`)
		all := &refereev1.ListMatchesResponse{}
		apiCall(t, base, "/parley.referee.v1.RefereeService/ListMatches", `{"state":"MATCH_STATE_ENDED","pageSize":500}`, all)
		first := eval[[]string](tb, `[...document.querySelectorAll('#finished-matches tbody tr > td:first-child > a.id')].map((a) => a.title)`)
		if len(first) != 50 || first[0] != all.GetMatches()[0].GetMatchId() {
			t.Fatalf("first page: %d matches starting %v, want 50 starting %s", len(first), first[:min(1, len(first))], all.GetMatches()[0].GetMatchId())
		}
		// Every finished match is reachable, page after page.
		seen := map[string]bool{}
		for page := 1; ; page++ {
			ids := eval[[]string](tb, `[...document.querySelectorAll('#finished-matches tbody tr > td:first-child > a.id')].map((a) => a.title)`)
			for _, id := range ids {
				seen[id] = true
			}
			// Ids stay on one line, however long.
			if lines := eval[[]int](tb, `[...document.querySelectorAll('#finished-matches a.id')].map((a) => a.getClientRects().length)`); strings.Trim(fmt.Sprint(lines), "[1 ]") != "" {
				t.Errorf("page %d: ids over %v lines", page, lines)
			}
			if eval[bool](tb, `document.querySelector('#finished-pager [data-page=older]').disabled`) {
				break
			}
			tb.click("#finished-pager [data-page=older]")
			tb.waitFor("the next page", fmt.Sprintf(`document.querySelector('#finished-pager span').textContent === 'page %d'`, page+1))
			if page == 1 {
				tb.screenshot("matches-page-2")
			}
		}
		if len(seen) != len(all.GetMatches()) {
			t.Errorf("the pages show %d matches, the referee lists %d", len(seen), len(all.GetMatches()))
		}
		l := measureLayout(tb)
		checkContrast(t, "home page", l.Texts)
	})

	t.Run("one identity per agent", func(t *testing.T) {
		lb := &analyticsv1.GetLeaderboardResponse{}
		apiCall(t, base, "/parley.analytics.v1.AnalyticsService/GetLeaderboard", `{"filter":{"game":"ultimatum"}}`, lb)
		agents := map[string]bool{}
		for _, e := range lb.GetEntries() {
			agents[e.GetAgent()] = true
		}
		// builtin:fair played unlabelled single matches and as the tournaments' entrant "fair".
		if !agents["fair@1"] || agents["fair"] {
			t.Errorf("leaderboard agents %v: want builtin:fair once, as fair@1", agents)
		}
		tb := b.tab(t)
		tb.do("open the leaderboard", chromedp.Navigate(base+"/#/leaderboard?game=ultimatum"), chromedp.WaitVisible(chromedp.CSS("#lb-game")))
		tb.waitFor("ranked agents", `document.querySelectorAll('#leaderboard tbody tr').length > 0`)
		l := measureLayout(tb)
		checkContrast(t, "leaderboard", l.Texts)
		tb.screenshot("leaderboard-many")
	})
}

// phoneJS reads what checkPhone checks at a phone's width: the page's width, what sticks out,
// the boxes that scroll sideways without saying so, and the nav's lines.
const phoneJS = `JSON.stringify({
  ViewportWidth: window.innerWidth, PageWidth: document.documentElement.scrollWidth,
  Wide: [...document.querySelectorAll('body *')].filter((e) => { const r = e.getBoundingClientRect(); return r.width > 0 && r.right > window.innerWidth + 1 && !(e.parentElement && e.parentElement.closest('.scroll, .heatscroll, nav')); })
    .slice(0, 8).map((e) => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.className ? '.' + String(e.className).replace(/ /g, '.') : '')),
  Unmarked: [...document.querySelectorAll('.scroll, .heatscroll')].filter((b) => b.scrollWidth > b.clientWidth + 1 && (b.dataset.more !== 'yes' || getComputedStyle(b, '::before').content === 'none'))
    .map((b) => (b.querySelector('table[id]') || b.querySelector('table') || b).id || b.className),
  NavTops: [...document.querySelectorAll('header.top nav a')].map((a) => Math.round(a.getBoundingClientRect().top)),
  NavRight: Math.max(0, ...[...document.querySelectorAll('header.top nav a')].map((a) => a.getBoundingClientRect().right)),
})`

// checkPhone looks at the page as a 390 px phone shows it and saves a screenshot NAME-phone:
// nothing wider than the screen but boxes that scroll sideways and say so, the nav on one line
// with every link in sight. Then back to the desktop width.
func checkPhone(tb *tab, where, name string) {
	tb.t.Helper()
	tb.do("resize to a phone", chromedp.EmulateViewport(390, 900))
	tb.waitFor("the phone's width", `window.innerWidth === 390`)
	var got struct {
		ViewportWidth, PageWidth, NavRight float64
		Wide, Unmarked                     []string
		NavTops                            []float64
	}
	eval[bool](tb, `new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(() => ok(true))))`) // the page's marks are made
	if err := json.Unmarshal([]byte(eval[string](tb, phoneJS)), &got); err != nil {
		tb.fail("reading the layout: %v", err)
	}
	if got.PageWidth > got.ViewportWidth+1 {
		tb.t.Errorf("%s at 390 px: the page is %.0f px wide, it scrolls sideways; sticking out: %v", where, got.PageWidth, got.Wide)
	}
	if len(got.Unmarked) > 0 {
		tb.t.Errorf("%s at 390 px: boxes scroll sideways with no hint: %v", where, got.Unmarked)
	}
	for _, top := range got.NavTops {
		if top != got.NavTops[0] {
			tb.t.Errorf("%s at 390 px: the nav wraps (its links' tops %v)", where, got.NavTops)
			break
		}
	}
	if got.NavRight > got.ViewportWidth+1 {
		tb.t.Errorf("%s at 390 px: the nav's last link ends at %.0f px, out of sight", where, got.NavRight)
	}
	tb.screenshot(name + "-phone")
	tb.do("back to the desktop width", chromedp.EmulateViewport(1280, 1000))
}
