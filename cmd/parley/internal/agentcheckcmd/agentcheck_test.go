package agentcheckcmd

import (
	"bytes"
	"context"
	"errors"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/random"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/catalog"
)

// serve serves agent over gRPC on a loopback port until the test ends and returns its address.
func serve(t *testing.T, agent sdk.Agent, info *gamev1.AgentInfo) string {
	t.Helper()
	addr, stop, err := sdk.Background("127.0.0.1:0", agent, sdk.WithInfo(info), sdk.WithGracePeriod(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return "grpc://" + addr
}

// check runs `parley agent-check` in process and returns its output and exit status.
func check(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	deps := &cli.Deps{Out: &out, Err: &errOut, Games: catalog.New(), Builtins: builtin.Agents{}, Getenv: func(string) string { return "" }}
	cmd := NewCmd(deps)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true // as the root command does
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		out.WriteString("error: " + err.Error() + "\n")
	}
	t.Logf("agent-check %s:\n%s", strings.Join(args, " "), out.String())
	return out.String(), cli.ExitCode(err)
}

// verdict returns the verdict (PASS or FAIL) of the named check in a report.
func verdict(t *testing.T, report, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(PASS|FAIL)  ` + regexp.QuoteMeta(name) + `  `).FindStringSubmatch(report)
	if m == nil {
		t.Fatalf("no line for the check %q in:\n%s", name, report)
	}
	return m[1]
}

func randomBot(seed uint64) *random.Agent { return random.New(seed) }

var botInfo = &gamev1.AgentInfo{Name: "testbot", Version: "1", Author: "tests"}

// A built-in Go bot served over gRPC passes every check of every game.
func TestGoBotPasses(t *testing.T) {
	addr := serve(t, randomBot(7), botInfo)
	out, code := check(t, addr, "--matches", "1", "--deadline", "5s")
	if code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	for _, g := range catalog.New().Games() {
		name := g.Info().GetName()
		for _, c := range []string{": legal replies", ": rejection", ": unknown fields"} {
			if v := verdict(t, out, name+c); v != "PASS" {
				t.Errorf("%s%s: %s", name, c, v)
			}
		}
	}
	for _, c := range []string{"health", "describe", "deadline"} {
		if v := verdict(t, out, c); v != "PASS" {
			t.Errorf("%s: %s", c, v)
		}
	}
	if !regexp.MustCompile(`p50 [0-9.]+ms, p90 [0-9.]+ms, p99 [0-9.]+ms`).MatchString(out) {
		t.Errorf("no latency percentiles in the report")
	}
}

// --param sets the game the bot is checked on: every observation carries those parameters.
func TestParams(t *testing.T) {
	var mu sync.Mutex
	seen := map[[2]int64]int{} // (total, max_turns) -> observations
	inner := randomBot(3)
	bot := sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		p := obs.GetUltimatum().GetParams()
		mu.Lock()
		seen[[2]int64{p.GetTotal(), int64(p.GetMaxTurns())}]++
		mu.Unlock()
		return inner.Act(ctx, obs)
	})
	addr := serve(t, bot, &gamev1.AgentInfo{Name: "params", Games: []string{"ultimatum"}})
	out, code := check(t, addr, "--game", "ultimatum", "--param", "total=10", "--param", "max_turns=3", "--matches", "1", "--deadline", "5s")
	if code != 0 {
		t.Fatalf("exit status %d, want 0:\n%s", code, out)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || seen[[2]int64{10, 3}] == 0 {
		t.Errorf("observations by (total, max_turns): %v, want all (10, 3)", seen)
	}
}

// A bot that answers every request with a move no game allows fails the legal-replies and
// rejection checks, saying what the referee refused and why.
func TestIllegalBot(t *testing.T) {
	bad := sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: "no-such-option"}}}}, nil
	})
	addr := serve(t, bad, &gamev1.AgentInfo{Name: "bad", Games: []string{"ultimatum"}})
	out, code := check(t, addr, "--matches", "1", "--deadline", "5s")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if verdict(t, out, "ultimatum: legal replies") != "FAIL" || verdict(t, out, "ultimatum: rejection") != "FAIL" {
		t.Error("an illegal bot passed")
	}
	for _, want := range []string{"refused (ILLEGAL_MOVE): the ultimatum game has no choose move", "the bot's move: chooses no-such-option",
		"after a refused action, the bot's next answer was refused too", "checks failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if verdict(t, out, "health") != "PASS" || verdict(t, out, "describe") != "PASS" {
		t.Error("health or describe failed for a bot that serves both")
	}
	if strings.Contains(out, "matrix") {
		t.Error("checked a game the bot does not claim")
	}
}

// A bot slower than the deadline fails the deadline check, with the moves it was late for.
func TestSlowBot(t *testing.T) {
	inner := randomBot(1)
	slow := sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return inner.Act(ctx, obs)
	})
	addr := serve(t, slow, botInfo)
	out, code := check(t, addr, "--game", "matrix", "--matches", "1", "--deadline", "100ms")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if verdict(t, out, "deadline") != "FAIL" {
		t.Error("a slow bot passed the deadline check")
	}
	if !regexp.MustCompile(`0 of \d+ replies within 100ms`).MatchString(out) || !strings.Contains(out, "matrix, seat 0, turn 1, attempt 1: took") {
		t.Error("the report does not say which replies were late")
	}
}

// A bot that chokes on fields it does not know fails the unknown-fields check only.
func TestStrictDecoderBot(t *testing.T) {
	inner := randomBot(1)
	strict := sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		if len(obs.ProtoReflect().GetUnknown()) > 0 {
			return nil, errors.New("unknown field in the observation")
		}
		return inner.Act(ctx, obs)
	})
	addr := serve(t, strict, botInfo)
	out, code := check(t, addr, "--game", "ultimatum", "--matches", "1", "--deadline", "5s")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if verdict(t, out, "ultimatum: unknown fields") != "FAIL" || !strings.Contains(out, "ERROR: Internal: act: unknown field in the observation") {
		t.Error("the unknown-fields check did not fail with the bot's error")
	}
	if verdict(t, out, "ultimatum: legal replies") != "PASS" || verdict(t, out, "ultimatum: rejection") != "PASS" {
		t.Error("other checks failed")
	}
}

// A bot that plays legally but answers a rejection with nothing fails the rejection check.
func TestBotIgnoringRejections(t *testing.T) {
	inner := randomBot(1)
	stubborn := sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		if obs.GetLastRejection() != nil {
			return &agentv1.Action{}, nil
		}
		return inner.Act(ctx, obs)
	})
	addr := serve(t, stubborn, botInfo)
	out, code := check(t, addr, "--game", "coalition", "--matches", "1", "--deadline", "5s")
	if code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if verdict(t, out, "coalition: rejection") != "FAIL" || !strings.Contains(out, "attempt 2: refused (MISSING_MOVE)") {
		t.Error("the rejection check did not fail")
	}
	if verdict(t, out, "coalition: legal replies") != "PASS" {
		t.Error("legal replies failed")
	}
}

// agentOnly serves the agent protocol without the health service.
type agentOnly struct {
	agentv1.UnimplementedAgentServiceServer
	bot *random.Agent
}

func (a agentOnly) Act(ctx context.Context, req *agentv1.ActRequest) (*agentv1.ActResponse, error) {
	act, err := a.bot.Act(ctx, req.GetObservation())
	return &agentv1.ActResponse{Action: act}, err
}

func (a agentOnly) Describe(context.Context, *agentv1.DescribeRequest) (*agentv1.DescribeResponse, error) {
	return &agentv1.DescribeResponse{Agent: &gamev1.AgentInfo{}}, nil
}

// A server without the health service, and a Describe without a name, fail those checks.
func TestNoHealthNoName(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, agentOnly{bot: randomBot(2)})
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	out, code := check(t, "grpc://"+lis.Addr().String(), "--game", "matrix", "--matches", "1", "--deadline", "5s")
	if code != 1 || verdict(t, out, "health") != "FAIL" || verdict(t, out, "describe") != "FAIL" {
		t.Fatalf("exit status %d", code)
	}
	for _, want := range []string{"serves no grpc.health.v1.Health service", "the reply has no name"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if verdict(t, out, "matrix: legal replies") != "PASS" {
		t.Error("legal replies failed")
	}
}

// Nothing listening: one failing line per check that could run, no hang.
func TestUnreachable(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := "grpc://" + lis.Addr().String()
	lis.Close()
	start := time.Now()
	out, code := check(t, addr, "--deadline", "2s")
	if code != 1 || verdict(t, out, "health") != "FAIL" || verdict(t, out, "describe") != "FAIL" || !strings.Contains(out, "unreachable") {
		t.Errorf("exit status %d", code)
	}
	if time.Since(start) > 10*time.Second {
		t.Errorf("took %s", time.Since(start))
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		{"grpc://127.0.0.1:1", "--game", "chess"},
		{"grpc://127.0.0.1:1", "--matches", "0"},
		{"grpc://127.0.0.1:1", "--deadline", "0s"},
		{"grpc://127.0.0.1:1", "--param", "total=10"},
		{"grpc://127.0.0.1:1", "--game", "ultimatum", "--game", "buysell", "--param", "total=10"},
		{"grpc://127.0.0.1:1", "--game", "ultimatum", "--param", "no_such=1"},
		{"nonsense"},
	} {
		out, code := check(t, args...)
		if code == 0 || !strings.Contains(out, "error: ") || strings.Count(strings.TrimSpace(out), "\n") > 1 {
			t.Errorf("%v: exit status %d, output:\n%s", args, code, out)
		}
	}
}
