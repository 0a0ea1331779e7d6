// Package upcmd is `parley up`: everything in one process, with no flags needed. An embedded
// NATS server keeps its JetStream data in the data directory; a referee serves its gRPC API and
// takes tournament matches from the work queue; the analytics service feeds its SQLite file in
// the data directory; the gateway serves the API, the live streams, /metrics and the web page;
// the built-in agents are there by name (builtin:NAME) and people take seats from the page.
// Stopped and started again on the same data directory, every match and rating is still there.
package upcmd

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	"github.com/parley-arena/parley/gateway"
	"github.com/parley-arena/parley/gateway/web"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/referee/queue"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// Files and folders in the data directory.
const (
	natsDir       = "nats"         // JetStream store of the embedded NATS server
	analyticsFile = "analytics.db" // the analytics service's SQLite file
)

type options struct {
	dataDir         string
	listen          string
	refereeListen   string
	analyticsListen string
	natsListen      string
	workers         int
	logLevel        string
	policy          cli.PolicyFlags
	allowBotDial    bool
}

// NewCmd returns the up command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "up [--data-dir DIR] [--listen ADDR]",
		Short: "Run everything in one process and print the web page's URL",
		Long: `Run Parley in one process: an embedded NATS server with JetStream (data in DATA/nats), the
referee (gRPC API on --referee-listen, and --workers workers on the JetStream work queue, which
play the matches and tournaments started on the page), the analytics service
(DATA/analytics.db; gRPC API on --analytics-listen), and the gateway on --listen: the HTTP/JSON API, live streams, /metrics and the web page, whose URL is
printed. The built-in agents play by name (builtin:NAME; see 'parley agent --help'), and people
take seats from the page.

The data directory is --data-dir, by default "parley" in the user's configuration directory
(os.UserConfigDir: $XDG_CONFIG_HOME or ~/.config on Linux, ~/Library/Application Support on
macOS, %AppData% on Windows), or ./parley-data when there is none. Stop with Ctrl-C: matches
still running end void; start again on the same directory and every match, tournament and
rating is still there (unfinished tournaments carry on). One 'parley up' owns a data directory
while it runs (an OS lock on DATA/up.lock): a second one on the same directory stops at once,
naming the first.`,
		Example: `  parley up
  parley up --data-dir ./arena --listen 0.0.0.0:8080`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), deps, o) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.dataDir, "data-dir", "", "where matches and ratings are kept (default: DIR/parley with DIR the user's configuration directory, else ./parley-data)")
	fs.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address of the web page and HTTP API")
	fs.StringVar(&o.refereeListen, "referee-listen", "127.0.0.1:7070", "address of the referee's gRPC API")
	fs.StringVar(&o.analyticsListen, "analytics-listen", "127.0.0.1:7080", "address of the analytics gRPC API")
	fs.StringVar(&o.natsListen, "nats-listen", DefaultNATSListen, "address where other processes reach the embedded NATS server (loopback, a free port by default; its URL is printed and kept in DATA/nats.url, which 'parley admin' reads); more 'parley referee' workers use --nats URL")
	fs.IntVar(&o.workers, "workers", tournament.DefaultConcurrency, "queued matches (the page's single matches and tournament matches) this process runs at once")
	cli.LogLevelFlag(fs, &o.logLevel)
	o.policy.Bind(fs)
	fs.BoolVar(&o.allowBotDial, "allow-bot-dial", false, "dial registered bots (bot:TEAM/NAME) whose endpoint is a grpc:// address their team gave; off, such bots cannot play (the address may point into your own network)")
	return cmd
}

// DefaultNATSListen is where `parley up` lets other processes (`parley admin`, more
// referees) reach its embedded NATS server: a free loopback port, written to NATSURLFile.
const DefaultNATSListen = "127.0.0.1:0"

// NATSURLFile, in the data directory, holds the URL of a running `parley up`'s NATS server.
const NATSURLFile = "nats.url"

// DefaultDataDir is where `parley up` keeps its data without --data-dir.
func DefaultDataDir() string {
	if dir, err := os.UserConfigDir(); err == nil && dir != "" {
		return filepath.Join(dir, "parley")
	}
	return "parley-data"
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	level, err := cli.ParseLogLevel(o.logLevel)
	if err != nil {
		return err
	}
	if o.workers < 1 {
		return cli.Usagef("--workers must be at least 1, got %d", o.workers)
	}
	if o.dataDir == "" {
		o.dataDir = DefaultDataDir()
	}
	if err := os.MkdirAll(o.dataDir, 0o755); err != nil {
		return cli.Usagef("--data-dir %s: %v", o.dataDir, err)
	}
	// The directory is this process's before anything in it is opened: a second `parley up`
	// on it stops here, leaving the first one's NATS store, nats.url and database alone.
	lock, err := lockDataDir(o.dataDir)
	if err != nil {
		return err
	}
	defer lock.release()
	logger := deps.Logger(level)
	pol, err := o.policy.Policy()
	if err != nil {
		return err
	}

	// Listeners next: a port in use is the commonest failure, and it should say which flag.
	httpLis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return cli.Usagef("--listen %s: %v", o.listen, err)
	}
	defer httpLis.Close()
	refLis, err := net.Listen("tcp", o.refereeListen)
	if err != nil {
		return cli.Usagef("--referee-listen %s: %v", o.refereeListen, err)
	}
	defer refLis.Close()
	anLis, err := net.Listen("tcp", o.analyticsListen)
	if err != nil {
		return cli.Usagef("--analytics-listen %s: %v", o.analyticsListen, err)
	}
	defer anLis.Close()

	b, err := bus.Open(ctx, bus.Config{StoreDir: filepath.Join(o.dataDir, natsDir), ListenAddr: o.natsListen}, logger)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	defer b.Close()
	// Written before anything is announced, so whoever reads the URL line may run admin.
	if b.URL() != "" {
		urlFile := filepath.Join(o.dataDir, NATSURLFile)
		if err := os.WriteFile(urlFile, []byte(b.URL()+"\n"), 0o600); err != nil {
			logger.Warn("cannot write the NATS URL for parley admin", "file", urlFile, "err", err)
		}
		defer os.Remove(urlFile)
	}
	store, err := analytics.OpenStore(ctx, filepath.Join(o.dataDir, analyticsFile))
	if err != nil {
		return err
	}
	defer store.Close()

	metrics := telemetry.New()
	metrics.WatchConsumer(b.JetStream(), natsname.MatchStream, natsname.AnalyticsConsumer)
	for _, lane := range queue.LaneConsumers() {
		metrics.WatchConsumer(b.JetStream(), natsname.RequestStream, lane)
	}

	st, err := roles.Start(ctx, roles.Config{
		Bus: b, Games: deps.Games, Builtins: deps.Builtins, Pool: deps.Pool, Analytics: store, Families: standard.New(),
		Workers: o.workers, AllowBotDial: o.allowBotDial, Policy: pol, AdminToken: deps.Getenv("PARLEY_ADMIN_TOKEN"),
		Metrics: metrics, Logger: logger, Gateway: gateway.Config{Web: web.Handler()},
	}, refLis, anLis)
	if err != nil {
		return err
	}

	url := "http://" + httpLis.Addr().String() + "/"
	if tcp, ok := httpLis.Addr().(*net.TCPAddr); ok && tcp.IP.IsUnspecified() {
		url = fmt.Sprintf("http://127.0.0.1:%d/", tcp.Port)
	}
	lock.announce(url)
	fmt.Fprintf(deps.Out, "Parley is up: %s\n", url)
	fmt.Fprintf(deps.Out, "data in %s (NATS JetStream in %s, analytics in %s)\n", o.dataDir, natsDir, analyticsFile)
	fmt.Fprintf(deps.Out, "referee gRPC on %s, analytics gRPC on %s, metrics on %smetrics", refLis.Addr(), anLis.Addr(), url)
	if b.URL() != "" {
		fmt.Fprintf(deps.Out, ", NATS on %s", b.URL())
	}
	fmt.Fprintln(deps.Out)
	fmt.Fprintln(deps.Out, "stop with Ctrl-C")

	served := make(chan error, 1)
	go func() { served <- st.Gateway.Serve(ctx, httpLis) }()
	var runErr error
	select {
	case err := <-served:
		runErr = err
	case err := <-st.Failed():
		if err != nil {
			runErr = fmt.Errorf("analytics consumer: %w", err)
		}
	}
	// ctx ended (or something failed): the HTTP server stops first (Serve returns once ctx
	// ends), then the workers (their matches end void and are recorded), the tournaments this
	// process requests, the referee, the analytics consumer, and last the broker.
	if runErr != nil {
		logger.Error("stopping", "err", runErr)
	}
	st.Close()
	if ctx.Err() != nil && runErr == nil {
		fmt.Fprintln(deps.Out, "Parley stopped; start it again with the same --data-dir to carry on")
	}
	return runErr
}
