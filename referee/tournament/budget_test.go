package tournament

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/parley-arena/parley/agents/builtin"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/budget"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/referee/queue"
	"github.com/parley-arena/parley/referee/server"
)

// house is a referee and its tournaments over real gRPC on loopback, recording to an
// embedded NATS server, as `parley referee` serves them, with no worker until work is called.
type house struct {
	referee     refereev1.RefereeServiceClient
	tournaments tournamentv1.TournamentServiceClient
	work        func()
	bus         *bus.Bus
}

func startHouse(ctx context.Context, t *testing.T, pol *policy.Policy) *house {
	t.Helper()
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	agents := &agentconn.Resolver{Builtins: builtin.Agents{}}
	prep := &launch.Preparer{Games: families.New(), Agents: agents, Policy: pol, Budgets: budget.New(pol)}
	ref, err := server.New(ctx, server.Config{Matches: prep, Bus: b})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := NewService(ctx, ServiceConfig{Bus: b, Matches: prep})
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	refereev1.RegisterRefereeServiceServer(srv, ref)
	tournamentv1.RegisterTournamentServiceServer(srv, svc)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		svc.Close()
		ref.Close()
	})
	work := func() {
		w := queue.NewWorker(b, queue.WorkerConfig{Games: families.New(), Player: &launch.Player{Agents: agents}, Concurrency: 4}, nil)
		wctx, stop := context.WithCancel(context.Background())
		worked := make(chan error, 1)
		go func() { worked <- w.Run(wctx) }()
		t.Cleanup(func() { stop(); <-worked })
	}
	return &house{referee: refereev1.NewRefereeServiceClient(conn), tournaments: tournamentv1.NewTournamentServiceClient(conn), work: work, bus: b}
}

func as(ctx context.Context, c policy.Caller) context.Context { return policy.Outgoing(ctx, c) }

func spectator(addr string) policy.Caller {
	return policy.Caller{Role: policy.Spectator, Client: addr}
}

// tournamentOf asks for a tournament of 2 * games ultimatum matches between two built-in agents.
func tournamentOf(games uint32) *tournamentv1.StartTournamentRequest {
	return &tournamentv1.StartTournamentRequest{Game: "ultimatum", GamesPerAssignment: games, Entrants: []*tournamentv1.Entrant{
		{Label: "a", Address: "builtin:fair"}, {Label: "b", Address: "builtin:random"},
	}}
}

var oneMatch = &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{"builtin:fair", "builtin:random"}}

// wantExhausted checks that err is a refusal for want of budget naming key.
func wantExhausted(t *testing.T, what string, err error, key string) {
	t.Helper()
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), key) {
		t.Fatalf("%s: got %v, want ResourceExhausted naming %s", what, err, key)
	}
}

// Attack 3: tournaments from a few addresses queued ten thousand matches past max_queued, and
// no one else could start one. Now a tournament counts as all its matches against its
// address's budget, the anonymous callers' pool and max_queued; the organiser is not bound.
// Nothing plays here, so every match accepted stays queued.
func TestTournamentsCountAsAllTheirMatches(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pol := policy.Default()
	pol.MaxQueued = 70
	pol.Budgets = policy.Budgets{Client: policy.Budget{Matches: 30}, Anonymous: policy.Budget{Matches: 50}, Team: policy.Budget{Matches: 40}}
	h := startHouse(ctx, t, &pol)

	attacker := as(ctx, spectator("10.0.0.1"))
	accepted := 0
	var err error
	for range 10 {
		var resp *tournamentv1.StartTournamentResponse
		if resp, err = h.tournaments.StartTournament(attacker, tournamentOf(5)); err != nil {
			break
		}
		accepted += int(resp.GetMatches())
	}
	if accepted != 30 {
		t.Fatalf("one address had %d matches accepted in tournaments of 10, want 30 (budgets.client.matches)", accepted)
	}
	wantExhausted(t, "its fourth tournament", err, "budgets.client.matches")
	_, err = h.referee.StartMatch(attacker, oneMatch)
	wantExhausted(t, "a match from the same address", err, "budgets.client.matches")

	other := as(ctx, spectator("10.0.0.2"))
	if _, err := h.tournaments.StartTournament(other, tournamentOf(10)); err != nil {
		t.Fatalf("another address, 20 matches in a pool of 50 holding 30: %v", err)
	}
	_, err = h.referee.StartMatch(as(ctx, spectator("10.0.0.3")), oneMatch)
	wantExhausted(t, "a third address, the anonymous pool full", err, "budgets.anonymous.matches")

	team := as(ctx, policy.Caller{Role: policy.Team, Team: "acme"})
	if _, err := h.tournaments.StartTournament(team, tournamentOf(5)); err != nil {
		t.Fatalf("a team, 10 matches (60 of max_queued 70): %v", err)
	}
	if _, err := h.referee.StartMatch(team, oneMatch); err != nil {
		t.Fatalf("a team's match (61 of 70): %v", err)
	}
	_, err = h.tournaments.StartTournament(team, tournamentOf(5))
	wantExhausted(t, "the team's 10 more (71 of 70)", err, "max_queued")
	if _, err := h.tournaments.StartTournament(ctx, tournamentOf(50)); err != nil {
		t.Fatalf("the organiser's 100 matches: %v", err)
	}
}

// A caller's budget comes back as its matches end: one address fills its budget with queued
// matches, is refused, and is admitted again once a worker has played them.
func TestBudgetGivenBackAsMatchesEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pol := policy.Default()
	pol.Budgets.Client.Matches = 3
	h := startHouse(ctx, t, &pol)
	caller := as(ctx, spectator("10.0.0.1"))
	if _, err := h.tournaments.StartTournament(caller, tournamentOf(1)); err != nil {
		t.Fatal(err)
	}
	if _, err := h.referee.StartMatch(caller, oneMatch); err != nil {
		t.Fatal(err)
	}
	_, err := h.referee.StartMatch(caller, oneMatch)
	wantExhausted(t, "a fourth match", err, "budgets.client.matches")
	h.work()
	for {
		_, err := h.referee.StartMatch(caller, oneMatch)
		if err == nil {
			return
		}
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatal(err)
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the budget never came back after the worker played the matches: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
