// Package analyticscmd is `parley analytics`: the analytics service as a long-running process.
// It consumes every match event from JetStream through a durable consumer into an SQLite
// database and serves queries over gRPC.
package analyticscmd

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

type options struct {
	logLevel string
	db       string
	listen   string
	bus      cli.BusFlags
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
	o.bus.Bind(cmd.Flags(), "NATS server URL; empty starts an embedded server", "where the embedded NATS server keeps its data (default: a temporary directory)")
	cmd.Flags().StringVar(&o.db, "db", "parley-analytics.db", "SQLite database file (created if missing)")
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:7080", "address to serve the analytics API on")
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
	if err := o.bus.Check(); err != nil {
		return err
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
	b, err := o.bus.Open(ctx, bus.Config{}, logger)
	if err != nil {
		return err
	}
	defer b.Close()

	if metricsLis != nil {
		metrics := telemetry.New()
		metrics.WatchConsumer(b.JetStream(), natsname.MatchStream, o.durable)
		roles.ServeMetrics(ctx, metricsLis, metrics, logger)
		fmt.Fprintf(deps.Out, "metrics on http://%s/metrics\n", metricsLis.Addr())
	}
	role, err := roles.StartAnalytics(ctx, roles.AnalyticsConfig{
		Bus: b, Store: store, Families: standard.New(), Consumer: analytics.ConsumerConfig{Durable: o.durable}, Logger: logger,
	}, lis)
	if err != nil {
		return err
	}
	events := b.URL()
	if events == "" {
		events = "an embedded NATS server"
	}
	fmt.Fprintf(deps.Out, "analytics listening on %s, database %s, events from %s\n", lis.Addr(), o.db, events)

	var runErr error
	select {
	case <-ctx.Done():
	case err := <-role.Failed():
		if err != nil {
			runErr = fmt.Errorf("analytics consumer: %w", err)
		}
	case err := <-role.Served():
		if err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			runErr = fmt.Errorf("analytics API: %w", err)
		}
	}
	if err := role.Stop(); err != nil && runErr == nil {
		runErr = fmt.Errorf("analytics consumer: %w", err)
	}
	st := role.Stats()
	logger.Info("analytics stopped", "batches", st.Batches, "stored", st.Stored, "duplicates", st.Duplicates, "computed", st.Computed)
	return runErr
}
