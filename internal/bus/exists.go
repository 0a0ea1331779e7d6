package bus

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-arena/parley/internal/natsname"
)

// MatchExists reports whether the stream already holds events of a match with this id (a
// record begins with its start, whatever message carries it), so that a new match never
// interleaves its events with an old one's on the same subjects.
func MatchExists(ctx context.Context, b *Bus, matchID string) (bool, error) {
	_, ok, err := LastMsg(ctx, b.JetStream(), natsname.MatchStream, natsname.MatchFilter(matchID))
	return ok, err
}

// LastMsg returns the last message stored on subject in stream, if any. The subject may hold
// wildcards: the last message on any subject it matches. Through a StreamCache it makes one
// request (a direct get where the stream allows it); otherwise two.
func LastMsg(ctx context.Context, js jetstream.JetStream, stream, subject string) (*jetstream.RawStreamMsg, bool, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return nil, false, fmt.Errorf("bus: stream %s: %w", stream, err)
	}
	msg, err := s.GetLastMsgForSubject(ctx, subject)
	switch {
	case err == nil:
		return msg, true, nil
	case errors.Is(err, jetstream.ErrMsgNotFound):
		return nil, false, nil
	default:
		forgetGone(js, stream)
		return nil, false, fmt.Errorf("bus: read %s: %w", subject, err)
	}
}
