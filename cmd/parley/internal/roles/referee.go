package roles

import (
	"context"
	"log/slog"
	"net"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/budget"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/referee/queue"
	"github.com/parley-arena/parley/referee/server"
	"github.com/parley-arena/parley/referee/tournament"
)

// RefereeConfig is what the referee role needs.
type RefereeConfig struct {
	Bus    *bus.Bus
	Games  *games.Registry
	Agents *agentconn.Resolver
	// Standings answers GetTournament's standings (the analytics service); nil: none.
	Standings tournament.Standings
	// Workers is how many queued matches this process plays at once; 0: no worker.
	Workers int
	// AckWait: see queue.WorkerConfig.
	AckWait time.Duration
	// Tournaments serves TournamentService and requests the matches of the tournaments it
	// started (resuming them at start). One process per NATS server should.
	Tournaments bool
	// StartGrace: see server.Config (0: its default).
	StartGrace time.Duration
	// Policy bounds what callers ask for; nil: policy.Default(). An Agents resolver without
	// a dial rule gets the policy's.
	Policy *policy.Policy
	// Name names the worker in logs.
	Name string
	// Options are given to every match's runner (observer, timestamps).
	Options []match.Option
	Logger  *slog.Logger
}

// Referee is the running referee role.
type Referee struct {
	// Referee and Tournaments are the services, for callers in the same process.
	Referee     *server.Server
	Tournaments *tournament.Service
	// Budgets is what each caller holds (the preparer's ledger), for seats reserved through
	// the gateway of the same process.
	Budgets *budget.Ledger

	srv        *gRPCServer
	stopHealth func()
	stopW      func()
}

// StartReferee starts the referee role, serving gRPC on lis. ctx bounds the start-up only.
func StartReferee(ctx context.Context, cfg RefereeConfig, lis net.Listener) (*Referee, error) {
	if cfg.Policy == nil {
		p := policy.Default()
		cfg.Policy = &p
	}
	if cfg.Agents.Dial == nil {
		// The referee dials only what its policy allows, however its resolver was built.
		a := *cfg.Agents
		a.Dial = cfg.Policy.DialRule()
		cfg.Agents = &a
	}
	prep := &launch.Preparer{Games: cfg.Games, Agents: cfg.Agents, Policy: cfg.Policy, Budgets: budget.New(cfg.Policy)}
	ref, err := server.New(ctx, server.Config{Matches: prep, Bus: cfg.Bus, Logger: cfg.Logger, StartGrace: cfg.StartGrace})
	if err != nil {
		return nil, err
	}
	r := &Referee{Referee: ref, Budgets: prep.Budgets}
	names := []string{refereev1.RefereeService_ServiceDesc.ServiceName}
	if cfg.Tournaments {
		if r.Tournaments, err = tournament.NewService(ctx, tournament.ServiceConfig{
			Bus: cfg.Bus, Matches: prep, Standings: cfg.Standings, Logger: cfg.Logger,
		}); err != nil {
			ref.Close()
			return nil, err
		}
		names = append(names, tournamentv1.TournamentService_ServiceDesc.ServiceName)
	}

	r.stopW = func() {}
	if cfg.Workers > 0 {
		r.stopW = RunWorkers(context.WithoutCancel(ctx), WorkersConfig{
			Bus: cfg.Bus, Games: cfg.Games, Agents: cfg.Agents, Concurrency: cfg.Workers, AckWait: cfg.AckWait,
			Name: cfg.Name, Options: cfg.Options, Logger: cfg.Logger,
		})
	}
	r.srv = newGRPCServer(lis, func(s *gRPCServer) {
		refereev1.RegisterRefereeServiceServer(s, ref)
		if r.Tournaments != nil {
			tournamentv1.RegisterTournamentServiceServer(s, r.Tournaments)
		}
	}, names...)
	r.stopHealth = watchReady(cfg.Bus.Ready, r.srv.health, names)
	return r, nil
}

// readyEvery is how often the referee's health service looks at whether the store takes writes.
const readyEvery = time.Second

// watchReady reports names as not serving while ready says the store takes no writes, until
// the returned function is called.
func watchReady(ready func() error, hs *health.Server, names []string) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(readyEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			st := healthpb.HealthCheckResponse_SERVING
			if ready() != nil {
				st = healthpb.HealthCheckResponse_NOT_SERVING
			}
			hs.SetServingStatus("", st)
			for _, n := range names {
				hs.SetServingStatus(n, st)
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// Served is closed, with the server's error, when the gRPC server stops by itself.
func (r *Referee) Served() <-chan error { return r.srv.served }

// Stop stops the workers first (their running matches end void and go back to the queue for
// another referee), then the tournaments' requesting, then the gRPC server (gracefully, for
// five seconds at most).
func (r *Referee) Stop() {
	r.stopW()
	if r.Tournaments != nil {
		r.Tournaments.Close()
	}
	r.stopHealth()
	r.srv.health.Shutdown()
	r.srv.Stop()
	r.Referee.Close()
}

// WorkersConfig is what RunWorkers needs.
type WorkersConfig struct {
	Bus    *bus.Bus
	Games  *games.Registry
	Agents *agentconn.Resolver
	// Concurrency is how many matches they play at once.
	Concurrency int
	// AckWait: see queue.WorkerConfig.
	AckWait time.Duration
	Name    string
	Options []match.Option
	Logger  *slog.Logger
}

// RunWorkers plays queued matches in this process, as `parley tournament` and `parley
// reproduce` do without a referee of their own, until the returned function is called (which
// waits for them: their matches still running end void and go back to the queue).
func RunWorkers(ctx context.Context, cfg WorkersConfig) (stop func()) {
	wctx, cancel := context.WithCancel(ctx)
	w := queue.NewWorker(cfg.Bus, queue.WorkerConfig{
		Games:       cfg.Games,
		Player:      &launch.Player{Agents: cfg.Agents, Options: cfg.Options},
		Concurrency: cfg.Concurrency, AckWait: cfg.AckWait, Name: cfg.Name,
	}, cfg.Logger)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(wctx); err != nil && cfg.Logger != nil {
			cfg.Logger.Error("referee worker", "err", err)
		}
	}()
	return func() { cancel(); <-done }
}

// Resolver returns the agent resolver of a referee process: the built-in agents, registered
// bots through dir when given, and the policy's dial rule on every address it dials.
func Resolver(builtins agentconn.LocalAgents, dir agentconn.BotDirectory, allowBotDial bool, p *policy.Policy) *agentconn.Resolver {
	r := &agentconn.Resolver{Builtins: builtins, AllowBotDial: allowBotDial}
	if dir != nil {
		r.Bots = dir
	}
	if p != nil {
		r.Dial = p.DialRule()
	}
	return r
}
