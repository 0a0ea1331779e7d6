package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
)

// ErrCancelled is the cause of a match ended because it was cancelled.
var ErrCancelled = errors.New("cancelled")

// cancelSubject is where c is recorded.
func cancelSubject(c *queuev1.Cancelled) string {
	if c.GetTournamentId() != "" {
		return natsname.CancelTournamentSubject(c.GetTournamentId())
	}
	return natsname.CancelMatchSubject(c.GetMatchId())
}

// Cancel records that a match or a tournament is cancelled (c names one of them). Workers
// told of it end the matches they play at once; a request taken later is recorded void
// without being played.
func Cancel(ctx context.Context, js jetstream.JetStream, c *queuev1.Cancelled) error {
	if (c.GetMatchId() == "") == (c.GetTournamentId() == "") {
		return errors.New("queue: cancel names a match or a tournament")
	}
	id := c.GetMatchId() + c.GetTournamentId()
	if err := bus.ValidMatchID(id); err != nil {
		return fmt.Errorf("queue: cancel: %w", err)
	}
	if err := EnsureStreams(ctx, js); err != nil {
		return err
	}
	data, err := proto.Marshal(c)
	if err != nil {
		return err
	}
	if _, err := js.Publish(ctx, cancelSubject(c), data, jetstream.WithExpectStream(natsname.TournamentStream)); err != nil {
		return fmt.Errorf("queue: cancel %s: %w", id, err)
	}
	return nil
}

// Cancelled returns the cancellation of a match (matchID) or of its tournament
// (tournamentID, "" for none), when one is recorded.
func Cancelled(ctx context.Context, js jetstream.JetStream, matchID, tournamentID string) (*queuev1.Cancelled, bool, error) {
	subjects := []string{natsname.CancelMatchSubject(matchID)}
	if tournamentID != "" {
		subjects = append(subjects, natsname.CancelTournamentSubject(tournamentID))
	}
	for _, s := range subjects {
		msg, ok, err := bus.LastMsg(ctx, js, natsname.TournamentStream, s)
		if err != nil {
			return nil, false, err
		}
		if ok {
			c := new(queuev1.Cancelled)
			if err := proto.Unmarshal(msg.Data, c); err != nil {
				return nil, false, fmt.Errorf("queue: cancellation %s: %w", s, err)
			}
			return c, true, nil
		}
	}
	return nil, false, nil
}

// Request returns the request of matchID while it waits in the work queue or is played.
func Request(ctx context.Context, js jetstream.JetStream, matchID string) (*queuev1.MatchRequest, bool, error) {
	for _, subject := range []string{natsname.AnyLaneRequest(matchID), natsname.LegacyRequestSubject(matchID)} {
		msg, ok, err := bus.LastMsg(ctx, js, natsname.RequestStream, subject)
		if err != nil {
			return nil, false, err
		}
		if ok {
			req := new(queuev1.MatchRequest)
			if err := proto.Unmarshal(msg.Data, req); err != nil {
				return nil, false, fmt.Errorf("queue: request %s: %w", matchID, err)
			}
			return req, true, nil
		}
	}
	return nil, false, nil
}

// cancelError is the cause given to a cancelled match: the runner records it as the void
// ending's reason.
func cancelError(c *queuev1.Cancelled) error {
	what := "the match"
	if c.GetTournamentId() != "" {
		what = "its tournament"
	}
	by := c.GetBy()
	if by == "" {
		by = "its owner"
	}
	return fmt.Errorf("%w: %s was cancelled by %s", ErrCancelled, what, by)
}

// playing is a match a worker plays now, to be ended when cancelled.
type playing struct {
	tournamentID string
	cancel       context.CancelCauseFunc
}

// cancelled is told of each cancellation recorded (a core subscription to its subjects) and
// ends the matches of this worker it names.
func (w *Worker) cancelled(msg *nats.Msg) {
	c := new(queuev1.Cancelled)
	if proto.Unmarshal(msg.Data, c) != nil {
		return
	}
	w.playing.Range(func(id, v any) bool {
		p := v.(*playing)
		if (c.GetMatchId() != "" && id == c.GetMatchId()) || (c.GetTournamentId() != "" && p.tournamentID == c.GetTournamentId()) {
			p.cancel(cancelError(c))
		}
		return true
	})
}
