package reproduce

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/parley-arena/parley/agents/llm"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/studies"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// Executor plays a set-up's tournament to its end and returns its finished matches' rows;
// done is called once per match that ends. A tournament already played in part is resumed.
type Executor interface {
	Hold(ctx context.Context, spec *tournamentv1.TournamentSpec, params func(uint64) (*matchv1.GameParams, error), done func()) ([]metrics.Row, error)
}

// Tournaments plays set-ups as tournaments through the NATS work queue that referee workers
// share (services/tournament): resumable by id, played by any referee on the bus.
type Tournaments struct {
	Bus *bus.Bus
	// Matches prepares each match as it is requested (see tournament.HoldConfig). Required.
	Matches     *launch.Preparer
	Concurrency int
	// Endpoints stops the run after its Max matches in a row, across set-ups, voided by a
	// failing model endpoint (tournament.ErrEndpointFailing); nil: never.
	Endpoints *tournament.EndpointStreak
}

// Hold implements Executor. A set-up resumed plays again the matches a failing endpoint
// voided, and may be resumed against another endpoint of the same models (llm.Identity).
func (t Tournaments) Hold(ctx context.Context, spec *tournamentv1.TournamentSpec, params func(uint64) (*matchv1.GameParams, error), done func()) ([]metrics.Row, error) {
	err := tournament.Hold(ctx, t.Bus, spec, tournament.HoldConfig{Concurrency: t.Concurrency, Matches: t.Matches, Params: params,
		Progress: func(tournament.Progress) { done() }, Endpoints: t.Endpoints,
		ReplayProviderVoids: true, AgentIdentity: llm.Identity})
	if err != nil {
		return nil, err
	}
	rows, _, err := analytics.TournamentRows(ctx, t.Bus.JetStream(), spec, standard.New())
	return rows, err
}

// Execute plays every set-up of the plan, in order, and returns their rows by run id.
func (p *Plan) Execute(ctx context.Context, ex Executor, done func()) (studies.Results, error) {
	res := studies.Results{}
	for _, r := range p.Runs {
		rows, err := ex.Hold(ctx, r.Spec, r.Params, done)
		if err != nil {
			return nil, fmt.Errorf("set-up %s (tournament %s): %w", r.Run.ID, r.Spec.GetTournamentId(), err)
		}
		res[r.Run.ID] = rows
	}
	return res, nil
}

// WriteHeader prints what is reproduced with which models: those of the paper's models that
// the chosen tables use.
func (p *Plan) WriteHeader(w io.Writer) {
	fmt.Fprintf(w, "%s: %s\n", p.Study.Name, p.Study.Title)
	var slots []string
	for _, s := range p.Used {
		m := p.Slots[s]
		if m == "" {
			m = "(none)"
		}
		slots = append(slots, s+" = "+m)
	}
	if len(slots) == 0 {
		slots = []string{"none (the tables chosen need no model)"}
	}
	fmt.Fprintf(w, "models: %s\n", strings.Join(slots, ", "))
	matches, calls, tokens, cost := p.Totals()
	fmt.Fprintf(w, "plan: %d set-ups, %d matches, about %d model calls and %d tokens (%s)\n\n", len(p.Runs), matches, calls, tokens, Money(cost))
}

// WriteDryRun prints the plan: per table and in all, matches, model calls, tokens and cost,
// what the token budgets allow, and what cannot be played.
func (p *Plan) WriteDryRun(w io.Writer) error {
	p.WriteHeader(w)
	byRun := map[string]*Planned{}
	budgeted := false
	for _, r := range p.Runs {
		byRun[r.Run.ID] = r
		budgeted = budgeted || r.Spec.GetLimits().GetTokenBudget() > 0
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	head := "table\tset-ups\tmatches\tmodel calls\ttokens\tcost\t"
	if budgeted {
		head += "budgets allow\tcut short\t"
	}
	fmt.Fprintln(tw, head)
	counted := map[string]bool{}
	row := func(name, what string, runs []*Planned) {
		var matches, cut int
		var calls, tokens, cost, allowed int64
		for _, r := range runs {
			matches += len(r.Spec.GetMatches())
			calls, tokens, cost = calls+r.Calls, tokens+r.Tokens, cost+r.Cost
			a, c := r.allowed()
			allowed, cut = allowed+a, cut+c
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t", name, what, matches, calls, tokens, Money(cost))
		if budgeted {
			fmt.Fprintf(tw, "%d\t%d\t", allowed, cut)
		}
		fmt.Fprintln(tw)
	}
	for _, t := range p.Tables {
		ids := studies.RunsOf([]*studies.Table{t})
		n := 0
		var runs []*Planned
		for id := range ids {
			r, ok := byRun[id]
			if !ok {
				continue
			}
			n++
			if counted[id] {
				continue // shared with an earlier table
			}
			counted[id] = true
			runs = append(runs, r)
		}
		what := fmt.Sprintf("%d", n)
		if t.NoModel {
			what = "no model"
		}
		row(t.ID, what, runs)
	}
	row("total", fmt.Sprint(len(p.Runs)), p.Runs)
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "Estimates: one call per language-model move (corrections not counted), each the agent's own prompt for the first move, grown by half for the history, plus the completion cap (300 tokens when not set); cost by the price table. Set-ups already played in part cost less.")
	if budgeted {
		fmt.Fprintln(w, "Budgets: \"budgets allow\" is the estimate with each match held to its token budget (a set-up's budget split evenly over its matches); \"cut short\" counts the matches whose estimate passes their budget: a budget would end them early, void, and their cells would lack them.")
	}
	p.writeMissing(w)
	return nil
}

// allowed is the set-up's token estimate held to its matches' budgets, and how many matches
// the estimate says a budget would cut short (every match of a set-up is estimated alike).
func (r *Planned) allowed() (tokens int64, cut int) {
	matches := int64(len(r.Spec.GetMatches()))
	b := r.Spec.GetLimits().GetTokenBudget()
	if b <= 0 || matches == 0 || r.Tokens <= b*matches {
		return r.Tokens, 0
	}
	perMatch := r.Tokens / matches
	if perMatch > b {
		cut = int(matches)
	}
	return b * matches, cut
}

func (p *Plan) writeMissing(w io.Writer) {
	why := map[string][]string{}
	for id, reason := range p.Missing {
		why[reason] = append(why[reason], id)
	}
	reasons := make([]string, 0, len(why))
	for r := range why {
		reasons = append(reasons, r)
	}
	sort.Strings(reasons)
	for _, r := range reasons {
		fmt.Fprintf(w, "not played (%d set-ups): %s\n", len(why[r]), r)
	}
}

// WriteTables prints the tables, then the fallbacks of each model, what cannot be reproduced
// and the study's notes.
func (p *Plan) WriteTables(w io.Writer, res studies.Results) error {
	tables := studies.Compute(p.Tables, res, p.Data, p.Missing, studies.Options{ExcludeFallbackGames: p.ExcludeFallbackGames})
	if err := studies.Render(w, p.Study, tables); err != nil {
		return err
	}
	studies.WriteFallbacks(w, res, func(slot string) string {
		if m := p.Slots[slot]; m != "" && m != slot {
			return slot + " (" + m + ")"
		}
		return slot
	})
	for _, s := range p.Study.NotReproduced {
		fmt.Fprintf(w, "not reproduced: %s: %s\n", s.Table, s.Why)
	}
	for _, n := range p.Study.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}
