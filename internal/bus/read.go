package bus

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

// readInactiveThreshold is how long the server keeps the ephemeral consumer
// of an abandoned ReadMatch.
const readInactiveThreshold = 30 * time.Second

// ReadMatch returns the events of a match stored so far, in stream order: from
// the first one to match_ended, or to the last one stored when the match has
// not ended. An event whose seq was already returned (a re-send stored after
// the duplicate window) is skipped. A match with no events gives an empty
// slice and no error.
//
// It reads through an ordered consumer of js on PARLEY_MATCHES filtered on
// natsname.MatchFilter(matchID). ctx bounds the whole read; without a deadline, a
// stalled server makes it wait for ever. Errors wrap ErrInvalidMatchID, ctx's
// error, or the NATS or decoding error.
func ReadMatch(ctx context.Context, js jetstream.JetStream, matchID string) ([]*eventsv1.MatchEvent, error) {
	if err := ValidMatchID(matchID); err != nil {
		return nil, err
	}
	cons, err := js.OrderedConsumer(ctx, natsname.MatchStream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{natsname.MatchFilter(matchID)},
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		InactiveThreshold: readInactiveThreshold,
	})
	if err != nil {
		return nil, fmt.Errorf("bus: read match %s: consumer: %w", matchID, err)
	}
	info := cons.CachedInfo()
	if info == nil || info.NumPending == 0 {
		return nil, nil
	}

	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("bus: read match %s: %w", matchID, err)
	}
	defer it.Stop()

	var events []*eventsv1.MatchEvent
	seen := make(map[uint64]bool, info.NumPending)
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
				err = fmt.Errorf("%w (after %d events)", context.Cause(ctx), len(events))
			}
			return nil, fmt.Errorf("bus: read match %s: %w", matchID, err)
		}
		md, err := msg.Metadata()
		if err != nil {
			return nil, fmt.Errorf("bus: read match %s: %w", matchID, err)
		}
		ev := new(eventsv1.MatchEvent)
		if err := proto.Unmarshal(msg.Data(), ev); err != nil {
			return nil, fmt.Errorf("bus: read match %s: stream seq %d on %s: %w",
				matchID, md.Sequence.Stream, msg.Subject(), err)
		}
		if !seen[ev.GetSeq()] {
			seen[ev.GetSeq()] = true
			events = append(events, ev)
		}
		if ev.GetMatchEnded() != nil || md.NumPending == 0 {
			return events, nil
		}
	}
}
