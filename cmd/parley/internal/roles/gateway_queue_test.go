package roles_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	"github.com/parley-arena/parley/gateway"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/gen/go/parley/referee/v1/refereev1connect"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/referee/queue"
)

// TestStartMatchSurvivesItsReferee: a match started through the gateway goes through the
// work queue. Two referee workers share one embedded NATS server; the one playing the match is
// killed (its NATS connection dropped, then stopped) or shut down mid-match. The other closes
// the interrupted record as void, naming the rerun, and plays the match again; the gateway's
// stream of the match id ends with that void ending, and the rerun ends once, not void.
func TestStartMatchSurvivesItsReferee(t *testing.T) {
	ctx := context.Background()
	broker, client := queueGateway(t)
	for _, crash := range []bool{true, false} {
		name := map[bool]string{true: "killed", false: "shut down"}[crash]
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctx, waitLimit)
			defer cancel()
			gate := make(chan struct{})
			bot := gatedBot(t, gate)
			workerA := openBus(t, broker.URL())
			stopA := runWorker(t, workerA, "A")

			resp, err := client.StartMatch(ctx, connect.NewRequest(&refereev1.StartMatchRequest{
				Game: "ultimatum", Agents: []string{bot, "builtin:fair"}, Labels: []string{"gated", ""},
				Limits: &matchv1.Limits{MoveTimeout: durationpb.New(20 * time.Second)},
			}))
			if err != nil {
				t.Fatal(err)
			}
			id := resp.Msg.GetMatchId()
			stream, err := client.StreamMatchEvents(ctx, connect.NewRequest(&refereev1.StreamMatchEventsRequest{MatchId: id}))
			if err != nil {
				t.Fatal(err)
			}
			defer stream.Close()
			if !receiveEvent(stream) || stream.Msg().GetEvent().GetMatchStarted() == nil {
				t.Fatalf("stream of %s: no match_started first (%v)", id, stream.Err())
			}
			// Worker A plays the match, its first move held by the gate. B joins, then A goes.
			workerB := openBus(t, broker.URL())
			stopB := runWorker(t, workerB, "B")
			defer stopB()
			if crash {
				workerA.Conn().Close() // as far as NATS can tell the process is gone
			}
			stopA()
			close(gate)

			var last *eventsv1.MatchEvent
			for stream.Receive() {
				if ev := stream.Msg().GetEvent(); ev != nil { // not live news (Waiting)
					last = ev
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream of %s: %v", id, err)
			}
			rerunID := queue.RetryID(id, 1)
			end := last.GetMatchEnded().GetOutcome()
			if end.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(end.GetSummary(), "rerun as "+rerunID) {
				t.Fatalf("interrupted match %s ended %v %q, want void naming %s", id, end.GetCause(), end.GetSummary(), rerunID)
			}
			// The rerun, followed through the gateway too, ends once, not void.
			rerunStream, err := client.StreamMatchEvents(ctx, connect.NewRequest(&refereev1.StreamMatchEventsRequest{MatchId: rerunID}))
			if err != nil {
				t.Fatal(err)
			}
			defer rerunStream.Close()
			for rerunStream.Receive() {
				if ev := rerunStream.Msg().GetEvent(); ev != nil {
					last = ev
				}
			}
			if err := rerunStream.Err(); err != nil || last.GetMatchEnded() == nil {
				t.Fatalf("stream of the rerun %s: %v, last event %v", rerunID, err, last)
			}
			js := broker.JetStream()
			retry, ok, err := queue.LookupRetry(ctx, js, id)
			if err != nil || !ok || retry.GetRetryMatchId() != rerunID {
				t.Fatalf("retry record of %s: %v (%v, %v)", id, retry, ok, err)
			}
			recordedOnce(t, ctx, js, id)
			rerun := recordedOnce(t, ctx, js, rerunID)
			if c := rerun[len(rerun)-1].GetMatchEnded().GetOutcome().GetCause(); c == matchv1.EndCause_END_CAUSE_VOID {
				t.Errorf("rerun %s ended void: %v", rerunID, rerun[len(rerun)-1])
			}
			if got := rerun[0].GetMatchStarted().GetSeats()[0].GetLabel(); got != "gated" {
				t.Errorf("rerun %s: seat 0 labelled %q, want gated", rerunID, got)
			}
			if _, again, err := queue.LookupRetry(ctx, js, rerunID); err != nil || again {
				t.Errorf("the rerun %s was interrupted too (%v)", rerunID, err)
			}
			// The request was acknowledged once the rerun was recorded: nothing is left to run.
			waitFor(t, "an empty work queue", func() bool {
				rs, err := js.Stream(ctx, natsname.RequestStream)
				if err != nil {
					return false
				}
				info, err := rs.Info(ctx)
				return err == nil && info.State.Msgs == 0
			})
		})
	}
}

// TestQueuedMatchWaitsForAWorker: with no referee worker, a match started through the gateway
// waits in the queue, and so does a stream of it, past the grace period for matches that do
// not exist; the first worker to come plays it.
func TestQueuedMatchWaitsForAWorker(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	broker, client := queueGateway(t)
	resp, err := client.StartMatch(ctx, connect.NewRequest(&refereev1.StartMatchRequest{
		Game: "ultimatum", Agents: []string{"builtin:fair", "builtin:random"},
	}))
	if err != nil {
		t.Fatal(err)
	}
	// The stream's response starts with the match's first event.
	type followed struct {
		events []*eventsv1.MatchEvent
		err    error
	}
	done := make(chan followed, 1)
	go func() {
		var f followed
		stream, err := client.StreamMatchEvents(ctx, connect.NewRequest(&refereev1.StreamMatchEventsRequest{MatchId: resp.Msg.GetMatchId()}))
		if err != nil {
			done <- followed{err: err}
			return
		}
		defer stream.Close()
		for stream.Receive() {
			if ev := stream.Msg().GetEvent(); ev != nil {
				f.events = append(f.events, ev)
			}
		}
		f.err = stream.Err()
		done <- f
	}()
	time.Sleep(3 * queueGrace)
	select {
	case f := <-done:
		t.Fatalf("the stream of a queued match ended before any worker came: %d events, %v", len(f.events), f.err)
	default:
	}
	runWorker(t, openBus(t, broker.URL()), "late")
	f := <-done
	if f.err != nil {
		t.Fatalf("stream of a queued match: %v", f.err)
	}
	events := f.events
	if n := len(events); n < 2 || events[0].GetMatchStarted() == nil ||
		events[n-1].GetMatchEnded().GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_VOID {
		t.Fatalf("stream of a queued match: %d events, last %v", n, events[n-1])
	}
	recordedOnce(t, ctx, broker.JetStream(), resp.Msg.GetMatchId())
}

// queueGrace is how long the gateways of these tests wait for a match that is not queued.
const queueGrace = 500 * time.Millisecond

// queueGateway starts a gateway on an embedded NATS server that other connections may reach
// (Bus.URL), with no referee worker, and returns the server and a client of the gateway.
func queueGateway(t *testing.T) (*bus.Bus, refereev1connect.RefereeServiceClient) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	broker, err := bus.Open(ctx, bus.Config{ListenAddr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { broker.Close() })
	// The referee's API with no worker of its own: the tests run theirs.
	lis := listen(t)
	// The tests' bots listen on loopback: the policy lets the referee dial there.
	pol := policy.Default()
	pol.Dial = []string{"127.0.0.1/32"}
	ref, err := roles.StartReferee(ctx, roles.RefereeConfig{
		Bus: broker, Games: families.New(), Agents: testAgents(), StartGrace: queueGrace, Policy: &pol,
	}, lis)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ref.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	gw, err := gateway.New(gateway.Config{Referee: refereev1.NewRefereeServiceClient(conn)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(gw)
	srv.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(cancel) // runs first: ends the streams still open
	return broker, refereev1connect.NewRefereeServiceClient(http.DefaultClient, srv.URL)
}

// testAgents opens built-in agents and grpc:// addresses.
func testAgents() *agentconn.Resolver { return &agentconn.Resolver{Builtins: builtin.Agents{}} }

// gatedBot serves the built-in fair agent, each move a little slowed and held until gate is
// closed; it returns the agent's address.
func gatedBot(t *testing.T, gate <-chan struct{}) string {
	t.Helper()
	fair, err := builtin.New("fair", nil)
	if err != nil {
		t.Fatal(err)
	}
	slow := sdk.Delay(fair, 5*time.Millisecond)
	addr, stop, err := sdk.Background("127.0.0.1:0", sdk.Gated(slow, gate), sdk.WithInfo(&gamev1.AgentInfo{Name: "gated", Version: "1"}), sdk.WithGracePeriod(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return "grpc://" + addr
}

func openBus(t *testing.T, url string) *bus.Bus {
	t.Helper()
	b, err := bus.Open(context.Background(), bus.Config{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// runWorker runs a referee worker (AckWait one second, so a dead one is noticed quickly)
// until the returned function is called.
func runWorker(t *testing.T, b *bus.Bus, name string) (stop func()) {
	t.Helper()
	w := queue.NewWorker(b, queue.WorkerConfig{
		Games:  families.New(),
		Player: &launch.Player{Agents: testAgents()},
		Name:   name, AckWait: time.Second,
	}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			t.Errorf("worker %s: %v", name, err)
		}
	}()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// recordedOnce checks that the match stream holds exactly one whole record under id: seq
// 1..N, one match_started first and one match_ended last, and no event more.
func recordedOnce(t *testing.T, ctx context.Context, js jetstream.JetStream, id string) []*eventsv1.MatchEvent {
	t.Helper()
	events, err := bus.ReadMatch(ctx, js, id)
	if err != nil {
		t.Fatal(err)
	}
	n := len(events)
	if n < 2 || events[0].GetMatchStarted() == nil || events[n-1].GetMatchEnded() == nil {
		t.Fatalf("match %s: %d events, not a whole record", id, n)
	}
	for i, ev := range events {
		if ev.GetSeq() != uint64(i+1) {
			t.Fatalf("match %s: event %d has seq %d", id, i, ev.GetSeq())
		}
	}
	stored, err := bus.StoredEvents(ctx, js, id)
	if err != nil {
		t.Fatal(err)
	}
	if stored != n {
		t.Errorf("match %s: the stream holds %d events for a record of %d: played twice?", id, stored, n)
	}
	return events
}

// receiveEvent receives the stream's next event, passing over live news (Waiting).
func receiveEvent(stream *connect.ServerStreamForClient[refereev1.StreamMatchEventsResponse]) bool {
	for stream.Receive() {
		if stream.Msg().GetEvent() != nil {
			return true
		}
	}
	return false
}
