package roles

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"google.golang.org/grpc"

	"github.com/parley-arena/parley/gateway"
	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/teams/botlink"
	"github.com/parley-arena/parley/teams/registry"
)

// GatewayConfig is what the gateway role needs: where the services it speaks for are, and
// the gateway's own settings.
type GatewayConfig struct {
	Bus   *bus.Bus
	Games *games.Registry
	// Referee and Tournaments reach the referee role (often one connection); Analytics the
	// analytics role (nil: none). Required but Analytics.
	Referee, Tournaments, Analytics grpc.ClientConnInterface
	// Gateway holds the gateway's settings; its Referee, Tournaments, Analytics, Teams and
	// BotLinks are filled in here, its Mount gets the dial-out bots' relay added, and its
	// Logger and Ready default to Logger and the bus's.
	Gateway gateway.Config
	Logger  *slog.Logger
}

// Gateway is the gateway role, ready to serve.
type Gateway struct {
	*gateway.Gateway
	// Teams is the bot registry the gateway is the authority of.
	Teams *registry.Service
}

// NewGateway assembles the gateway role: the edge in front of the referee and analytics
// roles, with the team authority (the bot registry and the dial-out links) on the bus.
func NewGateway(ctx context.Context, cfg GatewayConfig) (*Gateway, error) {
	teams, links, err := Teams(ctx, cfg.Bus, cfg.Games, cfg.Logger)
	if err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	}
	gc := cfg.Gateway
	gc.Referee = refereev1.NewRefereeServiceClient(cfg.Referee)
	gc.Tournaments = tournamentv1.NewTournamentServiceClient(cfg.Tournaments)
	if cfg.Analytics != nil {
		gc.Analytics = analyticsv1.NewAnalyticsServiceClient(cfg.Analytics)
	}
	gc.Teams, gc.BotLinks = teams, links
	relay, mount := links.Relay(), gc.Mount // a team calls its own dial-out bot (agent-check)
	gc.Mount = func(mux *http.ServeMux) {
		if mount != nil {
			mount(mux)
		}
		relay.Mount(mux)
	}
	if gc.Logger == nil {
		gc.Logger = cfg.Logger
	}
	if gc.Ready == nil {
		gc.Ready = cfg.Bus.Ready
	}
	gw, err := gateway.New(gc)
	if err != nil {
		return nil, err
	}
	return &Gateway{Gateway: gw, Teams: teams}, nil
}

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

// Serve serves the gateway on lis (HTTP/1.1, and HTTP/2 without TLS for gRPC clients), within
// its connection limits and read timeouts, until ctx ends, then shuts down: requests still
// running, live streams included, are cancelled.
func (g *Gateway) Serve(ctx context.Context, lis net.Listener) error {
	base, cancelRequests := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRequests()
	lis = g.Listener(lis)
	srv := &http.Server{
		Handler: g.Gateway, ReadHeaderTimeout: g.ReadHeaderTimeout(), IdleTimeout: time.Minute,
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
