// Package gateway is Parley's edge: HTTP/JSON for what the referee, the tournaments, the
// analytics service and the bot registry offer, generated from the proto files with connect-go
// (one handler serves the Connect protocol, gRPC and gRPC-Web), team authentication, live
// streams of matches and of tournament standings as server-sent events, and the web page. It
// speaks the services' contracts and nothing else: no rules, no runner, no broker.
//
// Everything it shows of a match goes through record.Redact: the gateway never shows the
// organiser's record. See README.md for the routes, the stream format and the limits.
package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	"github.com/parley-arena/parley/referee/policy"

	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"

	"connectrpc.com/connect"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	"github.com/parley-arena/parley/gen/go/parley/analytics/v1/analyticsv1connect"
	"github.com/parley-arena/parley/gen/go/parley/botlink/v1/botlinkv1connect"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/gen/go/parley/referee/v1/refereev1connect"
	"github.com/parley-arena/parley/gen/go/parley/registry/v1/registryv1connect"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/gen/go/parley/tournament/v1/tournamentv1connect"
	"github.com/parley-arena/parley/internal/telemetry"
)

// Defaults of Config's limits.
const (
	DefaultMaxBodyBytes        = 1 << 20
	DefaultMaxStreamsPerClient = 16
	DefaultKeepAlive           = 15 * time.Second
	// DefaultStandingsEvery is how often a live standings stream looks for a change.
	DefaultStandingsEvery = time.Second
)

// SeatAuthorizer decides whether a token lets its bearer see a match as the player of a seat
// (the human seat hands out such tokens). It must be safe for concurrent use.
type SeatAuthorizer interface {
	AuthorizeSeat(ctx context.Context, matchID string, seat int32, token string) bool
}

// Teams is what the gateway asks of the bot registry: who a team token belongs to, and what
// a team may do with its own bots (services/registry.Service). Errors are gRPC statuses.
type Teams interface {
	Authenticate(ctx context.Context, token string) (string, error)
	Register(ctx context.Context, team string, req *registryv1.RegisterBotRequest) (*registryv1.Bot, error)
	Update(ctx context.Context, team string, req *registryv1.UpdateBotRequest) (*registryv1.Bot, error)
	Retire(ctx context.Context, team, name string) (*registryv1.Bot, error)
	List(ctx context.Context, caller, team string, retired bool) ([]*registryv1.Bot, error)
	Public(ctx context.Context) ([]*registryv1.Bot, error)
}

// BotLinks serves the links of dial-out bots (services/botlink.Links), for an authenticated
// team. Errors are gRPC statuses.
type BotLinks interface {
	Serve(ctx context.Context, team string, recv func() (*botlinkv1.ConnectRequest, error), send func(*botlinkv1.ConnectResponse) error) error
}

// Config is what a Gateway serves and with which limits. The gateway reaches every service
// through its contract: the referee, tournaments and analytics through their gRPC clients (in
// one process, over loopback, as across machines), the registry and the bot links through the
// small interfaces above.
type Config struct {
	// Referee lists games, starts matches and reads their records (the whole record: the
	// gateway redacts what it shows). Required.
	Referee refereev1.RefereeServiceClient
	// Tournaments starts tournaments and reports how they stand. Nil: those RPCs answer
	// unavailable.
	Tournaments tournamentv1.TournamentServiceClient
	// Analytics answers the analytics service's queries. Nil: those RPCs and the exports
	// answer unavailable.
	Analytics analyticsv1.AnalyticsServiceClient
	// Teams authenticates team tokens and changes teams' bots. Nil: RegistryService and
	// BotLinkService answer unavailable, and no bots are listed.
	Teams Teams
	// BotLinks holds dial-out bots' links. Nil: BotLinkService answers unavailable.
	BotLinks BotLinks
	// Metrics, when set, counts requests and streams and is served on /metrics.
	Metrics *telemetry.Metrics
	// Logger (nil: discard).
	Logger *slog.Logger
	// Web serves the web page on / and every path no route claims. Nil: a placeholder.
	Web http.Handler
	// Seats checks seat tokens for seat views. Nil: every seat view is refused.
	Seats SeatAuthorizer
	// SeatBudget, when set, holds one seat for a person on the caller's budgets for each seat
	// reserved ahead of its match (POST /api/v1/seats), for SeatHold; release gives it back.
	SeatBudget func(policy.Caller) (release func(), err error)
	// SeatHold is how long a reserved seat is held on its caller's budget: the hub's ticket
	// lifetime (0: 15 minutes, human.DefaultTicketTTL).
	SeatHold time.Duration
	// Mount, when set, adds routes (the human seat's, the relay to a team's own dial-out bot)
	// to the gateway's mux, behind the same limits, logs and metrics.
	Mount func(mux *http.ServeMux)
	// MaxBodyBytes bounds request bodies (0: DefaultMaxBodyBytes).
	MaxBodyBytes int64
	// MaxStreamsPerClient bounds the streams open at once from one client address (0:
	// DefaultMaxStreamsPerClient).
	MaxStreamsPerClient int
	// KeepAlive is the interval of keep-alive comments on idle streams (0: DefaultKeepAlive).
	KeepAlive time.Duration
	// StandingsEvery is how often a live standings stream looks for a change (0:
	// DefaultStandingsEvery).
	StandingsEvery time.Duration
	// TokenRate and TokenBurst bound each team token's requests to RegistryService and
	// BotLinkService (0: DefaultTokenRate a second, DefaultTokenBurst at once).
	TokenRate  float64
	TokenBurst int
	// AdminToken, when set, makes a request bearing it the organiser's.
	AdminToken string
	// Ready says whether the services behind the gateway can take work that must be stored
	// (nil error: ready). Nil: always ready. /healthz answers 503 while it is not.
	Ready func() error
	// Policy is the organiser's: its starts_per_minute bounds the matches, tournaments and
	// seat reservations one client address (a spectator) or one team starts a minute, and its
	// auth_failures_per_minute the failed token attempts of one client address (0 or a nil
	// Policy: no bound).
	Policy *policy.Policy
}

// Gateway serves HTTP. Make one with New.
type Gateway struct {
	cfg     Config
	log     *slog.Logger
	handler http.Handler
	streams *streamLimiter
	auth    *teamAuth
	callers *callers
}

// New checks cfg and returns the gateway.
func New(cfg Config) (*Gateway, error) {
	if cfg.Referee == nil {
		return nil, errors.New("gateway: no referee")
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
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	if cfg.StandingsEvery <= 0 {
		cfg.StandingsEvery = DefaultStandingsEvery
	}
	if cfg.TokenRate <= 0 {
		cfg.TokenRate = DefaultTokenRate
	}
	if cfg.TokenBurst <= 0 {
		cfg.TokenBurst = DefaultTokenBurst
	}
	g := &Gateway{cfg: cfg, log: cfg.Logger, streams: newStreamLimiter(cfg.MaxStreamsPerClient)}
	var starts, authFailures int
	if cfg.Policy != nil {
		starts, authFailures = cfg.Policy.StartsPerMinute, cfg.Policy.AuthFailuresPerMinute
	}
	g.callers = &callers{
		teams: cfg.Teams, adminToken: cfg.AdminToken, perMinute: starts,
		starts:       newKeyedLimiter(float64(starts), max(starts/2, 1)),
		authFailures: newKeyedLimiter(float64(authFailures), max(authFailures/2, 1)),
	}
	g.auth = &teamAuth{callers: g.callers, perTeam: newKeyedLimiter(cfg.TokenRate*60, cfg.TokenBurst), limit: cfg.TokenRate, burst: cfg.TokenBurst}
	g.handler = g.routes()
	return g, nil
}

// ServeHTTP serves every route.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) { g.handler.ServeHTTP(w, r) }

func (g *Gateway) routes() http.Handler {
	mux := http.NewServeMux()
	opts := []connect.HandlerOption{
		connect.WithCodec(strictJSON{"json"}), connect.WithCodec(strictJSON{"json; charset=utf-8"}),
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
	mux.HandleFunc("GET /healthz", g.healthz)
	if g.cfg.Metrics != nil {
		mux.Handle("GET /metrics", g.cfg.Metrics.Handler())
	}
	var mounted *http.ServeMux
	if g.cfg.Mount != nil {
		mounted = http.NewServeMux()
		g.cfg.Mount(mounted)
	}
	web := g.cfg.Web
	if web == nil {
		web = placeholder()
	}
	mux.Handle("/", web)

	var h http.Handler = g.quotaSeatReservations(g.withMounted(mounted, mux))
	h = limitBody(g.cfg.MaxBodyBytes, g.readTimeout(), h)
	h = g.logRequests(h)
	if g.cfg.Metrics != nil {
		h = g.cfg.Metrics.HTTP(h)
	}
	return h
}

// healthz answers {"status":"ok"}, or 503 with the reason while Config.Ready says not ready.
func (g *Gateway) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if g.cfg.Ready != nil {
		if err := g.cfg.Ready(); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			_ = json.NewEncoder(w).Encode(map[string]string{"status": "not ready", "reason": err.Error()})
			return
		}
	}
	_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
}

// withMounted serves the routes Config.Mount added from mounted and the rest from own. A mounted
// route authenticates its own callers (the relay, by team token); a bearer token sent to one is
// checked here first too, so that its failed attempts count against the same per-address bound
// as on every other route.
func (g *Gateway) withMounted(mounted, own *http.ServeMux) http.Handler {
	if mounted == nil {
		return own
	}
	errs := connect.NewErrorWriter()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := mounted.Handler(r)
		if pattern == "" {
			own.ServeHTTP(w, r)
			return
		}
		if r.Header.Get("Authorization") != "" {
			if _, err := g.callers.of(r.Context(), r.Header, clientAddr(r.RemoteAddr)); err != nil {
				if errs.IsSupported(r) {
					_ = errs.Write(w, r, err)
				} else {
					writeErr(w, err)
				}
				return
			}
		}
		if r.Method == http.MethodGet && strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			// A mounted live stream (a seat's observations) counts against the same
			// per-address bound as every other stream.
			release, ok := g.streams.acquire(clientAddr(r.RemoteAddr))
			if !ok {
				writeErrorStatus(w, http.StatusTooManyRequests, connect.CodeResourceExhausted, g.streams.tooMany())
				return
			}
			defer release()
			defer g.streamOpened(pattern)()
		}
		mounted.ServeHTTP(w, r) // which sets the pattern's path values; Handler does not
	})
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
		sw := &telemetry.StatusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		status := sw.Status()
		level := slog.LevelDebug
		if status >= 500 {
			level = slog.LevelWarn
		}
		attrs := []slog.Attr{
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", status),
			slog.Duration("took", time.Since(start)), slog.String("client", clientAddr(r.RemoteAddr)),
		}
		if id := r.PathValue("id"); id != "" {
			attrs = append(attrs, slog.String("match_id", id))
		}
		g.log.LogAttrs(r.Context(), level, "http request", attrs...)
	})
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
