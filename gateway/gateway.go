// Package gateway is Parley's HTTP face: HTTP/JSON for what the referee, the tournament
// scheduler and the analytics service offer, generated from the proto files with connect-go
// (one handler serves the Connect protocol, gRPC and gRPC-Web), live streams of matches and of
// tournament standings as server-sent events fed from JetStream, and the web page.
//
// Everything it shows of a match goes through record.Redact: the gateway never shows the
// organiser's record. See README.md for the routes, the stream format and the limits.
package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/time/rate"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	"github.com/parley-arena/parley/gen/go/parley/analytics/v1/analyticsv1connect"
	"github.com/parley-arena/parley/gen/go/parley/botlink/v1/botlinkv1connect"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/gen/go/parley/referee/v1/refereev1connect"
	"github.com/parley-arena/parley/gen/go/parley/registry/v1/registryv1connect"
	"github.com/parley-arena/parley/gen/go/parley/tournament/v1/tournamentv1connect"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/botlink"
	"github.com/parley-arena/parley/services/registry"
	"github.com/parley-arena/parley/services/tournament"
)

// Defaults of Config's limits.
const (
	DefaultMaxBodyBytes        = 1 << 20
	DefaultMaxStreamsPerClient = 16
	DefaultStartGrace          = 10 * time.Second
	DefaultKeepAlive           = 15 * time.Second
	// readTimeout bounds reading a whole record from JetStream for one request.
	readTimeout = 30 * time.Second
)

// Referee is what the gateway asks of the referee: the game catalogue. (Matches go to the
// referee workers through the work queue.) *server.Server implements it in process;
// NewRefereeClient adapts a gRPC client.
type Referee interface {
	ListGames(context.Context, *refereev1.ListGamesRequest) (*refereev1.ListGamesResponse, error)
}

// SeatAuthorizer decides whether a token lets its bearer see a match as the player of a seat
// (the human seat hands out such tokens). It must be safe for concurrent use.
type SeatAuthorizer interface {
	AuthorizeSeat(ctx context.Context, matchID string, seat int32, token string) bool
}

// Config is what a Gateway serves and with which limits.
type Config struct {
	// Bus is the NATS connection: match records, the tournament streams and the work queue.
	// Required.
	Bus *bus.Bus
	// Referee lists games. Required.
	Referee Referee
	// Analytics answers the analytics service's queries. Nil: those RPCs and the exports
	// answer unavailable.
	Analytics analyticsv1.AnalyticsServiceClient
	// Games is the game catalogue tournaments are checked against (the referee's). Required.
	Games *games.Registry
	// Families computes the tournament standings' family metrics (nil: the common values only).
	Families *metrics.Registry
	// Metrics, when set, counts requests and streams and is served on /metrics.
	Metrics *telemetry.Metrics
	// Logger (nil: discard).
	Logger *slog.Logger
	// Web serves the web page on / and every path no route claims. Nil: a placeholder.
	Web http.Handler
	// Seats checks seat tokens for seat views. Nil: every seat view is refused. When it is also
	// a SeatChecker (human.Hub), matches may have human seats, seated by a worker of this
	// process; otherwise StartMatch refuses human agent addresses.
	Seats SeatAuthorizer
	// Mount, when set, adds routes (the human seat's) to the gateway's mux, behind the same
	// limits, logs and metrics.
	Mount func(mux *http.ServeMux)
	// MaxBodyBytes bounds request bodies (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxStreamsPerClient bounds the streams open at once from one client address (0:
	// DefaultMaxStreamsPerClient).
	MaxStreamsPerClient int
	// StartGrace is how long a match stream waits for a match that has not started yet (0:
	// DefaultStartGrace).
	StartGrace time.Duration
	// KeepAlive is the interval of keep-alive comments on idle streams (0: DefaultKeepAlive).
	KeepAlive time.Duration
	// ResumeTournaments, when set, resumes at start the tournaments started through a gateway
	// that have matches left to request.
	ResumeTournaments bool
	// TournamentConcurrency is the concurrency of resumed tournaments (0:
	// tournament.DefaultConcurrency).
	TournamentConcurrency int
	// AllowLLMAgents lets HTTP clients start matches and tournaments with builtin:llm agents.
	// Off by default: their settings name servers, files and environment variables of this
	// machine (base_url with api_key_env would send any variable's value to any server). Serve
	// a language model with `parley agent llm` and name it grpc://host:port instead.
	AllowLLMAgents bool
	// AllowBotDial lets matches and tournaments started here use registered bots whose endpoint
	// is a grpc:// address a team gave (the referee must allow it too). Off by default: such an
	// address may point into the organiser's own network.
	AllowBotDial bool
	// TokenRate and TokenBurst bound each team token's requests to RegistryService and
	// BotLinkService (0: DefaultTokenRate a second, DefaultTokenBurst at once).
	TokenRate  float64
	TokenBurst int
}

// Gateway serves HTTP. Make one with New; Close it.
type Gateway struct {
	cfg     Config
	log     *slog.Logger
	handler http.Handler
	streams *streamLimiter
	index   *matchIndex
	tracker *tracker

	ctx    context.Context // parent of background work; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	registry *registry.Store
	auth     *teamAuth

	runMu   sync.Mutex
	running map[string]bool // tournaments this gateway requests matches for
}

// New checks cfg, reads the match index from JetStream (every match so far), starts following
// new matches and endings, resumes tournaments when asked, and returns the gateway. ctx bounds
// the start-up only.
func New(ctx context.Context, cfg Config) (*Gateway, error) {
	switch {
	case cfg.Bus == nil:
		return nil, errors.New("gateway: no NATS connection")
	case cfg.Referee == nil:
		return nil, errors.New("gateway: no referee")
	case cfg.Games == nil:
		return nil, errors.New("gateway: no game catalogue")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxStreamsPerClient <= 0 {
		cfg.MaxStreamsPerClient = DefaultMaxStreamsPerClient
	}
	if cfg.StartGrace <= 0 {
		cfg.StartGrace = DefaultStartGrace
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.TournamentConcurrency <= 0 {
		cfg.TournamentConcurrency = tournament.DefaultConcurrency
	}
	if cfg.TokenRate <= 0 {
		cfg.TokenRate = DefaultTokenRate
	}
	if cfg.TokenBurst <= 0 {
		cfg.TokenBurst = DefaultTokenBurst
	}
	bg, cancel := context.WithCancel(context.Background())
	g := &Gateway{
		cfg: cfg, log: cfg.Logger, streams: newStreamLimiter(cfg.MaxStreamsPerClient),
		ctx: bg, cancel: cancel, running: map[string]bool{},
	}
	js := cfg.Bus.JetStream()
	if err := tournament.EnsureStreams(ctx, js); err != nil {
		cancel()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	reg, err := registry.Open(ctx, js)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("gateway: %w", err)
	}
	g.registry = reg
	g.auth = &teamAuth{store: reg, limit: rate.Limit(cfg.TokenRate), burst: cfg.TokenBurst, limiters: map[string]*rate.Limiter{}}
	g.tracker = newTracker(js, cfg.Families)
	g.index = newMatchIndex(js, g.log, g.tracker.ended)
	if err := g.index.start(ctx, bg, &g.wg); err != nil {
		cancel()
		g.wg.Wait()
		return nil, fmt.Errorf("gateway: match index: %w", err)
	}
	if cfg.ResumeTournaments {
		if err := g.resumeTournaments(ctx); err != nil {
			g.Close()
			return nil, fmt.Errorf("gateway: resume tournaments: %w", err)
		}
	}
	g.handler = g.routes()
	return g, nil
}

// Close stops the background work (tournaments this gateway requests matches for stop
// requesting; a new gateway resumes them) and waits for it.
func (g *Gateway) Close() {
	g.cancel()
	g.wg.Wait()
}

// ServeHTTP serves every route.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.handler.ServeHTTP(w, r) }

func (g *Gateway) routes() http.Handler {
	mux := http.NewServeMux()
	opts := []connect.HandlerOption{
		connect.WithReadMaxBytes(int(g.cfg.MaxBodyBytes)),
		connect.WithInterceptors(streamInterceptor{g: g}),
	}
	mux.Handle(refereev1connect.NewRefereeServiceHandler(&refereeService{g: g}, opts...))
	mux.Handle(tournamentv1connect.NewTournamentServiceHandler(&tournamentService{g: g}, opts...))
	mux.Handle(analyticsv1connect.NewAnalyticsServiceHandler(&analyticsService{g: g}, opts...))
	mux.Handle(registryv1connect.NewRegistryServiceHandler(&registryService{g: g}, opts...))
	mux.Handle(botlinkv1connect.NewBotLinkServiceHandler(&botLinkService{g: g}, opts...))

	mux.HandleFunc("GET /api/v1/matches/{id}/events", g.matchEvents)
	mux.HandleFunc("GET /api/v1/matches/{id}/record", g.matchRecord)
	mux.HandleFunc("GET /api/v1/tournaments/{id}/standings", g.standingsEvents)
	mux.HandleFunc("GET /api/v1/exports/{file}", g.export)
	mux.HandleFunc("GET /api/v1/bots", g.publicBots)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		WriteError(w, connect.CodeNotFound, fmt.Sprintf("no route %s %s; see gateway/README.md", r.Method, r.URL.Path))
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	if g.cfg.Metrics != nil {
		mux.Handle("GET /metrics", g.cfg.Metrics.Handler())
	}
	if g.cfg.Mount != nil {
		g.cfg.Mount(mux)
	}
	web := g.cfg.Web
	if web == nil {
		web = placeholder()
	}
	mux.Handle("/", web)

	var h http.Handler = mux
	h = limitBody(g.cfg.MaxBodyBytes, h)
	h = g.logRequests(h)
	if g.cfg.Metrics != nil {
		h = g.cfg.Metrics.HTTP(h)
	}
	return h
}

// streamOpened counts a live stream as open until the returned function is called.
func (g *Gateway) streamOpened(route string) func() {
	if g.cfg.Metrics == nil {
		return func() {}
	}
	return g.cfg.Metrics.StreamOpened(route)
}

// logRequests logs each request: at debug level when it went well, warn for server errors.
func (g *Gateway) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &codeWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		level := slog.LevelDebug
		if sw.code >= 500 {
			level = slog.LevelWarn
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", sw.status()),
			slog.Duration("took", time.Since(start)), slog.String("client", clientAddr(r.RemoteAddr)),
		}
		if id := r.PathValue("id"); id != "" {
			attrs = append(attrs, slog.String("match_id", id))
		}
		g.log.LogAttrs(r.Context(), level, "http request", attrs...)
	})
}

// codeWriter remembers the status code written.
type codeWriter struct {
	http.ResponseWriter
	code int
}

func (w *codeWriter) status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

func (w *codeWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *codeWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func (w *codeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *codeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// placeholder is the page served until the web page exists.
func placeholder() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			WriteError(w, connect.CodeNotFound, "no page "+strconv.Quote(r.URL.Path))
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<!doctype html><meta charset="utf-8"><title>Parley</title>
<h1>Parley</h1><p>The gateway is running. The API is described in gateway/README.md:
<code>POST /parley.referee.v1.RefereeService/ListGames</code>,
<code>GET /api/v1/matches/{id}/events</code>, <a href="/metrics">/metrics</a>.</p>
`))
	})
}

// probeAgent opens an agent address as the worker taking the match will (a registered bot:
// registered, not retired, allowed; a built-in agent's settings parse) and closes it again, so
// that a refusal is the caller's error, not a match's fault. It returns a registered bot's
// team/name@version label ("" for other agents).
func probeAgent(ctx context.Context, addr string) (string, error) {
	c, err := agentconn.Open(ctx, addr)
	if err != nil {
		return "", invalid("%v", err)
	}
	c.Close()
	return c.Label, nil
}

// checkAgents refuses agent addresses that HTTP clients may not use (see
// Config.AllowLLMAgents). Whether an address opens at all is probeAgent's to say.
func (g *Gateway) checkAgents(addrs ...string) error {
	if g.cfg.AllowLLMAgents {
		return nil
	}
	for _, a := range addrs {
		if a == "builtin:llm" || strings.HasPrefix(a, "builtin:llm?") {
			return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf(
				"agent %q: language-model agents cannot be started through the gateway (their settings name servers, files and "+
					"environment variables of this machine); serve one with `parley agent llm` and give its grpc://host:port", a))
		}
	}
	return nil
}

// withBots returns ctx in which "bot:TEAM/NAME" addresses open through this gateway's
// registry and NATS connection, as the organiser allows (Config.AllowBotDial).
func (g *Gateway) withBots(ctx context.Context) context.Context {
	return agentconn.WithBots(ctx, agentconn.Bots{
		Directory: botlink.Directory{Store: g.registry, NC: g.cfg.Bus.Conn()}, AllowDial: g.cfg.AllowBotDial,
	})
}
