// Package analyticscmd is `parley analytics`: the analytics service as a long-running process.
// It consumes every match event from JetStream through a durable consumer into an SQLite
// database and serves queries over gRPC.
package analyticscmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

type options struct {
	logLevel string
	nats     string
	db       string
	listen   string
	storeDir string
	durable  string
	metrics  string
}

// NewCmd returns the analytics command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "analytics [--nats URL] [--db FILE] [--listen ADDR]",
		Short: "Run the analytics service: match events into SQLite, queries over gRPC",
		Long: `Consume every match event from NATS JetStream (stream PARLEY_MATCHES, durable consumer
"analytics") into an SQLite database file, compute each finished match's metrics, and serve
parley.analytics.v1.AnalyticsService (matches, metrics, leaderboards, language-model usage,
CSV/JSON-lines exports) with gRPC health checking and reflection.

Restarted, it carries on where it stopped: events are stored once per (match, seq) and acked
only after they are committed, so nothing is lost or counted twice. Without --nats it starts
an embedded NATS server (data in --store-dir), which only sees events already in that store.`,
		Example: `  parley analytics --nats nats://127.0.0.1:4222 --db parley-analytics.db
  grpcurl -plaintext 127.0.0.1:7080 parley.analytics.v1.AnalyticsService/GetStatus`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), deps, o) },
	}
	cmd.Flags().StringVar(&o.nats, "nats", "", "NATS server URL; empty starts an embedded server")
	cmd.Flags().StringVar(&o.db, "db", "parley-analytics.db", "SQLite database file (created if missing)")
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:7080", "address to serve the analytics API on")
	cmd.Flags().StringVar(&o.storeDir, "store-dir", "", "where the embedded NATS server keeps its data (default: a temporary directory)")
	cmd.Flags().StringVar(&o.durable, "durable", natsname.AnalyticsConsumer, "name of the durable JetStream consumer")
	cmd.Flags().StringVar(&o.metrics, "metrics", "", "also serve Prometheus metrics on http://ADDR/metrics (the consumer's lag); empty: off")
	cli.LogLevelFlag(cmd.Flags(), &o.logLevel)
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	level, err := cli.ParseLogLevel(o.logLevel)
	if err != nil {
		return err
	}
	logger := deps.JSONLogger(level)
	if o.nats != "" && o.storeDir != "" {
		return cli.Usagef("--store-dir applies only to the embedded NATS server, not with --nats")
	}
	if o.durable == "" {
		return cli.Usagef("--durable must not be empty")
	}
	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return cli.Usagef("--listen %s: %v", o.listen, err)
	}
	defer lis.Close()
	var metricsLis net.Listener
	if o.metrics != "" {
		if metricsLis, err = net.Listen("tcp", o.metrics); err != nil {
			return cli.Usagef("--metrics %s: %v", o.metrics, err)
		}
		defer metricsLis.Close()
	}
	store, err := analytics.OpenStore(ctx, o.db)
	if err != nil {
		return fmt.Errorf("--db: %w", err)
	}
	defer store.Close()
	b, err := bus.Open(ctx, bus.Config{URL: o.nats, StoreDir: o.storeDir}, logger)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	defer b.Close()

	cons := analytics.NewConsumer(b.JetStream(), store, standard.New(), logger, analytics.ConsumerConfig{Durable: o.durable})
	if metricsLis != nil {
		metrics := telemetry.New()
		metrics.WatchConsumer(b.JetStream(), natsname.MatchStream, o.durable)
		metricsCtx, stopMetrics := context.WithCancel(ctx)
		defer stopMetrics()
		go func() {
			if err := metrics.Serve(metricsCtx, metricsLis); err != nil {
				logger.Error("metrics listener stopped", "err", err)
			}
		}()
		fmt.Fprintf(deps.Out, "metrics on http://%s/metrics\n", metricsLis.Addr())
	}
	if _, err := cons.Ensure(ctx); err != nil {
		return fmt.Errorf("nats: %w", err)
	}

	srv := grpc.NewServer()
	analyticsv1.RegisterAnalyticsServiceServer(srv, analytics.NewServer(store))
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(analyticsv1.AnalyticsService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)

	events := b.URL()
	if events == "" {
		events = "an embedded NATS server"
	}
	fmt.Fprintf(deps.Out, "analytics listening on %s, database %s, events from %s\n", lis.Addr(), o.db, events)

	consCtx, stopConsumer := context.WithCancel(ctx)
	defer stopConsumer()
	consumed := make(chan error, 1)
	go func() { consumed <- cons.Run(consCtx) }()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-consumed:
		consumed <- err
		if err != nil {
			runErr = fmt.Errorf("analytics consumer: %w", err)
		}
	case err := <-served:
		if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			runErr = fmt.Errorf("analytics API: %w", err)
		}
	}
	hs.Shutdown()
	stopConsumer()
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		srv.Stop()
	}
	if err := <-consumed; err != nil && runErr == nil {
		runErr = fmt.Errorf("analytics consumer: %w", err)
	}
	st := cons.Stats()
	logger.Info("analytics stopped", "batches", st.Batches, "stored", st.Stored, "duplicates", st.Duplicates, "computed", st.Computed)
	return runErr
}
