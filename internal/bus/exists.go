package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

// MatchExists reports whether the stream already holds the start of a match with this id, so
// that a new match never interleaves its events with an old one's on the same subjects.
func MatchExists(ctx context.Context, b *Bus, matchID string) (bool, error) {
	stream, err := b.JetStream().Stream(ctx, natsname.MatchStream)
	if err != nil {
		return false, fmt.Errorf("bus: stream %s: %w", natsname.MatchStream, err)
	}
	started := &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{}}}
	_, err = stream.GetLastMsgForSubject(ctx, Subject(matchID, started))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("bus: look up match %s: %w", matchID, err)
	}
}
