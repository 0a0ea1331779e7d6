package roles

import (
	"context"
	"log/slog"
	"net"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/referee/match"
)

// Observer tells m (nil: nobody) what the matches of a runner do, and tells whoever follows a
// match live on live (nil: nobody) which seat is asked to move, until when.
func Observer(m *telemetry.Metrics, live *nats.Conn) match.Observer { return observer{m, live} }

type observer struct {
	m    *telemetry.Metrics
	live *nats.Conn
}

func (o observer) MatchStarted(om match.ObservedMatch) {
	if o.m != nil {
		o.m.MatchStarted(om.Game)
	}
}

func (o observer) MatchEnded(om match.ObservedMatch, out *matchv1.Outcome, elapsed time.Duration) {
	if o.m != nil {
		o.m.MatchEnded(om.Game, out, elapsed)
	}
}

// AgentAsked publishes the news on core NATS: nothing waits for it and nothing stores it, so
// a move costs one small message sent and no round trip.
func (o observer) AgentAsked(om match.ObservedMatch, seat, turn, attempt int32, deadline time.Time) {
	if o.live == nil {
		return
	}
	data, err := proto.Marshal(&refereev1.Waiting{Seat: seat, Turn: turn, Attempt: attempt, Deadline: timestamppb.New(deadline)})
	if err == nil {
		_ = o.live.Publish(natsname.LiveSubject(om.ID), data) // news only: a lost one is not missed
	}
}

func (o observer) AgentCalled(om match.ObservedMatch, seat int32, latency time.Duration, _ eventsv1.FaultKind) {
	if o.m != nil {
		o.m.AgentCalled(om.Agent(seat), latency)
	}
}

func (o observer) ActionTaken(om match.ObservedMatch, seat int32, defaulted bool) {
	if o.m != nil {
		o.m.ActionTaken(om.Game, om.Agent(seat), defaulted)
	}
}

func (o observer) ActionRefused(om match.ObservedMatch, seat int32) {
	if o.m != nil {
		o.m.ActionRefused(om.Game, om.Agent(seat))
	}
}

func (o observer) AgentFaulted(om match.ObservedMatch, seat int32, kind eventsv1.FaultKind) {
	if o.m != nil {
		o.m.AgentFaulted(om.Game, om.Agent(seat), kind)
	}
}

// ServeMetrics serves m on lis (GET /metrics) in the background until ctx ends; a server that
// stops by itself is logged.
func ServeMetrics(ctx context.Context, lis net.Listener, m *telemetry.Metrics, logger *slog.Logger) {
	go func() {
		if err := m.Serve(ctx, lis); err != nil {
			logger.Error("metrics listener stopped", "err", err)
		}
	}()
}
