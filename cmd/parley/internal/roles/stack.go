// Package roles assembles Parley's roles from their parts, once, for the binary and for the
// tests that need the whole house. One constructor per role: StartReferee (RefereeService,
// TournamentService and the workers of the match queue, as `parley referee` runs it),
// StartAnalytics (the consumer of the match stream and AnalyticsService, `parley analytics`),
// NewGateway (the edge with its team authority: the bot registry and the dial-out links,
// `parley gateway`), and Start, all of them in one process as `parley up` runs them.
package roles

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parley-arena/parley/agents/human"
	"github.com/parley-arena/parley/gateway"
	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
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
	Gateway *Gateway
	// Referee is the referee role.
	Referee *Referee
	// Analytics is the analytics role.
	Analytics *Analytics
	// Hub seats people.
	Hub *human.Hub
	// Teams is the bot registry.
	Teams *registry.Service

	conns []*grpc.ClientConn
}

// Start starts the analytics role on anLis, the referee role on refLis, and the gateway in
// front of them, reaching them over loopback gRPC as it would across machines. ctx bounds the
// start-up only.
func Start(ctx context.Context, cfg Config, refLis, anLis net.Listener) (_ *Stack, err error) {
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Stack{}
	defer func() {
		if err != nil {
			s.Close()
		}
	}()

	if s.Analytics, err = StartAnalytics(ctx, AnalyticsConfig{
		Bus: cfg.Bus, Store: cfg.Analytics, Families: cfg.Families, Consumer: cfg.Consumer, Logger: logger,
	}, anLis); err != nil {
		return nil, fmt.Errorf("analytics: %w", err)
	}
	anConn, err := s.dial(anLis.Addr().String())
	if err != nil {
		return nil, err
	}

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
	opts := []match.Option{match.WithTimestamps(true), match.WithLogger(logger), match.WithObserver(Observer(cfg.Metrics, cfg.Bus.Conn()))}
	if s.Referee, err = StartReferee(ctx, RefereeConfig{
		Bus: cfg.Bus, Games: cfg.Games, Agents: agents, Standings: analyticsv1.NewAnalyticsServiceClient(anConn),
		Workers: cfg.Workers, Tournaments: true, StartGrace: cfg.StartGrace, Name: "up", Logger: logger,
		Options: opts, Policy: cfg.Policy,
	}, refLis); err != nil {
		return nil, err
	}

	refConn, err := s.dial(refLis.Addr().String())
	if err != nil {
		return nil, err
	}
	gc := cfg.Gateway
	gc.Mount = s.Hub.Mount
	if gc.Seats == nil {
		gc.Seats = s.Hub
	}
	if gc.Metrics == nil {
		gc.Metrics = cfg.Metrics
	}
	gc.SeatHold = human.DefaultTicketTTL
	if gc.SeatBudget == nil {
		ledger := s.Referee.Budgets
		gc.SeatBudget = func(c policy.Caller) (func(), error) { return ledger.HoldSeat(c, rand.Text()) }
	}
	gc.AdminToken = cfg.AdminToken
	gc.Policy = cfg.Policy
	if s.Gateway, err = NewGateway(ctx, GatewayConfig{
		Bus: cfg.Bus, Games: cfg.Games, Referee: refConn, Tournaments: refConn, Analytics: anConn,
		Gateway: gc, Logger: logger,
	}); err != nil {
		return nil, err
	}
	s.Teams = s.Gateway.Teams
	return s, nil
}

func (s *Stack) dial(addr string) (*grpc.ClientConn, error) {
	conn, err := DialService(addr)
	if err != nil {
		return nil, err
	}
	s.conns = append(s.conns, conn)
	return conn, nil
}

// DialService dials a service of the house (the referee, tournaments, analytics) over plain
// gRPC, taking answers as large as the largest record a match may have: GetMatch returns one
// whole.
func DialService(addr string) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(match.MaxRecordBytes+1<<20)))
}

// Failed is told, once, when the analytics consumer stops by itself (with its error).
func (s *Stack) Failed() <-chan error { return s.Analytics.Failed() }

// Close stops the workers (their matches end void and are recorded), the tournaments'
// requesting, the referee, the analytics consumer and API, and closes the connections. The
// gateway's HTTP server is the caller's to stop first.
func (s *Stack) Close() {
	if s.Referee != nil {
		s.Referee.Stop()
	}
	if s.Analytics != nil {
		_ = s.Analytics.Stop()
	}
	for _, c := range s.conns {
		c.Close()
	}
}
