package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

const (
	// readInactiveThreshold is how long the server keeps the consumer of a read whose
	// reader went away without deleting it.
	readInactiveThreshold = 30 * time.Second
	// readBatch is how many messages a read asks for at a time.
	readBatch = 1000
	// deleteTimeout bounds deleting a read's consumer once it is done.
	deleteTimeout = 5 * time.Second
)

// ReadMatch returns the events of a match stored so far, in stream order: from
// the first one to match_ended, or to the last one stored when the match has
// not ended. An event whose seq was already returned (a re-send stored after
// the duplicate window) is skipped. A match with no events gives an empty
// slice and no error.
//
// It reads through a consumer of js on PARLEY_MATCHES filtered on
// natsname.MatchFilter(matchID), deleted once read; opts may leave fields out
// of the events. ctx bounds the whole read; without a deadline, a stalled
// server makes it wait for ever. Errors wrap ErrInvalidMatchID, ctx's error,
// or the NATS or decoding error.
func ReadMatch(ctx context.Context, js jetstream.JetStream, matchID string, opts ...ReadOption) ([]*eventsv1.MatchEvent, error) {
	if err := ValidMatchID(matchID); err != nil {
		return nil, err
	}
	var rec Records
	err := read(ctx, js, jetstream.ConsumerConfig{
		FilterSubject: natsname.MatchFilter(matchID),
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}, "match "+matchID, func(string) bool { return true }, func(id string, ev *eventsv1.MatchEvent) error {
		rec.Add(id, ev)
		return nil
	}, opts...)
	if err != nil {
		return nil, err
	}
	return rec.Take(matchID), nil
}

// StoredEvents returns how many events the stream holds for matchID, repeats included
// (ReadMatch leaves those out): a match recorded once holds as many as its record has.
func StoredEvents(ctx context.Context, js jetstream.JetStream, matchID string) (int, error) {
	if err := ValidMatchID(matchID); err != nil {
		return 0, err
	}
	n := 0
	err := read(ctx, js, jetstream.ConsumerConfig{
		FilterSubject: natsname.MatchFilter(matchID),
		DeliverPolicy: jetstream.DeliverAllPolicy,
	}, "match "+matchID, func(string) bool { return true }, func(string, *eventsv1.MatchEvent) error {
		n++
		return nil
	})
	return n, err
}

// ReadSince calls f, in stream order, with every match event stored at or after since whose
// match want says it wants (by the match id of the subject the event is stored on: the others
// are not even decoded). It reads with one consumer, over the events stored when it starts,
// and deletes the consumer at the end: reading the records of a thousand matches costs what
// reading their events does, not a consumer each. An error from f stops the read. opts may
// leave fields out of the events (WithoutFields).
func ReadSince(ctx context.Context, js jetstream.JetStream, since time.Time, want func(matchID string) bool,
	f func(matchID string, ev *eventsv1.MatchEvent) error, opts ...ReadOption) error {
	return read(ctx, js, jetstream.ConsumerConfig{
		FilterSubject: natsname.AllMatches,
		DeliverPolicy: jetstream.DeliverByStartTimePolicy,
		OptStartTime:  &since,
	}, "matches since "+since.Format(time.RFC3339), want, f, opts...)
}

// read reads the match stream through a consumer of cfg, up to the last message stored when
// it starts, then deletes the consumer.
func read(ctx context.Context, js jetstream.JetStream, cfg jetstream.ConsumerConfig, what string, want func(string) bool,
	f func(string, *eventsv1.MatchEvent) error, opts ...ReadOption) error {
	rc := readConfigOf(opts)
	cfg.AckPolicy = jetstream.AckNonePolicy
	cfg.InactiveThreshold = readInactiveThreshold
	cfg.MemoryStorage = true
	cons, err := js.CreateConsumer(ctx, natsname.MatchStream, cfg)
	if err != nil {
		return fmt.Errorf("bus: read %s: consumer: %w", what, err)
	}
	info := cons.CachedInfo()
	defer func() {
		// Left behind, a consumer would hold server memory until its inactivity runs out.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), deleteTimeout)
		defer cancel()
		_ = js.DeleteConsumer(dctx, natsname.MatchStream, info.Name)
	}()
	for left := info.NumPending; left > 0; {
		batch, err := cons.Fetch(int(min(left, readBatch)), jetstream.FetchContext(ctx))
		if err != nil {
			return fmt.Errorf("bus: read %s: %w", what, err)
		}
		got := uint64(0)
		for msg := range batch.Messages() {
			got++
			id := natsname.MatchOf(msg.Subject()) // where it was stored, whatever it says
			if !want(id) {
				continue
			}
			evs, err := decode(msg.Headers(), msg.Data(), rc.leave)
			if err != nil {
				seq := uint64(0)
				if md, merr := msg.Metadata(); merr == nil {
					seq = md.Sequence.Stream
				}
				return fmt.Errorf("bus: read %s: stream seq %d on %s: %w", what, seq, msg.Subject(), err)
			}
			for _, ev := range evs {
				if err := f(id, ev); err != nil {
					return err
				}
			}
		}
		if err := batch.Error(); err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w (%d events left)", context.Cause(ctx), left-got)
			}
			return fmt.Errorf("bus: read %s: %w", what, err)
		}
		if got == 0 {
			break // counted but gone (purged meanwhile): what was read is what there is
		}
		left -= min(got, left)
	}
	return nil
}

// Records gathers match records from events read in stream order, as ReadMatch returns them:
// an event whose seq its match already holds is skipped, and so is everything stored after a
// match's match_ended. The zero value is ready to use.
type Records struct {
	events map[string][]*eventsv1.MatchEvent
	seen   map[string]map[uint64]bool
	ended  map[string]bool
}

// Add adds ev to the record of matchID, and reports whether it ended the record.
func (r *Records) Add(matchID string, ev *eventsv1.MatchEvent) (ended bool) {
	if r.events == nil {
		r.events = make(map[string][]*eventsv1.MatchEvent)
		r.seen = make(map[string]map[uint64]bool)
		r.ended = make(map[string]bool)
	}
	if r.ended[matchID] {
		return false
	}
	seen := r.seen[matchID]
	if seen == nil {
		seen = make(map[uint64]bool)
		r.seen[matchID] = seen
	}
	if seen[ev.GetSeq()] {
		return false
	}
	seen[ev.GetSeq()] = true
	r.events[matchID] = append(r.events[matchID], ev)
	if ev.GetMatchEnded() != nil {
		r.ended[matchID] = true
		return true
	}
	return false
}

// Take returns the record of matchID (nil when it has no events) and forgets it, all but
// whether it ended: later events of an ended match are still skipped.
func (r *Records) Take(matchID string) []*eventsv1.MatchEvent {
	evs := r.events[matchID]
	delete(r.events, matchID)
	delete(r.seen, matchID)
	return evs
}
