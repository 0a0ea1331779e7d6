package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/root"
	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/referee/families"
)

// TestErrors runs the binary with mistakes: each must exit with the right status, print
// nothing on stdout and one line on stderr that names what is wrong and what would be right.
func TestErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	mustRun(t, nil, "play", "ultimatum", "--agent", "builtin:fair", "--agent", "builtin:random", "--seed", "1", "--record", good)
	goodLines, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	corrupt := write("corrupt.jsonl", string(goodLines[:len(goodLines)/2])+"\n")
	garbage := write("garbage.jsonl", "this is not json\n")
	empty := write("empty.jsonl", "")
	noStart := write("nostart.jsonl", strings.SplitAfterN(string(goodLines), "\n", 2)[1])
	missing := filepath.Join(dir, "missing.jsonl")
	// Ports nothing listens on (free a moment ago).
	port := natstest.FreePort(t)
	port2 := natstest.FreePort(t)
	for port2 == port {
		port2 = natstest.FreePort(t)
	}
	dead, dead2 := fmt.Sprintf("grpc://127.0.0.1:%d", port), fmt.Sprintf("grpc://127.0.0.1:%d", port2)

	play := func(more ...string) []string { return append([]string{"play", "ultimatum"}, more...) }
	two := []string{"--agent", "builtin:fair", "--agent", "builtin:random"}
	tests := []struct {
		name string
		args []string
		env  []string
		code int
		want []string // substrings of the error line, after "parley: "
	}{
		{"unknown game", []string{"play", "chess", "--agent", "builtin:fair", "--agent", "builtin:random"}, nil, 2,
			[]string{`unknown game "chess"`, "ultimatum", "parley games"}},
		{"unknown built-in agent", play("--agent", "builtin:genius", "--agent", "builtin:random"), nil, 2,
			[]string{`"genius"`, "fair", "random"}},
		{"bad built-in setting", play("--agent", "builtin:fair?open=lots", "--agent", "builtin:random"), nil, 2,
			[]string{"open", `"lots"`, "number"}},
		{"unknown built-in setting", play("--agent", "builtin:fair?greed=1", "--agent", "builtin:random"), nil, 2,
			[]string{`"greed"`, "open", "target", "floor"}},
		{"malformed agent address", play("--agent", "http://127.0.0.1:1", "--agent", "builtin:random"), nil, 2,
			[]string{`"http://127.0.0.1:1"`, "builtin:NAME", "grpc://host:port"}},
		{"agent address without port", play("--agent", "grpc://127.0.0.1", "--agent", "builtin:random"), nil, 2,
			[]string{`"grpc://127.0.0.1"`, "grpc://host:port"}},
		{"unreachable agent", play("--agent", dead, "--agent", "builtin:random"), nil, 1,
			[]string{dead, "unreachable"}},
		{"two unreachable agents", play("--agent", dead, "--agent", dead2), nil, 1,
			[]string{dead + " ", dead2 + " ", "unreachable"}},
		{"bad parameter value", play(append(two, "--param", "total=abc")...), nil, 2,
			[]string{"total", `"abc"`, "whole number"}},
		{"out of range parameter", play(append(two, "--param", "total=-5")...), nil, 2,
			[]string{"total", "at least 1", "-5"}},
		{"unknown parameter", play(append(two, "--param", "pot=10")...), nil, 2,
			[]string{`"pot"`, "total", "max_turns"}},
		{"parameter without value", play(append(two, "--param", "total")...), nil, 2,
			[]string{`"total"`, "key=value"}},
		{"one agent", play("--agent", "builtin:fair"), nil, 2,
			[]string{"needs 2 agents", "P1, P2", "got 1"}},
		{"three agents", play(append(two, "--agent", "builtin:fair")...), nil, 2,
			[]string{"needs 2 agents", "got 3"}},
		{"no agents", play(), nil, 2,
			[]string{"needs 2 agents", "--agent", "got 0"}},
		{"bad move timeout", play(append(two, "--move-timeout", "soon")...), nil, 2,
			[]string{"--move-timeout", `"soon"`, "duration"}},
		{"zero move timeout", play(append(two, "--move-timeout", "0s")...), nil, 2,
			[]string{"--move-timeout", "positive", "0s"}},
		{"bad move timeout from the environment", play(two...), []string{"PARLEY_MOVE_TIMEOUT=soon"}, 2,
			[]string{"$PARLEY_MOVE_TIMEOUT", `"soon"`, "duration"}},
		{"negative retries", play(append(two, "--retries", "-1")...), nil, 2,
			[]string{"--retries", "0 or more", "-1"}},
		// 2^32 would wrap around to 0 retries as an int32.
		{"retries past the hard limit", play(append(two, "--retries", "4294967296")...), nil, 2,
			[]string{"--retries", "at most 10", "4294967296"}},
		{"reply limit past the hard limit", play(append(two, "--max-reply-bytes", "2147483648")...), nil, 2,
			[]string{"--max-reply-bytes", "1024 to 524288", "2147483648"}},
		{"bad match id", play(append(two, "--match-id", "a.b")...), nil, 2,
			[]string{`"a.b"`, "A-Z"}},
		{"unknown flag", play(append(two, "--sed", "1")...), nil, 2,
			[]string{"--sed"}},
		{"no game", []string{"play"}, nil, 2,
			[]string{"play", "usage: parley play GAME"}},
		{"unknown command", []string{"pley"}, nil, 2,
			[]string{`"pley"`, "play", "parley --help"}},
		{"replay missing file", []string{"replay", missing}, nil, 2,
			[]string{missing, "no such file"}},
		{"replay corrupt file", []string{"replay", corrupt}, nil, 2,
			[]string{corrupt, "line ", "not a match event"}},
		{"replay garbage", []string{"replay", garbage, "--json"}, nil, 2,
			[]string{garbage, "line 1", "not a match event"}},
		{"replay empty file", []string{"replay", empty}, nil, 2,
			[]string{empty, "empty"}},
		{"replay without match_started", []string{"replay", noStart}, nil, 2,
			[]string{noStart, "match_started"}},
		{"replay agents without --from-turn", []string{"replay", good, "--agent", "builtin:fair", "--agent", "builtin:fair"}, nil, 2,
			[]string{"--agent", "--from-turn"}},
		{"replay --from-turn with one agent", []string{"replay", good, "--from-turn", "2", "--agent", "builtin:fair"}, nil, 2,
			[]string{"needs 2 agents", "--agent", "got 1"}},
		{"replay negative --from-turn", []string{"replay", good, "--from-turn", "-1", "--agent", "builtin:fair", "--agent", "builtin:fair"}, nil, 2,
			[]string{"--from-turn", "between 1 and", "-1"}},
		{"replay --from-turn past the record", []string{"replay", good, "--from-turn", "99", "--agent", "builtin:fair", "--agent", "builtin:fair"}, nil, 2,
			[]string{"--from-turn", "last turn played", "99"}},
		{"unknown agent to serve", []string{"agent", "genius", "--listen", "127.0.0.1:0"}, nil, 2,
			[]string{`"genius"`, "fair", "random"}},
		{"bad agent setting to serve", []string{"agent", "fair", "--listen", "127.0.0.1:0", "--set", "open"}, nil, 2,
			[]string{`"open"`, "key=value"}},
		{"bad listen address", []string{"agent", "fair", "--listen", "127.0.0.1"}, nil, 2,
			[]string{"--listen", "127.0.0.1"}},
		{"bench load flags without --load", []string{"bench", "--latency", "1s"}, nil, 2,
			[]string{"--latency", "--load"}},
		{"bench load concurrency", []string{"bench", "--load", "--concurrency", "0"}, nil, 2,
			[]string{"--concurrency", "at least 1"}},
		{"negative agent delay", []string{"agent", "fair", "--listen", "127.0.0.1:0", "--delay", "-1s"}, nil, 2,
			[]string{"--delay", "negative"}},
		{"bench count", []string{"bench", "--count", "0"}, nil, 2,
			[]string{"--count", "at least 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := runParley(t, tc.env, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit status %d, want %d", r.code, tc.code)
			}
			if r.stdout != "" {
				t.Errorf("stdout is not empty: %q", r.stdout)
			}
			line := checkErrorLine(t, r.stderr)
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("error line %q does not mention %q", line, w)
				}
			}
		})
	}
}

// checkErrorLine checks that stderr is one line "parley: ..." with no trace of a panic, and
// returns it.
func checkErrorLine(t *testing.T, stderr string) string {
	t.Helper()
	for _, bad := range []string{"panic", "goroutine "} {
		if strings.Contains(stderr, bad) {
			t.Errorf("stderr mentions %q:\n%s", bad, stderr)
		}
	}
	line, ok := strings.CutSuffix(stderr, "\n")
	if !ok || strings.Contains(line, "\n") || !strings.HasPrefix(line, "parley: ") {
		t.Errorf("want one line \"parley: ...\" on stderr, got:\n%s", stderr)
	}
	return line
}

// TestHelp runs --help for the root and every subcommand: each prints its usage and the
// environment variable of each of its flags.
func TestHelp(t *testing.T) {
	t.Parallel()
	// What each help must show, read from the real command tree before the parallel runs (a
	// cobra tree is not safe for concurrent use).
	type want struct {
		useLine string
		envs    []string
	}
	tree := root.NewCmd(&cli.Deps{Games: families.New(), Builtins: builtin.Agents{}, Getenv: func(string) string { return "" }})
	describe := func(cmd *cobra.Command) want {
		w := want{useLine: cmd.UseLine()}
		cmd.LocalFlags().VisitAll(func(f *pflag.Flag) {
			if f.Name != "help" {
				w.envs = append(w.envs, "$"+cli.EnvName(f.Name))
			}
		})
		return w
	}
	var names []string
	cases := map[string]want{"--help": describe(tree)}
	for _, sub := range tree.Commands() {
		names = append(names, sub.Name())
		cases[sub.Name()+" --help"] = describe(sub)
		if sub.Name() == "play" {
			cases["help play"] = describe(sub)
		}
	}
	if len(names) < 6 {
		t.Fatalf("the command tree has subcommands %v; want at least games, play, replay, agent, referee, bench", names)
	}
	for args, w := range cases {
		t.Run(args, func(t *testing.T) {
			t.Parallel()
			r := runParley(t, nil, strings.Fields(args)...)
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("want exit status 0 and nothing on stderr:\n%s", r)
			}
			if !strings.Contains(r.stdout, "Usage:") || !strings.Contains(r.stdout, w.useLine) {
				t.Errorf("help does not show the usage line %q:\n%s", w.useLine, r.stdout)
			}
			if args == "--help" {
				for _, n := range names {
					if !strings.Contains(r.stdout, "  "+n+" ") {
						t.Errorf("root help does not list %q:\n%s", n, r.stdout)
					}
				}
			}
			for _, env := range w.envs {
				if !strings.Contains(r.stdout, env) {
					t.Errorf("help does not name the variable %s:\n%s", env, r.stdout)
				}
			}
		})
	}
}
