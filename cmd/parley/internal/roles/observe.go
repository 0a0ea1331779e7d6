package roles

import (
	"context"
	"log/slog"
	"net"
	"time"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/referee/match"
)

// Observer tells m what the matches of a runner do.
func Observer(m *telemetry.Metrics) match.Observer { return observer{m} }

type observer struct{ m *telemetry.Metrics }

func (o observer) MatchStarted(om match.ObservedMatch) { o.m.MatchStarted(om.Game) }

func (o observer) MatchEnded(om match.ObservedMatch, out *matchv1.Outcome, elapsed time.Duration) {
	o.m.MatchEnded(om.Game, out, elapsed)
}

func (o observer) AgentCalled(om match.ObservedMatch, seat int32, latency time.Duration, _ eventsv1.FaultKind) {
	o.m.AgentCalled(om.Agent(seat), latency)
}

func (o observer) ActionTaken(om match.ObservedMatch, seat int32, defaulted bool) {
	o.m.ActionTaken(om.Game, om.Agent(seat), defaulted)
}

func (o observer) ActionRefused(om match.ObservedMatch, seat int32) {
	o.m.ActionRefused(om.Game, om.Agent(seat))
}

func (o observer) AgentFaulted(om match.ObservedMatch, seat int32, kind eventsv1.FaultKind) {
	o.m.AgentFaulted(om.Game, om.Agent(seat), kind)
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
