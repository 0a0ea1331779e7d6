package main

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

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

// minimalBot starts one of the minimal bots with args.
type minimalBot struct {
	name  string
	start func(t *testing.T, args ...string) *proc
}

// minimalBots are the bots of examples/, ready to start: the Python one with stubs generated
// now, the Node.js one with the packages its lockfile pins.
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
	return []minimalBot{
		{"python", func(t *testing.T, args ...string) *proc {
			return startProcEnv(t, repo, []string{"PARLEY_STUBS=" + stubs}, systemPython, append([]string{"examples/minimal-python/bot.py"}, args...)...)
		}},
		{"node", func(t *testing.T, args ...string) *proc {
			return startProc(t, repo, node, append([]string{"examples/minimal-node/bot.js"}, args...)...)
		}},
	}
}

// wantAllPassed fails the test unless agent-check passed every check.
func wantAllPassed(t *testing.T, r result, bot *proc) {
	t.Helper()
	if r.code != 0 || !regexp.MustCompile(`(?m)^all \d+ checks passed`).MatchString(r.stdout) || strings.Contains(r.stdout, "FAIL") {
		t.Fatalf("agent-check failed:\n%s\n--- bot:\n%s", r, bot.output())
	}
	for _, g := range families.New().Games() {
		if name := g.Info().GetName(); !strings.Contains(r.stdout, "PASS  "+name+": legal replies") {
			t.Errorf("%s was not checked:\n%s", name, r.stdout)
		}
	}
}

// The minimal bots, written from proto/ alone with each language's ordinary gRPC tools, pass
// agent-check in every game: served on an address, and dialling out to `parley up`, checked
// through its gateway with the team's token (from $PARLEY_TOKEN).
func TestMinimalBots(t *testing.T) {
	t.Parallel()
	bots := minimalBots(t)

	for _, bot := range bots {
		t.Run(bot.name+" served", func(t *testing.T) {
			p := bot.start(t, "--listen", "127.0.0.1:0")
			addr := strings.TrimSpace(p.waitLine("listening on "))
			wantAllPassed(t, runParley(t, nil, "agent-check", "grpc://"+addr, "--matches", "1", "--deadline", "5s"), p)
		})
	}

	dir := t.TempDir()
	up := startProc(t, "", parleyBin, "up", "--data-dir", dir, "--listen", "127.0.0.1:0", "--referee-listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0", "--allow-dial", "127.0.0.1/32")
	url := strings.TrimSuffix(up.waitLine("Parley is up: "), "/")
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
			env := []string{"PARLEY_TOKEN=" + token}
			r := runParley(t, env, "agent-check", "bot:acme/"+bot.name, "--gateway", url, "--matches", "1", "--deadline", "5s")
			wantAllPassed(t, r, p)
			if !strings.Contains(r.stdout, "PASS  health") || !strings.Contains(r.stdout, "link to the gateway at "+url+" is connected") {
				t.Errorf("the health line does not say the link is connected:\n%s", r.stdout)
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
