package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/record"
	"github.com/parley-arena/parley/services/tournament"
)

// follow reads match id's record from its first event, through an ordered JetStream consumer,
// and calls send with each event whose seq is at least from, redacted for viewer, in seq order
// and once each; it follows new events as they are stored and returns nil after match_ended.
// While nothing comes it calls idle every KeepAlive (only once the first event came). A match
// with no event yet is waited for StartGrace, then answered NOT_FOUND unless its request is
// still in the work queue.
func (g *Gateway) follow(ctx context.Context, id string, viewer record.Viewer, from uint64,
	send func(*eventsv1.MatchEvent) error, idle func() error) error {
	if err := bus.ValidMatchID(id); err != nil {
		return connect.NewError(connect.CodeInvalidArgument, err)
	}
	cons, err := g.cfg.Bus.JetStream().OrderedConsumer(ctx, natsname.MatchStream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{natsname.MatchFilter(id)},
		DeliverPolicy:     jetstream.DeliverAllPolicy,
		InactiveThreshold: 30 * time.Second,
	})
	if err != nil {
		return connect.NewError(connect.CodeUnavailable, fmt.Errorf("reading match %s: %w", id, err))
	}
	it, err := cons.Messages()
	if err != nil {
		return connect.NewError(connect.CodeUnavailable, fmt.Errorf("reading match %s: %w", id, err))
	}
	defer it.Stop()
	var (
		last    uint64 // highest seq read
		reveal  bool
		seen    bool
		waiting = time.Now()
	)
	for {
		wait := g.cfg.KeepAlive
		if !seen {
			wait = min(wait, g.cfg.StartGrace-time.Since(waiting))
			if wait <= 0 {
				// A match requested through the work queue waits there for a free worker as
				// long as it takes.
				queued, err := tournament.Requested(ctx, g.cfg.Bus.JetStream(), id)
				if err != nil || !queued {
					return connect.NewError(connect.CodeNotFound, fmt.Errorf("no match %q", id))
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
				return connect.NewError(connect.CodeCanceled, ctx.Err())
			case errors.Is(err, context.DeadlineExceeded):
				if seen {
					if err := idle(); err != nil {
						return err
					}
				}
				continue
			default:
				return connect.NewError(connect.CodeUnavailable, fmt.Errorf("reading match %s: %w", id, err))
			}
		}
		ev := new(eventsv1.MatchEvent)
		if err := proto.Unmarshal(msg.Data(), ev); err != nil {
			g.log.Warn("unreadable match event", "match_id", id, "subject", msg.Subject(), "err", err)
			continue
		}
		seen = true
		if ev.GetSeq() <= last {
			continue // stored twice (a re-send after the duplicate window)
		}
		last = ev.GetSeq()
		if s := ev.GetMatchStarted(); s != nil {
			reveal = s.GetRevealPrivate()
		}
		if ev.GetSeq() >= from {
			if err := send(record.Redact(ev, viewer, reveal)); err != nil {
				return err
			}
		}
		if ev.GetMatchEnded() != nil {
			return nil
		}
	}
}

// readMatch reads a match's record so far, redacted for viewer; NOT_FOUND when it has none.
func (g *Gateway) readMatch(ctx context.Context, id string, viewer record.Viewer) ([]*eventsv1.MatchEvent, error) {
	if err := bus.ValidMatchID(id); err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	events, err := bus.ReadMatch(ctx, g.cfg.Bus.JetStream(), id)
	if err != nil {
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	if len(events) == 0 {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no match %q", id))
	}
	return record.RedactAll(events, viewer), nil
}

// viewerOf reads who looks at a match: a spectator, or with ?seat=K and that seat's token
// (Authorization: Bearer TOKEN, or ?token=TOKEN) the player of seat K.
func (g *Gateway) viewerOf(r *http.Request, matchID string) (record.Viewer, error) {
	q := r.URL.Query()
	raw := q.Get("seat")
	if raw == "" {
		return record.Spectator, nil
	}
	seat, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || seat < 0 {
		return record.Spectator, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("seat must be a seat index (0, 1, ...), got %q", raw))
	}
	token := q.Get("token")
	if auth := r.Header.Get("Authorization"); token == "" && auth != "" {
		token, _ = strings.CutPrefix(auth, "Bearer ")
	}
	if token == "" || g.cfg.Seats == nil || !g.cfg.Seats.AuthorizeSeat(r.Context(), matchID, int32(seat), token) {
		return record.Spectator, connect.NewError(connect.CodePermissionDenied,
			fmt.Errorf("the view of seat %d of match %s needs that seat's token", seat, matchID))
	}
	return record.SeatViewer(int32(seat)), nil
}
