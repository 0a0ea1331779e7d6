package llm_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/match"
)

// waitLimit bounds every wait of these tests; nothing healthy comes close to it.
const waitLimit = time.Minute

// newAgent builds an agent on the fake server at baseURL with fast retries, failing the test
// on error.
func newAgent(t testing.TB, cfg llm.Config) *llm.Agent {
	t.Helper()
	if cfg.Model == "" {
		cfg.Model = "fake-model"
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = time.Millisecond
	}
	if cfg.MaxBackoff == 0 {
		cfg.MaxBackoff = 5 * time.Millisecond
	}
	a, err := llm.New(cfg)
	if err != nil {
		t.Fatalf("llm.New: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// serve serves a over gRPC on a loopback port until the test ends and returns a client.
func serve(t testing.TB, a sdk.Agent) agentv1.AgentServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := sdk.NewServer(a)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("serve: %v", err)
		}
	})
	return agentv1.NewAgentServiceClient(conn)
}

// recording wraps an agent and keeps every observation it receives.
type recording struct {
	agent sdk.Agent
	mu    sync.Mutex
	seen  []*agentv1.Observation
}

func (r *recording) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	r.mu.Lock()
	r.seen = append(r.seen, proto.CloneOf(obs))
	r.mu.Unlock()
	return r.agent.Act(ctx, obs)
}

func (r *recording) observations() []*agentv1.Observation {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*agentv1.Observation(nil), r.seen...)
}

// playMatch runs a whole match of game between agents over real gRPC.
func playMatch(t testing.TB, game games.Game, seed uint64, moveTimeout time.Duration, agents ...sdk.Agent) *match.Result {
	t.Helper()
	clients := make([]agentv1.AgentServiceClient, len(agents))
	for i, a := range agents {
		clients[i] = serve(t, a)
	}
	// A whole match, many moves of a loaded machine: far more than one wait.
	ctx, cancel := context.WithTimeout(context.Background(), 10*waitLimit)
	defer cancel()
	res, err := match.NewRunner(nil).Run(ctx, match.Spec{
		ID: game.Info().GetName() + "-test", Game: game, Params: gametest.Resolve(t, game, nil), Seed: seed, Agents: clients,
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(moveTimeout)},
	})
	if err != nil {
		t.Fatalf("match: %v", err)
	}
	return res
}
