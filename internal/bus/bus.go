// Package bus is Parley's NATS JetStream plumbing: it starts or dials the
// broker, keeps the match stream in shape, names subjects and message ids,
// records match events and reads them back.
//
// Every match event travels on the subject parley.match.<match_id>.<event>
// and lands in the JetStream stream PARLEY_MATCHES. A message carries one event,
// or several consecutive events of one match (an EventBatch, marked by the
// Parley-Events header: see MatchSettler and Decode), and then travels on the
// subject of its last event, or on match_started when it holds the match's
// start and not its ending. Each message carries the Nats-Msg-Id header
// <match_id>/<seq> of its last event, so a publisher that sends it twice (a
// retry, a restarted referee) stores it once, and consumers can de-duplicate
// events on the same pair.
//
// Without a URL, [Open] runs a NATS server inside the process and talks to it
// through an in-memory pipe; with one, it dials that server. After the
// connection is made nothing else differs, so tests of the embedded path also
// cover production.
package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/parley-arena/parley/internal/natsname"
)

const (
	// DuplicateWindow is how long JetStream remembers message ids to drop
	// repeats. A referee re-sends an event only while the match is live: after
	// a lost ack or a reconnect, within seconds. Two minutes covers that with
	// room to spare, while keeping the id table small (it holds one entry per
	// event published in the window).
	DuplicateWindow = 2 * time.Minute

	// defaultStartTimeout bounds how long Open waits for the embedded server
	// or the first connection when ctx has no deadline.
	defaultStartTimeout = 10 * time.Second

	// closeTimeout bounds how long Close waits for the connection to drain.
	closeTimeout = 5 * time.Second
)

// Sentinel errors returned, wrapped, by this package.
var (
	// ErrInvalidConfig reports a Config that cannot be used.
	ErrInvalidConfig = errors.New("bus: invalid config")
	// ErrClosed reports use of a connection that has been closed.
	ErrClosed = errors.New("bus: connection closed")
)

// Config says where the broker is.
type Config struct {
	// URL of an external NATS server or cluster, such as
	// "nats://127.0.0.1:4222" (several may be given, separated by commas).
	// Empty means: run an embedded server in this process.
	URL string

	// StoreDir is where the embedded server keeps JetStream data. Empty
	// means a fresh temporary directory, deleted by Close. Only for the
	// embedded server.
	StoreDir string

	// ListenAddr, as "host:port", makes the embedded server also accept TCP
	// clients, so that other processes can share it (see Bus.URL). Port 0
	// picks a free port. Empty means no TCP listener at all: only this process
	// can reach the server. Only for the embedded server.
	ListenAddr string

	// HealthEvery is how often the embedded server's store is checked and, after a write
	// error, healed (0: DefaultHealthEvery). See Bus.Ready.
	HealthEvery time.Duration

	// Replicas is how many servers of a NATS cluster keep a copy of each Parley stream: with
	// 3, the streams (and the consumers on them) live through the loss of any one server. 0
	// leaves a stream that exists as it is and creates a missing one on a single server. The
	// streams other packages create follow the match stream's (see StreamReplicas). More
	// than 1 needs a cluster at URL.
	Replicas int
}

// maxReplicas is JetStream's limit on stream replicas.
const maxReplicas = 5

// Bus is a connection to NATS with JetStream, plus the embedded server when
// there is one. Its methods are safe for concurrent use.
type Bus struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	url string
	log *slog.Logger

	replicas int // Config.Replicas

	srv    *server.Server // nil when connected to an external server
	tmpDir string         // store directory to remove on Close, if any

	health    health       // what the last check of the store found (Ready)
	healed    atomic.Int64 // times the embedded store was reopened after a write error
	stopWatch func()       // stops watching the embedded store, and waits

	closed    chan struct{} // closed when the connection is closed for good
	closeOnce sync.Once
	closeErr  error
}

// Open connects to the broker described by cfg, starting an embedded server
// first when cfg.URL is empty, and makes sure the PARLEY_MATCHES stream exists
// with the expected settings. ctx bounds the start-up only. A nil logger
// discards logs.
//
// Open returns an error wrapping ErrInvalidConfig for a bad cfg. The caller
// must Close the Bus.
func Open(ctx context.Context, cfg Config, logger *slog.Logger) (_ *Bus, err error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.URL != "" && (cfg.StoreDir != "" || cfg.ListenAddr != "") {
		return nil, fmt.Errorf("%w: StoreDir and ListenAddr apply only to the embedded server, not with URL %q", ErrInvalidConfig, cfg.URL)
	}
	switch {
	case cfg.Replicas < 0 || cfg.Replicas > maxReplicas:
		return nil, fmt.Errorf("%w: Replicas must be 0 to %d, got %d", ErrInvalidConfig, maxReplicas, cfg.Replicas)
	case cfg.Replicas > 1 && cfg.URL == "":
		return nil, fmt.Errorf("%w: %d replicas need a NATS cluster; the embedded server is a single server", ErrInvalidConfig, cfg.Replicas)
	}
	ctx, cancel := withDefaultTimeout(ctx, defaultStartTimeout)
	defer cancel()

	b := &Bus{log: logger, url: cfg.URL, replicas: cfg.Replicas, closed: make(chan struct{})}
	defer func() {
		if err != nil {
			_ = b.Close()
		}
	}()

	var inProcess []nats.Option
	if cfg.URL == "" {
		if err := b.startEmbedded(ctx, cfg); err != nil {
			return nil, err
		}
		inProcess = append(inProcess, nats.InProcessServer(b.srv))
	}

	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("bus: open: %w", err)
	}
	// From here on the embedded and external paths are the same; the only
	// difference is how the client reaches the server.
	opts := append([]nats.Option{
		nats.Name("parley"),
		nats.Timeout(time.Until(deadline(ctx))),
		nats.MaxReconnects(-1), // a referee outlives broker restarts
		nats.DrainTimeout(closeTimeout),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err == nil {
				return // our own Close: nothing went wrong
			}
			logger.Warn("nats disconnected", "err", err)
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			logger.Info("nats reconnected", "url", nc.ConnectedUrlRedacted())
		}),
		nats.ClosedHandler(func(*nats.Conn) { close(b.closed) }),
		nats.ErrorHandler(func(_ *nats.Conn, sub *nats.Subscription, err error) {
			subject := ""
			if sub != nil {
				subject = sub.Subject
			}
			logger.Error("nats async error", "subject", subject, "err", err)
		}),
	}, inProcess...)
	b.nc, err = nats.Connect(b.url, opts...)
	if err != nil {
		if b.srv == nil {
			return nil, fmt.Errorf("bus: connect to %s: %w", b.url, err)
		}
		return nil, fmt.Errorf("bus: connect to embedded server: %w", err)
	}
	if err := checkServerVersion(b.nc.ConnectedServerVersion()); err != nil {
		b.nc.Close()
		return nil, fmt.Errorf("bus: %s: %w", b.url, err)
	}
	js, err := jetstream.New(b.nc)
	if err != nil {
		return nil, fmt.Errorf("bus: jetstream: %w", err)
	}
	b.js = NewStreamCache(js)
	if err := b.ensureStream(ctx); err != nil {
		return nil, err
	}
	if b.srv != nil {
		every := cfg.HealthEvery
		if every <= 0 {
			every = DefaultHealthEvery
		}
		wctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); b.watchStore(wctx, every) }()
		b.stopWatch = func() { stop(); <-done }
	}
	logger.Info("nats ready", "embedded", b.srv != nil, "url", b.url, "stream", natsname.MatchStream)
	return b, nil
}

// startEmbedded starts an in-process server with JetStream and waits until it
// takes connections.
func (b *Bus) startEmbedded(ctx context.Context, cfg Config) error {
	storeDir := cfg.StoreDir
	if storeDir == "" {
		dir, err := os.MkdirTemp("", "parley-nats-")
		if err != nil {
			return fmt.Errorf("bus: embedded server store: %w", err)
		}
		b.tmpDir, storeDir = dir, dir
	}
	opts := &server.Options{
		ServerName: "parley-embedded",
		JetStream:  true,
		StoreDir:   storeDir,
		NoSigs:     true, // signals belong to the host program
		DontListen: true,
	}
	if cfg.ListenAddr != "" {
		host, port, err := splitListenAddr(cfg.ListenAddr)
		if err != nil {
			return err
		}
		opts.DontListen = false
		opts.Host, opts.Port = host, port
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return fmt.Errorf("bus: embedded server: %w", err)
	}
	srv.SetLoggerV2(serverLogger{b.log.With("component", "nats-server")}, false, false, false)
	b.srv = srv
	srv.Start()
	if !srv.ReadyForConnections(time.Until(deadline(ctx))) {
		return fmt.Errorf("bus: embedded server not ready (store %s, listen %q): %w",
			storeDir, cfg.ListenAddr, context.DeadlineExceeded)
	}
	if !opts.DontListen {
		b.url = clientURL(srv.Addr())
	}
	return nil
}

// splitListenAddr turns "host:port" into server options. Port 0 becomes -1,
// which nats-server reads as "any free port" (its own 0 means 4222).
func splitListenAddr(addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%w: ListenAddr %q: %v", ErrInvalidConfig, addr, err)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%w: ListenAddr %q: bad port", ErrInvalidConfig, addr)
	}
	if port == 0 {
		port = server.RANDOM_PORT
	}
	return host, port, nil
}

// clientURL is the URL another process uses to reach the listener at addr;
// a wildcard host becomes the loopback address.
func clientURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return ""
	}
	host := tcp.IP.String()
	if tcp.IP == nil || tcp.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "nats://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port))
}

// ensureStream creates the match stream, or updates it to the settings below
// when it already exists with others. A stream already as they say is left
// alone: an update that changes nothing still rewrites the stream's settings,
// and races (inside nats-server) with consumers created at the same moment by
// other processes sharing the server.
func (b *Bus) ensureStream(ctx context.Context) error {
	cfg := jetstream.StreamConfig{
		Name:        natsname.MatchStream,
		Description: "Parley match events, one subject per match and event kind",
		Subjects:    []string{natsname.AllMatches},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  DuplicateWindow,
		Replicas:    b.replicas,
	}
	var have *jetstream.StreamConfig
	if st, err := b.js.Stream(ctx, natsname.MatchStream); err == nil {
		have = &st.CachedInfo().Config
		if cfg.Replicas == 0 {
			cfg.Replicas = have.Replicas
		}
	}
	cfg.Replicas = max(cfg.Replicas, 1)
	cfg.AllowDirect = DirectGets(cfg.Replicas)
	if have != nil && have.Description == cfg.Description && slices.Equal(have.Subjects, cfg.Subjects) &&
		have.Storage == cfg.Storage && have.Retention == cfg.Retention && have.Duplicates == cfg.Duplicates &&
		have.Replicas == cfg.Replicas && have.AllowDirect == cfg.AllowDirect {
		return nil
	}
	_, err := b.js.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		return fmt.Errorf("bus: stream %s: %w", natsname.MatchStream, err)
	}
	return nil
}

// DirectGets says whether a stream kept on replicas servers lets its messages be read by
// direct get (a raw message rather than JSON, answered without the JetStream API's queue): on
// one server only, since with several a follower may answer with what it has not caught up on,
// and the exactly-once checks read what was just stored.
func DirectGets(replicas int) bool { return replicas <= 1 }

// StreamReplicas returns how many servers keep a copy of the match stream (1 when it does not
// exist), for packages that create streams of their own next to it: they keep as many.
func StreamReplicas(ctx context.Context, js jetstream.JetStream) (int, error) {
	st, err := js.Stream(ctx, natsname.MatchStream)
	switch {
	case errors.Is(err, jetstream.ErrStreamNotFound):
		return 1, nil
	case err != nil:
		return 0, fmt.Errorf("bus: stream %s: %w", natsname.MatchStream, err)
	}
	return max(st.CachedInfo().Config.Replicas, 1), nil
}

// Conn returns the NATS connection, for services that subscribe or publish
// outside JetStream.
func (b *Bus) Conn() *nats.Conn { return b.nc }

// JetStream returns the JetStream handle for stream and consumer management
// and for ReadMatch. It is a StreamCache: stream handles are kept once made.
func (b *Bus) JetStream() jetstream.JetStream { return b.js }

// URL returns the address other processes can use to reach this broker: the
// external URL from Config, or the embedded server's TCP address when it
// listens. It is empty for an embedded server without a listener.
func (b *Bus) URL() string { return b.url }

// Embedded reports whether the broker runs inside this process.
func (b *Bus) Embedded() bool { return b.srv != nil }

// Close drains the connection (in-flight messages are sent and subscriptions
// emptied, within a few seconds), closes it, stops the embedded server and
// removes its temporary store. Events recorded without a successful
// Publisher.Flush may be lost. Close is idempotent; the error, if any, comes
// from draining.
func (b *Bus) Close() error {
	b.closeOnce.Do(func() {
		if b.stopWatch != nil {
			b.stopWatch()
		}
		if b.nc != nil {
			if err := b.nc.Drain(); err == nil {
				select {
				case <-b.closed:
				case <-time.After(closeTimeout + time.Second):
					b.closeErr = fmt.Errorf("bus: close: drain did not finish in %s", closeTimeout)
				}
			} else if !errors.Is(err, nats.ErrConnectionClosed) && !errors.Is(err, nats.ErrConnectionReconnecting) {
				b.closeErr = fmt.Errorf("bus: close: %w", err)
			}
			b.nc.Close()
		}
		if b.srv != nil {
			b.srv.Shutdown()
			b.srv.WaitForShutdown()
		}
		if b.tmpDir != "" {
			if err := os.RemoveAll(b.tmpDir); err != nil {
				b.log.Warn("removing embedded store", "dir", b.tmpDir, "err", err)
			}
		}
	})
	return b.closeErr
}

// withDefaultTimeout gives ctx a deadline of d from now when it has none.
func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// deadline returns ctx's deadline; callers have set one.
func deadline(ctx context.Context) time.Time {
	d, _ := ctx.Deadline()
	return d
}

// serverLogger sends the embedded server's log lines to slog.
type serverLogger struct{ log *slog.Logger }

func (l serverLogger) Noticef(format string, v ...any) { l.log.Info(fmt.Sprintf(format, v...)) }
func (l serverLogger) Warnf(format string, v ...any)   { l.log.Warn(fmt.Sprintf(format, v...)) }
func (l serverLogger) Fatalf(format string, v ...any)  { l.log.Error(fmt.Sprintf(format, v...)) }
func (l serverLogger) Errorf(format string, v ...any)  { l.log.Error(fmt.Sprintf(format, v...)) }
func (l serverLogger) Debugf(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }
func (l serverLogger) Tracef(format string, v ...any)  { l.log.Debug(fmt.Sprintf(format, v...)) }

var _ server.Logger = serverLogger{}

// minServerVersion is the oldest nats-server Parley works with: a match's record is written
// with JetStream's expected-last-sequence check on a subject filter (MatchSettler), which
// nats-server 2.11 added; an older server would apply the check to each message's own subject
// and refuse a record's second message.
var minServerVersion = [2]int{2, 11}

// checkServerVersion reports a server older than minServerVersion, or one whose version
// cannot be read.
func checkServerVersion(version string) error {
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(version, "v"), "%d.%d", &major, &minor); err != nil {
		return fmt.Errorf("the server's version %q cannot be read; Parley needs nats-server %d.%d or later", version, minServerVersion[0], minServerVersion[1])
	}
	if major < minServerVersion[0] || major == minServerVersion[0] && minor < minServerVersion[1] {
		return fmt.Errorf("the server runs nats-server %s; Parley needs %d.%d or later", version, minServerVersion[0], minServerVersion[1])
	}
	return nil
}
