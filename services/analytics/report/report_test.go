package report

import (
	"bytes"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/tables"
)

func row(id, p1, p2 string, pay1, pay2 float64, prices ...float64) metrics.Row {
	r := metrics.Row{
		MatchID: id, Game: "buysell", Cause: matchv1.EndCause_END_CAUSE_AGREEMENT, Agreement: true, Turns: int32(len(prices)),
		Seats: []metrics.SeatResult{{Seat: 0, Name: "P1", Agent: p1, Payoff: pay1}, {Seat: 1, Name: "P2", Agent: p2, Payoff: pay2}},
	}
	for i, p := range prices {
		r.Values = append(r.Values, metrics.Value{Name: "price_" + string(rune('1'+i)), Seat: metrics.WholeMatch, Value: p})
	}
	r.Values = append(r.Values,
		metrics.Value{Name: "first_price", Seat: metrics.WholeMatch, Value: prices[0]},
		metrics.Value{Name: "final_price", Seat: metrics.WholeMatch, Value: prices[len(prices)-1]},
		metrics.Value{Name: "bad_counter_offer", Seat: metrics.WholeMatch, Value: 0})
	return r
}

func rows() []metrics.Row {
	return []metrics.Row{
		row("m1", "a|x", "b", 10, 10, 60, 40, 50),
		row("m2", "b", "a|x", 12, 8, 70, 45, 52),
		row("m3", "a|x", "a|x", 9, 11, 65, 42, 49),
		row("m4", "b", "b", 11, 9, 62, 44, 51),
	}
}

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	res, err := Write(dir, Input{Title: "T", ID: "t1", Rows: rows()}, Formats)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.md", "report.html", "matches.csv", "matches.jsonl", "tables.jsonl",
		"buysell-heatmap-winrate.svg", "buysell-heatmap-winrate.png", "buysell-heatmap-payoff.png",
		"buysell-trajectories.svg", "buysell-trajectories.png", "buysell-metagame.yaml", "buysell-agents.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v (wrote %v)", f, err, res.Files)
		}
	}
	html, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	for _, want := range []string{`<img src="buysell-heatmap-winrate.png"`, "<th>P2 \\ P1</th>", "a|x", "Buyer and seller"} {
		if !bytes.Contains(html, []byte(want)) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	if bytes.Contains(html, []byte("http://")) || bytes.Contains(html, []byte("https://")) || bytes.Contains(html, []byte("<script")) {
		t.Error("report.html refers to the network or runs scripts")
	}
	if _, err := Write(dir, Input{Rows: rows()}, []string{"pdf"}); err == nil {
		t.Error("an unknown format was accepted")
	}
}

func TestMetaGameFile(t *testing.T) {
	g := tables.BuildGame(rows(), tables.Options{})
	m, err := tables.MetaGameOf(g)
	if err != nil {
		t.Fatal(err)
	}
	data := MetaGameYAML(m, "t1")
	f, err := gamefile.Parse(data)
	if err != nil {
		t.Fatalf("not a matrix game: %v\n%s", err, data)
	}
	tab := f.Table
	if len(tab.GetRows()) != 2 || tab.GetRows()[0].GetId() != "a_x" || tab.GetRows()[0].GetLabel() != "a|x" {
		t.Fatalf("rows %v", tab.GetRows())
	}
	// The equilibrium analysis reads it: b against anything pays 11 or 10, so (b, b) is the
	// pure equilibrium.
	mat, err := gamefile.MatrixOf(tab, big.NewRat(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	if eq := equilibria.PureNash(mat); len(eq) != 1 || eq[0][0] != 1 || eq[0][1] != 1 {
		t.Errorf("pure equilibria %v, want (b, b)", eq)
	}
	// a|x vs b: a|x as P1 got 10, as P2 8: 9; b as P2 got 10, as P1 12: 11.
	if !strings.Contains(string(data), "[[10, 10], [9, 11]]") || !strings.Contains(string(data), "[[11, 9], [10, 10]]") {
		t.Errorf("payoffs:\n%s", data)
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	for _, g := range tables.Build(rows(), tables.Options{}) {
		if err := WriteText(&b, Sections(g)); err != nil {
			t.Fatal(err)
		}
	}
	for _, want := range []string{"== buysell ==", "Win rate of P2 by ordered pair", "Agents", "Buyer and seller", "anchoring"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, b.String())
		}
	}
}
