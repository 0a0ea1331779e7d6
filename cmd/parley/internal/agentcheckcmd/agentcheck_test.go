package agentcheckcmd

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/random"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/families"
)

// check runs `parley agent-check` in process and returns its output and exit status.
func check(t *testing.T, args ...string) (string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	deps := &cli.Deps{Out: &out, Err: &errOut, Games: families.New(), Getenv: func(string) string { return "" }, Builtins: builtin.Agents{}}
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
	addr := sdktest.Addr(t, randomBot(7), sdk.WithInfo(botInfo))
	out, code := check(t, addr, "--matches", "1", "--deadline", "5s")
	if code != 0 {
		t.Fatalf("exit status %d, want 0", code)
	}
	for _, g := range families.New().Games() {
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

// A bot that answers every request with a move no game allows fails the legal-replies and
// rejection checks, saying what the referee refused and why, and the command exits 1. (What
// each check catches is referee/agenttest's to test.)
func TestIllegalBot(t *testing.T) {
	bad := sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: "no-such-option"}}}}, nil
	})
	addr := sdktest.Addr(t, bad, sdk.WithInfo(&gamev1.AgentInfo{Name: "bad", Games: []string{"ultimatum"}}))
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

// A dial-out bot is checked through a gateway, with the team's token; anything missing or
// misplaced is a usage error naming what to give.
func TestDialOutUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"bot:acme/steady"}, "--gateway"},
		{[]string{"bot:acme/steady", "--gateway", "http://127.0.0.1:1"}, "--token"},
		{[]string{"bot:acme/steady@2", "--gateway", "http://127.0.0.1:1", "--token", "pt_x"}, "whatever its version"},
		{[]string{"bot:acme", "--gateway", "http://127.0.0.1:1", "--token", "pt_x"}, "bot:TEAM/NAME"},
		{[]string{"bot:acme/steady", "--gateway", "ftp://127.0.0.1:1", "--token", "pt_x"}, "http://host:port"},
		{[]string{"grpc://127.0.0.1:1", "--gateway", "http://127.0.0.1:1"}, "check grpc://127.0.0.1:1 directly"},
	} {
		out, code := check(t, tc.args...)
		if code != 2 || !strings.Contains(out, "error: ") || !strings.Contains(out, tc.says) || strings.Count(strings.TrimSpace(out), "\n") > 1 {
			t.Errorf("%v: exit status %d, want 2 and an error saying %q; output:\n%s", tc.args, code, tc.says, out)
		}
	}
}
