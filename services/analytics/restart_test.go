package analytics

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/builtin"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// testTimeout bounds every wait of these tests.
const testTimeout = 45 * time.Second

// arena plays real matches between built-in agents served over gRPC, publishing every event
// to JetStream as the referee does.
type arena struct {
	t      *testing.T
	bus    *bus.Bus
	pub    *bus.Publisher
	runner *match.Runner
	games  *games.Registry
	agents map[string]agentv1.AgentServiceClient

	mu      sync.Mutex
	matches []string // ids of the matches played, in order
}

// pairings are the games and seatings the arena plays in turn.
var pairings = []struct {
	game   string
	agents [2]string
}{
	{"ultimatum", [2]string{"builtin:fair", "builtin:random"}},
	{"buysell", [2]string{"builtin:concede", "builtin:random"}},
	{"ultimatum", [2]string{"builtin:spe", "builtin:fair"}},
	{"buysell", [2]string{"builtin:random", "builtin:concede?curve=boulware"}},
	{"ultimatum", [2]string{"builtin:random", "builtin:spe"}},
	{"buysell", [2]string{"builtin:concede?curve=boulware", "builtin:concede"}},
}

func newArena(t *testing.T, url string) *arena {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	a := &arena{t: t, bus: b, pub: bus.NewPublisher(b), games: families.New(), agents: map[string]agentv1.AgentServiceClient{}}
	a.runner = match.NewRunner(a.pub.SettleEachMatch())
	for _, p := range pairings {
		for _, spec := range p.agents {
			if a.agents[spec] != nil {
				continue
			}
			c, err := (&agentconn.Resolver{Builtins: builtin.Agents{}}).Open(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			a.agents[spec] = c.Client
		}
	}
	return a
}

// play plays n matches, k at a time, with ids prefix-0, prefix-1, ..., cycling through the
// pairings.
func (a *arena) play(ctx context.Context, prefix string, n, k int) error {
	errs := make(chan error, n)
	sem := make(chan struct{}, k)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			p := pairings[i%len(pairings)]
			g, _ := a.games.Lookup(p.game)
			id := fmt.Sprintf("%s-%d", prefix, i)
			_, err := a.runner.Run(ctx, match.Spec{
				ID: id, Game: g, Params: gametest.Resolve(a.t, g, nil), Seed: uint64(1000 + i), TournamentID: "restart",
				Agents: []agentv1.AgentServiceClient{a.agents[p.agents[0]], a.agents[p.agents[1]]},
			})
			if err != nil {
				errs <- fmt.Errorf("match %s: %w", id, err)
				return
			}
			a.mu.Lock()
			a.matches = append(a.matches, id)
			a.mu.Unlock()
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// record plays one match without publishing it and returns its record.
func (a *arena) record(ctx context.Context, id string) []*eventsv1.MatchEvent {
	a.t.Helper()
	p := pairings[1]
	g, _ := a.games.Lookup(p.game)
	res, err := match.NewRunner(nil).Run(ctx, match.Spec{ID: id, Game: g, Params: gametest.Resolve(a.t, g, nil), Seed: 7, TournamentID: "restart",
		Agents: []agentv1.AgentServiceClient{a.agents[p.agents[0]], a.agents[p.agents[1]]}})
	if err != nil {
		a.t.Fatal(err)
	}
	return res.Events
}

// publish records evs on JetStream and waits for the acks.
func (a *arena) publish(ctx context.Context, evs []*eventsv1.MatchEvent) {
	a.t.Helper()
	for _, ev := range evs {
		if err := a.pub.Record(ctx, ev); err != nil {
			a.t.Fatal(err)
		}
	}
	if err := a.pub.Flush(ctx); err != nil {
		a.t.Fatal(err)
	}
}

// service is one run of the analytics consumer with its own NATS connection and store handle,
// as a separate process would have.
type service struct {
	bus   *bus.Bus
	store *Store
	cons  *Consumer
	done  chan error
	stop  context.CancelFunc
}

func startService(t *testing.T, url, dbPath string, hook func(c *Consumer, batch int, stop context.CancelFunc) bool) *service {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	store, err := OpenStore(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	cons := NewConsumer(b.JetStream(), store, standard.New(), nil, ConsumerConfig{
		Batch:    4,           // many batches (a fast match is one message), so a stop lands mid-run
		AckWait:  time.Second, // redelivery of the unacked batch after a crash comes soon
		IdleWait: 200 * time.Millisecond,
	})
	runCtx, stop := context.WithCancel(context.Background())
	if hook != nil {
		cons.afterCommit = func(batch int) bool { return hook(cons, batch, stop) }
	}
	s := &service{bus: b, store: store, cons: cons, done: make(chan error, 1), stop: stop}
	go func() { s.done <- cons.Run(runCtx) }()
	return s
}

// wait waits for Run to return and returns its error.
func (s *service) wait(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.done:
		return err
	case <-time.After(testTimeout):
		t.Fatal("the analytics consumer did not stop")
		return nil
	}
}

// kill closes the service's connection and database without any goodbye.
func (s *service) kill() {
	s.stop()
	s.bus.Conn().Close()
	s.bus.Close()
	s.store.Close()
}

// poll calls cond until it returns true or the deadline passes.
func poll(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, testTimeout)
		}
		<-tick.C
	}
}

// TestRestart plays 40 matches while the analytics service is killed between a commit and its
// acks, restarted, stopped gracefully in the middle of a batch run and started again, and checks
// that the database ends with every match exactly once and the totals of the records.
func TestRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	srv := natstest.Start(t) // a real nats-server process
	a := newArena(t, srv.URL)
	dbPath := filepath.Join(t.TempDir(), "analytics.db")

	// A match whose events arrive across the crash: its first half is stored by the first run,
	// its second half published while nothing consumes.
	split := a.record(ctx, "split-0")
	half := len(split) / 2
	a.publish(ctx, split[:half])

	// 16 matches before any consumer exists: the durable consumer starts from the first event.
	if err := a.play(ctx, "before", 16, 4); err != nil {
		t.Fatal(err)
	}

	// Run 1 commits three batches and dies before acking the third, while 8 more matches play.
	var acked, crashedAt ConsumerStats
	run1 := startService(t, srv.URL, dbPath, func(c *Consumer, batch int, _ context.CancelFunc) bool {
		if batch < 3 {
			acked = c.Stats()
			return true
		}
		crashedAt = c.Stats()
		return false
	})
	playing := make(chan error, 1)
	go func() { playing <- a.play(ctx, "during", 8, 2) }()
	if err := run1.wait(t); !errors.Is(err, errStopped) {
		t.Fatalf("run 1 ended with %v, want the crash", err)
	}
	run1.kill()
	if err := <-playing; err != nil {
		t.Fatal(err)
	}
	stored1, err := eventsStored(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if splitStored, _ := eventsOf(ctx, dbPath, "split-0"); splitStored != half {
		t.Fatalf("run 1 stored %d events of the split match, want its first %d", splitStored, half)
	}

	// While nothing consumes: 8 more matches, the rest of the split match, a copy of an event
	// re-sent after the duplicate window (a new message id), and a message that is no event.
	if err := a.play(ctx, "down", 8, 4); err != nil {
		t.Fatal(err)
	}
	a.publish(ctx, split[half:])
	data, err := proto.Marshal(split[1])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.bus.JetStream().Publish(ctx, bus.Subject("split-0", split[1]), data, jetstream.WithMsgID("late-resend")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.bus.JetStream().Publish(ctx, "parley.match.garbage.match_started", []byte("not a protobuf \xff")); err != nil {
		t.Fatal(err)
	}

	// Run 2 stops gracefully (its context cancelled) after two batches, mid-run.
	run2 := startService(t, srv.URL, dbPath, func(_ *Consumer, batch int, stop context.CancelFunc) bool {
		if batch == 2 {
			stop()
		}
		return true
	})
	if err := run2.wait(t); err != nil {
		t.Fatalf("run 2: %v", err)
	}
	stats2 := run2.cons.Stats()
	run2.kill()

	// 8 more matches, then run 3 catches up with everything.
	if err := a.play(ctx, "after", 8, 4); err != nil {
		t.Fatal(err)
	}
	run3 := startService(t, srv.URL, dbPath, nil)
	defer run3.kill()
	want := len(a.matches) + 1
	poll(t, "run 3 catches up", func() (bool, error) {
		st, err := run3.store.Status(ctx)
		if err != nil || st.Matches < int64(want) {
			return false, err
		}
		pending, err := run3.cons.Pending(ctx)
		return pending == 0, err
	})
	run3.stop()
	if err := run3.wait(t); err != nil {
		t.Fatalf("run 3: %v", err)
	}
	stats3 := run3.cons.Stats()

	// Every match once, every event once, each row the one its record gives.
	reg := standard.New()
	ids := append([]string{"split-0"}, a.matches...)
	var wantEvents int64
	type sums struct {
		matches int
		payoff  float64
	}
	wantByAgent, gotByAgent := map[string]sums{}, map[string]sums{}
	for _, id := range ids {
		rctx, cancel := context.WithTimeout(ctx, testTimeout)
		evs, err := bus.ReadMatch(rctx, a.bus.JetStream(), id)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		wantEvents += int64(len(evs))
		stored, err := run3.store.Events(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != len(evs) {
			t.Fatalf("match %s: %d events stored, %d in the stream", id, len(stored), len(evs))
		}
		for i := range evs {
			if !proto.Equal(stored[i], evs[i]) {
				t.Fatalf("match %s event %d differs:\n stored %v\n stream %v", id, i+1, stored[i], evs[i])
			}
		}
		want, err := metrics.NewRow(evs, reg)
		if err != nil {
			t.Fatal(err)
		}
		got, err := run3.store.Row(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if d := diffRows(got, want); d != "" {
			t.Fatalf("match %s: %s", id, d)
		}
		for _, s := range want.Seats {
			w := wantByAgent[s.AgentKey()]
			wantByAgent[s.AgentKey()] = sums{w.matches + 1, w.payoff + s.Payoff}
		}
	}
	rows, err := run3.store.Rows(ctx, Filter{TournamentID: "restart"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		for _, s := range r.Seats {
			g := gotByAgent[s.AgentKey()]
			gotByAgent[s.AgentKey()] = sums{g.matches + 1, g.payoff + s.Payoff}
		}
	}
	if len(rows) != want {
		t.Errorf("%d rows, want %d", len(rows), want)
	}
	for agent, w := range wantByAgent {
		if g := gotByAgent[agent]; g != w {
			t.Errorf("agent %s: stored %+v, records %+v", agent, g, w)
		}
	}
	st, err := run3.store.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Matches != int64(want) || st.MatchesSeen != int64(want) || st.Events != wantEvents {
		t.Errorf("status %+v, want %d matches and %d events", st, want, wantEvents)
	}

	// Redelivered and re-sent events were ignored: the crashed batch (committed, never acked)
	// came again, and so did the late copy.
	unacked := crashedAt.Delivered - acked.Delivered
	if dups := stats2.Duplicates + stats3.Duplicates; dups < unacked+1 {
		t.Errorf("%d duplicates ignored after the crash, want at least the %d events of the unacked batch and the late copy", dups, unacked)
	}
	if stats2.Malformed+stats3.Malformed != 1 {
		t.Errorf("malformed events: %d + %d, want 1", stats2.Malformed, stats3.Malformed)
	}
	t.Logf("%d matches, %d events; run 1 stored %d events in %d batches and crashed before acking the last %d; run 2: %+v; run 3: %+v",
		want, wantEvents, stored1, crashedAt.Batches, unacked, stats2, stats3)
}

// eventsStored counts the events in the database at path.
func eventsStored(ctx context.Context, path string) (int64, error) {
	s, err := OpenStore(ctx, path)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	st, err := s.Status(ctx)
	return st.Events, err
}

// eventsOf counts the stored events of one match.
func eventsOf(ctx context.Context, path, id string) (int, error) {
	s, err := OpenStore(ctx, path)
	if err != nil {
		return 0, err
	}
	defer s.Close()
	evs, err := s.Events(ctx, id)
	return len(evs), err
}
