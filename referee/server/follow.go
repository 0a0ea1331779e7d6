package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/queue"
)

// follow reads match id's record from its first event, through an ordered JetStream consumer,
// and calls send with each event whose seq is at least from, in seq order and once each; it
// follows new events as they are stored and returns nil after match_ended. A match with no
// event yet is waited for StartGrace, then answered NOT_FOUND unless its request is still in
// the work queue (it waits there for a free worker as long as it takes). While it follows, it
// also sends the live news of seats asked to move (Waiting): first the latest of each seat
// still waited for, then each as it comes.
func (s *Server) follow(ctx context.Context, id string, from uint64, send func(*refereev1.StreamMatchEventsResponse) error) error {
	if err := bus.ValidMatchID(id); err != nil {
		return status.Error(codes.InvalidArgument, err.Error())
	}
	// The record and, while the match runs, the news of seats asked to move, from two sources
	// into one stream: its sends take turns.
	var (
		sending sync.Mutex
		over    bool // follow returned: nothing more is sent
	)
	defer func() {
		sending.Lock()
		over = true
		sending.Unlock()
	}()
	send = func(next func(*refereev1.StreamMatchEventsResponse) error) func(*refereev1.StreamMatchEventsResponse) error {
		return func(r *refereev1.StreamMatchEventsResponse) error {
			sending.Lock()
			defer sending.Unlock()
			if over {
				return nil
			}
			return next(r)
		}
	}(send)
	live, err := s.cfg.Bus.Conn().Subscribe(natsname.LiveSubject(id), func(msg *nats.Msg) {
		w := new(refereev1.Waiting)
		if proto.Unmarshal(msg.Data, w) == nil {
			_ = send(&refereev1.StreamMatchEventsResponse{Waiting: w}) // a failed send ends the stream below
		}
	})
	if err != nil {
		return status.Errorf(codes.Unavailable, "following match %s: %v", id, err)
	}
	defer live.Unsubscribe()
	// Whom the match waits for already: a follower need not wait for the next ask to know.
	for _, w := range s.live.current(id) {
		if err := send(&refereev1.StreamMatchEventsResponse{Waiting: w}); err != nil {
			return err
		}
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
