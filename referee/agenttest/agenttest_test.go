package agenttest_test

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/agenttest"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
)

// actFunc is a bot's whole strategy.
type actFunc func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error)

// randomAct plays a random legal action from the observation's generic fields, the same one
// for the same seed, match, seat, turn and attempt.
func randomAct(seed uint64) actFunc {
	return func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s/%d/%d/%d", obs.GetMatchId(), obs.GetSeat(), obs.GetTurn(), obs.GetAttempt())
		return games.RandomAction(obs, rand.New(rand.NewPCG(seed, h.Sum64()))), nil
	}
}

// bot is an agent server written against the generated code alone, as a team would.
type bot struct {
	agentv1.UnimplementedAgentServiceServer
	info *gamev1.AgentInfo
	act  actFunc
}

func (b bot) Act(ctx context.Context, req *agentv1.ActRequest) (*agentv1.ActResponse, error) {
	a, err := b.act(ctx, req.GetObservation())
	if err != nil {
		return nil, err
	}
	return &agentv1.ActResponse{Action: a}, nil
}

func (b bot) Describe(context.Context, *agentv1.DescribeRequest) (*agentv1.DescribeResponse, error) {
	return &agentv1.DescribeResponse{Agent: b.info}, nil
}

// serve serves b over gRPC on a loopback port until the test ends, with the standard health
// service when withHealth is set, and returns a connection to it.
func serve(t *testing.T, b bot, withHealth bool) *agenttest.Conn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, b)
	if withHealth {
		healthpb.RegisterHealthServer(srv, healthFor(healthpb.HealthCheckResponse_SERVING))
	}
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return dial(t, lis.Addr().String())
}

// healthFor is a health service answering st for the server and for AgentService, as the
// contract asks.
func healthFor(st healthpb.HealthCheckResponse_ServingStatus) *health.Server {
	hs := health.NewServer()
	hs.SetServingStatus("", st)
	hs.SetServingStatus(agentv1.AgentService_ServiceDesc.ServiceName, st)
	return hs
}

// dial returns a connection to the agent server at addr.
func dial(t *testing.T, addr string) *agenttest.Conn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &agenttest.Conn{Client: agentv1.NewAgentServiceClient(conn), Health: healthpb.NewHealthClient(conn)}
}

// local calls an act function in process: the opponents, who are not under check.
type local struct{ act actFunc }

func (l local) Act(ctx context.Context, in *agentv1.ActRequest, _ ...grpc.CallOption) (*agentv1.ActResponse, error) {
	a, err := l.act(ctx, in.GetObservation())
	return &agentv1.ActResponse{Action: a}, err
}

func (l local) Play(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[agentv1.PlayRequest, agentv1.PlayResponse], error) {
	return nil, errors.New("no Play here")
}

func (l local) Describe(context.Context, *agentv1.DescribeRequest, ...grpc.CallOption) (*agentv1.DescribeResponse, error) {
	return &agentv1.DescribeResponse{Agent: &gamev1.AgentInfo{Name: "opponent"}}, nil
}

// config checks the games given, one match per seat, against random opponents seeded as the
// checker asks.
func config(deadline time.Duration, gameNames ...string) agenttest.Config {
	return agenttest.Config{
		Addr: "the bot", Games: gameNames, Matches: 1, Seed: 1, Deadline: deadline,
		Opponents: func(string) []string { return []string{"random"} },
		Open: func(_ context.Context, addr string, seed uint64) (*agenttest.Conn, error) {
			if addr != "random" {
				return nil, fmt.Errorf("no opponent %q", addr)
			}
			return &agenttest.Conn{Client: local{randomAct(seed)}}, nil
		},
	}
}

// run checks the bot and returns the report by check name.
func run(t *testing.T, b *agenttest.Conn, cfg agenttest.Config) map[string]agenttest.Check {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	checks, err := agenttest.Run(ctx, families.New(), b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]agenttest.Check{}
	for _, c := range checks {
		t.Logf("%v %-26s %s %q", c.Passed, c.Name, c.Detail, c.Problems)
		out[c.Name] = c
	}
	return out
}

// want fails the test unless the named check is there with the verdict passed.
func want(t *testing.T, report map[string]agenttest.Check, name string, passed bool) agenttest.Check {
	t.Helper()
	c, ok := report[name]
	if !ok {
		t.Fatalf("no check %q", name)
	}
	if c.Passed != passed {
		t.Errorf("%s: passed %v, want %v (%s %q)", name, c.Passed, passed, c.Detail, c.Problems)
	}
	return c
}

// has reports whether any problem or detail of c contains s.
func has(c agenttest.Check, s string) bool {
	return strings.Contains(c.Detail, s) || strings.Contains(strings.Join(c.Problems, "\n"), s)
}

var info = &gamev1.AgentInfo{Name: "testbot", Version: "1", Author: "tests"}

// A bot written on the generated code alone, playing random legal moves, passes every check.
func TestRandomBotPasses(t *testing.T) {
	b := serve(t, bot{info: info, act: randomAct(7)}, true)
	report := run(t, b, config(time.Minute, "ultimatum", "matrix", "coalition"))
	if len(report) != 2+3*4+1 {
		t.Errorf("%d checks, want %d", len(report), 2+3*4+1)
	}
	for name := range report {
		want(t, report, name, true)
	}
	if d := report["deadline"].Detail; !regexp.MustCompile(`^\d+ of \d+ replies within 1m0s; p50 [0-9.]+[µm]?s, p90 [0-9.]+[µm]?s, p99 [0-9.]+[µm]?s, max [0-9.]+[µm]?s$`).MatchString(d) {
		t.Errorf("deadline: %q", d)
	}
	if d := report["describe"].Detail; d != `"testbot" version 1 by tests, claims any game` {
		t.Errorf("describe: %q", d)
	}
}

// Params set the game the bot is checked on: every observation carries those parameters.
func TestParams(t *testing.T) {
	var mu sync.Mutex
	seen := map[[2]int64]int{} // (total, max_turns) -> observations
	inner := randomAct(3)
	b := serve(t, bot{info: &gamev1.AgentInfo{Name: "params", Games: []string{"ultimatum"}}, act: func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		p := obs.GetUltimatum().GetParams()
		mu.Lock()
		seen[[2]int64{p.GetTotal(), int64(p.GetMaxTurns())}]++
		mu.Unlock()
		return inner(ctx, obs)
	}}, true)
	cfg := config(time.Minute, "ultimatum")
	cfg.Params = []string{"total=10", "max_turns=3"}
	for name, c := range run(t, b, cfg) {
		if !c.Passed {
			t.Errorf("%s failed: %s %q", name, c.Detail, c.Problems)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[[2]int64{10, 3}] == 0 {
		t.Errorf("observations by (total, max_turns): %v, want all (10, 3)", seen)
	}
}

// A bot that answers every request with a move no game allows fails the legal-replies and
// rejection checks, saying what the referee refused and why; the games it does not claim are
// not checked.
func TestIllegalBot(t *testing.T) {
	b := serve(t, bot{info: &gamev1.AgentInfo{Name: "bad", Games: []string{"ultimatum"}}, act: func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: "no-such-option"}}}}, nil
	}}, true)
	report := run(t, b, config(time.Minute))
	legal := want(t, report, "ultimatum: legal replies", false)
	rejection := want(t, report, "ultimatum: rejection", false)
	want(t, report, "health", true)
	want(t, report, "describe", true)
	if !has(legal, "refused (ILLEGAL_MOVE): the ultimatum game has no choose move") || !has(legal, "the bot's move: chooses no-such-option") {
		t.Errorf("legal replies do not say what was refused: %v", legal)
	}
	if !has(rejection, "after a refused action, the bot's next answer was refused too") {
		t.Errorf("rejection: %v", rejection)
	}
	for name := range report {
		if strings.HasPrefix(name, "matrix") {
			t.Errorf("checked a game the bot does not claim: %s", name)
		}
	}
}

// A bot slower than the deadline fails the deadline check, with the moves it was late for.
func TestSlowBot(t *testing.T) {
	inner := randomAct(1)
	b := serve(t, bot{info: info, act: func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return inner(ctx, obs)
	}}, true)
	report := run(t, b, config(100*time.Millisecond, "matrix"))
	d := want(t, report, "deadline", false)
	if !regexp.MustCompile(`^0 of \d+ replies within 100ms`).MatchString(d.Detail) || !has(d, "matrix, seat 0, turn 1, attempt 1: took") {
		t.Errorf("the report does not say which replies were late: %v", d)
	}
}

// A bot that chokes on fields it does not know fails the unknown-fields check only.
func TestStrictDecoderBot(t *testing.T) {
	inner := randomAct(1)
	b := serve(t, bot{info: info, act: func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		if len(obs.ProtoReflect().GetUnknown()) > 0 {
			return nil, errors.New("unknown field in the observation")
		}
		return inner(ctx, obs)
	}}, true)
	report := run(t, b, config(time.Minute, "ultimatum"))
	if c := want(t, report, "ultimatum: unknown fields", false); !has(c, "ERROR: Unknown: unknown field in the observation") {
		t.Errorf("the unknown-fields check does not give the bot's error: %v", c)
	}
	want(t, report, "ultimatum: legal replies", true)
	want(t, report, "ultimatum: rejection", true)
}

// A bot that plays legally but answers a rejection with nothing fails the rejection check.
func TestBotIgnoringRejections(t *testing.T) {
	inner := randomAct(1)
	b := serve(t, bot{info: info, act: func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		if obs.GetLastRejection() != nil {
			return &agentv1.Action{}, nil
		}
		return inner(ctx, obs)
	}}, true)
	report := run(t, b, config(time.Minute, "coalition"))
	if c := want(t, report, "coalition: rejection", false); !has(c, "attempt 2: refused (MISSING_MOVE)") {
		t.Errorf("rejection: %v", c)
	}
	want(t, report, "coalition: legal replies", true)
}

// A server without the health service, and a Describe without a name, fail those checks; so
// does a connection with no health client at all.
func TestNoHealthNoName(t *testing.T) {
	for _, noClient := range []bool{false, true} {
		b := serve(t, bot{info: &gamev1.AgentInfo{}, act: randomAct(2)}, false)
		if noClient {
			b.Health = nil
		}
		report := run(t, b, config(time.Minute, "matrix"))
		if c := want(t, report, "health", false); !has(c, "serves no grpc.health.v1.Health service") {
			t.Errorf("health: %v", c)
		}
		if c := want(t, report, "describe", false); !has(c, "the reply has no name") {
			t.Errorf("describe: %v", c)
		}
		want(t, report, "matrix: legal replies", true)
	}
}

// Nothing listening: the health and describe checks fail, saying so, and nothing hangs.
func TestUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	report := run(t, dial(t, addr), config(2*time.Second))
	want(t, report, "health", false)
	if c := want(t, report, "describe", false); !has(c, "unreachable") {
		t.Errorf("describe: %v", c)
	}
	if c := want(t, report, "games", false); !has(c, "not checked") {
		t.Errorf("games: %v", c)
	}
}

// A dial-out bot's health is the gateway's word on its link: SERVING passes and says it is the
// link; NOT_SERVING fails, saying the bot is not connected.
func TestDialOutHealth(t *testing.T) {
	for _, connected := range []bool{true, false} {
		// The "gateway" serves health for the bot and relays its calls.
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		srv := grpc.NewServer()
		agentv1.RegisterAgentServiceServer(srv, bot{info: info, act: randomAct(1)})
		st := healthpb.HealthCheckResponse_SERVING
		if !connected {
			st = healthpb.HealthCheckResponse_NOT_SERVING
		}
		healthpb.RegisterHealthServer(srv, healthFor(st))
		go srv.Serve(lis)
		t.Cleanup(srv.Stop)
		b := dial(t, lis.Addr().String())
		b.Link = "http://gateway.test"
		c := want(t, run(t, b, config(time.Minute, "matrix")), "health", connected)
		switch {
		case connected && !has(c, "link to the gateway at http://gateway.test is connected"):
			t.Errorf("health of a connected bot: %v", c)
		case !connected && !has(c, "no link open to the gateway at http://gateway.test"):
			t.Errorf("health of a bot that is not connected: %v", c)
		}
	}
}

// A configuration the checker cannot run is an error, before any check.
func TestBadConfig(t *testing.T) {
	b := serve(t, bot{info: info, act: randomAct(1)}, true)
	good := config(time.Second, "ultimatum")
	for name, change := range map[string]func(*agenttest.Config){
		"no Open":              func(c *agenttest.Config) { c.Open = nil },
		"no opponents":         func(c *agenttest.Config) { c.Opponents = nil },
		"no matches":           func(c *agenttest.Config) { c.Matches = 0 },
		"no deadline":          func(c *agenttest.Config) { c.Deadline = 0 },
		"an unknown game":      func(c *agenttest.Config) { c.Games = []string{"chess"} },
		"an opponent not open": func(c *agenttest.Config) { c.Opponent = "nobody" },
	} {
		cfg := good
		change(&cfg)
		if _, err := agenttest.Run(context.Background(), families.New(), b, cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// rubyLike is a bot that leaves Play out as grpc-ruby does: the stream fails at once with
// UNKNOWN "Illegal arity", not UNIMPLEMENTED. Its Describe fails with describeErr when set.
type rubyLike struct {
	bot
	describeErr error
}

func (rubyLike) Play(grpc.BidiStreamingServer[agentv1.PlayRequest, agentv1.PlayResponse]) error {
	return status.Error(codes.Unknown, "Illegal arity of reply handler")
}

func (b rubyLike) Describe(ctx context.Context, req *agentv1.DescribeRequest) (*agentv1.DescribeResponse, error) {
	if b.describeErr != nil {
		return nil, b.describeErr
	}
	return b.bot.Describe(ctx, req)
}

// openThroughResolver serves b with the health service and opens it as `parley agent-check`
// does, through the referee's resolver (over Play where the bot serves it, Act otherwise).
func openThroughResolver(t *testing.T, b agentv1.AgentServiceServer) *agenttest.Conn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, b)
	healthpb.RegisterHealthServer(srv, healthFor(healthpb.HealthCheckResponse_SERVING))
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	c, err := (&agentconn.Resolver{}).Open(context.Background(), "grpc://"+lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &agenttest.Conn{Client: c.Client, Health: healthpb.NewHealthClient(c.ClientConn())}
}

// A bot whose Play fails at once with UNKNOWN (grpc-ruby's answer for a method left out) is
// asked with Act and passes; when its Act fails, the report names Act, and when its Describe
// fails, Describe.
func TestReportNamesTheCall(t *testing.T) {
	report := run(t, openThroughResolver(t, rubyLike{bot: bot{info: info, act: randomAct(4)}}), config(5*time.Second, "ultimatum"))
	for name := range report {
		want(t, report, name, true)
	}

	broken := rubyLike{bot: bot{info: info, act: func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		return nil, status.Error(codes.Internal, "undefined method `each' for nil")
	}}}
	report = run(t, openThroughResolver(t, broken), config(5*time.Second, "ultimatum"))
	if c := want(t, report, "ultimatum: legal replies", false); !has(c, "ERROR: Internal: Act: undefined method `each' for nil") {
		t.Errorf("legal replies do not name Act: %v", c)
	}

	broken.describeErr = status.Error(codes.Unknown, "NoMethodError")
	report = run(t, openThroughResolver(t, broken), config(5*time.Second, "ultimatum"))
	if c := want(t, report, "describe", false); !has(c, "failed Describe") || !has(c, "NoMethodError") {
		t.Errorf("describe does not name Describe: %v", c)
	}
}

// careless is a bot that serves Play but takes each call's observation as it comes, never
// putting back what same_as_before says was left out; its moves depend on the history's
// length, which a call in parts leaves short.
type careless struct{ bot }

func (b careless) Play(s grpc.BidiStreamingServer[agentv1.PlayRequest, agentv1.PlayResponse]) error {
	for {
		req, err := s.Recv()
		if err != nil {
			return nil
		}
		a, err := b.act(s.Context(), req.GetAct().GetObservation())
		if err != nil {
			return err
		}
		if err := s.Send(&agentv1.PlayResponse{Call: req.GetCall(), Act: &agentv1.ActResponse{Action: a}}); err != nil {
			return nil
		}
	}
}

// byHistory plays a random legal action drawn from the number of history entries it sees.
func byHistory(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	n := uint64(len(obs.GetHistory())) + uint64(obs.GetHistoryOmitted())
	return games.RandomAction(obs, rand.New(rand.NewPCG(n, uint64(obs.GetAttempt())))), nil
}

// The whole-or-in-parts check fails a bot that serves Play without putting observations back
// together, and passes the same strategy behind the SDK, which does.
func TestWholeOrInParts(t *testing.T) {
	serveWith := func(t *testing.T, srv *grpc.Server) *agenttest.Conn {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(lis)
		t.Cleanup(srv.Stop)
		c, err := (&agentconn.Resolver{}).Open(t.Context(), agentconn.GRPCPrefix+lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return &agenttest.Conn{Client: c.Client, Health: healthpb.NewHealthClient(c.ClientConn())}
	}
	report := run(t, openThroughResolver(t, careless{bot{info: info, act: byHistory}}), config(5*time.Second, "coalition"))
	if c := want(t, report, "coalition: whole or in parts", false); !has(c, "does not put observations back together") {
		t.Errorf("the failure does not say why: %s %q", c.Detail, c.Problems)
	}
	good := serveWith(t, sdk.NewServer(sdk.AgentFunc(byHistory), sdk.WithInfo(info)))
	want(t, run(t, good, config(5*time.Second, "coalition")), "coalition: whole or in parts", true)
}
