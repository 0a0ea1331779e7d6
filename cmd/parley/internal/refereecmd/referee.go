// Package refereecmd is `parley referee`: the referee's gRPC API as a long-running service.
package refereecmd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/server"
	"github.com/parley-arena/parley/services/botlink"
	"github.com/parley-arena/parley/services/tournament"
)

type options struct {
	listen            string
	nats              string
	storeDir          string
	worker            bool
	workerConcurrency int
	ackWait           time.Duration
	metrics           string
	replicas          int
	allowBotDial      bool
}

// NewCmd returns the referee command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "referee [--listen ADDR] [--nats URL]",
		Short: "Serve the referee API (list games, start and follow matches) over gRPC",
		Long: `Serve parley.referee.v1.RefereeService, with gRPC health checking and reflection.
Every event of every match is published to NATS JetStream: an embedded server (data in
--store-dir) unless --nats names an external one.

With --worker (the default) the referee is also a worker: it takes match requests from the
shared JetStream work queue (PARLEY_REQUESTS, durable consumer "referees"), up to
--worker-concurrency at a time, so several referee processes on one NATS server share the
matches of tournaments and those started through the gateway. A request whose referee dies
mid-match is taken by another one, which closes the interrupted record as void and runs the
match again under a retry id. StartMatch on this gRPC API runs its match here, directly.`,
		Example: `  parley referee --listen 127.0.0.1:7070
  parley referee --listen :7070 --nats nats://nats.internal:4222 --worker-concurrency 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), deps, o) },
	}
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:7070", "address to serve the referee API on")
	cmd.Flags().StringVar(&o.nats, "nats", "", "NATS server URL; empty starts an embedded server")
	cmd.Flags().StringVar(&o.storeDir, "store-dir", "", "where the embedded NATS server keeps its data (default: a temporary directory)")
	cmd.Flags().BoolVar(&o.worker, "worker", true, "also play match requests (tournaments', the gateway's) from the shared work queue")
	cmd.Flags().IntVar(&o.workerConcurrency, "worker-concurrency", tournament.DefaultConcurrency, "most queued matches this referee runs at once")
	cmd.Flags().DurationVar(&o.ackWait, "ack-wait", tournament.DefaultAckWait, "how long a request may go without a sign of life before another worker gets it (set for every worker)")
	cmd.Flags().IntVar(&o.replicas, "nats-replicas", 0, "servers of a NATS cluster that keep a copy of each Parley stream (3 survives the loss of one); 0 leaves existing streams as they are")
	cmd.Flags().StringVar(&o.metrics, "metrics", "", "also serve Prometheus metrics on http://ADDR/metrics (matches, moves, latency, faults, work-queue lag); empty: off")
	cmd.Flags().BoolVar(&o.allowBotDial, "allow-bot-dial", false, "dial registered bots (bot:TEAM/NAME) whose endpoint is a grpc:// address their team gave; off, such bots cannot play (the address may point into your own network)")
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	if o.worker && o.workerConcurrency < 1 {
		return cli.Usagef("--worker-concurrency must be at least 1, got %d", o.workerConcurrency)
	}
	if o.ackWait < time.Second {
		return cli.Usagef("--ack-wait must be at least 1s, got %s", o.ackWait)
	}
	logger := slog.New(slog.NewJSONHandler(deps.Err, nil))
	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return cli.Usagef("--listen %s: %v", o.listen, err)
	}
	var metricsLis net.Listener
	if o.metrics != "" {
		if metricsLis, err = net.Listen("tcp", o.metrics); err != nil {
			lis.Close()
			return cli.Usagef("--metrics %s: %v", o.metrics, err)
		}
		defer metricsLis.Close()
	}
	b, err := bus.Open(ctx, bus.Config{URL: o.nats, StoreDir: o.storeDir, Replicas: o.replicas}, logger)
	if err != nil {
		lis.Close()
		return fmt.Errorf("nats: %w", err)
	}
	defer b.Close()
	// Events are published without waiting for acks; at each match's end the referee waits
	// for them so a stored record is complete before anyone is told the match is over.
	rec := bus.NewPublisher(b).SettleEachMatch()
	metrics := telemetry.New()
	metrics.WatchConsumer(b.JetStream(), natsname.RequestStream, natsname.RefereeConsumer)
	ref := server.New(deps.Games, rec, bus.ValidMatchID, logger, match.WithObserver(metrics))
	if metricsLis != nil {
		metricsCtx, stopMetrics := context.WithCancel(ctx)
		defer stopMetrics()
		go func() {
			if err := metrics.Serve(metricsCtx, metricsLis); err != nil {
				logger.Error("metrics listener stopped", "err", err)
			}
		}()
		fmt.Fprintf(deps.Out, "metrics on http://%s/metrics\n", metricsLis.Addr())
	}

	// Registered bots (bot:TEAM/NAME) open through the registry on the same NATS server.
	bots, err := botlink.Bots(ctx, b, o.allowBotDial)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		return h(agentconn.WithBots(ctx, bots), req)
	}))
	refereev1.RegisterRefereeServiceServer(srv, ref)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(refereev1.RefereeService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)

	events := b.URL()
	if events == "" {
		events = "an embedded NATS server"
	}
	fmt.Fprintf(deps.Out, "referee listening on %s, events to %s\n", lis.Addr(), events)
	// The worker stops first on shutdown: its running matches end void and their requests
	// go back to the queue for another referee.
	workCtx, stopWorker := context.WithCancel(agentconn.WithBots(ctx, bots))
	var workers sync.WaitGroup
	defer func() { stopWorker(); workers.Wait() }()
	if o.worker {
		w := tournament.NewWorker(b, deps.Games, tournament.WorkerConfig{
			Concurrency: o.workerConcurrency, AckWait: o.ackWait, Name: lis.Addr().String(), Observer: metrics,
		}, logger)
		workers.Go(func() {
			if err := w.Run(workCtx); err != nil {
				logger.Error("referee worker stopped", "err", err)
			}
		})
		fmt.Fprintf(deps.Out, "referee worker taking match requests, %d at a time\n", o.workerConcurrency)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	select {
	case err := <-done:
		stopWorker()
		workers.Wait()
		ref.Close()
		return err
	case <-ctx.Done():
	}
	stopWorker()
	workers.Wait()
	hs.Shutdown()
	stopped := make(chan struct{})
	go func() { srv.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		srv.Stop()
	}
	ref.Close()
	return nil
}
