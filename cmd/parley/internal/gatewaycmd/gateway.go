// Package gatewaycmd is `parley gateway`: the HTTP/JSON gateway (RPCs, live streams, the web
// page) in front of a referee and an analytics service sharing one NATS server.
package gatewaycmd

import (
	"context"
	"fmt"
	"net"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	"github.com/parley-arena/parley/gateway"
	"github.com/parley-arena/parley/gateway/web"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
)

type options struct {
	logLevel    string
	listen      string
	bus         cli.BusFlags
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
	o.bus.Bind(fs, "NATS server URL; empty starts an embedded server (data in --store-dir)", "where the embedded NATS server keeps its data (default: a temporary directory)")
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
	if err := o.bus.Check(); err != nil {
		return err
	}
	switch {
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
	b, err := o.bus.Open(ctx, bus.Config{}, logger)
	if err != nil {
		return err
	}
	defer b.Close()
	refConn, err := roles.DialService(o.referee)
	if err != nil {
		return cli.Usagef("--referee %s: %v", o.referee, err)
	}
	defer refConn.Close()
	tourConn := refConn
	if o.tournaments != "" && o.tournaments != o.referee {
		if tourConn, err = roles.DialService(o.tournaments); err != nil {
			return cli.Usagef("--tournaments %s: %v", o.tournaments, err)
		}
		defer tourConn.Close()
	}
	var an grpc.ClientConnInterface
	if o.analytics != "" {
		conn, err := roles.DialService(o.analytics)
		if err != nil {
			return cli.Usagef("--analytics %s: %v", o.analytics, err)
		}
		defer conn.Close()
		an = conn
	}
	metrics := telemetry.New()
	metrics.WatchConsumer(b.JetStream(), natsname.MatchStream, natsname.AnalyticsConsumer)
	gw, err := roles.NewGateway(ctx, roles.GatewayConfig{
		Bus: b, Games: deps.Games, Referee: refConn, Tournaments: tourConn, Analytics: an, Logger: logger,
		Gateway: gateway.Config{
			Metrics: metrics, Web: web.Handler(), MaxBodyBytes: o.maxBody, MaxStreamsPerClient: o.maxStreams,
			AdminToken: deps.Getenv("PARLEY_ADMIN_TOKEN"), Policy: pol, TokenRate: o.tokenRate, TokenBurst: o.tokenBurst,
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(deps.Out, "gateway listening on http://%s, referee %s, analytics %s\n", lis.Addr(), o.referee, orNone(o.analytics))
	return gw.Serve(ctx, lis)
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}
