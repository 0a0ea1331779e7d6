package main

// End-to-end tests of the parley binary: TestMain builds it once (with -race when the tests run
// with -race) and the tests run it as a user would, against real gRPC agents, the embedded or
// an external NATS server, and the Python example bot. A few run the same cobra command tree
// in process to compare.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/root"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/record"
)

const (
	// runTimeout bounds one run of the binary; a match between built-in agents takes well
	// under a second.
	runTimeout = 3 * time.Minute
	// waitTimeout bounds waiting for a started process to print a line, answer or exit.
	waitTimeout = 2 * time.Minute
)

// parleyBin is the binary under test, built by TestMain.
var parleyBin string

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "parley-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	parleyBin = filepath.Join(dir, "parley")
	args := []string{"build", "-o", parleyBin}
	if raceEnabled {
		args = append(args, "-race")
	}
	// The working directory of a test is its package directory: cmd/parley.
	out, err := exec.Command(goTool(), append(args, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the parley binary: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// childEnv is the environment of a child process: this one's without any PARLEY_ variable
// (a developer's settings must not change what the tests see), plus extra ("KEY=value").
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PARLEY_") {
			env = append(env, kv)
		}
	}
	// A race-enabled binary otherwise sleeps a second before exiting.
	env = append(env, "GORACE=atexit_sleep_ms=0")
	return append(env, extra...)
}

// result is how a run of parley ended.
type result struct {
	stdout, stderr string
	code           int
}

func (r result) String() string {
	return fmt.Sprintf("exit status %d\n--- stdout:\n%s--- stderr:\n%s", r.code, r.stdout, r.stderr)
}

// runParley runs the binary with args and the extra environment variables and waits for it.
func runParley(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, parleyBin, args...)
	cmd.Env = childEnv(env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := result{stdout: stdout.String(), stderr: stderr.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("parley %s did not finish within %s\n%s", strings.Join(args, " "), runTimeout, r)
	case errors.As(err, &exit):
		r.code = exit.ExitCode()
	case err != nil:
		t.Fatalf("running parley %s: %v", strings.Join(args, " "), err)
	}
	return r
}

// mustRun runs parley and fails the test unless it exits 0.
func mustRun(t *testing.T, env []string, args ...string) result {
	t.Helper()
	r := runParley(t, env, args...)
	if r.code != 0 {
		t.Fatalf("parley %s failed:\n%s", strings.Join(args, " "), r)
	}
	return r
}

// runInProcess runs the real command tree inside the test, as main does, with env as the
// environment.
func runInProcess(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	var stdout, stderr lockedBuffer // NATS callbacks may log from their own goroutines
	deps := &cli.Deps{Out: &stdout, Err: &stderr, Games: families.New(), Builtins: builtin.Agents{}, Getenv: func(k string) string { return env[k] }}
	cmd := root.NewCmd(deps)
	cmd.SetArgs(args)
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintf(&stderr, "parley: %v\n", err)
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: cli.ExitCode(err)}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// decodeRecord parses JSON-lines output: every line must be a protojson MatchEvent (unknown
// fields refused) written in the canonical form record.Marshal gives.
func decodeRecord(t *testing.T, out string) []*eventsv1.MatchEvent {
	t.Helper()
	if out == "" || !strings.HasSuffix(out, "\n") {
		t.Fatalf("want JSON lines ending in a newline, got %q", out)
	}
	var evs []*eventsv1.MatchEvent
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		ev := &eventsv1.MatchEvent{}
		if err := protojson.Unmarshal([]byte(line), ev); err != nil {
			t.Fatalf("line %d is not a protojson MatchEvent: %v\n%s", i+1, err, line)
		}
		canon, err := record.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if string(canon) != line {
			t.Fatalf("line %d is not in canonical form:\n got  %s\n want %s", i+1, line, canon)
		}
		evs = append(evs, ev)
	}
	return evs
}

// checkRecord checks that evs are one whole match between seats agents: one match id, seq
// 1..N, match_started first, match_ended last (and only there) with one payoff per seat.
func checkRecord(t *testing.T, evs []*eventsv1.MatchEvent, seats int) (*eventsv1.MatchStarted, *eventsv1.MatchEnded) {
	t.Helper()
	if len(evs) < 2 {
		t.Fatalf("record has %d events, want at least match_started and match_ended", len(evs))
	}
	id := evs[0].GetMatchId()
	if id == "" {
		t.Fatal("first event has no match id")
	}
	for i, ev := range evs {
		if ev.GetMatchId() != id {
			t.Errorf("event %d: match id %q, want %q", i+1, ev.GetMatchId(), id)
		}
		if ev.GetSeq() != uint64(i+1) {
			t.Errorf("event %d: seq %d, want %d", i+1, ev.GetSeq(), i+1)
		}
		if ev.GetMatchEnded() != nil && i != len(evs)-1 {
			t.Errorf("event %d of %d is match_ended", i+1, len(evs))
		}
	}
	started, ended := evs[0].GetMatchStarted(), evs[len(evs)-1].GetMatchEnded()
	if started == nil {
		t.Fatalf("first event is not match_started: %v", evs[0])
	}
	if ended == nil {
		t.Fatalf("last event is not match_ended: %v", evs[len(evs)-1])
	}
	if n := len(started.GetSeats()); n != seats {
		t.Errorf("match_started lists %d seats, want %d", n, seats)
	}
	if n := len(ended.GetOutcome().GetPayoffs()); n != seats && ended.GetOutcome().GetCause() != matchv1.EndCause_END_CAUSE_VOID {
		t.Errorf("match_ended has %d payoffs, want one per seat (%d): %v", n, seats, ended)
	}
	return started, ended
}

// proc is a long-running child process whose stdout is read line by line.
type proc struct {
	t      testing.TB
	name   string
	cmd    *exec.Cmd
	stderr lockedBuffer
	exited chan struct{} // closed once the process has exited and its output is read

	mu      sync.Mutex
	lines   []string      // stdout so far
	changed chan struct{} // receives after each new line (capacity 1)
}

// startProc starts name with args in dir (empty: the current directory). It is killed at
// cleanup unless it has exited.
func startProc(t testing.TB, dir, name string, args ...string) *proc {
	t.Helper()
	return startProcEnv(t, dir, nil, name, args...)
}

// startProcEnv is startProc with extra environment variables ("KEY=value").
func startProcEnv(t testing.TB, dir string, env []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: filepath.Base(name), exited: make(chan struct{}), changed: make(chan struct{}, 1)}
	p.cmd = exec.Command(name, args...)
	p.cmd.Dir = dir
	p.cmd.Env = childEnv(env...)
	p.cmd.Stderr = &p.stderr
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.mu.Lock()
			p.lines = append(p.lines, sc.Text())
			p.mu.Unlock()
			select {
			case p.changed <- struct{}{}:
			default:
			}
		}
		_, _ = io.Copy(io.Discard, out)
		_ = p.cmd.Wait() // after all reads from the pipe, as exec requires
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
			return
		default:
		}
		_ = p.cmd.Process.Kill()
		<-p.exited
	})
	return p
}

// output is what the process printed so far, for failure messages.
func (p *proc) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return fmt.Sprintf("--- stdout:\n%s\n--- stderr:\n%s", strings.Join(p.lines, "\n"), p.stderr.String())
}

// waitLine waits for a stdout line beginning with prefix and returns the rest of it.
func (p *proc) waitLine(prefix string) string {
	p.t.Helper()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		p.mu.Lock()
		for _, l := range p.lines {
			if rest, ok := strings.CutPrefix(l, prefix); ok {
				p.mu.Unlock()
				return rest
			}
		}
		p.mu.Unlock()
		select {
		case <-p.changed:
		case <-p.exited:
			// The line may have come just before the end.
			p.mu.Lock()
			for _, l := range p.lines {
				if rest, ok := strings.CutPrefix(l, prefix); ok {
					p.mu.Unlock()
					return rest
				}
			}
			p.mu.Unlock()
			p.t.Fatalf("%s exited (%v) before printing %q\n%s", p.name, p.cmd.ProcessState, prefix, p.output())
		case <-deadline.C:
			p.t.Fatalf("%s printed no line beginning %q within %s\n%s", p.name, prefix, waitTimeout, p.output())
		}
	}
}

// interrupt sends SIGINT and waits for the process to exit, within waitTimeout; it returns the exit
// status and how long the exit took.
func (p *proc) interrupt() (int, time.Duration) {
	p.t.Helper()
	limit := waitTimeout
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		p.t.Fatalf("interrupting %s: %v", p.name, err)
	}
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode(), time.Since(start)
	case <-time.After(limit):
		p.t.Fatalf("%s still running %s after SIGINT\n%s", p.name, limit, p.output())
		return 0, 0
	}
}

// repoRoot is the repository's root (repodata.Root).
func repoRoot(t *testing.T) string { return repodata.Root(t) }
