// Package refereecmd is `parley referee`: the referee's gRPC API as a long-running service.
package refereecmd

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/server"
)

type options struct {
	listen   string
	nats     string
	storeDir string
}

// NewCmd returns the referee command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "referee [--listen ADDR] [--nats URL]",
		Short: "Serve the referee API (list games, start and follow matches) over gRPC",
		Long: `Serve parley.referee.v1.RefereeService, with gRPC health checking and reflection.
Every event of every match is published to NATS JetStream: an embedded server (data in
--store-dir) unless --nats names an external one.`,
		Example: `  parley referee --listen 127.0.0.1:7070
  parley referee --listen :7070 --nats nats://nats.internal:4222`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), deps, o) },
	}
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:7070", "address to serve the referee API on")
	cmd.Flags().StringVar(&o.nats, "nats", "", "NATS server URL; empty starts an embedded server")
	cmd.Flags().StringVar(&o.storeDir, "store-dir", "", "where the embedded NATS server keeps its data (default: a temporary directory)")
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	logger := slog.New(slog.NewJSONHandler(deps.Err, nil))
	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return cli.Usagef("--listen %s: %v", o.listen, err)
	}
	b, err := bus.Open(ctx, bus.Config{URL: o.nats, StoreDir: o.storeDir}, logger)
	if err != nil {
		lis.Close()
		return fmt.Errorf("nats: %w", err)
	}
	defer b.Close()
	// Events are published without waiting for acks; at each match's end the referee waits
	// for them so a stored record is complete before anyone is told the match is over.
	rec := bus.NewPublisher(b).SettleEachMatch()
	ref := server.New(deps.Games, rec, bus.ValidMatchID, logger)

	srv := grpc.NewServer()
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
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	select {
	case err := <-done:
		ref.Close()
		return err
	case <-ctx.Done():
	}
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
