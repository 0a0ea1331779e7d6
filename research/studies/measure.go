package studies

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/tables"
)

// Results are the finished matches of each run, by run id.
type Results map[string][]metrics.Row

// DataSource computes the statistics that need no model (deal spaces, the corpus's human
// dialogues and best allocations).
type DataSource interface {
	Stat(m Measure) (value float64, n int, err error)
}

// Cell is one of our cells.
type Cell struct {
	// Value is our number; N the matches (or data points) behind it.
	Value float64
	N     int
	// Value2 is Bob's number of a payoff pair (Pair).
	Value2 float64
	Pair   bool
	// OK is false when there is no number; Why says why.
	OK  bool
	Why string
	// Fallbacks counts the games behind the number in which a move was a fallback: the
	// game's default played for an agent whose answers could not be used.
	Fallbacks int
	// Alt is the cell's other reading (Measure.Alt), when it has one.
	Alt *Cell
	// SE is the standard error of Value (a mean's: the sample's standard deviation over the
	// square root of N; a rate's: sqrt(p(1-p)/N)), in Value's unit; HasSE says there is one.
	SE    float64
	HasSE bool
}

// TableResult is a table with our cells beside the paper's.
type TableResult struct {
	Table *Table
	// Ours[i][j] is row i, column j.
	Ours [][]Cell
	// Games are what the table's runs played, each match once: the games the cells may read
	// and those left out of them.
	Games GameCounts
}

// GameCounts are a table's games by what became of them.
type GameCounts struct {
	// Played counts every game, void ones included.
	Played int
	// WithFallback counts the games with a fallback move that the cells read.
	WithFallback int
	// FaultEnded counts the games an agent's failure ended; Counted says whether the cells
	// read them (the study counts them) or left them out.
	FaultEnded int
	Counted    bool
	// FallbackLeftOut counts the other games with a fallback, left out on request
	// (Options.ExcludeFallbackGames).
	FallbackLeftOut int
	// CutByBudget are the ids of the games a budget cut short (void, left out).
	CutByBudget []string
	// Void counts the other void games (left out).
	Void int
}

// Options change how cells are computed.
type Options struct {
	// ExcludeFallbackGames leaves out every game in which a move was a fallback, not only
	// those a fallback ended.
	ExcludeFallbackGames bool
}

// Compute fills tables from the runs' results and the data source (nil: data-only cells are
// left empty). missing names runs not played (a slot without a model, a table not picked):
// their cells say so. Void games never count; a game an agent's failure ended counts only
// where the study counts such games (Study.FaultGames); with opts, no game with a fallback
// counts.
func Compute(tables []*Table, res Results, data DataSource, missing map[string]string, opts ...Options) []TableResult {
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	var out []TableResult
	for _, t := range tables {
		c := computer{res: res, data: data, missing: missing, opts: o, countFaults: t.countFaults}
		measure := c.measure
		tr := TableResult{Table: t, Ours: make([][]Cell, len(t.Rows)), Games: c.games(t)}
		for i, r := range t.Rows {
			tr.Ours[i] = make([]Cell, len(t.Columns))
			for j, c := range t.Columns {
				m, ok := t.measureFor(r, c)
				if !ok {
					tr.Ours[i][j] = Cell{Why: "not measured"}
					continue
				}
				tr.Ours[i][j] = measure(m)
				if m.Alt != nil {
					alt := measure(*m.Alt)
					tr.Ours[i][j].Alt = &alt
				}
			}
		}
		// Column means come last, over the other rows' numbers.
		for i, r := range t.Rows {
			for j, c := range t.Columns {
				if m, ok := t.measureFor(r, c); ok && m.Stat == "column_mean" {
					var sum float64
					n, cells := 0, 0
					for k := range t.Rows {
						if k == i {
							continue
						}
						cells++
						if cl := tr.Ours[k][j]; cl.OK {
							sum += cl.Value
							n++
						}
					}
					if n == cells && n > 0 {
						tr.Ours[i][j] = Cell{Value: sum / float64(n), N: n, OK: true}
					} else {
						tr.Ours[i][j] = Cell{Why: "not every row has a number"}
					}
				}
			}
		}
		out = append(out, tr)
	}
	return out
}

// computer computes cells from results.
type computer struct {
	res         Results
	data        DataSource
	missing     map[string]string
	opts        Options
	countFaults bool
}

// games counts what the table's runs played, each match once.
func (c computer) games(t *Table) GameCounts {
	g := GameCounts{Counted: c.countFaults}
	seen := map[string]bool{}
	for id := range RunsOf([]*Table{t}) {
		for _, r := range c.res[id] {
			if r.MatchID != "" && seen[r.MatchID] {
				continue
			}
			seen[r.MatchID] = true
			g.Played++
			switch {
			case r.CutByBudget():
				g.CutByBudget = append(g.CutByBudget, r.MatchID)
			case r.Void():
				g.Void++
			case r.EndedByFault():
				g.FaultEnded++
				if c.countFaults && !c.opts.ExcludeFallbackGames {
					g.WithFallback++
				}
			case r.Fallbacks() > 0 && c.opts.ExcludeFallbackGames:
				g.FallbackLeftOut++
			case r.Fallbacks() > 0:
				g.WithFallback++
			}
		}
	}
	slices.Sort(g.CutByBudget)
	return g
}

// counts reports whether the cells read row r at all.
func (c computer) counts(r metrics.Row) bool {
	switch {
	case r.Void():
		return false
	case r.EndedByFault():
		return c.countFaults && !c.opts.ExcludeFallbackGames
	case r.Fallbacks() > 0:
		return !c.opts.ExcludeFallbackGames
	}
	return true
}

// measure computes one cell and counts the games with a fallback behind it.
func (c computer) measure(m Measure) Cell {
	cell := c.stat(m)
	if cell.OK && cell.Fallbacks == 0 && (m.Run != "" || len(m.Runs) > 0) && !slices.Contains([]string{"pair", "gain", "binomial_p"}, m.Stat) {
		for _, r := range c.rows(m) {
			if r.Fallbacks() > 0 {
				cell.Fallbacks++
			}
		}
	}
	return cell
}

// rows are the rows of m's runs the cell reads.
func (c computer) rows(m Measure) []metrics.Row {
	var rows []metrics.Row
	for _, id := range append([]string{m.Run}, m.Runs...) {
		for _, r := range c.res[id] {
			if c.counts(r) {
				rows = append(rows, r)
			}
		}
	}
	return m.keep(rows)
}

func (c computer) stat(m Measure) Cell {
	if m.Stat == "column_mean" {
		return Cell{}
	}
	scale := m.Scale
	if scale == 0 {
		scale = 1
	}
	if m.Stat == "flag" {
		// Whether our set-up asks for a reasoning step (Field) among Arg's.
		return Cell{Value: b2f(slices.Contains(strings.Split(m.Arg, ","), m.Field)), OK: true} // rests on no match
	}
	if m.Run == "" && len(m.Runs) == 0 {
		if c.data == nil {
			return Cell{Why: "needs data"}
		}
		v, n, err := c.data.Stat(m)
		if err != nil {
			return Cell{Why: err.Error()}
		}
		return Cell{Value: v * scale, N: n, OK: true}
	}
	var rows []metrics.Row
	for _, id := range m.runIDs() {
		if why, ok := c.missing[id]; ok {
			return Cell{Why: why}
		}
	}
	if m.Stat == "pair" {
		// A payoff pair (Alice, Bob): the mean of Value for each seat.
		a := c.measure(Measure{Stat: "mean", Run: m.Run, Runs: m.Runs, Value: m.Value, Seat: "0", Where: m.Where})
		b := c.measure(Measure{Stat: "mean", Run: m.Run, Runs: m.Runs, Value: m.Value, Seat: "1", Where: m.Where})
		if !a.OK || !b.OK {
			return Cell{Why: a.Why + b.Why}
		}
		return Cell{Value: a.Value, Value2: b.Value, Pair: true, N: a.N, OK: true, Fallbacks: a.Fallbacks}
	}
	rows = c.rows(m)
	if len(rows) == 0 {
		return Cell{Why: "no match"}
	}
	seat := metrics.WholeMatch
	if m.Seat != "" && m.Seat != "*" {
		s, err := strconv.Atoi(m.Seat)
		if err != nil {
			return Cell{Why: "bad seat " + m.Seat}
		}
		seat = int32(s)
	}
	div := m.Divide
	if div == 0 {
		div = 1
	}
	switch m.Stat {
	case "mean", "":
		var vals []float64
		for _, r := range rows {
			for _, v := range r.Values {
				if v.Name == m.Value && (v.Seat == seat || m.Seat == "*" && v.Seat != metrics.WholeMatch) {
					vals = append(vals, m.adjust(r, v.Value))
				}
			}
		}
		if len(vals) == 0 {
			return Cell{Why: "no match has " + m.Value}
		}
		mean, se := meanSE(vals)
		return Cell{Value: mean / div * scale, N: len(vals), OK: true, SE: se / div * math.Abs(scale), HasSE: len(vals) > 1}
	case "min_mean":
		// The smallest of the means per opponent: rows grouped by the label of seat By.
		by, err := strconv.Atoi(m.By)
		if err != nil {
			return Cell{Why: "min_mean needs by: a seat"}
		}
		groups := map[string][]float64{}
		n := 0
		for _, r := range rows {
			if by >= len(r.Seats) {
				continue
			}
			if v, ok := r.Value(m.Value, seat); ok {
				groups[r.Seats[by].Label] = append(groups[r.Seats[by].Label], m.adjust(r, v))
				n++
			}
		}
		if len(groups) == 0 {
			return Cell{Why: "no match has " + m.Value}
		}
		low := math.Inf(1)
		for _, vals := range groups {
			mean, _ := meanSE(vals)
			low = min(low, mean)
		}
		return Cell{Value: low / div * scale, N: n, OK: true}
	case "binomial_p":
		// One-sided exact binomial test: are the matches of Run with Value > 0 more than the
		// share of Base's would give? The value is the p-value P(X >= k), X ~ Bin(n, p0).
		if m.Base == nil {
			return Cell{Why: "binomial_p without a base"}
		}
		this := c.measure(Measure{Stat: "share", Run: m.Run, Runs: m.Runs, Value: m.Value, Seat: m.Seat, Where: m.Where, Agreed: m.Agreed})
		base := c.measure(*m.Base)
		switch {
		case !this.OK:
			return this
		case !base.OK:
			return base
		}
		k := int(math.Round(this.Value * float64(this.N)))
		return Cell{Value: tables.BinomialTail(k, this.N, base.Value) * scale, N: this.N, OK: true, Fallbacks: this.Fallbacks + base.Fallbacks}
	case "share":
		n, yes := 0, 0
		for _, r := range rows {
			if v, ok := r.Value(m.Value, seat); ok {
				n++
				if v > 0 {
					yes++
				}
			}
		}
		if n == 0 {
			return Cell{Why: "no match has " + m.Value}
		}
		p := float64(yes) / float64(n)
		return Cell{Value: p * scale, N: n, OK: true, SE: rateSE(p, n) * math.Abs(scale), HasSE: true}
	case "sum":
		var sum float64
		for _, r := range rows {
			for _, v := range r.Values {
				if v.Name == m.Value && (m.Seat == "*" || v.Seat == seat) {
					sum += v.Value
				}
			}
		}
		return Cell{Value: sum * scale, N: len(rows), OK: true}
	case "winrate":
		n, won := 0, 0
		for _, r := range rows {
			if len(r.Seats) != 2 || int(seat) < 0 || int(seat) > 1 {
				continue
			}
			a, b := m.adjust(r, r.Seats[seat].Payoff)-m.start(r, seat), m.adjust(r, r.Seats[1-seat].Payoff)-m.start(r, 1-seat)
			if a == b && !m.TiesCount {
				continue // ties are left out of win rates
			}
			n++
			if a > b {
				won++
			}
		}
		if n == 0 {
			return Cell{Why: "no decisive match"}
		}
		p := float64(won) / float64(n)
		return Cell{Value: p * scale, N: n, OK: true, SE: rateSE(p, n) * math.Abs(scale), HasSE: true}
	case "spearman":
		var xs, ys []float64
		for _, r := range rows {
			x, okx := r.Value(m.X, metrics.WholeMatch)
			y, oky := r.Value(m.Y, metrics.WholeMatch)
			if okx && oky {
				xs, ys = append(xs, x), append(ys, y)
			}
		}
		if len(xs) < 3 {
			return Cell{Why: fmt.Sprintf("%d matches with both prices; a correlation needs 3", len(xs))}
		}
		rho := Spearman(xs, ys)
		if math.IsNaN(rho) {
			return Cell{Why: "no variation to correlate"}
		}
		return Cell{Value: rho * scale, N: len(xs), OK: true}
	case "gain":
		if m.Base == nil {
			return Cell{Why: "gain without a base"}
		}
		this := c.measure(Measure{Stat: "mean", Run: m.Run, Runs: m.Runs, Value: m.Value, Seat: m.Seat, Where: m.Where, Agreed: m.Agreed,
			NoDealZero: m.NoDealZero, ZeroIfEqual: m.ZeroIfEqual})
		base := c.measure(*m.Base)
		switch {
		case !this.OK:
			return this
		case !base.OK:
			return base
		case base.Value == 0:
			return Cell{Why: "the base is 0"}
		}
		return Cell{Value: (this.Value/base.Value - 1) * 100, N: this.N, OK: true, Fallbacks: this.Fallbacks + base.Fallbacks}
	}
	return Cell{Why: "unknown statistic " + m.Stat}
}

// adjust applies the measure's scoring to a payoff-like value of row r: 0 without a deal
// (NoDealZero), 0 where it equals the match's ZeroIfEqual value (the value a seat starts with:
// holdings that did not change score nothing).
func (m Measure) adjust(r metrics.Row, v float64) float64 {
	if m.DivideBy != "" {
		if d, ok := r.Value(m.DivideBy, metrics.WholeMatch); ok && d != 0 {
			v /= d
		}
	}
	if m.NoDealZero && !r.Agreement {
		return 0
	}
	if m.ZeroIfEqual != "" {
		if at, ok := r.Value(m.ZeroIfEqual, metrics.WholeMatch); ok && v == at {
			return 0
		}
	}
	return v
}

// start is what seat holds before the game in row r, as the measure's Start names it.
func (m Measure) start(r metrics.Row, seat int32) float64 {
	name, ok := m.Start[strconv.Itoa(int(seat))]
	if !ok {
		return 0
	}
	v, _ := r.Value(name, metrics.WholeMatch)
	return v
}

// meanSE returns the mean of vals and its standard error (0 for one value).
func meanSE(vals []float64) (mean, se float64) {
	for _, v := range vals {
		mean += v
	}
	mean /= float64(len(vals))
	if len(vals) < 2 {
		return mean, 0
	}
	var ss float64
	for _, v := range vals {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss/float64(len(vals)-1)) / math.Sqrt(float64(len(vals)))
}

// rateSE is the standard error of a rate p over n trials.
func rateSE(p float64, n int) float64 { return math.Sqrt(p * (1 - p) / float64(n)) }

// keep filters rows as the measure says (Where, Agreed); void matches never count.
func (m Measure) keep(rows []metrics.Row) []metrics.Row {
	var out []metrics.Row
	for _, r := range rows {
		if r.Void() || m.Agreed && !r.Agreement {
			continue
		}
		ok := true
		for s, slot := range m.Where {
			i, err := strconv.Atoi(s)
			if err != nil || i >= len(r.Seats) || SlotOf(r.Seats[i].Label) != slot {
				ok = false
			}
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// SlotOf is the slot of a seat label ("GPT-4" of "GPT-4/desperate").
func SlotOf(label string) string {
	for i := 0; i < len(label); i++ {
		if label[i] == '/' {
			return label[:i]
		}
	}
	return label
}

// Spearman is the rank correlation of xs and ys (average ranks for ties); NaN when either
// does not vary.
func Spearman(xs, ys []float64) float64 {
	rx, ry := ranks(xs), ranks(ys)
	n := float64(len(xs))
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx, my = mx/n, my/n
	var cov, vx, vy float64
	for i := range rx {
		cov += (rx[i] - mx) * (ry[i] - my)
		vx += (rx[i] - mx) * (rx[i] - mx)
		vy += (ry[i] - my) * (ry[i] - my)
	}
	if vx == 0 || vy == 0 {
		return math.NaN()
	}
	return cov / math.Sqrt(vx*vy)
}

func ranks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	out := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		r := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			out[idx[k]] = r
		}
		i = j + 1
	}
	return out
}
