package roles

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// AnalyticsConfig is what the analytics role needs.
type AnalyticsConfig struct {
	Bus *bus.Bus
	// Store is the analytics database (the caller opens and closes it).
	Store *analytics.Store
	// Families computes each game family's metrics.
	Families *metrics.Registry
	// Consumer tunes the consumer of the match stream (zero: its defaults).
	Consumer analytics.ConsumerConfig
	Logger   *slog.Logger
}

// Analytics is the running analytics role: its consumer of the match stream and its gRPC API.
type Analytics struct {
	cons     *analytics.Consumer
	srv      *gRPCServer
	stop     context.CancelFunc
	consumed chan error
	failed   chan error
}

// StartAnalytics starts the analytics role: the consumer that feeds cfg.Store from the match
// stream, and AnalyticsService (with health and reflection) on lis. ctx bounds the start-up only.
func StartAnalytics(ctx context.Context, cfg AnalyticsConfig, lis net.Listener) (*Analytics, error) {
	cons := analytics.NewConsumer(cfg.Bus.JetStream(), cfg.Store, cfg.Families, cfg.Logger, cfg.Consumer)
	if _, err := cons.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	a := &Analytics{cons: cons, stop: stop, consumed: make(chan error, 1), failed: make(chan error, 1)}
	go func() {
		err := cons.Run(bg)
		a.consumed <- err
		if bg.Err() == nil {
			a.failed <- err
		}
	}()
	a.srv = newGRPCServer(lis, func(s *gRPCServer) {
		analyticsv1.RegisterAnalyticsServiceServer(s.Server, analytics.NewServer(cfg.Store))
	}, analyticsv1.AnalyticsService_ServiceDesc.ServiceName)
	return a, nil
}

// Failed is told, once, when the consumer or the gRPC server stops by itself (with its error).
func (a *Analytics) Failed() <-chan error { return a.failed }

// Served is closed, with the server's error, when the gRPC server stops by itself.
func (a *Analytics) Served() <-chan error { return a.srv.served }

// Stats are the consumer's counts so far.
func (a *Analytics) Stats() analytics.ConsumerStats { return a.cons.Stats() }

// Stop stops the consumer and the gRPC server, and returns the consumer's error if it failed.
func (a *Analytics) Stop() error {
	a.srv.health.Shutdown()
	a.stop()
	a.srv.Stop()
	return <-a.consumed
}
