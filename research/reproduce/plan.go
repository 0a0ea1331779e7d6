// Package reproduce plays a seed study's set-ups with the models a person gives and fills its
// tables: Plan expands the study into tournaments (one per set-up, with seeds, seats and
// budgets fixed up front, so a run stopped half-way resumes by its id), estimates matches,
// model calls, tokens and cost, and Execute plays them through an Executor (the tournament
// work queue by default) and reads the match rows back.
package reproduce

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/llm"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/tokenbudget"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/studies"
)

// ErrOptions is wrapped by errors about the options.
var ErrOptions = errors.New("reproduce")

// Options say what to reproduce and with which models.
type Options struct {
	// Models fill the study's slots: "SLOT=MODEL" names one; plain names fill the slots in
	// order; a single plain name fills every slot.
	Models []string
	// BaseURL of the OpenAI-compatible API, and the variable holding its key.
	BaseURL, APIKeyEnv string
	// CacheDir for replies ("" with NoCache: none); Prices is a price table file ("": the
	// shipped one).
	CacheDir string
	NoCache  bool
	Prices   string
	// Games caps the matches per cell (0: the paper's).
	Games int
	// Tables picks tables by id (empty: all).
	Tables []string
	// Seed the match seeds derive from (set-ups with fixed seeds keep theirs).
	Seed uint64
	// ID names the run; its tournaments are ID-<set-up>. The same ID resumes.
	ID string
	// TokenBudget per match and TotalBudget per set-up (split over its matches); 0: none.
	TokenBudget, TotalBudget int64
	// MoveTimeout is the time a model has for each answer (0: DefaultMoveTimeout).
	MoveTimeout time.Duration
	// ExcludeFallbackGames leaves out of the tables every game in which a move was a
	// fallback (by default only the games a fallback ended are left out).
	ExcludeFallbackGames bool
	// DondData is the folder of the Deal-or-No-Deal corpus (sampled_50_deal_no_deal.txt,
	// test.txt); "" leaves its tables empty.
	DondData string
}

// DefaultMoveTimeout is a model's time for each answer unless Options say otherwise: long
// enough for a hosted model under load or a local one on a small machine (the referee's
// default, 10 s, voids every match of a model that takes 12 s a reply).
const DefaultMoveTimeout = 2 * time.Minute

// Planned is one set-up to play: its tournament and estimates.
type Planned struct {
	Run  studies.Run
	Spec *tournamentv1.TournamentSpec
	// Params returns a match's parameters from its seed.
	Params func(seed uint64) (*matchv1.GameParams, error)
	// Calls, Tokens and Cost (micro-dollars) are estimates for the whole set-up.
	Calls, Tokens, Cost int64
}

// Plan is a study expanded for the given models.
type Plan struct {
	Study  *studies.Study
	Tables []*studies.Table
	Runs   []*Planned
	// Missing says why a run the tables read is not played (no model for a slot).
	Missing map[string]string
	// Slots maps each slot to its model ("" without one).
	Slots map[string]string
	// Used are the slots the chosen tables' set-ups seat, in the study's order.
	Used []string
	Data *Data
	// ExcludeFallbackGames is Options'.
	ExcludeFallbackGames bool
}

// NewPlan expands study for o. reg resolves games.
func NewPlan(study *studies.Study, o Options, reg *games.Registry) (*Plan, error) {
	tables, err := study.Select(o.Tables)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrOptions, err)
	}
	slots, err := assignSlots(study.Slots, o.Models)
	if err != nil {
		return nil, err
	}
	if o.Games < 0 {
		return nil, fmt.Errorf("%w: --games must be 0 (the paper's) or more", ErrOptions)
	}
	p := &Plan{Study: study, Tables: tables, Missing: map[string]string{}, Slots: slots, Data: &Data{Dir: o.DondData},
		ExcludeFallbackGames: o.ExcludeFallbackGames}
	runs, err := study.ExpandRuns()
	if err != nil {
		return nil, err
	}
	needed := studies.RunsOf(tables)
	prices, err := llm.LoadPrices(o.Prices)
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, r := range runs {
		if !needed[r.ID] {
			continue
		}
		for _, s := range r.Seats {
			used[s.Slot] = used[s.Slot] || s.Slot != ""
		}
		if r.Pairs {
			for _, s := range study.Slots {
				used[s] = true
			}
		}
	}
	for _, s := range study.Slots {
		if used[s] {
			p.Used = append(p.Used, s)
		}
	}
	for _, r := range runs {
		if !needed[r.ID] {
			continue
		}
		if why := p.unplayable(r, slots, o); why != "" {
			p.Missing[r.ID] = why
			continue
		}
		pl, err := p.plan(r, o, reg, prices)
		if err != nil {
			return nil, fmt.Errorf("reproduce: %s: set-up %s: %w", study.Name, r.ID, err)
		}
		p.Runs = append(p.Runs, pl)
	}
	return p, nil
}

// assignSlots maps the study's slots to models.
func assignSlots(slots, models []string) (map[string]string, error) {
	out := map[string]string{}
	for _, s := range slots {
		out[s] = ""
	}
	var plain []string
	for _, m := range models {
		if slot, model, ok := strings.Cut(m, "="); ok {
			if _, known := out[slot]; !known {
				return nil, fmt.Errorf("%w: --model %s: the study has no model %q (its models: %s)", ErrOptions, m, slot, strings.Join(slots, ", "))
			}
			out[slot] = model
			continue
		}
		plain = append(plain, m)
	}
	switch {
	case len(plain) == 1 && len(models) == 1:
		for _, s := range slots {
			out[s] = plain[0]
		}
	case len(plain) > len(slots):
		return nil, fmt.Errorf("%w: %d models for %d places (%s)", ErrOptions, len(plain), len(slots), strings.Join(slots, ", "))
	default:
		for i, m := range plain {
			out[slots[i]] = m
		}
	}
	return out, nil
}

// unplayable says why r cannot be played, or "".
func (p *Plan) unplayable(r studies.Run, slots map[string]string, o Options) string {
	seats := r.Seats
	for _, s := range seats {
		if s.Slot != "" && slots[s.Slot] == "" {
			return "no model for " + s.Slot + " (--model " + s.Slot + "=MODEL)"
		}
	}
	if r.Pairs && len(p.pairSlots()) < 2 {
		return "needs at least two of the study's models (--model SLOT=MODEL)"
	}
	if (r.Datapoints != "") && o.DondData == "" {
		return "needs the Deal-or-No-Deal corpus (--dond-data DIR)"
	}
	if (len(seats) > 0 || r.Pairs) && o.BaseURL == "" && p.needsModel(r) {
		return "needs a model endpoint (--base-url)"
	}
	return ""
}

func (p *Plan) needsModel(r studies.Run) bool {
	return r.Pairs || slices.ContainsFunc(r.Seats, func(s studies.SeatSpec) bool { return s.Slot != "" })
}

// pairSlots are the slots with a model, in the study's order.
func (p *Plan) pairSlots() []string {
	var out []string
	for _, s := range p.Study.Slots {
		if p.Slots[s] != "" {
			out = append(out, s)
		}
	}
	return out
}

// address is a seat's agent address and label.
func (p *Plan) address(s studies.SeatSpec, o Options) (addr, label string) {
	if s.Agent != "" {
		return s.Agent, strings.TrimPrefix(s.Agent, "builtin:")
	}
	def := p.Study.Agent
	pick := func(v, d string) string {
		if v != "" {
			return v
		}
		return d
	}
	q := url.Values{"model": {p.Slots[s.Slot]}, "base_url": {o.BaseURL}}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("temperature", pick(s.Temperature, def.Temperature))
	set("max_tokens", pick(s.MaxTokens, def.MaxTokens))
	set("style", pick(s.Style, def.Style))
	set("reasoning", pick(s.Reasoning, def.Reasoning))
	set("persona", s.Persona)
	set("target", s.Target)
	set("api_key_env", o.APIKeyEnv)
	set("prices", o.Prices)
	if o.NoCache {
		q.Set("no_cache", "true")
	} else {
		set("cache", o.CacheDir)
	}
	label = s.Slot
	for _, extra := range []string{s.Persona, s.Reasoning, s.Temperature} {
		if extra != "" {
			label += "/" + extra
		}
	}
	return "builtin:llm?" + q.Encode(), label
}

// plan lays out one set-up as a tournament.
func (p *Plan) plan(r studies.Run, o Options, reg *games.Registry, prices llm.Prices) (*Planned, error) {
	game, err := reg.Lookup(r.Game)
	if err != nil {
		return nil, err
	}
	var kvs []string
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		kvs = append(kvs, k+"="+r.Params[k])
	}
	base, err := games.ParseParams(r.Game, kvs)
	if err != nil {
		return nil, err
	}
	var points []int // 1-based datapoint indexes, for corpus set-ups
	corpusPath := ""
	if r.Datapoints != "" {
		corpusPath = filepath.Join(o.DondData, hardestFile)
		if points, err = p.Data.hardestIndexes(); err != nil {
			return nil, err
		}
	}
	paramsOf := func(seed uint64) (*matchv1.GameParams, error) {
		gp := proto.CloneOf(base)
		if corpusPath != "" {
			k := int(seed) - 1
			if k < 0 || k >= len(points) {
				return nil, fmt.Errorf("no datapoint for seed %d", seed)
			}
			gp, err = games.ParseParams(r.Game, append(slices.Clone(kvs), "corpus="+corpusPath, "datapoint="+strconv.Itoa(points[k])))
			if err != nil {
				return nil, err
			}
		}
		if l, ok := game.(games.Loader); ok {
			if gp, err = l.Load(gp, seed, os.ReadFile); err != nil {
				return nil, err
			}
		}
		return game.Resolve(gp)
	}
	first := uint64(1)
	if corpusPath == "" {
		first = tournament.MatchSeed(o.Seed, 0, 0)
	}
	resolved, err := paramsOf(first)
	if err != nil {
		return nil, err
	}
	seatNames, _ := games.Seats(game, resolved)

	// Entrants and seat assignments.
	var entrants []*tournamentv1.Entrant
	entrant := func(addr, label string) int32 {
		for i, e := range entrants {
			if e.GetLabel() == label && e.GetAddress() == addr {
				return int32(i)
			}
		}
		for _, e := range entrants {
			if e.GetLabel() == label {
				label += "#" + strconv.Itoa(len(entrants))
			}
		}
		entrants = append(entrants, &tournamentv1.Entrant{Label: label, Address: addr})
		return int32(len(entrants) - 1)
	}
	var assignments [][]int32
	if r.Pairs {
		ps := p.pairSlots()
		idx := make([]int32, len(ps))
		for i, s := range ps {
			idx[i] = entrant(p.address(studies.SeatSpec{Slot: s}, o))
		}
		for i := range ps {
			for j := range ps {
				if i != j {
					assignments = append(assignments, []int32{idx[i], idx[j]})
				}
			}
		}
	} else {
		if len(r.Seats) != len(seatNames) {
			return nil, fmt.Errorf("%d seats given, %s has %d", len(r.Seats), r.Game, len(seatNames))
		}
		a := make([]int32, len(r.Seats))
		for i, s := range r.Seats {
			a[i] = entrant(p.address(s, o))
		}
		assignments = [][]int32{a}
	}
	n := r.Games
	if corpusPath != "" {
		n = len(points)
	}
	if o.Games > 0 {
		n = min(n, o.Games)
	}
	tid := tournamentID(o.ID, r.ID)
	tag := tournament.SeedTag(o.Seed) // another --seed under the same --id: other match ids
	spec := &tournamentv1.TournamentSpec{
		TournamentId: tid, Game: r.Game, Params: resolved, Entrants: entrants,
		GamesPerAssignment: uint32(n), Seed: o.Seed, AssignmentsPossible: uint64(len(assignments)),
		// The studies told no model who its opponent was.
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(cmp.Or(o.MoveTimeout, DefaultMoveTimeout)), ConcealAgents: true},
	}
	for g := range n {
		seed := tournament.MatchSeed(o.Seed, 0, g)
		switch {
		case corpusPath != "":
			seed = uint64(g + 1)
		case r.SeedsFrom > 0:
			seed = r.SeedsFrom + uint64(g)
		}
		for a, who := range assignments {
			spec.Matches = append(spec.Matches, &tournamentv1.ScheduledMatch{
				MatchId: fmt.Sprintf("%s-%s-a%02d-g%03d", tid, tag, a, g), Entrants: who, Seed: seed, Assignment: uint32(a), GameIndex: uint32(g),
			})
		}
	}
	if spec.Limits.TokenBudget, err = tokenbudget.PerMatch(o.TokenBudget, o.TotalBudget, len(spec.Matches)); err != nil {
		return nil, err
	}
	pl := &Planned{Run: r, Spec: spec, Params: paramsOf}
	if err := p.estimate(pl, game, resolved, first, prices); err != nil {
		return nil, err
	}
	return pl, nil
}

// tournamentID names a set-up's tournament: the run's id, then the set-up's in id characters,
// shortened with a hash when too long.
func tournamentID(id, run string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(run) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
		case c == '.':
		default:
			if s := b.String(); s != "" && !strings.HasSuffix(s, "-") {
				b.WriteByte('-')
			}
		}
	}
	out := id + "-" + strings.Trim(b.String(), "-")
	if len(out) > bus.MaxMatchIDLen-24 {
		sum := sha256.Sum256([]byte(run))
		out = out[:bus.MaxMatchIDLen-24-9] + "-" + hex.EncodeToString(sum[:4])
	}
	return out
}

// Totals sums the estimates.
func (p *Plan) Totals() (matches int, calls, tokens, cost int64) {
	for _, r := range p.Runs {
		matches += len(r.Spec.GetMatches())
		calls += r.Calls
		tokens += r.Tokens
		cost += r.Cost
	}
	return
}
