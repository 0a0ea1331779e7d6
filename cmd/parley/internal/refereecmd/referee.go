// Package refereecmd is `parley referee`: the referee's gRPC API as a long-running service.
package refereecmd

import (
	"context"
	"fmt"
	"net"
	"time"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/queue"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/teams/botlink"
)

type options struct {
	logLevel          string
	listen            string
	bus               cli.BusFlags
	worker            bool
	workerConcurrency int
	ackWait           time.Duration
	metrics           string
	replicas          int
	allowBotDial      bool
	policy            cli.PolicyFlags
	tournaments       bool
	analytics         string
}

// NewCmd returns the referee command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "referee [--listen ADDR] [--nats URL]",
		Short: "Serve the referee and tournament APIs over gRPC, and play queued matches",
		Long: `Serve parley.referee.v1.RefereeService and parley.tournament.v1.TournamentService, with gRPC
health checking and reflection. Every event of every match is published to NATS JetStream: an
embedded server (data in --store-dir) unless --nats names an external one.

StartMatch checks the match as every door does (parley play, the gateway) and puts it into the
shared JetStream work queue (PARLEY_REQUESTS, durable consumer "referees"). With --worker (the
default) the referee is also a worker: it takes match requests from that queue, up to
--worker-concurrency at a time, so several referee processes on one NATS server share the
matches. A request whose referee dies mid-match is taken by another one, which closes the
interrupted record as void and runs the match again under a retry id.

With --tournaments (the default) it also requests the matches of the tournaments started
through it, and resumes them when it starts again: run one such referee per NATS server
(--tournaments=false on the others). Standings come from the analytics service (--analytics).`,
		Example: `  parley referee --listen 127.0.0.1:7070
  parley referee --listen :7070 --nats nats://nats.internal:4222 --worker-concurrency 8`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), deps, o) },
	}
	cmd.Flags().StringVar(&o.listen, "listen", "127.0.0.1:7070", "address to serve the referee API on")
	o.bus.Bind(cmd.Flags(), "NATS server URL; empty starts an embedded server", "where the embedded NATS server keeps its data (default: a temporary directory)")
	cmd.Flags().BoolVar(&o.worker, "worker", true, "also play match requests (tournaments', the gateway's) from the shared work queue")
	cmd.Flags().IntVar(&o.workerConcurrency, "worker-concurrency", tournament.DefaultConcurrency, "most queued matches this referee runs at once")
	cmd.Flags().DurationVar(&o.ackWait, "ack-wait", queue.DefaultAckWait, "how long a request may go without a sign of life before another worker gets it (set for every worker)")
	cmd.Flags().BoolVar(&o.tournaments, "tournaments", true, "serve TournamentService and request the matches of the tournaments started here (one such referee per NATS server)")
	cmd.Flags().StringVar(&o.analytics, "analytics", "", "address (host:port) of the analytics service, where tournament standings come from; empty: tournaments report no standings")
	cmd.Flags().IntVar(&o.replicas, "nats-replicas", 0, "servers of a NATS cluster that keep a copy of each Parley stream (3 survives the loss of one); 0 leaves existing streams as they are")
	cmd.Flags().StringVar(&o.metrics, "metrics", "", "also serve Prometheus metrics on http://ADDR/metrics (matches, moves, latency, faults, work-queue lag); empty: off")
	o.policy.Bind(cmd.Flags())
	cmd.Flags().BoolVar(&o.allowBotDial, "allow-bot-dial", false, "dial registered bots (bot:TEAM/NAME) whose endpoint is a grpc:// address their team gave; off, such bots cannot play (the address may point into your own network)")
	cli.LogLevelFlag(cmd.Flags(), &o.logLevel)
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	if o.worker && o.workerConcurrency < 1 {
		return cli.Usagef("--worker-concurrency must be at least 1, got %d", o.workerConcurrency)
	}
	if o.ackWait < time.Second {
		return cli.Usagef("--ack-wait must be at least 1s, got %s", o.ackWait)
	}
	level, err := cli.ParseLogLevel(o.logLevel)
	if err != nil {
		return err
	}
	logger := deps.JSONLogger(level)
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
	b, err := o.bus.Open(ctx, bus.Config{Replicas: o.replicas}, logger)
	if err != nil {
		lis.Close()
		return err
	}
	defer b.Close()
	metrics := telemetry.New()
	for _, lane := range queue.LaneConsumers() {
		metrics.WatchConsumer(b.JetStream(), natsname.RequestStream, lane)
	}
	if metricsLis != nil {
		roles.ServeMetrics(ctx, metricsLis, metrics, logger)
		fmt.Fprintf(deps.Out, "metrics on http://%s/metrics\n", metricsLis.Addr())
	}

	// Registered bots (bot:TEAM/NAME) open through the registry on the same NATS server; every
	// address the referee dials passes the policy's dial rule.
	pol, err := o.policy.Policy()
	if err != nil {
		return err
	}
	dir, err := botlink.OpenDirectory(ctx, b)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	agents := roles.Resolver(deps.Builtins, dir, o.allowBotDial, pol)
	agents.Pool = deps.Pool
	var standings tournament.Standings
	if o.analytics != "" {
		conn, err := grpc.NewClient(o.analytics, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return cli.Usagef("--analytics %s: %v", o.analytics, err)
		}
		defer conn.Close()
		standings = analyticsv1.NewAnalyticsServiceClient(conn)
	}
	workers := 0
	if o.worker {
		workers = o.workerConcurrency
	}
	role, err := roles.StartReferee(ctx, roles.RefereeConfig{
		Bus: b, Games: deps.Games, Agents: agents, Standings: standings, Workers: workers, AckWait: o.ackWait,
		Tournaments: o.tournaments, Name: lis.Addr().String(), Logger: logger, Policy: pol,
		Options: []match.Option{match.WithObserver(roles.Observer(metrics, b.Conn())), match.WithLogger(logger)},
	}, lis)
	if err != nil {
		lis.Close()
		return err
	}
	events := b.URL()
	if events == "" {
		events = "an embedded NATS server"
	}
	fmt.Fprintf(deps.Out, "referee listening on %s, events to %s\n", lis.Addr(), events)
	if o.worker {
		fmt.Fprintf(deps.Out, "referee worker taking match requests, %d at a time\n", o.workerConcurrency)
	}
	select {
	case err := <-role.Served():
		role.Stop()
		return err
	case <-ctx.Done():
	}
	role.Stop()
	return nil
}
