package main

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/referee/families"
)

// pythonStubs generates the minimal Python bot's stubs from proto/ with Debian's protoc and
// gRPC plugin, as examples/minimal-python/bot.py says, into a folder of the test's.
func pythonStubs(t *testing.T, repo string) string {
	t.Helper()
	protoc, err := exec.LookPath("protoc")
	if err != nil {
		t.Fatalf("protoc is not installed (`make deps` installs protobuf-compiler): %v", err)
	}
	plugin, err := exec.LookPath("grpc_python_plugin")
	if err != nil {
		t.Fatalf("grpc_python_plugin is not installed (`make deps` installs protobuf-compiler-grpc): %v", err)
	}
	out := t.TempDir()
	protos, err := filepath.Glob(filepath.Join(repo, "proto", "parley", "*", "v1", "*.proto"))
	if err != nil {
		t.Fatal(err)
	}
	games, err := filepath.Glob(filepath.Join(repo, "proto", "parley", "games", "*", "v1", "*.proto"))
	if err != nil || len(protos) == 0 || len(games) == 0 {
		t.Fatalf("no proto files under %s/proto (%v)", repo, err)
	}
	gen := []string{"--python_out=" + out, "--grpc_python_out=" + out, "--plugin=protoc-gen-grpc_python=" + plugin}
	for _, args := range [][]string{
		append(append([]string{"-I", filepath.Join(repo, "proto")}, gen...), append(protos, games...)...),
		append(append([]string{"-I", filepath.Join(repo, "proto", "grpc", "health", "v1")}, gen...), filepath.Join(repo, "proto", "grpc", "health", "v1", "health.proto")),
	} {
		if b, err := exec.Command(protoc, args...).CombinedOutput(); err != nil {
			t.Fatalf("protoc %s: %v\n%s", strings.Join(args, " "), err, b)
		}
	}
	return out
}

// rubyStubs generates the minimal Ruby bot's stubs from proto/ with Debian's
// grpc_tools_ruby_protoc, as examples/minimal-ruby/bot.rb says, into a folder of the test's.
func rubyStubs(t *testing.T, repo string) string {
	t.Helper()
	protoc, err := exec.LookPath("grpc_tools_ruby_protoc")
	if err != nil {
		t.Fatalf("grpc_tools_ruby_protoc is not installed (`make deps` installs ruby-grpc-tools): %v", err)
	}
	var protos []string
	err = filepath.WalkDir(filepath.Join(repo, "proto", "parley"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".proto") {
			protos = append(protos, path)
		}
		return err
	})
	if err != nil || len(protos) == 0 {
		t.Fatalf("no proto files under %s/proto/parley (%v)", repo, err)
	}
	out := t.TempDir()
	args := append([]string{"-I", filepath.Join(repo, "proto"), "--ruby_out=" + out, "--grpc_out=" + out}, protos...)
	if b, err := exec.Command(protoc, args...).CombinedOutput(); err != nil {
		t.Fatalf("grpc_tools_ruby_protoc %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	return out
}

// minimalBot starts one of the minimal bots with args.
type minimalBot struct {
	name  string
	start func(t *testing.T, args ...string) *proc
}

// minimalBots are the bots of examples/, ready to start: the Python and Ruby ones with stubs
// generated now, the Node.js one with the packages its lockfile pins.
func minimalBots(t *testing.T) []minimalBot {
	t.Helper()
	repo := repoRoot(t)
	if out, err := exec.Command(systemPython, "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import grpc and protobuf (%v): run `make deps`\n%s", systemPython, err, out)
	}
	stubs := pythonStubs(t, repo)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatalf("node is not installed (`make deps` installs it): %v", err)
	}
	if _, err := os.Stat(filepath.Join(repo, "examples", "minimal-node", "node_modules", "@grpc", "proto-loader")); err != nil {
		t.Fatalf("the minimal Node.js bot's packages are not installed: run `make deps` (npm ci in examples/minimal-node): %v", err)
	}
	ruby, err := exec.LookPath("ruby")
	if err != nil {
		t.Fatalf("ruby is not installed (`make deps` installs ruby-grpc): %v", err)
	}
	if out, err := exec.Command(ruby, "-e", "require 'grpc'; require 'grpc/health/checker'").CombinedOutput(); err != nil {
		t.Fatalf("ruby cannot load grpc (%v): run `make deps` (ruby-grpc)\n%s", err, out)
	}
	rubyGen := rubyStubs(t, repo)
	return []minimalBot{
		{"python", func(t *testing.T, args ...string) *proc {
			return startProcEnv(t, repo, []string{"PARLEY_STUBS=" + stubs}, systemPython, append([]string{"examples/minimal-python/bot.py"}, args...)...)
		}},
		{"node", func(t *testing.T, args ...string) *proc {
			return startProc(t, repo, node, append([]string{"examples/minimal-node/bot.js"}, args...)...)
		}},
		{"ruby", func(t *testing.T, args ...string) *proc {
			return startProcEnv(t, repo, []string{"PARLEY_STUBS=" + rubyGen}, ruby, append([]string{"examples/minimal-ruby/bot.rb"}, args...)...)
		}},
	}
}

// playAgainstUp plays an ultimatum match of agent (seat 0) against builtin:fair on the
// `parley up` at url and fails the test unless agent's seat moved and never faulted.
func playAgainstUp(t *testing.T, url, agent string, bot *proc) {
	t.Helper()
	code, body := post(t, url, "/parley.referee.v1.RefereeService/StartMatch", strings.NewReader(fmt.Sprintf(`{"game":"ultimatum","agents":[%q,"builtin:fair"],"seed":"3"}`, agent)))
	if code != http.StatusOK {
		t.Fatalf("start a match of %s: %d %s", agent, code, body)
	}
	started := &refereev1.StartMatchResponse{}
	if err := protojson.Unmarshal([]byte(body), started); err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, ev := range endedRecord(t, url, started.GetMatchId()) {
		if f := ev.GetAgentFault(); f != nil && f.GetSeat() == 0 {
			t.Errorf("%s faulted on turn %d: %s: %s\n--- bot:\n%s", agent, ev.GetTurn(), f.GetKind(), f.GetDetail(), bot.output())
		}
		if a := ev.GetActionTaken(); a != nil && a.GetSeat() == 0 {
			moved++
		}
	}
	if moved == 0 {
		t.Errorf("%s never moved in its match against parley up", agent)
	}
}

// agentClient is a client of the agent at addr, with a context for its calls; both end with
// the test.
func agentClient(t *testing.T, addr string) (context.Context, agentv1.AgentServiceClient) {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	t.Cleanup(cancel)
	return ctx, agentv1.NewAgentServiceClient(conn)
}

// playFailsBeforeAnswering checks the premise of the Ruby bot's place among the minimal bots:
// its Play, left out, fails before any answer with a status other than UNIMPLEMENTED (grpc-ruby
// says UNKNOWN), so that its passing agent-check and its match show the referee asking with
// Act after any such failure.
func playFailsBeforeAnswering(t *testing.T, addr string) {
	t.Helper()
	ctx, client := agentClient(t, addr)
	stream, err := client.Play(ctx)
	if err == nil {
		_ = stream.Send(&agentv1.PlayRequest{Call: 1, Act: &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: 1}}})
		_, err = stream.Recv()
	}
	if code := status.Code(err); code == codes.OK || code == codes.Unimplemented {
		t.Errorf("the Ruby bot's Play answered %v: the referee's fallback on a status other than UNIMPLEMENTED is no longer exercised here", err)
	}
}

// wantSkipsBriefing checks that the bot at addr, which acts on the typed fields alone, says
// so in Describe (Observing.skips_briefing), sparing both sides the briefing's text.
func wantSkipsBriefing(t *testing.T, addr string) {
	t.Helper()
	ctx, client := agentClient(t, addr)
	resp, err := client.Describe(ctx, &agentv1.DescribeRequest{})
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	if !resp.GetObserving().GetSkipsBriefing() {
		t.Errorf("the bot reads no briefing but its Describe does not say so: observing %v", resp.GetObserving())
	}
}

// wantAllPassed fails the test unless agent-check passed every check, games among them (every
// game when none are named).
func wantAllPassed(t *testing.T, r result, bot *proc, games ...string) {
	t.Helper()
	if r.code != 0 || !regexp.MustCompile(`(?m)^all \d+ checks passed`).MatchString(r.stdout) || strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("agent-check failed:\n%s\n--- bot:\n%s", r, bot.output())
	}
	if len(games) == 0 {
		for _, g := range families.New().Games() {
			games = append(games, g.Info().GetName())
		}
	}
	for _, name := range games {
		if !strings.Contains(r.stdout, "PASS  "+name+": legal replies") {
			t.Errorf("%s was not checked:\n%s", name, r.stdout)
		}
	}
}

// The minimal bots, written from proto/ alone with each language's ordinary gRPC tools, pass
// agent-check: served on an address in every game, and dialling out to `parley up`, checked
// through its gateway with the team's token (from $PARLEY_TOKEN). The Ruby bot leaves Play
// out, which grpc-ruby answers with UNKNOWN, so served it also plays a match on `parley up`.
func TestMinimalBots(t *testing.T) {
	t.Parallel()
	bots := minimalBots(t)
	dir := t.TempDir()
	up := startProc(t, "", parleyBin, "up", "--data-dir", dir, "--listen", "127.0.0.1:0", "--referee-listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0", "--allow-dial", "127.0.0.1/32")
	url := strings.TrimSuffix(up.waitLine("Parley is up: "), "/")

	for _, bot := range bots {
		t.Run(bot.name+" served", func(t *testing.T) {
			p := bot.start(t, "--listen", "127.0.0.1:0")
			addr := strings.TrimSpace(p.waitLine("listening on "))
			if bot.name == "ruby" {
				playFailsBeforeAnswering(t, addr)
			}
			wantSkipsBriefing(t, addr)
			wantAllPassed(t, runParley(t, nil, "agent-check", "grpc://"+addr, "--matches", "1", "--deadline", "5s"), p)
			if bot.name == "ruby" { // the referee of a real match asks with Act after Play's UNKNOWN
				playAgainstUp(t, url, "grpc://"+addr, p)
			}
		})
	}

	token := strings.TrimSpace(mustRun(t, nil, "admin", "team", "add", "acme", "--data-dir", dir).stdout)
	var names []string
	for _, g := range families.New().Games() {
		names = append(names, `"`+g.Info().GetName()+`"`)
	}
	for _, bot := range bots {
		t.Run(bot.name+" dialling out", func(t *testing.T) {
			body := `{"name":"` + bot.name + `","version":"1","games":[` + strings.Join(names, ",") + `],"endpoint":"dialout"}`
			if code, data := teamCall(t, url, token, "/parley.registry.v1.RegistryService/RegisterBot", body); code != http.StatusOK {
				t.Fatalf("register: %d %s", code, data)
			}
			p := bot.start(t, "--dial-out", url, "--token", token, "--bot", bot.name)
			if addr := p.waitLine("connected as "); addr != "bot:acme/"+bot.name {
				t.Fatalf("connected as %q", addr)
			}
			// Served, the bot played every game from the same code; over its link two games
			// suffice: the simplest and the one whose messages go to named seats with terms.
			env := []string{"PARLEY_TOKEN=" + token}
			r := runParley(t, env, "agent-check", "bot:acme/"+bot.name, "--gateway", url, "--game", "ultimatum", "--game", "coalition", "--matches", "1", "--deadline", "5s")
			wantAllPassed(t, r, p, "ultimatum", "coalition")
			if !strings.Contains(r.stdout, "PASS  health") || !strings.Contains(r.stdout, "link to the gateway at "+url+" is connected") {
				t.Errorf("the health line does not say the link is connected:\n%s", r.stdout)
			}

			if bot.name != bots[0].name {
				return // what follows is the gateway's, the same for every bot: checked once
			}
			// Once the bot is gone, the same check fails at once, saying the bot is not connected.
			_ = p.cmd.Process.Kill()
			select {
			case <-p.exited:
			case <-time.After(waitTimeout):
				t.Fatal("the bot did not stop")
			}
			deadline := time.Now().Add(waitTimeout)
			for {
				r = runParley(t, env, "agent-check", "bot:acme/"+bot.name, "--gateway", url, "--game", "matrix")
				if strings.Contains(r.stdout, "no link open to the gateway") || time.Now().After(deadline) {
					break
				}
			}
			if r.code != 1 || !strings.Contains(r.stdout, "FAIL  health") || !strings.Contains(r.stdout, "no link open to the gateway") {
				t.Errorf("agent-check of a bot that left:\n%s", r)
			}
		})
	}

	// Hello.version, when a bot sends it (these send "1"), must be the registered version.
	t.Run("another version", func(t *testing.T) {
		body := `{"name":"later","version":"2","games":["ultimatum"],"endpoint":"dialout"}`
		if code, data := teamCall(t, url, token, "/parley.registry.v1.RegistryService/RegisterBot", body); code != http.StatusOK {
			t.Fatalf("register: %d %s", code, data)
		}
		p := bots[0].start(t, "--dial-out", url, "--token", token, "--bot", "later")
		select {
		case <-p.exited:
		case <-time.After(waitTimeout):
			t.Fatalf("a bot of another version is still connected\n%s", p.output())
		}
		if !strings.Contains(p.output(), "FAILED_PRECONDITION") || !strings.Contains(p.output(), "registered at version 2, not 1") {
			t.Errorf("the gateway did not refuse a bot of another version, saying why\n%s", p.output())
		}
	})
}
