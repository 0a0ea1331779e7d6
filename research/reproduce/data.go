package reproduce

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"

	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/dealornodeal/corpus"
	"github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/referee/games/deliberation/dealspace"
	"github.com/parley-arena/parley/research/studies"
	"github.com/parley-arena/parley/services/analytics/metrics"
	dondmetrics "github.com/parley-arena/parley/services/analytics/metrics/dealornodeal"
)

// Files of the Deal-or-No-Deal corpus folder.
const (
	hardestFile = "sampled_50_deal_no_deal.txt"
	testFile    = "test.txt"
)

// Data computes the cells that need no model: deal spaces of the deliberation games and the
// Deal-or-No-Deal corpus's human dialogues and best allocations (studies.DataSource).
type Data struct {
	// Dir is the Deal-or-No-Deal corpus folder; "" when not given.
	Dir string

	mu      sync.Mutex
	corpora map[string]*corpus.Corpus
	spaces  map[string]*dealspace.Analysis
}

var _ studies.DataSource = (*Data)(nil)

// Stat computes one data-only cell.
func (d *Data) Stat(m studies.Measure) (float64, int, error) {
	switch m.Stat {
	case "dealspace":
		return d.dealspace(m.Arg, m.Field)
	case "dond_best", "dond_human":
		points, err := d.hardest()
		if err != nil {
			return 0, 0, err
		}
		var vals [][]metrics.Value
		for _, p := range points {
			if m.Stat == "dond_human" {
				vals = append(vals, dondmetrics.HumanValues(p))
			} else if v, ok := dondmetrics.BestValues(p.Game); ok {
				vals = append(vals, v)
			}
		}
		return summaryField(dondmetrics.Summarize(vals), m.Field, len(vals))
	case "dond_difficulty":
		return d.difficulty(m.Arg, m.Field)
	}
	return 0, 0, fmt.Errorf("unknown statistic %s", m.Stat)
}

func summaryField(s dondmetrics.Summary, field string, n int) (float64, int, error) {
	v := map[string]float64{"rounds": s.Rounds, "agreement": s.Agreement, "alice_score": s.Score[0], "bob_score": s.Score[1],
		"pareto_optimal": s.PO, "envy_free": s.EF, "total": s.Total}[field]
	if math.IsNaN(v) {
		return 0, 0, fmt.Errorf("no %s for these rows", field)
	}
	return v, n, nil
}

func (d *Data) load(name string) (*corpus.Corpus, error) {
	if d.Dir == "" {
		return nil, fmt.Errorf("needs the Deal-or-No-Deal corpus (--dond-data DIR)")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if c, ok := d.corpora[name]; ok {
		return c, nil
	}
	b, err := os.ReadFile(filepath.Join(d.Dir, name))
	if err != nil {
		return nil, fmt.Errorf("--dond-data: %v", err)
	}
	c, err := corpus.Parse(name, b)
	if err != nil {
		return nil, err
	}
	if d.corpora == nil {
		d.corpora = map[string]*corpus.Corpus{}
	}
	d.corpora[name] = c
	return c, nil
}

// hardest are the seed's 50 hardest datapoints that have an envy-free allocation (44).
func (d *Data) hardest() ([]corpus.Datapoint, error) {
	c, err := d.load(hardestFile)
	if err != nil {
		return nil, err
	}
	var out []corpus.Datapoint
	for _, p := range c.Datapoints() {
		if p.Game.HasEF() {
			out = append(out, p)
		}
	}
	return out, nil
}

// hardestIndexes are the 1-based datapoint numbers of hardest() in the file.
func (d *Data) hardestIndexes() ([]int, error) {
	c, err := d.load(hardestFile)
	if err != nil {
		return nil, err
	}
	var out []int
	for i, p := range c.Datapoints() {
		if p.Game.HasEF() {
			out = append(out, i+1)
		}
	}
	return out, nil
}

// difficulty is a human-dialogue rate over the datapoints of difficulty at least d among
// those seed 004 chose its hardest from (corpus.Candidates of the test split's odd lines):
// the pool whose counts by difficulty are the ones the study's Table 9 prints.
func (d *Data) difficulty(arg, field string) (float64, int, error) {
	var min int
	if _, err := fmt.Sscan(arg, &min); err != nil {
		return 0, 0, fmt.Errorf("difficulty %q", arg)
	}
	c, err := d.load(testFile)
	if err != nil {
		return 0, 0, err
	}
	n, agree, ef, po, both := 0, 0, 0, 0, 0
	for _, p := range corpus.Candidates(c.OddLines()) {
		if p.Game.Difficulty() < min {
			continue
		}
		n++
		vals := dondmetrics.HumanValues(p)
		get := func(name string) bool {
			for _, v := range vals {
				if v.Name == name && v.Seat == metrics.WholeMatch {
					return v.Value > 0
				}
			}
			return false
		}
		a, e, o := get("agreement"), get(dondmetrics.ValueEF), get(dondmetrics.ValuePO)
		agree, ef, po = agree+b2i(a), ef+b2i(e), po+b2i(o)
		both += b2i(e && o)
	}
	if n == 0 {
		return 0, 0, fmt.Errorf("no datapoint of difficulty %d or more", min)
	}
	rate := func(k int) float64 { return float64(k) / float64(n) }
	switch field {
	case "n":
		return float64(n), n, nil
	case "agreement":
		return rate(agree), n, nil
	case "envy_free":
		return rate(ef), n, nil
	case "pareto_optimal":
		return rate(po), n, nil
	case "ef_and_po":
		return rate(both), n, nil
	}
	return 0, 0, fmt.Errorf("unknown field %s", field)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// dealspace is one figure of a deliberation game's deal space, under the bonus rule the
// reproduction study used (gt: the bonus counts when every other party is strictly above its
// minimum).
func (d *Data) dealspace(game, field string) (float64, int, error) {
	d.mu.Lock()
	a, ok := d.spaces[game]
	d.mu.Unlock()
	if !ok {
		g := deliberation.New()
		gp, err := games.ParseParams(deliberation.Name, []string{"game=" + game})
		if err != nil {
			return 0, 0, err
		}
		if l, ok := games.Game(g).(games.Loader); ok {
			if gp, err = l.Load(gp, 0, os.ReadFile); err != nil {
				return 0, 0, err
			}
		}
		if gp, err = g.Resolve(gp); err != nil {
			return 0, 0, err
		}
		s, err := deliberation.NewSetup(gp)
		if err != nil {
			return 0, 0, err
		}
		if a, err = dealspace.Analyze(s, deliberation.BonusGT); err != nil {
			return 0, 0, err
		}
		d.mu.Lock()
		if d.spaces == nil {
			d.spaces = map[string]*dealspace.Analysis{}
		}
		d.spaces[game] = a
		d.mu.Unlock()
	}
	v, ok := map[string]float64{
		"acceptable": float64(a.Acceptable), "deals_total": float64(a.Deals), "pareto": float64(len(a.Front)), "pareto_of": float64(a.Acceptable),
		"score_min": a.MeanScore.Min, "score_avg": a.MeanScore.Mean, "score_max": a.MeanScore.Max,
		"gini_min": a.Gini.Min, "gini_avg": a.Gini.Mean, "gini_max": a.Gini.Max, "pareto_raw": float64(len(a.RawFront)),
	}[field]
	if !ok {
		return 0, 0, fmt.Errorf("unknown deal-space figure %s", field)
	}
	return v, a.Deals, nil
}
