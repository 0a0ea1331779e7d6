package server

import (
	"context"
	"errors"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/queue"
)

// follow reads match id's record from its first event, through an ordered JetStream consumer,
// and calls send with each event whose seq is at least from, in seq order and once each; it
// follows new events as they are stored and returns nil after match_ended. A match with no
// event yet is waited for StartGrace, then answered NOT_FOUND unless its request is still in
// the work queue (it waits there for a free worker as long as it takes).
func (s *Server) follow(ctx context.Context, id string, from uint64, send func(*refereev1.StreamMatchEventsResponse) error) error {
	if err := bus.ValidMatchID(id); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	js := s.cfg.Bus.JetStream()
	cons, err := js.OrderedConsumer(ctx, natsname.MatchStream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{natsname.MatchFilter(id)},
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		InactiveThreshold: 30 * time.Second,
	})
	if err != nil {
		return status.Errorf(codes.Unavailable, "reading match %s: %v", id, err)
	}
	it, err := cons.Messages()
	if err != nil {
		return status.Errorf(codes.Unavailable, "reading match %s: %v", id, err)
	}
	defer it.Stop()
	var (
		last    uint64 // highest seq read
		seen    bool
		waiting = time.Now()
	)
	for {
		wait := time.Minute
		if !seen {
			wait = s.cfg.StartGrace - time.Since(waiting)
			if wait <= 0 {
				queued, err := queue.Taken(ctx, js, id)
				if err != nil || !queued {
					return status.Errorf(codes.NotFound, "no match %q", id)
				}
				waiting = time.Now()
				continue
			}
		}
		nctx, cancel := context.WithTimeout(ctx, wait)
		msg, err := it.Next(jetstream.NextContext(nctx))
		cancel()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return status.FromContextError(ctx.Err()).Err()
			case errors.Is(err, context.DeadlineExceeded):
				continue
			default:
				return status.Errorf(codes.Unavailable, "reading match %s: %v", id, err)
			}
		}
		evs, err := bus.Decode(msg.Headers(), msg.Data())
		if err != nil {
			s.logger.Warn("unreadable match event", "match_id", id, "subject", msg.Subject(), "err", err)
			continue
		}
		seen = true
		for _, ev := range evs {
			if ev.GetSeq() <= last {
				continue // stored twice (a re-send after the duplicate window)
			}
			last = ev.GetSeq()
			if ev.GetSeq() >= from {
				if err := send(&refereev1.StreamMatchEventsResponse{Event: ev}); err != nil {
					return err
				}
			}
			if ev.GetMatchEnded() != nil {
				return nil
			}
		}
	}
}
