package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/referee/queue"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/natstest"
)

// systemPython is the interpreter with Debian's python3-grpcio and python3-protobuf.
const systemPython = "/usr/bin/python3"

// dialGRPC connects to a gRPC server on addr, closed at cleanup.
func dialGRPC(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// checkNormalEnd checks that a match ended by the rules, with no refused action, fault or
// default move for the seats in clean.
func checkNormalEnd(t *testing.T, evs []*eventsv1.MatchEvent, ended *eventsv1.MatchEnded, clean ...int32) {
	t.Helper()
	switch c := ended.GetOutcome().GetCause(); c {
	case matchv1.EndCause_END_CAUSE_AGREEMENT, matchv1.EndCause_END_CAUSE_REJECTED, matchv1.EndCause_END_CAUSE_TURN_LIMIT:
	default:
		t.Errorf("match ended with cause %v: %v", c, ended)
	}
	for _, ev := range evs {
		for _, seat := range clean {
			switch {
			case ev.GetAgentFault() != nil && ev.GetAgentFault().GetSeat() == seat:
				t.Errorf("seat %d: agent fault: %v", seat, ev)
			case ev.GetActionRefused() != nil && ev.GetActionRefused().GetSeat() == seat:
				t.Errorf("seat %d: action refused: %v", seat, ev)
			case ev.GetActionTaken().GetSeat() == seat && ev.GetActionTaken().GetDefaultReason() != "":
				t.Errorf("seat %d: default move: %v", seat, ev)
			}
		}
	}
}

// TestPythonAgent plays the Python example bot against a built-in Go agent, in each seat.
func TestPythonAgent(t *testing.T) {
	t.Parallel()
	repo := repoRoot(t)
	if out, err := exec.Command(systemPython, "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
		t.Fatalf("%s cannot import grpc and protobuf (%v): run `make deps` to install python3-grpcio and python3-protobuf\n%s", systemPython, err, out)
	}
	bot := startProc(t, repo, systemPython, "agents/python/example_bot.py", "--listen", "127.0.0.1:0")
	addr := strings.TrimSpace(bot.waitLine("listening on "))

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	info, err := agentv1.NewAgentServiceClient(dialGRPC(t, addr)).Describe(ctx, &agentv1.DescribeRequest{})
	if err != nil {
		t.Fatalf("Describe on the Python bot: %v\n%s", err, bot.output())
	}
	name := info.GetAgent().GetName()
	if name == "" {
		t.Fatalf("the Python bot describes itself without a name: %v", info)
	}

	for _, py := range []int32{1, 0} {
		agents := []string{"builtin:fair", "builtin:fair"}
		agents[py] = "grpc://" + addr
		t.Run(fmt.Sprintf("python in seat %d", py), func(t *testing.T) {
			r := runParley(t, nil, "play", "ultimatum", "--agent", agents[0], "--agent", agents[1], "--seed", "5", "--json")
			if r.code != 0 {
				t.Fatalf("play failed:\n%s\n--- python bot:\n%s", r, bot.output())
			}
			evs := decodeRecord(t, r.stdout)
			started, ended := checkRecord(t, evs, 2)
			if got := started.GetSeats()[py].GetAgent().GetName(); got != name {
				t.Errorf("match_started names seat %d's agent %q, want the Python bot's %q", py, got, name)
			}
			moves := 0
			for _, ev := range evs {
				if ev.GetActionTaken() != nil && ev.GetActionTaken().GetSeat() == py {
					moves++
				}
			}
			if moves == 0 {
				t.Errorf("the Python bot made no move:\n%s", r.stdout)
			}
			checkNormalEnd(t, evs, ended, py)
		})
	}
}

// TestAgentServe serves a built-in agent with `parley agent` and plays against it.
func TestAgentServe(t *testing.T) {
	t.Parallel()
	agent := startProc(t, "", parleyBin, "agent", "fair", "--listen", "127.0.0.1:0")
	addr := strings.TrimSpace(agent.waitLine("agent fair listening on "))

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	health := healthpb.NewHealthClient(dialGRPC(t, addr))
	for _, svc := range []string{"", agentv1.AgentService_ServiceDesc.ServiceName} {
		resp, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Errorf("health check of %q: %v, %v; want SERVING", svc, resp, err)
		}
	}
	if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: "no.such.Service"}); status.Code(err) != codes.NotFound {
		t.Errorf("health check of an unknown service: %v, want NotFound", err)
	}

	r := mustRun(t, nil, "play", "ultimatum", "--agent", "grpc://"+addr, "--agent", "builtin:random", "--seed", "9", "--json")
	evs := decodeRecord(t, r.stdout)
	started, ended := checkRecord(t, evs, 2)
	if got := started.GetSeats()[0].GetAgent().GetName(); got != "fair" {
		t.Errorf("seat 0 is played by %q, want the served fair agent", got)
	}
	checkNormalEnd(t, evs, ended, 0)

	code, _ := agent.interrupt()
	if code != 0 {
		t.Errorf("parley agent exited with status %d after SIGINT, want 0\n%s", code, agent.output())
	}
}

// TestRefereeServe drives `parley referee` through its gRPC API.
func TestRefereeServe(t *testing.T) {
	t.Parallel()
	ref := startProc(t, "", parleyBin, "referee", "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0")
	addr, _, _ := strings.Cut(ref.waitLine("referee listening on "), ",")
	metricsURL := ref.waitLine("metrics on ")
	// Quiet by default: the embedded NATS server's start-up lines and banner are info, not
	// warnings (--log-level info shows them).
	if out := ref.stderr.String(); strings.Contains(out, "nats-server") || strings.Contains(out, `"level":"INFO"`) {
		t.Errorf("parley referee logs at start-up by default:\n%s", out)
	}
	client := refereev1.NewRefereeServiceClient(dialGRPC(t, addr))
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()

	games, err := client.ListGames(ctx, &refereev1.ListGamesRequest{})
	if err != nil {
		t.Fatalf("ListGames: %v\n%s", err, ref.output())
	}
	var ultimatum *gamev1.GameInfo
	for _, g := range games.GetGames() {
		if g.GetName() == "ultimatum" {
			ultimatum = g
		}
	}
	if ultimatum == nil || len(ultimatum.GetSeats()) != 2 || len(ultimatum.GetParams()) == 0 {
		t.Fatalf("ListGames has no two-seat ultimatum with parameters: %v", games)
	}

	if _, err := client.StartMatch(ctx, &refereev1.StartMatchRequest{Game: "chess", Agents: []string{"builtin:fair", "builtin:random"}}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("StartMatch of an unknown game: %v, want InvalidArgument", err)
	}
	started, err := client.StartMatch(ctx, &refereev1.StartMatchRequest{
		Game: "ultimatum", Seed: 42, Agents: []string{"builtin:fair", "builtin:random"},
	})
	if err != nil {
		t.Fatalf("StartMatch: %v\n%s", err, ref.output())
	}
	id := started.GetMatchId()
	stream, err := client.StreamMatchEvents(ctx, &refereev1.StreamMatchEventsRequest{MatchId: id})
	if err != nil {
		t.Fatalf("StreamMatchEvents: %v", err)
	}
	var streamed []*eventsv1.MatchEvent
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("StreamMatchEvents after %d events: %v\n%s", len(streamed), err, ref.output())
		}
		if resp.GetWaiting() == nil { // live news of whom the match waits for is not the record
			streamed = append(streamed, resp.GetEvent())
		}
	}
	if streamed[0].GetMatchId() != id {
		t.Errorf("streamed match id %q, want %q", streamed[0].GetMatchId(), id)
	}
	_, ended := checkRecord(t, streamed, 2)
	checkNormalEnd(t, streamed, ended, 0, 1)

	got, err := client.GetMatch(ctx, &refereev1.GetMatchRequest{MatchId: id})
	if err != nil {
		t.Fatalf("GetMatch: %v", err)
	}
	if !got.GetEnded() {
		t.Error("GetMatch says the match has not ended after its stream ended")
	}
	if err := sameEvents(got.GetEvents(), streamed); err != nil {
		t.Errorf("GetMatch and the stream differ: %v", err)
	}
	// --metrics: the match (counted just after its last event is recorded) and the work
	// queue's lag, in the lane of the organiser's requests (the referee's own port).
	lane := fmt.Sprintf(`parley_jetstream_consumer_pending_messages{consumer="%s-%s",stream="PARLEY_REQUESTS"} 0`,
		natsname.RefereeConsumer, queue.LaneOf(policy.Caller{Role: policy.Organiser}.Owner()))
	for deadline := time.Now().Add(waitTimeout); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.Get(metricsURL)
		if err != nil {
			t.Fatal(err)
		}
		metrics, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var missing []string
		for _, want := range []string{`parley_matches_finished_total{cause=`, `parley_moves_total{agent="fair@1",game="ultimatum"}`,
			lane} {
			if !strings.Contains(string(metrics), want) {
				missing = append(missing, want)
			}
		}
		if len(missing) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("referee metrics lack %q", missing)
		}
	}

	code, _ := ref.interrupt()
	if code != 0 {
		t.Errorf("parley referee exited with status %d after SIGINT, want 0\n%s", code, ref.output())
	}
}

// sameEvents reports how got differs from want, event by event.
func sameEvents(got, want []*eventsv1.MatchEvent) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			return fmt.Errorf("event %d:\n got  %v\n want %v", i+1, got[i], want[i])
		}
	}
	return nil
}

// TestExternalNATS plays with events going to a nats-server process and reads them back.
func TestExternalNATS(t *testing.T) {
	t.Parallel()
	url := natstest.Start(t).URL
	dir := t.TempDir()
	file := filepath.Join(dir, "match.jsonl")
	play := []string{"play", "ultimatum", "--agent", "builtin:fair", "--agent", "builtin:random", "--seed", "42", "--nats", url, "--json"}

	first := mustRun(t, nil, withArgs(play, "--record", file)...)
	want := decodeRecord(t, first.stdout)
	checkRecord(t, want, 2)
	id := want[0].GetMatchId()

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{URL: url}, nil)
	if err != nil {
		t.Fatalf("bus.Open(%s): %v", url, err)
	}
	defer b.Close()
	readBack := func(id string, want []*eventsv1.MatchEvent) {
		t.Helper()
		got, err := bus.ReadMatch(ctx, b.JetStream(), id)
		if err != nil {
			t.Fatalf("ReadMatch(%s): %v", id, err)
		}
		if err := sameEvents(got, want); err != nil {
			t.Errorf("match %s on NATS differs from --json: %v", id, err)
		}
	}
	readBack(id, want)

	// The same seed gives the same match id, which is taken: the run is refused and the
	// record file of the first run is left as it was.
	again := runParley(t, nil, withArgs(play, "--record", file)...)
	if again.code != 2 || again.stdout != "" {
		t.Errorf("a second run with the same match id: want exit status 2 and no output\n%s", again)
	}
	if line := lastErrorLine(t, again.stderr); !strings.Contains(line, "already recorded") || !strings.Contains(line, id) || !strings.Contains(line, "--match-id") {
		t.Errorf("error line %q does not say match %q is already recorded and how to choose another id", line, id)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != first.stdout {
		t.Errorf("the refused run changed the record file %s (err %v):\n%s", file, err, b)
	}
	readBack(id, want)

	other := decodeRecord(t, mustRun(t, nil, withArgs(play, "--match-id", "other")...).stdout)
	checkRecord(t, other, 2)
	if other[0].GetMatchId() != "other" {
		t.Errorf("--match-id other gives match id %q", other[0].GetMatchId())
	}
	readBack("other", other)
	readBack(id, want)
}

// lastErrorLine checks stderr ends with one "parley: ..." line, the only one, with no trace of
// a panic, and returns it.
func lastErrorLine(t *testing.T, stderr string) string {
	t.Helper()
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("stderr looks like a crash:\n%s", stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "parley: ") {
			n++
		}
	}
	last := lines[len(lines)-1]
	if n != 1 || !strings.HasPrefix(last, "parley: ") {
		t.Errorf("want stderr to end with one \"parley: ...\" line, got:\n%s", stderr)
	}
	return last
}
