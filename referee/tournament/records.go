package tournament

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/queue"
)

// Record is one match of a tournament as stored.
type Record struct {
	// TournamentID is the tournament whose schedule holds the match.
	TournamentID string
	// Scheduled is the scheduled match it plays.
	Scheduled *tournamentv1.ScheduledMatch
	// MatchID is the id it was recorded under.
	MatchID string
	// Events is its record, MatchStarted first; MatchEnded last unless still running.
	Events []*eventsv1.MatchEvent
	// Interrupted is set for a match closed void because its referee stopped; a later
	// Record of the same scheduled match is its rerun.
	Interrupted bool
}

// LoadRecords reads every match of a tournament: for each scheduled match, in schedule order,
// the interrupted runs and then the match that counts. A scheduled match never started has
// no record, and a match another started under one of its ids is not the tournament's.
func LoadRecords(ctx context.Context, js jetstream.JetStream, spec *tournamentv1.TournamentSpec) ([]Record, error) {
	var out []Record
	err := EachRecord(ctx, js, spec, func(r Record) error {
		out = append(out, r)
		return nil
	})
	return out, err
}

// readSkew is how long before its spec was stored EachRecord starts reading a tournament's
// events: the spec and the events may be stored by different servers of a cluster, whose
// clocks differ a little.
const readSkew = time.Minute

// EachRecord calls f with every match of a tournament in LoadRecords' order. It reads the
// match stream once, with one consumer, from the time the tournament's spec was stored
// (bus.ReadSince), and looks up a rerun only for a match whose record ended void (or never
// ended): the time it takes grows with the events stored since the tournament began, and no
// faster. It hands each scheduled match's records to f as soon as they and those of every
// match scheduled before are read, so it holds few of them at a time.
func EachRecord(ctx context.Context, js jetstream.JetStream, spec *tournamentv1.TournamentSpec, f func(Record) error) error {
	return EachRecordOf(ctx, js, []*tournamentv1.TournamentSpec{spec}, f)
}

// EachRecordOf is EachRecord for several tournaments (distinct ids) read together: one read
// of the match stream, from the earliest time one of their specs was stored, instead of one
// per tournament (a read costs what the events stored since its start cost, whoever's they
// are). f gets each tournament's records in LoadRecords' order, the tournaments' interleaved.
// opts may leave fields out of the events read (bus.WithoutFields).
func EachRecordOf(ctx context.Context, js jetstream.JetStream, specs []*tournamentv1.TournamentSpec, f func(Record) error, opts ...bus.ReadOption) error {
	type ref struct {
		t *scheduleRead
		i int
	}
	owner := map[string]ref{} // match id (a rerun's too) -> its tournament and scheduled match
	reads := make([]*scheduleRead, 0, len(specs))
	var since time.Time
	for _, spec := range specs {
		stored, ok, err := bus.LastMsg(ctx, js, natsname.TournamentStream, natsname.TournamentSpecSubject(spec.GetTournamentId()))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: no tournament %q", ErrNotFound, spec.GetTournamentId())
		}
		if since.IsZero() || stored.Time.Before(since) {
			since = stored.Time
		}
		t := newScheduleRead(spec, f)
		for i, m := range spec.GetMatches() {
			if prev, dup := owner[m.GetMatchId()]; dup {
				return fmt.Errorf("tournament: match %s is scheduled by both %s and %s", m.GetMatchId(), prev.t.spec.GetTournamentId(), spec.GetTournamentId())
			}
			owner[m.GetMatchId()] = ref{t, i}
		}
		reads = append(reads, t)
	}
	if len(reads) == 0 {
		return nil
	}
	// settle gives the match id's record to its scheduled match; a rerun it names is owned
	// from then on by the same scheduled match.
	settle := func(id string, events []*eventsv1.MatchEvent) error {
		o := owner[id]
		next, err := o.t.settle(ctx, js, o.i, id, events)
		if next != "" {
			owner[next] = o
		}
		return err
	}
	var recs bus.Records
	err := bus.ReadSince(ctx, js, since.Add(-readSkew), func(id string) bool {
		_, ok := owner[id]
		return ok
	}, func(id string, ev *eventsv1.MatchEvent) error {
		if !recs.Add(id, ev) {
			return nil
		}
		return settle(id, recs.Take(id))
	}, opts...)
	if err != nil {
		return err
	}
	// What is left did not end during the read: a match still running or never started, or
	// one whose rerun was learned of only now (its events then are read on their own).
	for _, t := range reads {
		for i, m := range t.matches {
			for !t.done[i] {
				id := t.current[i]
				events := recs.Take(id)
				if events == nil && id != m.GetMatchId() {
					if events, err = bus.ReadMatch(ctx, js, id, opts...); err != nil {
						return err
					}
				}
				if len(events) == 0 {
					t.done[i] = true
					break
				}
				if err := settle(id, events); err != nil {
					return err
				}
			}
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return nil
}

// scheduleRead is one tournament's schedule as its records are read.
type scheduleRead struct {
	spec    *tournamentv1.TournamentSpec
	matches []*tournamentv1.ScheduledMatch
	runs    [][]Record // each scheduled match's records so far
	current []string   // the id whose record it waits for
	done    []bool     // its last record is read and is not rerun
	next    int        // the first scheduled match not yet given to f
	f       func(Record) error
}

func newScheduleRead(spec *tournamentv1.TournamentSpec, f func(Record) error) *scheduleRead {
	matches := spec.GetMatches()
	t := &scheduleRead{
		spec: spec, matches: matches, f: f,
		runs: make([][]Record, len(matches)), current: make([]string, len(matches)), done: make([]bool, len(matches)),
	}
	for i, m := range matches {
		t.current[i] = m.GetMatchId()
	}
	return t
}

// flush gives f the records of the scheduled matches done, up to the first one not done.
func (t *scheduleRead) flush() error {
	for ; t.next < len(t.matches) && t.done[t.next]; t.next++ {
		for _, r := range t.runs[t.next] {
			if err := t.f(r); err != nil {
				return err
			}
		}
		t.runs[t.next] = nil
	}
	return nil
}

// settle records the match id's record for scheduled match i and follows its rerun, if it
// was interrupted: it returns the rerun's id when the scheduled match now waits for one.
func (t *scheduleRead) settle(ctx context.Context, js jetstream.JetStream, i int, id string, events []*eventsv1.MatchEvent) (rerun string, err error) {
	if events[0].GetMatchStarted().GetTournamentId() != t.spec.GetTournamentId() {
		// Another's match under the id: not this tournament's record. Its match runs
		// under the next id of the chain, once a worker has named it.
		retry, retried, err := queue.LookupRetry(ctx, js, id)
		if err != nil {
			return "", err
		}
		if retried && len(t.runs[i]) < queue.MaxReruns {
			t.current[i] = retry.GetRetryMatchId()
			return t.current[i], nil
		}
		t.done[i] = true
		return "", t.flush()
	}
	rec := Record{TournamentID: t.spec.GetTournamentId(), Scheduled: t.matches[i], MatchID: id, Events: events}
	end := events[len(events)-1].GetMatchEnded()
	if end == nil || end.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_VOID {
		retry, retried, err := queue.LookupRetry(ctx, js, id)
		if err != nil {
			return "", err
		}
		if retried && len(t.runs[i]) < queue.MaxReruns {
			rec.Interrupted = true
			t.runs[i] = append(t.runs[i], rec)
			t.current[i] = retry.GetRetryMatchId()
			return t.current[i], nil
		}
	}
	t.runs[i] = append(t.runs[i], rec)
	t.done[i] = true
	return "", t.flush()
}
