// Package roles assembles Parley's roles from their parts, once, for the binary and for the
// tests that need the whole house: the referee role (RefereeService, TournamentService and the
// workers of the match queue) that `parley referee` runs alone, the edge's team authority
// (the bot registry and the dial-out links) that `parley gateway` needs, and everything at
// once in one process, as `parley up` runs it (Start).
package roles

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/parley-arena/parley/agents/human"
	"github.com/parley-arena/parley/gateway"
	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/teams/botlink"
	"github.com/parley-arena/parley/teams/registry"
)

// Teams opens the bot registry on b as the edge's team authority, and the links of dial-out
// bots it holds for referees on the same server.
func Teams(ctx context.Context, b *bus.Bus, reg *games.Registry, logger *slog.Logger) (*registry.Service, *botlink.Links, error) {
	store, err := registry.Open(ctx, b.JetStream())
	if err != nil {
		return nil, nil, err
	}
	nc := b.Conn()
	teams := &registry.Service{
		Store: store,
		Game: func(name string) error {
			_, err := reg.Lookup(name)
			return err
		},
		Connected: func(ctx context.Context, team, name string) bool { return botlink.Connected(ctx, nc, team, name) },
	}
	return teams, &botlink.Links{Registry: teams, NC: nc, Logger: logger}, nil
}

// Config is what Start needs.
type Config struct {
	// Bus is the NATS connection everything shares. Required.
	Bus *bus.Bus
	// Games is the catalogue. Required.
	Games *games.Registry
	// Builtins serves the built-in agents. Required.
	Builtins agentconn.LocalAgents
	// Pool keeps the connections to dialled agents across matches (nil: one per match); the
	// caller closes it.
	Pool *agentconn.Pool
	// Analytics is the analytics database (the caller opens and closes it). Required.
	Analytics *analytics.Store
	// Families computes each game family's metrics. Required.
	Families *metrics.Registry
	// Workers is how many queued matches this process plays at once (0: none).
	Workers int
	// StartGrace: see server.Config (0: its default).
	StartGrace time.Duration
	// Consumer tunes the analytics consumer (zero: its defaults).
	Consumer analytics.ConsumerConfig
	// AllowBotDial lets registered bots with grpc:// endpoints be dialled.
	AllowBotDial bool
	// Policy bounds what callers ask for (nil: policy.Default()).
	Policy *policy.Policy
	// AdminToken, when set, makes an HTTP request bearing it the organiser's.
	AdminToken string
	// Metrics counts what the referee and gateway do (nil: nothing is counted).
	Metrics *telemetry.Metrics
	// Gateway holds the gateway's settings; its Referee, Tournaments, Analytics, Teams,
	// BotLinks and Mount are filled in here, and Seats unless set.
	Gateway gateway.Config
	// Logger (nil: discard).
	Logger *slog.Logger
}

// Stack is everything running in one process.
type Stack struct {
	// Gateway is the HTTP edge; serve it.
	Gateway *gateway.Gateway
	// Referee is the referee role.
	Referee *Referee
	// Hub seats people.
	Hub *human.Hub
	// Teams is the bot registry.
	Teams *registry.Service

	anSrv    *grpc.Server
	conns    []*grpc.ClientConn
	stop     context.CancelFunc
	wg       sync.WaitGroup
	consumed chan error
}

// Start starts the referee role on refLis, the analytics service on anLis (its gRPC API, and
// its consumer of the match stream), and the gateway in front of them, reaching them over
// loopback gRPC as it would across machines. ctx bounds the start-up only.
func Start(ctx context.Context, cfg Config, refLis, anLis net.Listener) (_ *Stack, err error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	bg, stop := context.WithCancel(context.WithoutCancel(ctx))
	s := &Stack{stop: stop, consumed: make(chan error, 1)}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()

	s.anSrv = grpc.NewServer()
	analyticsv1.RegisterAnalyticsServiceServer(s.anSrv, analytics.NewServer(cfg.Analytics))
	ServeHealth(s.anSrv, analyticsv1.AnalyticsService_ServiceDesc.ServiceName)
	s.wg.Go(func() { _ = s.anSrv.Serve(anLis) })
	anConn, err := s.dial(anLis.Addr().String())
	if err != nil {
		return nil, err
	}
	an := analyticsv1.NewAnalyticsServiceClient(anConn)

	// Agents: the built-in ones, people's seats (the hub's page is mounted on the gateway) and
	// registered bots through the registry on the same server.
	if cfg.Policy == nil {
		p := policy.Default()
		cfg.Policy = &p
	}
	s.Hub = human.NewHub(human.WithLogger(logger))
	dir, err := botlink.OpenDirectory(ctx, cfg.Bus)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	agents := Resolver(cfg.Builtins, dir, cfg.AllowBotDial, cfg.Policy)
	agents.Humans, agents.Pool = s.Hub.Agents(), cfg.Pool
	opts := []match.Option{match.WithTimestamps(true), match.WithLogger(logger)}
	if cfg.Metrics != nil {
		opts = append(opts, match.WithObserver(Observer(cfg.Metrics)))
	}
	if s.Referee, err = StartReferee(ctx, RefereeConfig{
		Bus: cfg.Bus, Games: cfg.Games, Agents: agents, Standings: an, Workers: cfg.Workers, Tournaments: true,
		StartGrace: cfg.StartGrace, Name: "up", Logger: logger, Options: opts, Policy: cfg.Policy,
	}, refLis); err != nil {
		return nil, err
	}

	cons := analytics.NewConsumer(cfg.Bus.JetStream(), cfg.Analytics, cfg.Families, logger, cfg.Consumer)
	if _, err := cons.Ensure(ctx); err != nil {
		return nil, fmt.Errorf("analytics: %w", err)
	}
	s.wg.Go(func() { s.consumed <- cons.Run(bg) })

	refConn, err := s.dial(refLis.Addr().String())
	if err != nil {
		return nil, err
	}
	var links *botlink.Links
	if s.Teams, links, err = Teams(ctx, cfg.Bus, cfg.Games, logger); err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	gc := cfg.Gateway
	gc.Referee = refereev1.NewRefereeServiceClient(refConn)
	gc.Tournaments = tournamentv1.NewTournamentServiceClient(refConn)
	gc.Analytics, gc.Teams, gc.BotLinks = an, s.Teams, links
	relay := links.Relay() // a team calls its own dial-out bot (agent-check)
	gc.Mount = func(mux *http.ServeMux) { s.Hub.Mount(mux); relay.Mount(mux) }
	if gc.Seats == nil {
		gc.Seats = s.Hub
	}
	if gc.Logger == nil {
		gc.Logger = logger
	}
	if gc.Metrics == nil {
		gc.Metrics = cfg.Metrics
	}
	if gc.Ready == nil {
		gc.Ready = cfg.Bus.Ready
	}
	gc.AdminToken = cfg.AdminToken
	gc.Policy = cfg.Policy
	if s.Gateway, err = gateway.New(gc); err != nil {
		return nil, err
	}
	return s, nil
}

func (s *Stack) dial(addr string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	s.conns = append(s.conns, conn)
	return conn, nil
}

// Failed is told, once, when the analytics consumer stops by itself (with its error).
func (s *Stack) Failed() <-chan error { return s.consumed }

// Close stops the workers (their matches end void and are recorded), the tournaments'
// requesting, the referee, the analytics consumer and API, and closes the connections. The
// gateway's HTTP server is the caller's to stop first.
func (s *Stack) Close() {
	s.stop()
	if s.Referee != nil {
		s.Referee.Stop()
	}
	if s.anSrv != nil {
		s.anSrv.GracefulStop()
	}
	s.wg.Wait()
	for _, c := range s.conns {
		c.Close()
	}
}

// ServeHealth registers the standard health service on srv, reporting the server and its
// services as serving, and reflection.
func ServeHealth(srv *grpc.Server, services ...string) *health.Server {
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	for _, name := range services {
		hs.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	healthpb.RegisterHealthServer(srv, hs)
	reflection.Register(srv)
	return hs
}
