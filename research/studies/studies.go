// Package studies carries the four seed studies Parley reproduces (negotiationarena,
// coalition, deliberation, gametheory): each study's set-ups (games, parameters, seats, roles,
// personas, prompt styles, matches per cell), the layout of its published tables, the
// published numbers beside which ours are printed, and how each of our cells is measured. It
// all lives in one YAML file per study (data/*.yaml, this package's own format); a test checks
// every carried number against the papers' files (../shared/data/papers). Expand turns a
// study into the runs to play for the models given; Compute fills the tables from the runs'
// match rows; Render prints them.
package studies

import (
	"embed"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed data/*.yaml
var files embed.FS

// Study is one seed study.
type Study struct {
	// Name: negotiationarena, coalition, deliberation or gametheory.
	Name string `yaml:"study"`
	// Paper is the papers' file the published numbers come from (../shared/data/papers).
	Paper string `yaml:"paper"`
	Title string `yaml:"title"`
	// Slots are the paper's models, in the order plain --model values fill them.
	Slots []string `yaml:"slots"`
	// ModelNames are, for a slot, the names the study's published runs give its model (as
	// their logs write them), so that imported runs find their slot.
	ModelNames map[string][]string `yaml:"model_names"`
	// Agent holds the settings of every language-model seat unless a seat says otherwise.
	Agent SeatSpec `yaml:"agent"`
	// Sets are named lists that runs expand over (see RunSpec.For).
	Sets map[string][]map[string]string `yaml:"sets"`
	// Runs are the set-ups to play.
	Runs []RunSpec `yaml:"runs"`
	// Tables are the published tables in the paper's layout.
	Tables []Table `yaml:"tables"`
	// NotReproduced lists the paper's tables reproduce cannot fill, and why.
	NotReproduced []Skipped `yaml:"not_reproduced"`
	// Notes are remarks printed under the study's tables.
	Notes []string `yaml:"notes"`
	// FaultGames says how the study counts a game an agent's failure ended (a default move
	// played for it ended the match): "counted" keeps it in every cell (deliberation: a failed
	// run, which its tables count); otherwise it is left out of the cells, since it measures no
	// decision of the model's, and the tables say how many.
	FaultGames string `yaml:"fault_games"`
}

// Skipped is a table that cannot be reproduced.
type Skipped struct {
	Table string `yaml:"table"`
	Why   string `yaml:"why"`
}

// SeatSpec is one seat of a run: a language model in a slot, or a fixed agent.
type SeatSpec struct {
	// Slot is the paper's model the seat plays (a language-model seat).
	Slot string `yaml:"slot"`
	// Agent is a fixed agent address (builtin:NAME?...), for a seat no model plays.
	Agent string `yaml:"agent"`
	// Language-model settings (builtin:llm settings); empty: the study's.
	Persona     string `yaml:"persona"`
	Target      string `yaml:"target"`
	Reasoning   string `yaml:"reasoning"`
	Style       string `yaml:"style"`
	Temperature string `yaml:"temperature"`
	MaxTokens   string `yaml:"max_tokens"`
}

// RunSpec is one set-up: a game, its parameters and seats, and matches per cell.
type RunSpec struct {
	// ID names the run; with For, {var} and {var.field} are replaced per expansion.
	ID string `yaml:"id"`
	// For expands the run over sets: variable name -> set name ("slots" is the study's
	// slots, each bound as {var}).
	For  map[string]string `yaml:"for"`
	Game string            `yaml:"game"`
	// Params are game parameters, as --param key=value.
	Params map[string]string `yaml:"params"`
	// Seats, in seat order; or Pairs: every ordered pair of distinct slots in two seats.
	Seats []SeatSpec `yaml:"seats"`
	Pairs bool       `yaml:"pairs"`
	// Games is the number of matches per seat assignment the paper played.
	Games int `yaml:"games"`
	// SeedsFrom, when set, gives match k the seed SeedsFrom+k (the paper fixed its seeds);
	// otherwise seeds derive from --seed as in tournaments.
	SeedsFrom uint64 `yaml:"seeds_from"`
	// Datapoints, for dealornodeal: "hardest" plays one match per datapoint of the seed's 50
	// hardest test lines that have an envy-free allocation (--dond-data).
	Datapoints string `yaml:"datapoints"`
}

// Table is a published table, in the paper's layout.
type Table struct {
	// ID is the paper's label, as in the papers' file (Table 5, Figure 3a (text)).
	ID      string `yaml:"id"`
	Caption string `yaml:"caption"`
	// RowKeys label the row key columns; Columns are the value columns.
	RowKeys []string `yaml:"row_keys"`
	Columns []Column `yaml:"columns"`
	Rows    []Row    `yaml:"rows"`
	// Cells says how each column is measured; {var} is replaced from the row's and the
	// column's vars.
	Cells map[string]Measure `yaml:"cells"`
	// NoModel marks a table computed from data alone.
	NoModel bool `yaml:"no_model"`
	// countFaults is the study's FaultGames == "counted", set by Load.
	countFaults bool
	// PerSlot marks a table with one row per slot (vars: model); a model the paper does not
	// have but imported runs do gets a row of its own, with no paper numbers.
	PerSlot bool `yaml:"per_slot"`
	// Notes are printed under the table.
	Notes []string `yaml:"notes"`
}

// Column is one value column.
type Column struct {
	Key   string            `yaml:"key"`
	Label string            `yaml:"label"`
	Group string            `yaml:"group"`
	Unit  string            `yaml:"unit"`
	Dec   *int              `yaml:"decimals"`
	Vars  map[string]string `yaml:"vars"`
	// SE prints our cell's standard error after it ("0.80 ±0.06"), where the statistic has one.
	SE bool `yaml:"se"`
}

// Row is one row: its key values as the paper prints them, the paper's cells, and vars for
// the measures.
type Row struct {
	Keys  []string          `yaml:"keys"`
	Paper map[string]any    `yaml:"paper"`
	Dec   *int              `yaml:"decimals"`
	Vars  map[string]string `yaml:"vars"`
	// Qualifier words bound a paper value ("about", "greater than"), by column.
	Qualifier map[string]string `yaml:"qualifier"`
}

// Measure is how one of our cells is computed.
type Measure struct {
	// Stat: mean (of Value over the matches), winrate (of Seat, decisive matches only),
	// share (of matches where Value > 0), spearman (of X and Y), gain (percent change of
	// this mean over Base's), min_mean (the smallest mean per label of seat By), binomial_p
	// (one-sided p-value of this share against Base's), sum, column_mean (of the column's
	// other rows), or a data-only
	// statistic: dealspace, dond_human, dond_best, dond_difficulty.
	Stat string `yaml:"stat"`
	// Run, or Runs pooled, whose matches count.
	Run  string   `yaml:"run"`
	Runs []string `yaml:"runs"`
	// Value is a metric value's name (a match's row: payoff, agreement, final_5way, ...);
	// Seat its seat ("" for the whole match).
	Value string `yaml:"value"`
	Seat  string `yaml:"seat"`
	// Where keeps matches whose seats hold these slots (seat index -> slot).
	Where map[string]string `yaml:"where"`
	// Agreed keeps matches that ended in agreement.
	Agreed bool `yaml:"agreed"`
	// Scale multiplies the result (100 for percent); 0 means 1.
	Scale float64 `yaml:"scale"`
	// Divide divides the value by a constant (e.g. the amount split) before Scale.
	Divide float64 `yaml:"divide"`
	// X and Y are the values a spearman correlates; Base the measure a gain is relative to.
	X    string   `yaml:"x"`
	Y    string   `yaml:"y"`
	Base *Measure `yaml:"base"`
	// Arg parametrises data-only statistics (a game, a difficulty, a field).
	Arg   string `yaml:"arg"`
	Field string `yaml:"field"`
	// Alt is another reading of the cell, printed on a line of its own under the row: the
	// value the study's own code computes where it departs from the definition, or the other
	// way round; AltNote says which and which one the paper prints.
	Alt     *Measure `yaml:"alt"`
	AltNote string   `yaml:"alt_note"`
	// AltShown says the paper prints the other reading, not ours.
	AltShown bool `yaml:"alt_shown"`
	// NoDealZero scores a value 0 in a match without a deal (a payoff as the paper defines it
	// where the platform logged holdings kept); ZeroIfEqual scores it 0 where it equals the
	// named whole-match value (holdings equal to those at the start score nothing).
	NoDealZero  bool   `yaml:"no_deal_zero"`
	ZeroIfEqual string `yaml:"zero_if_equal"`
	// Start names what each seat holds before the game (seat index -> whole-match value; a seat
	// not named holds nothing): a winrate then compares the seats' changes in holdings, not
	// their payoffs. TiesCount keeps ties in a winrate's denominator (a share of all games).
	Start     map[string]string `yaml:"start"`
	TiesCount bool              `yaml:"ties_count"`
	// By is the seat whose label groups the matches of a min_mean.
	By string `yaml:"by"`
	// DivideBy divides each value by the match's named whole-match value (a share of the total).
	DivideBy string `yaml:"divide_by"`
}

// Load returns the named study.
func Load(name string) (*Study, error) {
	b, err := files.ReadFile("data/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("studies: no study %q (studies: %s)", name, strings.Join(Names(), ", "))
	}
	var s Study
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("studies: %s: %w", name, err)
	}
	switch s.FaultGames {
	case "", "counted":
	default:
		return nil, fmt.Errorf("studies: %s: fault_games %q must be counted or left empty", name, s.FaultGames)
	}
	for i := range s.Tables {
		s.Tables[i].countFaults = s.FaultGames == "counted"
	}
	return &s, nil
}

// Names lists the studies.
func Names() []string {
	entries, _ := files.ReadDir("data")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// Run is one expanded run: a set-up with its variables filled in.
type Run struct {
	RunSpec
	// Vars are the values the run was expanded with.
	Vars map[string]string
}

// ExpandRuns returns every run of the study, For lists expanded in the order of their
// variable names.
func (s *Study) ExpandRuns() ([]Run, error) {
	var out []Run
	for _, r := range s.Runs {
		combos := []map[string]string{{}}
		vars := slices.Sorted(maps.Keys(r.For))
		for _, v := range vars {
			items, err := s.set(r.For[v])
			if err != nil {
				return nil, fmt.Errorf("studies: run %s: %w", r.ID, err)
			}
			var next []map[string]string
			for _, c := range combos {
				for _, it := range items {
					m := maps.Clone(c)
					for k, val := range it {
						if k == "" {
							m[v] = val
						} else {
							m[v+"."+k] = val
						}
					}
					next = append(next, m)
				}
			}
			combos = next
		}
		for _, c := range combos {
			out = append(out, Run{RunSpec: r.fill(c), Vars: c})
		}
	}
	seen := map[string]bool{}
	for _, r := range out {
		if seen[r.ID] {
			return nil, fmt.Errorf("studies: %s: two runs are named %s", s.Name, r.ID)
		}
		seen[r.ID] = true
	}
	return out, nil
}

func (s *Study) set(name string) ([]map[string]string, error) {
	if name == "slots" {
		out := make([]map[string]string, len(s.Slots))
		for i, sl := range s.Slots {
			out[i] = map[string]string{"": sl}
		}
		return out, nil
	}
	items, ok := s.Sets[name]
	if !ok {
		return nil, fmt.Errorf("no set %q", name)
	}
	return items, nil
}

// subst replaces {var} in text with vars' values.
func subst(text string, vars map[string]string) string {
	if !strings.Contains(text, "{") {
		return text
	}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		text = strings.ReplaceAll(text, "{"+k+"}", vars[k])
	}
	return text
}

func (r RunSpec) fill(vars map[string]string) RunSpec {
	out := r
	out.ID = subst(r.ID, vars)
	out.Game = subst(r.Game, vars)
	out.Params = map[string]string{}
	for k, v := range r.Params {
		out.Params[k] = subst(v, vars)
	}
	out.Seats = make([]SeatSpec, len(r.Seats))
	for i, st := range r.Seats {
		out.Seats[i] = SeatSpec{Slot: subst(st.Slot, vars), Agent: subst(st.Agent, vars), Persona: subst(st.Persona, vars),
			Target: subst(st.Target, vars), Reasoning: subst(st.Reasoning, vars), Style: subst(st.Style, vars),
			Temperature: subst(st.Temperature, vars), MaxTokens: subst(st.MaxTokens, vars)}
	}
	return out
}

// MeasureFor is how the cell of row r and column c is measured, its vars filled in.
func (t *Table) MeasureFor(r Row, c Column) (Measure, bool) { return t.measureFor(r, c) }

// measureFor is the measure of column c in row r, with their vars filled in.
func (t *Table) measureFor(r Row, c Column) (Measure, bool) {
	m, ok := t.Cells[c.Key]
	if !ok {
		m, ok = t.Cells["*"]
	}
	if !ok {
		return Measure{}, false
	}
	vars := maps.Clone(r.Vars)
	if vars == nil {
		vars = map[string]string{}
	}
	maps.Copy(vars, c.Vars)
	vars["column"] = c.Key
	m = m.fill(vars)
	if m.Stat == "column_mean" {
		m.Run, m.Runs = "", nil // it reads the other rows, not runs
	}
	return m, true
}

func (m Measure) fill(vars map[string]string) Measure {
	out := m
	out.Run = subst(m.Run, vars)
	out.Runs = make([]string, len(m.Runs))
	for i, r := range m.Runs {
		out.Runs[i] = subst(r, vars)
	}
	out.Value, out.Seat, out.X, out.Y = subst(m.Value, vars), subst(m.Seat, vars), subst(m.X, vars), subst(m.Y, vars)
	out.Arg, out.Field, out.Stat = subst(m.Arg, vars), subst(m.Field, vars), subst(m.Stat, vars)
	out.By, out.ZeroIfEqual = subst(m.By, vars), subst(m.ZeroIfEqual, vars)
	if m.Where != nil {
		out.Where = map[string]string{}
		for k, v := range m.Where {
			out.Where[k] = subst(v, vars)
		}
	}
	if m.Base != nil {
		b := m.Base.fill(vars)
		out.Base = &b
	}
	if m.Alt != nil {
		a := m.Alt.fill(vars)
		out.Alt = &a
	}
	return out
}

// decimals is a cell's printed precision: the row's, else the column's, else 2.
func decimals(r Row, c Column) int {
	switch {
	case r.Dec != nil:
		return *r.Dec
	case c.Dec != nil:
		return *c.Dec
	}
	return 2
}

// Select returns the tables whose id matches one of want ("5", "Table 5", "figure 3a"), or
// every table when want is empty; an id matching none is an error.
func (s *Study) Select(want []string) ([]*Table, error) {
	if len(want) == 0 {
		out := make([]*Table, len(s.Tables))
		for i := range s.Tables {
			out[i] = &s.Tables[i]
		}
		return out, nil
	}
	var out []*Table
	for _, w := range want {
		found := false
		for i := range s.Tables {
			t := &s.Tables[i]
			if tableMatches(t.ID, w) && !slices.Contains(out, t) {
				out = append(out, t)
				found = true
			}
		}
		if !found {
			ids := make([]string, len(s.Tables))
			for i, t := range s.Tables {
				ids[i] = t.ID
			}
			return nil, fmt.Errorf("studies: %s has no table %q (tables: %s)", s.Name, w, strings.Join(ids, "; "))
		}
	}
	return out, nil
}

func tableMatches(id, want string) bool {
	id, want = strings.ToLower(id), strings.ToLower(strings.TrimSpace(want))
	if id == want || strings.TrimPrefix(id, "table ") == want {
		return true
	}
	short, _, _ := strings.Cut(id, " (")
	return short == want || strings.TrimPrefix(short, "table ") == want
}

// RunsOf lists the ids of the runs the tables' cells read.
func RunsOf(tables []*Table) map[string]bool {
	out := map[string]bool{}
	for _, t := range tables {
		for _, r := range t.Rows {
			for _, c := range t.Columns {
				m, ok := t.measureFor(r, c)
				if !ok {
					continue
				}
				for _, id := range m.runIDs() {
					out[id] = true
				}
			}
		}
	}
	return out
}

func (m Measure) runIDs() []string {
	var out []string
	if m.Run != "" {
		out = append(out, m.Run)
	}
	out = append(out, m.Runs...)
	if m.Base != nil {
		out = append(out, m.Base.runIDs()...)
	}
	if m.Alt != nil {
		out = append(out, m.Alt.runIDs()...)
	}
	return out
}

// SlotOfModel returns the slot whose model the published runs call model, comparing names
// case-insensitively; ok is false for a model the paper does not have.
func (s *Study) SlotOfModel(model string) (string, bool) {
	for _, slot := range s.Slots {
		if strings.EqualFold(slot, model) {
			return slot, true
		}
		for _, name := range s.ModelNames[slot] {
			if strings.EqualFold(name, model) {
				return slot, true
			}
		}
	}
	return "", false
}

// WithSlots returns a copy of the study with more slots, models the paper does not have:
// runs expand over them too, and every PerSlot table gets a row for each, with no paper
// numbers. The study itself is not changed.
func (s *Study) WithSlots(extra []string) *Study {
	out := *s
	out.Slots = slices.Clone(s.Slots)
	out.Tables = slices.Clone(s.Tables)
	for _, slot := range extra {
		if slices.Contains(out.Slots, slot) {
			continue
		}
		out.Slots = append(out.Slots, slot)
		for i := range out.Tables {
			t := &out.Tables[i]
			if !t.PerSlot || len(t.Rows) == 0 {
				continue
			}
			t.Rows = append(slices.Clone(t.Rows), Row{Keys: []string{slot}, Vars: map[string]string{"model": slot}, Dec: t.Rows[0].Dec})
		}
	}
	return &out
}
