package reproduce

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/nats-io/nats.go/jetstream"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/studies"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Matcher files a study's imported matches under the study's set-ups, reading their records
// only (never where the runs came from).
type Matcher interface {
	// Models names the models of a match's seats, as the study's slots would (a slot, or the
	// model's own name for one the paper does not have).
	Models(started *eventsv1.MatchStarted) []string
	// Runs returns the ids of the study's runs the match played (several when set-ups of
	// different tables coincide), or says why it played none of them.
	Runs(started *eventsv1.MatchStarted) (runs []string, why string)
}

// Preparer is implemented by Matchers that look at every match read before filing any: what a
// set-up is may show only across matches (values drawn per match vary within a tournament).
type Preparer interface {
	Prepare(started []*eventsv1.MatchStarted)
}

// MatcherFunc builds a study's Matcher for the study as extended with the runs' own models.
type MatcherFunc func(study *studies.Study, reg *games.Registry) (Matcher, error)

// Matchers are the studies whose imported runs reproduce reads, by study name.
var matchers = map[string]MatcherFunc{
	"deliberation":     newDeliberationMatcher,
	"negotiationarena": newArenaMatcher,
}

// Imported is what the store holds of a study's imported runs, filed under its set-ups.
type Imported struct {
	// Study is the study with a slot for each model of the runs the paper does not have.
	Study *studies.Study
	// Results are the matches' rows by run id.
	Results studies.Results
	// Tournaments are the tournaments read; Matches their ended matches, Void those void.
	Tournaments []string
	Matches     int
	Void        int
	// Unfiled counts the matches that fit none of the study's set-ups, by why.
	Unfiled map[string]int
	// Models are the slots of the models the runs have, in the study's order.
	Models []string
	// sources counts, per set-up, its matches by tournament.
	sources map[string]map[string]int
}

// ReadImported reads every ended match of the stored tournaments whose id is one of names or
// starts with one of them and "-", computes its row with reg's metrics, and files it under the
// study's runs it played. A model the paper does not have gets a slot of its own (and a row in the tables
// with a row per model).
func ReadImported(ctx context.Context, js jetstream.JetStream, study *studies.Study, names []string, games *games.Registry, reg *metrics.Registry) (*Imported, error) {
	build, ok := matchers[study.Name]
	if !ok {
		return nil, fmt.Errorf("%w: parley cannot file imported runs of %s under its set-ups yet (it can for: %s)", ErrOptions, study.Name, strings.Join(slices.Sorted(maps.Keys(matchers)), ", "))
	}
	var ids []string
	err := tournament.EachSpec(ctx, js, func(spec *tournamentv1.TournamentSpec) {
		id := spec.GetTournamentId()
		if slices.ContainsFunc(names, func(n string) bool { return id == n || strings.HasPrefix(id, n+"-") }) {
			ids = append(ids, id)
		}
	})
	if err != nil {
		return nil, err
	}
	// EachSpec gives the stored message alone: a large import's schedule is stored in parts,
	// which LoadSpec puts back together (without them its matches would be read as none).
	specs := make([]*tournamentv1.TournamentSpec, 0, len(ids))
	for _, id := range ids {
		spec, err := tournament.LoadSpec(ctx, js, id)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("%w: the store holds no tournament named %s nor any whose id starts with one of them and \"-\" (import the runs first: parley import %s PATH)", ErrOptions, strings.Join(names, ", "), study.Name)
	}
	sort.Slice(specs, func(i, j int) bool { return specs[i].GetTournamentId() < specs[j].GetTournamentId() })
	type read struct {
		started *eventsv1.MatchStarted
		row     metrics.Row
	}
	var all []read
	out := &Imported{Unfiled: map[string]int{}, sources: map[string]map[string]int{}}
	// One read of the match stream for all the tournaments: an import stores its specs
	// first, so each tournament's own read would cover every match imported with it. The
	// matches are then taken tournament by tournament, each in schedule order. The texts
	// no metric of their games reads (every answer is kept whole twice) are not decoded.
	byTournament := map[string][]read{}
	var played []string
	for _, spec := range specs {
		played = append(played, spec.GetGame())
	}
	leave := bus.WithoutFields(reg.Texts(played...).Unread()...)
	err = tournament.EachRecordOf(ctx, js, specs, func(rec tournament.Record) error {
		evs := rec.Events
		if len(evs) == 0 || evs[len(evs)-1].GetMatchEnded() == nil || rec.Interrupted {
			return nil
		}
		row, err := metrics.NewRow(evs, reg)
		if err != nil {
			return fmt.Errorf("match %s: %w", rec.MatchID, err)
		}
		byTournament[rec.TournamentID] = append(byTournament[rec.TournamentID], read{evs[0].GetMatchStarted(), row})
		return nil
	}, leave)
	if err != nil {
		return nil, err
	}
	for _, spec := range specs {
		out.Tournaments = append(out.Tournaments, spec.GetTournamentId())
		all = append(all, byTournament[spec.GetTournamentId()]...)
	}
	// Models the paper does not have become slots of their own, so that their runs expand.
	probe, err := build(study, games)
	if err != nil {
		return nil, err
	}
	var extra []string
	present := map[string]bool{}
	for _, r := range all {
		for _, m := range probe.Models(r.started) {
			slot, known := study.SlotOfModel(m)
			if !known {
				slot = m
				if !slices.Contains(extra, m) {
					extra = append(extra, m)
				}
			}
			present[slot] = true
		}
	}
	sort.Strings(extra)
	out.Study = study.WithSlots(extra)
	for _, slot := range out.Study.Slots {
		if present[slot] {
			out.Models = append(out.Models, slot)
		}
	}
	matcher, err := build(out.Study, games)
	if err != nil {
		return nil, err
	}
	if p, ok := matcher.(Preparer); ok {
		starts := make([]*eventsv1.MatchStarted, len(all))
		for i, r := range all {
			starts[i] = r.started
		}
		p.Prepare(starts)
	}
	out.Results = studies.Results{}
	for _, r := range all {
		out.Matches++
		if r.row.Void() {
			out.Void++
		}
		runs, why := matcher.Runs(r.started)
		if len(runs) == 0 {
			out.Unfiled[why]++
			continue
		}
		// The tables name seats by the study's slots ("GPT-4/desperate"), as the runs it plays.
		for i, s := range r.row.Seats {
			model, rest, _ := strings.Cut(s.Label, "/")
			if slot, ok := out.Study.SlotOfModel(model); ok {
				r.row.Seats[i].Label = strings.TrimSuffix(slot+"/"+rest, "/")
			}
		}
		for _, id := range runs {
			out.Results[id] = append(out.Results[id], r.row)
			if out.sources[id] == nil {
				out.sources[id] = map[string]int{}
			}
			out.sources[id][r.row.TournamentID]++
		}
	}
	return out, nil
}

// WriteSummary says what was read and what fits no set-up.
func (im *Imported) WriteSummary(w io.Writer) {
	filed := 0
	for _, rows := range im.Results {
		filed += len(rows)
	}
	fmt.Fprintf(w, "from the imported runs: %d %s in %d %s, %d void; %d set-ups of the study found",
		im.Matches, plural(im.Matches, "match", "matches"), len(im.Tournaments), plural(len(im.Tournaments), "tournament", "tournaments"), im.Void, len(im.Results))
	if len(im.Models) > 0 {
		fmt.Fprintf(w, "; models: %s", strings.Join(im.Models, ", "))
	}
	fmt.Fprintln(w)
	// A set-up fed by several tournaments may mix experiments of the same content (a surplus
	// run, another experiment's games): say so, so that the runs read can be narrowed.
	for _, id := range slices.Sorted(maps.Keys(im.sources)) {
		if from := im.sources[id]; len(from) > 1 {
			var parts []string
			for _, tid := range slices.Sorted(maps.Keys(from)) {
				parts = append(parts, fmt.Sprintf("%s (%d)", tid, from[tid]))
			}
			fmt.Fprintf(w, "  set-up %s has matches of %d tournaments: %s\n", id, len(from), strings.Join(parts, ", "))
		}
	}
	for _, why := range slices.Sorted(maps.Keys(im.Unfiled)) {
		n := im.Unfiled[why]
		fmt.Fprintf(w, "  %d %s in no table: %s\n", n, plural(n, "match", "matches"), why)
	}
	fmt.Fprintln(w)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// WriteTables prints the study's tables named by want (all when empty) from the imported
// runs, then what cannot be reproduced and the study's notes.
func (im *Imported) WriteTables(w io.Writer, want []string, opts studies.Options) error {
	tables, err := im.Study.Select(want)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrOptions, err)
	}
	if err := studies.Render(w, im.Study, studies.Compute(tables, im.Results, &Data{}, nil, opts)); err != nil {
		return err
	}
	studies.WriteFallbacks(w, im.Results, nil)
	for _, s := range im.Study.NotReproduced {
		fmt.Fprintf(w, "not reproduced: %s: %s\n", s.Table, s.Why)
	}
	for _, n := range im.Study.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	return nil
}
