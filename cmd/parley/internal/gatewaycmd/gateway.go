// Package gatewaycmd is `parley gateway`: the HTTP/JSON gateway (RPCs, live streams, the web
// page) in front of a referee and an analytics service sharing one NATS server.
package gatewaycmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	"github.com/parley-arena/parley/gateway"
	"github.com/parley-arena/parley/gateway/web"
	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
)

type options struct {
	logLevel    string
	listen      string
	nats        string
	storeDir    string
	referee     string
	tournaments string
	analytics   string
	maxBody     int64
	maxStreams  int
	policy      string
	tokenRate   float64
	tokenBurst  int
}

// NewCmd returns the gateway command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "gateway [--listen ADDR] [--nats URL] [--referee ADDR] [--analytics ADDR]",
		Short: "Serve the HTTP/JSON API, live streams and the web page",
		Long: `Serve the gateway: the referee's, tournaments', analytics' and bot registry's APIs over
HTTP/JSON (the Connect protocol: POST /<package>.<Service>/<Method> with a JSON body; gRPC and
gRPC-Web on the same paths), team tokens, live streams of matches and tournament standings as
server-sent events (redacted for spectators), record and CSV/JSON-lines exports, /metrics, and
the web page. See gateway/README.md for the routes.

The referee's calls go to --referee, the tournaments' to --tournaments (by default the same
'parley referee'), the analytics queries to --analytics. Team tokens and registered bots are
read from the NATS server (--nats), where dial-out bots' links are also offered to referees.`,
		Example: `  parley gateway --nats nats://127.0.0.1:4222 --referee 127.0.0.1:7070 --analytics 127.0.0.1:7080
  curl -s -X POST localhost:8080/parley.referee.v1.RefereeService/ListGames -H 'Content-Type: application/json' -d '{}'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), deps, o) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to serve HTTP on")
	fs.StringVar(&o.nats, "nats", "", "NATS server URL; empty starts an embedded server (data in --store-dir)")
	fs.StringVar(&o.storeDir, "store-dir", "", "where the embedded NATS server keeps its data (default: a temporary directory)")
	fs.StringVar(&o.referee, "referee", "127.0.0.1:7070", "address of the referee's gRPC API (parley referee)")
	fs.StringVar(&o.tournaments, "tournaments", "", "address of the tournaments' gRPC API (default: --referee)")
	fs.StringVar(&o.analytics, "analytics", "127.0.0.1:7080", "address of the analytics gRPC API (parley analytics); empty: none")
	fs.Int64Var(&o.maxBody, "max-body", gateway.DefaultMaxBodyBytes, "largest request body, in bytes")
	fs.IntVar(&o.maxStreams, "max-streams", gateway.DefaultMaxStreamsPerClient, "most live streams open at once from one client address")
	fs.StringVar(&o.policy, "policy", "", "the organiser's policy file (see SECURITY.md), for its quotas: starts per minute and failed token attempts per client (the referee applies the rest); PARLEY_ADMIN_TOKEN in the environment is the organiser's token")
	fs.Float64Var(&o.tokenRate, "token-rate", gateway.DefaultTokenRate, "requests a second each team token may make to the bot registry and bot links")
	fs.IntVar(&o.tokenBurst, "token-burst", gateway.DefaultTokenBurst, "requests a team token may make at once above --token-rate")
	cli.LogLevelFlag(fs, &o.logLevel)
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	switch {
	case o.nats != "" && o.storeDir != "":
		return cli.Usagef("--store-dir applies only to the embedded NATS server, not with --nats")
	case o.referee == "":
		return cli.Usagef("--referee is required: the gateway lists the games of a referee")
	case o.maxBody < 1024:
		return cli.Usagef("--max-body must be at least 1024, got %d", o.maxBody)
	case o.tokenRate <= 0 || o.tokenBurst < 1:
		return cli.Usagef("--token-rate must be positive and --token-burst at least 1")
	case o.maxStreams < 1:
		return cli.Usagef("--max-streams must be at least 1, got %d", o.maxStreams)
	}
	pf := cli.PolicyFlags{File: o.policy}
	pol, err := pf.Policy()
	if err != nil {
		return err
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
	defer lis.Close()
	b, err := bus.Open(ctx, bus.Config{URL: o.nats, StoreDir: o.storeDir}, logger)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	defer b.Close()
	refConn, err := grpc.NewClient(o.referee, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return cli.Usagef("--referee %s: %v", o.referee, err)
	}
	defer refConn.Close()
	tourConn := refConn
	if o.tournaments != "" && o.tournaments != o.referee {
		if tourConn, err = grpc.NewClient(o.tournaments, grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
			return cli.Usagef("--tournaments %s: %v", o.tournaments, err)
		}
		defer tourConn.Close()
	}
	var an analyticsv1.AnalyticsServiceClient
	if o.analytics != "" {
		conn, err := grpc.NewClient(o.analytics, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return cli.Usagef("--analytics %s: %v", o.analytics, err)
		}
		defer conn.Close()
		an = analyticsv1.NewAnalyticsServiceClient(conn)
	}
	teams, links, err := roles.Teams(ctx, b, deps.Games, logger)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	metrics := telemetry.New()
	metrics.WatchConsumer(b.JetStream(), natsname.MatchStream, natsname.AnalyticsConsumer)
	gw, err := gateway.New(gateway.Config{
		Referee: refereev1.NewRefereeServiceClient(refConn), Tournaments: tournamentv1.NewTournamentServiceClient(tourConn),
		Analytics: an, Teams: teams, BotLinks: links, Metrics: metrics, Logger: logger, Web: web.Handler(),
		MaxBodyBytes: o.maxBody, MaxStreamsPerClient: o.maxStreams, AdminToken: deps.Getenv("PARLEY_ADMIN_TOKEN"),
		Policy: pol, Ready: b.Ready,
		TokenRate: o.tokenRate, TokenBurst: o.tokenBurst, Mount: links.Relay().Mount,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(deps.Out, "gateway listening on http://%s, referee %s, analytics %s\n", lis.Addr(), o.referee, orNone(o.analytics))
	return Serve(ctx, lis, gw)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// Serve serves gw on lis (HTTP/1.1, and HTTP/2 without TLS for gRPC clients), within its
// connection limits and read timeouts, until ctx ends, then shuts down: requests still running,
// live streams included, are cancelled.
func Serve(ctx context.Context, lis net.Listener, gw *gateway.Gateway) error {
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	lis = gw.Listener(lis)
	srv := &http.Server{
		Handler: gw, ReadHeaderTimeout: gw.ReadHeaderTimeout(), IdleTimeout: time.Minute,
		BaseContext: func(net.Listener) context.Context { return base },
	}
	srv.Protocols = new(http.Protocols)
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetUnencryptedHTTP2(true)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	select {
	case err := <-done:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	case <-ctx.Done():
	}
	cancelRequests()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close() // live streams that did not end in time
	}
	<-done
	return nil
}
