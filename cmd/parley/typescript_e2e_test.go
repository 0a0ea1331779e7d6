package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/gen/go/parley/registry/v1/registryv1connect"
	"github.com/parley-arena/parley/internal/natstest"
)

// tsBotName is what the TypeScript example bot (agents/typescript/examples/bot.ts) calls itself.
const tsBotName = "ts-example"

// tsBuild compiles the TypeScript SDK and example bot once per run of the tests.
var tsBuild struct {
	once sync.Once
	err  error
}

// buildTypeScript compiles agents/typescript (into its dist/) with the TypeScript compiler
// that `make deps` installs from the lockfile, and returns node's path and the bot's script.
func buildTypeScript(t *testing.T) (node, script string) {
	t.Helper()
	repo := repoRoot(t)
	dir := filepath.Join(repo, "agents", "typescript")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (`make deps` installs it): %v", err)
	}
	tsc := filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")
	if _, err := os.Stat(tsc); err != nil {
		t.Fatalf("the TypeScript SDK's packages are not installed: run `make deps` (npm ci in agents/typescript): %v", err)
	}
	tsBuild.once.Do(func() {
		out, err := exec.Command(node, tsc, "-p", dir).CombinedOutput()
		if err != nil {
			tsBuild.err = fmt.Errorf("tsc -p agents/typescript: %v\n%s", err, out)
		}
	})
	if tsBuild.err != nil {
		t.Fatal(tsBuild.err)
	}
	return node, filepath.Join(dir, "dist", "examples", "bot.js")
}

// tsMatch is one match with the TypeScript bot in some seats ("ts" in agents) and Go bots in
// the others.
type tsMatch struct {
	name   string
	game   string
	agents []string
	params []string
	seed   int
}

// tsMatches cover both games the bot plays, every seat, several Go opponents and parameters
// away from the defaults.
var tsMatches = []tsMatch{
	{name: "ultimatum first vs fair", game: "ultimatum", agents: []string{"ts", "builtin:fair"}, seed: 1},
	{name: "ultimatum second vs fair", game: "ultimatum", agents: []string{"builtin:fair", "ts"}, seed: 2},
	{name: "ultimatum first vs spe", game: "ultimatum", agents: []string{"ts", "builtin:spe"}, seed: 3},
	{name: "ultimatum second vs spe", game: "ultimatum", agents: []string{"builtin:spe", "ts"}, seed: 4},
	{name: "ultimatum first vs random", game: "ultimatum", agents: []string{"ts", "builtin:random"}, seed: 5},
	{name: "ultimatum vs a stubborn bot, short", game: "ultimatum", agents: []string{"ts", "builtin:fixed?offer=1"},
		params: []string{"total=10", "max_turns=3"}, seed: 6},
	{name: "ultimatum both seats, other currency", game: "ultimatum", agents: []string{"ts", "ts"},
		params: []string{"total=1000", "max_turns=5", "currency=Euros"}, seed: 7},
	{name: "coalition as A", game: "coalition", agents: []string{"ts", "builtin:coalition", "builtin:coalition?basis=shapley"}, seed: 1},
	{name: "coalition as B", game: "coalition", agents: []string{"builtin:coalition", "ts", "builtin:coalition?basis=core"}, seed: 2},
	{name: "coalition as C vs demanding bots", game: "coalition", agents: []string{"builtin:coalition", "builtin:coalition?threshold=1", "ts"}, seed: 3},
	{name: "coalition vs random bots", game: "coalition", agents: []string{"builtin:random?seed=1", "ts", "builtin:random?seed=2"}, seed: 4},
	{name: "coalition of four, no talk", game: "coalition", agents: []string{"builtin:coalition", "ts", "builtin:coalition", "ts"},
		params: []string{"players=N,E,S,W", "values=N+E:60,S+W:60,N+S:40,E+W:40,N+E+S+W:100,N+E+S:80", "rounds=0", "max_proposals=4", "unit=coins"}, seed: 5},
}

// TestTypeScriptAgent serves the TypeScript example bot over gRPC, as a team would run it,
// checks its health service and Describe with Go's gRPC clients, then plays ultimatum and
// coalition matches against Go bots through `parley play` and checks that every move of the
// bot was legal: no refused action, fault or default move, and the match ended by the rules.
func TestTypeScriptAgent(t *testing.T) {
	t.Parallel()
	node, script := buildTypeScript(t)
	bot := startProc(t, "", node, script, "--listen", "127.0.0.1:0")
	addr := strings.TrimSpace(bot.waitLine("listening on "))

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	conn := dialGRPC(t, addr)
	health := healthpb.NewHealthClient(conn)
	for _, svc := range []string{"", agentv1.AgentService_ServiceDesc.ServiceName} {
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health check of %q: %v, %v; want SERVING", svc, resp, err)
		}
	}
	if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: "no.such.Service"}); status.Code(err) != codes.NotFound {
		t.Errorf("health check of an unknown service: %v, want NotFound", err)
	}
	info, err := agentv1.NewAgentServiceClient(conn).Describe(ctx, &agentv1.DescribeRequest{})
	if err != nil {
		t.Fatalf("Describe on the TypeScript bot: %v\n%s", err, bot.output())
	}
	if got := info.GetAgent(); got.GetName() != tsBotName || !slices.Equal(got.GetGames(), []string{"ultimatum", "coalition"}) {
		t.Errorf("Describe: %v, want %s playing ultimatum and coalition", got, tsBotName)
	}
	// A request without an observation is the caller's error, not a crash.
	if _, err := agentv1.NewAgentServiceClient(conn).Act(ctx, &agentv1.ActRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("Act without an observation: %v, want InvalidArgument", err)
	}

	t.Run("matches", func(t *testing.T) {
		for _, m := range tsMatches {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				playTS(t, m, "grpc://"+addr, bot)
			})
		}
	})

	stopTS(t, bot)
}

// TestTypeScriptAgentDialsOut runs the TypeScript example bot in dial-out mode, as a team
// behind a firewall would: the organiser adds the team (`parley admin team add`), the team
// registers the bot with the gateway's registry and starts it with --dial-out; the bot holds a
// stream to the real gateway, and the referee of `parley play` reaches it through NATS and
// that stream. The same ultimatum and coalition matches as in serve mode must be as legal.
// A wrong token and a wrong version are refused at once, with exit status 1.
func TestTypeScriptAgentDialsOut(t *testing.T) {
	t.Parallel()
	node, script := buildTypeScript(t)
	nats := natstest.Start(t).URL
	token := strings.TrimSpace(mustRun(t, nil, "admin", "team", "add", "typescripters", "--nats", nats).stdout)
	gw := startProc(t, "", parleyBin, "gateway", "--nats", nats, "--listen", "127.0.0.1:0", "--analytics", "")
	gwURL, _, _ := strings.Cut(gw.waitLine("gateway listening on "), ",")

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req := connect.NewRequest(&registryv1.RegisterBotRequest{Name: "tsbot", Version: "0.1.0", Games: []string{"ultimatum", "coalition"}, Endpoint: "dialout"})
	req.Header().Set("Authorization", "Bearer "+token)
	reg, err := registryv1connect.NewRegistryServiceClient(http.DefaultClient, gwURL).RegisterBot(ctx, req)
	if err != nil {
		t.Fatalf("registering the bot: %v\n%s", err, gw.output())
	}
	addr := reg.Msg.GetBot().GetAddress()
	if addr != "bot:typescripters/tsbot" {
		t.Fatalf("registered bot's address %q, want bot:typescripters/tsbot", addr)
	}

	for _, bad := range []struct{ name, token, version, want string }{
		{"wrong token", "pt_not-a-token", "", "unauthenticated"},
		{"wrong version", token, "9.9", "failed_precondition"},
	} {
		p := startProc(t, "", node, script, "--dial-out", gwURL, "--bot", "tsbot", "--token", bad.token, "--version", bad.version)
		if code := waitExit(t, p); code != 1 || !strings.Contains(p.output(), bad.want) {
			t.Errorf("%s: the bot exited with status %d, want 1 and a message with %q\n%s", bad.name, code, bad.want, p.output())
		}
	}

	// The token goes by flag here: the test's children get no PARLEY_ variables (the node
	// tests cover PARLEY_TOKEN).
	bot := startProc(t, "", node, script, "--dial-out", gwURL, "--bot", "tsbot", "--version", "0.1.0", "--token", token)
	if got := bot.waitLine("connected as "); got != addr+" (team typescripters)" {
		t.Fatalf("the bot says it is connected as %q, want %s (team typescripters)", got, addr)
	}
	t.Run("matches", func(t *testing.T) {
		for _, m := range tsMatches {
			t.Run(m.name, func(t *testing.T) {
				t.Parallel()
				playTS(t, m, addr, bot, "--nats", nats)
			})
		}
	})

	stopTS(t, bot)
}

// waitExit waits for p to exit by itself and returns its exit status.
func waitExit(t *testing.T, p *proc) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(waitTimeout):
		t.Fatalf("%s still running after %s\n%s", p.name, waitTimeout, p.output())
		return 0
	}
}

// stopTS interrupts the TypeScript bot, which must stop cleanly.
func stopTS(t *testing.T, bot *proc) {
	t.Helper()
	code, _ := bot.interrupt()
	if code != 0 {
		t.Errorf("the TypeScript bot exited with status %d after SIGINT, want 0\n%s", code, bot.output())
	}
}

// playTS plays m with the TypeScript bot at addr in its "ts" seats and checks the record.
func playTS(t *testing.T, m tsMatch, addr string, bot *proc, extra ...string) {
	t.Helper()
	args := append([]string{"play", m.game, "--seed", fmt.Sprint(m.seed), "--json"}, extra...)
	var seats []int32
	for i, a := range m.agents {
		if a == "ts" {
			a = addr
			seats = append(seats, int32(i))
		}
		args = append(args, "--agent", a)
	}
	for _, p := range m.params {
		args = append(args, "--param", p)
	}
	r := runParley(t, nil, args...)
	if r.code != 0 {
		t.Fatalf("play failed:\n%s\n--- TypeScript bot:\n%s", r, bot.output())
	}
	evs := decodeRecord(t, r.stdout)
	started, ended := checkRecord(t, evs, len(m.agents))
	moves := map[int32]int{}
	for _, ev := range evs {
		if a := ev.GetActionTaken(); a != nil {
			moves[a.GetSeat()]++
		}
	}
	for _, s := range seats {
		if got := started.GetSeats()[s].GetAgent().GetName(); got != tsBotName {
			t.Errorf("match_started names seat %d's agent %q, want %q", s, got, tsBotName)
		}
		if moves[s] == 0 {
			t.Errorf("the TypeScript bot made no move in seat %d", s)
		}
	}
	checkNormalEnd(t, evs, ended, seats...)
	if t.Failed() {
		text := slices.DeleteFunc(slices.Clone(args), func(a string) bool { return a == "--json" })
		t.Logf("transcript:\n%s", runParley(t, nil, append(text, "--show-private")...).stdout)
	}
}
