// Package report renders a tournament's tables (package tables) for people and programs: as
// plain text for the terminal, Markdown, a self-contained HTML page that opens offline, CSV
// and JSON lines; draws its figures (the win-rate and payoff heat maps of each two-player
// game and a per-match trajectory plot) as SVG and PNG with gonum.org/v1/plot; and writes the
// payoff table of agent variants as a matrix-game file (package gamefile's format).
package report

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/parley-arena/parley/services/analytics/tables"
)

// Section is one table, in a form every output format can render.
type Section struct {
	// Game the table belongs to.
	Game string
	// Title and Note say what the table shows.
	Title, Note string
	// Header names the columns; Rows hold the cells, as text.
	Header []string
	Rows   [][]string
}

// Sections lays out every table of g, in reading order.
func Sections(g *tables.Game) []Section {
	var out []Section
	add := func(s Section) {
		s.Game = g.Game
		out = append(out, s)
	}
	if p := g.Pairs; p != nil && len(p.Rows) > 0 {
		other := 1 - p.Seat
		otherName := seatName(g, other)
		win := Section{
			Title:  fmt.Sprintf("Win rate of %s by ordered pair", p.SeatName),
			Note:   fmt.Sprintf("Rows: the agent in %s; columns: the agent in %s. Share of decisive matches (ties and void matches left out) won by %s; the number of decisive matches in brackets.", seatName(g, 1), seatName(g, 0), p.SeatName),
			Header: append([]string{seatName(g, 1) + " \\ " + seatName(g, 0)}, p.Cols...),
		}
		pay := Section{
			Title:  fmt.Sprintf("Mean payoff by ordered pair (%s / %s)", p.SeatName, otherName),
			Note:   fmt.Sprintf("Rows: the agent in %s; columns: the agent in %s. Mean payoffs over non-void matches, %s's first; the number of matches in brackets.", seatName(g, 1), seatName(g, 0), p.SeatName),
			Header: win.Header,
		}
		for i, r := range p.Rows {
			wl, pl := []string{r}, []string{r}
			for j := range p.Cols {
				c := p.Cells[i][j]
				wl = append(wl, withN(pct(c.WinRate), c.Decisive))
				a, _ := c.Payoff[p.Seat].Value()
				b, ok := c.Payoff[other].Value()
				if !ok {
					pl = append(pl, "–")
					continue
				}
				pl = append(pl, withN(num(a)+" / "+num(b), c.Matches))
			}
			win.Rows = append(win.Rows, wl)
			pay.Rows = append(pay.Rows, pl)
		}
		add(win)
		add(pay)
	}

	agents := Section{
		Title: "Agents",
		Note:  "Non-void matches against other agents (self-play left out). Win rate over decisive matches; opening: mean first proposal in the game's unit.",
		Header: []string{"agent", "matches", "void", "win rate", "mean payoff", "agreement", "turns to agreement",
			"refused moves", "faulted"},
	}
	// Opening proposals are shown when the game's metrics give them.
	opening := false
	for _, s := range g.AgentStats {
		for _, m := range s.OpeningBySeat {
			opening = opening || m.N > 0
		}
	}
	for i, s := range g.AgentStats {
		agents.Rows = append(agents.Rows, []string{
			s.Agent, strconv.Itoa(s.Matches), strconv.Itoa(s.Void), withN(pct(s.WinRate), s.Decisive),
			mean(s.Payoff), pct(s.Agreement), mean(s.TurnsToAgreement),
			strconv.Itoa(s.Refused), strconv.Itoa(s.Faulted),
		})
		for seat, m := range s.BySeat {
			if i == 0 {
				agents.Header = append(agents.Header, "payoff as "+seatName(g, int32(seat)))
			}
			agents.Rows[i] = append(agents.Rows[i], mean(m))
		}
		if opening {
			for seat, m := range s.OpeningBySeat {
				if i == 0 {
					agents.Header = append(agents.Header, "opening as "+seatName(g, int32(seat)))
				}
				agents.Rows[i] = append(agents.Rows[i], mean(m))
			}
		}
	}
	add(agents)

	o := g.Outcomes
	outcomes := Section{
		Title:  "Outcomes",
		Note:   "Rates over non-void matches; causes over every match.",
		Header: []string{"measure", "value"},
		Rows: [][]string{
			{"matches", strconv.Itoa(g.Matches)},
			{"void", strconv.Itoa(len(g.Void))},
			{"ties", withN(pct(o.TieRate), o.Ties)},
			{"no deal", withN(pct(o.NoDealRate), o.NoDeal)},
		},
	}
	for _, c := range o.Causes {
		outcomes.Rows = append(outcomes.Rows, []string{"ended: " + causeName(c.Cause.String()), strconv.Itoa(c.N)})
	}
	add(outcomes)

	if bs := g.BuySell; bs != nil {
		sec := Section{
			Title:  "Buyer and seller",
			Note:   fmt.Sprintf("Anchoring: Spearman's rho of the first and the final price (ties at average ranks). Splitting the difference: Pearson's r of each price from the third on with the mean of the two before it. P(p2 > p1): the buyer's first counter above the seller's opening, with the one-sided binomial test of H0 p = %s.", num(bs.BadCounter.Null)),
			Header: []string{"measure", "value", "n", "p-value"},
			Rows: [][]string{
				{"anchoring (Spearman rho, first vs final price)", corr(bs.Anchoring), strconv.Itoa(bs.Anchoring.N), ""},
				{"split the difference (Pearson r)", corr(bs.SplitDifference), strconv.Itoa(bs.SplitDifference.N), ""},
				{"mean final price", mean(bs.FinalPrice), strconv.Itoa(bs.FinalPrice.N), ""},
				{"P(p2 > p1)", rate(bs.BadCounter), strconv.Itoa(bs.BadCounter.N), pval(bs.BadCounter)},
			},
		}
		for _, b := range bs.BadCounterByBuyer {
			sec.Rows = append(sec.Rows, []string{"P(p2 > p1), buyer " + b.Agent, rate(b.BinomialTest), strconv.Itoa(b.N), pval(b.BinomialTest)})
		}
		add(sec)
	}

	if c := g.Coalition; c != nil {
		win := Section{Title: "Winning coalitions", Note: "Over non-void matches; \"none\": no proposal passed.", Header: []string{"coalition", "matches", "share"}}
		for _, w := range c.Winning {
			win.Rows = append(win.Rows, []string{w.Members, strconv.Itoa(w.N), pct(tables.Mean{Sum: w.Share, N: 1})})
		}
		add(win)
		sec := Section{Title: "Coalition payoffs and solution concepts", Header: []string{"measure", "value", "n"},
			Note: "Distances of the split (payoff vector) from the core (Euclidean, 0 inside) and from the Shapley value."}
		for i, m := range c.PayoffBySeat {
			sec.Rows = append(sec.Rows, []string{"mean payoff of " + seatName(g, int32(i)), mean(m), strconv.Itoa(m.N)})
		}
		for _, m := range c.MemberRate {
			sec.Rows = append(sec.Rows, []string{"in the winning coalition: " + m.Agent, pct(m.Mean), strconv.Itoa(m.N)})
		}
		sec.Rows = append(sec.Rows,
			[]string{"mean distance from the core", mean(c.CoreDistance), strconv.Itoa(c.CoreDistance.N)},
			[]string{"split in the core", pct(c.InCore), strconv.Itoa(c.InCore.N)},
			[]string{"mean L1 distance from the Shapley value", mean(c.ShapleyL1), strconv.Itoa(c.ShapleyL1.N)},
			[]string{"mean L2 distance from the Shapley value", mean(c.ShapleyL2), strconv.Itoa(c.ShapleyL2.N)},
		)
		add(sec)
	}

	if len(g.Usage) > 0 {
		sec := Section{Title: "Language-model usage", Note: "Summed over every seat that reported usage, void matches included. Format-failure rate: failures per model call. " +
			"Fallbacks: moves the agent played itself because its model gave nothing usable (of which budget: because a token or cost budget was spent). " +
			"Cached tokens: replies served from the cache, at what they cost when made. Cost: by the agents' price tables.",
			Header: []string{"model", "seats", "prompt tokens", "completion tokens", "cached tokens", "calls", "retries", "format failures", "format-failure rate", "fallbacks", "of which budget", "cost ($)"}}
		for _, u := range g.Usage {
			sec.Rows = append(sec.Rows, []string{u.Model, strconv.Itoa(u.Seats), strconv.FormatInt(u.PromptTokens, 10),
				strconv.FormatInt(u.CompletionTokens, 10), strconv.FormatInt(u.CachedTokens, 10), strconv.Itoa(u.Calls), strconv.Itoa(u.Retries),
				strconv.Itoa(u.FormatFailures), pct(u.FormatFailureRate), strconv.Itoa(u.Fallbacks), strconv.Itoa(u.BudgetFallbacks),
				strconv.FormatFloat(float64(u.CostMicrodollars)/1e6, 'f', 4, 64)})
		}
		add(sec)
	}

	if len(g.Void) > 0 {
		sec := Section{Title: "Void matches", Note: "Recorded, left out of every rate and mean.", Header: []string{"match"}}
		for _, id := range g.Void {
			sec.Rows = append(sec.Rows, []string{id})
		}
		add(sec)
	}
	return out
}

func seatName(g *tables.Game, s int32) string {
	if int(s) < len(g.Seats) && s >= 0 {
		return g.Seats[s]
	}
	return fmt.Sprintf("seat %d", s)
}

func causeName(s string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(s, "END_CAUSE_"), "_", " "))
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "–"
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func mean(m tables.Mean) string {
	v, ok := m.Value()
	if !ok {
		return "–"
	}
	return num(v)
}

func pct(m tables.Mean) string {
	v, ok := m.Value()
	if !ok {
		return "–"
	}
	return strconv.FormatFloat(100*v, 'f', 0, 64) + "%"
}

func withN(s string, n int) string {
	if s == "–" {
		return s
	}
	return fmt.Sprintf("%s (%d)", s, n)
}

func corr(c tables.Correlation) string {
	if !c.Defined() {
		return "–"
	}
	return strconv.FormatFloat(c.R, 'f', 3, 64)
}

func rate(b tables.BinomialTest) string {
	return pct(tables.Mean{Sum: float64(b.K), N: b.N})
}

func pval(b tables.BinomialTest) string {
	if b.N == 0 {
		return "–"
	}
	return strconv.FormatFloat(b.PValue, 'g', 3, 64)
}
