package main

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// `parley agent-check` passes the example bots in Go, Python and TypeScript, and a built-in Go
// agent served by `parley agent` (which claims every game).
func TestAgentCheckExamples(t *testing.T) {
	t.Parallel()
	repo := repoRoot(t)
	bots := []struct {
		name  string
		start func(t *testing.T) (addr string, p *proc)
	}{
		{"go example", func(t *testing.T) (string, *proc) {
			p := startProc(t, "", buildGoExample(t), "--listen", "127.0.0.1:0")
			return strings.TrimSpace(p.waitLine("listening on ")), p
		}},
		{"go built-in", func(t *testing.T) (string, *proc) {
			p := startProc(t, "", parleyBin, "agent", "random", "--listen", "127.0.0.1:0")
			return strings.TrimSpace(p.waitLine("agent random listening on ")), p
		}},
		{"python", func(t *testing.T) (string, *proc) {
			if out, err := exec.Command(systemPython, "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
				t.Fatalf("%s cannot import grpc and protobuf (%v): run `make deps`\n%s", systemPython, err, out)
			}
			p := startProc(t, repo, systemPython, "agents/python/example_bot.py", "--listen", "127.0.0.1:0")
			return strings.TrimSpace(p.waitLine("listening on ")), p
		}},
		{"typescript", func(t *testing.T) (string, *proc) {
			node, script := buildTypeScript(t)
			p := startProc(t, repo, node, script, "--listen", "127.0.0.1:0")
			return strings.TrimSpace(p.waitLine("listening on ")), p
		}},
	}
	for _, bot := range bots {
		t.Run(bot.name, func(t *testing.T) {
			addr, p := bot.start(t)
			r := runParley(t, nil, "agent-check", "grpc://"+addr, "--matches", "2", "--deadline", "5s")
			if r.code != 0 || !regexp.MustCompile(`(?m)^all \d+ checks passed`).MatchString(r.stdout) {
				t.Fatalf("agent-check failed:\n%s\n--- bot:\n%s", r, p.output())
			}
			for _, want := range []string{"PASS  health", "PASS  describe", ": legal replies", ": rejection", ": unknown fields", "PASS  deadline"} {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("the report lacks %q:\n%s", want, r.stdout)
				}
			}
			if strings.Contains(r.stdout, "FAIL") {
				t.Errorf("a check failed:\n%s", r.stdout)
			}
		})
	}

	// A bot that is not there: exit status 1 and a failing line, not a hang.
	r := runParley(t, nil, "agent-check", "grpc://127.0.0.1:1", "--deadline", "2s")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL  describe") || !strings.Contains(r.stderr, "checks failed") {
		t.Errorf("agent-check of nothing:\n%s", r)
	}
}
