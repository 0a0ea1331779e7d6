package analytics

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// entrantLabels is the entrant label of each seat of r.
func entrantLabels(spec *tournamentv1.TournamentSpec, r tournament.Record) []string {
	labels := make([]string, len(r.Scheduled.GetEntrants()))
	for i, e := range r.Scheduled.GetEntrants() {
		if int(e) < len(spec.GetEntrants()) {
			labels[i] = spec.GetEntrants()[e].GetLabel()
		}
	}
	return labels
}

// TournamentRows reads a tournament's matches into metrics rows, with the family values of reg (nil:
// the common values only), in schedule order; a match not yet ended is left out. The
// returned function names the agent of a seat by its entrant label (for tables.Options.Agent).
func TournamentRows(ctx context.Context, js jetstream.JetStream, spec *tournamentv1.TournamentSpec, reg *metrics.Registry) ([]metrics.Row, func(metrics.Row, int) string, error) {
	var rows []metrics.Row
	labels := make(map[string][]string)
	err := tournament.EachRecord(ctx, js, spec, func(rec tournament.Record) error {
		labels[rec.MatchID] = entrantLabels(spec, rec)
		if len(rec.Events) == 0 || rec.Events[len(rec.Events)-1].GetMatchEnded() == nil {
			return nil
		}
		row, err := metrics.NewRow(rec.Events, reg)
		if err != nil {
			return err
		}
		rows = append(rows, row)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	label := func(r metrics.Row, seat int) string {
		if l := labels[r.MatchID]; seat < len(l) && l[seat] != "" {
			return l[seat]
		}
		return r.Seats[seat].AgentKey()
	}
	return rows, label, nil
}
