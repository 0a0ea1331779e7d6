package queue

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/human"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/policy"
)

const testTimeout = 3 * time.Minute

// startAgent serves the built-in fair agent behind a wrapper: each move waits delay, and
// while gate is open (not closed) the first move blocks on it. It returns the agent's address.
func startAgent(t *testing.T, delay time.Duration, gate <-chan struct{}) string {
	t.Helper()
	fair, err := builtin.New("fair", nil)
	if err != nil {
		t.Fatal(err)
	}
	agent := sdk.Delay(fair, delay)
	if gate != nil {
		agent = sdk.Gated(agent, gate)
	}
	addr, stop, err := sdk.Background("127.0.0.1:0", agent,
		sdk.WithInfo(&gamev1.AgentInfo{Name: "slowfair", Version: "1"}), sdk.WithGracePeriod(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return "grpc://" + addr
}

func openBus(t *testing.T, url string) *bus.Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// withAgents completes cfg with a preparer and a player opening built-in agents, grpc://
// addresses and, when hub is set, its human seats.
func withAgents(cfg WorkerConfig, hub *human.Hub) WorkerConfig {
	r := &agentconn.Resolver{Builtins: builtin.Agents{}}
	if hub != nil {
		r.Humans = hub.Agents()
	}
	cfg.Games = families.New()
	cfg.Player = &launch.Player{Agents: r}
	return cfg
}

// startWorker runs a worker until the returned stop function is called (or the test ends).
func startWorker(t *testing.T, b *bus.Bus, cfg WorkerConfig) (*Worker, func()) {
	t.Helper()
	w := NewWorker(b, withAgents(cfg, nil), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker %s: %v", cfg.Name, err)
			}
		})
	}
	t.Cleanup(stop)
	return w, stop
}

// requests returns the requests of an ultimatum tournament, prepared as every door prepares
// them: games matches for every ordered pair of distinct agents.
func requests(id string, games int, agents ...string) []*queuev1.MatchRequest {
	prep := &launch.Preparer{Games: families.New()}
	var out []*queuev1.MatchRequest
	for i, a := range agents {
		for j, b := range agents {
			for g := range games {
				if i == j {
					continue
				}
				m, err := prep.Setup(launch.Request{
					MatchID: fmt.Sprintf("%s-a%d%d-g%d", id, i, j, g), TournamentID: id, Game: "ultimatum",
					Seed: uint64(42 + g), SeedGiven: true, Agents: []string{a, b}, Labels: []string{string(rune('a' + i)), string(rune('a' + j))},
					Limits: &matchv1.Limits{MoveTimeout: durationpb.New(30 * time.Second)},
				})
				if err != nil {
					panic(err) // the requests above are valid
				}
				out = append(out, m.Request())
			}
		}
	}
	return out
}

// The queue holds the match as it was prepared, the policy's bounds of the place it was asked
// for included: a worker with no policy of its own ends a match at the max_match_time of the
// preparer's policy.
func TestQueuedMatchKeepsItsPreparedTimeLimit(t *testing.T) {
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	startWorker(t, openBus(t, srv.URL), WorkerConfig{Name: "no-policy"})
	slow := startAgent(t, 20*time.Second, nil)
	pol := policy.Default()
	pol.MaxMatchTime = 500 * time.Millisecond
	prep := &launch.Preparer{Games: families.New(), Policy: &pol}
	m, err := prep.Setup(launch.Request{
		MatchID: "bounded", Game: "ultimatum", Seed: 1, SeedGiven: true, Agents: []string{slow, "builtin:fair"},
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(30 * time.Second)},
	})
	if err != nil {
		t.Fatal(err)
	}
	req := m.Request()
	if got := req.GetMaxDuration().AsDuration(); got != pol.MaxMatchTime {
		t.Fatalf("the request carries max_duration %s, want the policy's %s", got, pol.MaxMatchTime)
	}
	ended := enqueueAndWait(t, ctx, openBus(t, srv.URL).JetStream(), []*queuev1.MatchRequest{req})
	out := ended["bounded"].outcome
	if out.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(out.GetSummary(), "max_match_time") {
		t.Fatalf("outcome %v: %s; want void past max_match_time", out.GetCause(), out.GetSummary())
	}
}

// played is a requested match that has ended.
type played struct {
	recordedAs string
	outcome    *matchv1.Outcome
}

// enqueueAndWait puts reqs into the queue and polls until every one has ended, following
// reruns.
func enqueueAndWait(t *testing.T, ctx context.Context, js jetstream.JetStream, reqs []*queuev1.MatchRequest) map[string]played {
	t.Helper()
	if err := EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		if err := Enqueue(ctx, js, r); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]played{}
	for len(out) < len(reqs) {
		for _, r := range reqs {
			if _, done := out[r.GetMatchId()]; done {
				continue
			}
			id, end, err := Latest(ctx, js, r.GetMatchId(), r.GetTournamentId())
			if err != nil {
				t.Fatal(err)
			}
			if end != nil {
				out[r.GetMatchId()] = played{recordedAs: id, outcome: end.GetOutcome()}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%d of %d matches ended", len(out), len(reqs))
		case <-time.After(20 * time.Millisecond):
		}
	}
	return out
}

// subjectCounts returns how many messages the match stream holds per subject of a match.
func subjectCounts(t *testing.T, ctx context.Context, js jetstream.JetStream, matchID string) map[string]uint64 {
	t.Helper()
	s, err := js.Stream(ctx, natsname.MatchStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(natsname.MatchFilter(matchID)))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects
}

// checkWhole checks that a match id holds exactly one whole record: seq 1..N with no gaps or
// repeats in the stream, one match_started first and one match_ended last.
func checkWhole(t *testing.T, ctx context.Context, js jetstream.JetStream, id, tournamentID string) []*eventsv1.MatchEvent {
	t.Helper()
	events, err := bus.ReadMatch(ctx, js, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) < 2 || events[0].GetMatchStarted() == nil || events[len(events)-1].GetMatchEnded() == nil {
		t.Fatalf("match %s: %d events, not a whole record", id, len(events))
	}
	for i, ev := range events {
		if ev.GetSeq() != uint64(i+1) {
			t.Fatalf("match %s: event %d has seq %d", id, i, ev.GetSeq())
		}
	}
	if got := events[0].GetMatchStarted().GetTournamentId(); got != tournamentID {
		t.Errorf("match %s: tournament %q, want %q", id, got, tournamentID)
	}
	stored, err := bus.StoredEvents(ctx, js, id)
	if err != nil {
		t.Fatal(err)
	}
	counts := subjectCounts(t, ctx, js, id)
	// The start is on match_started, or first in the match's only message, on match_ended.
	starts := counts[natsname.MatchSubject(id, "match_started")]
	if stored != len(events) || counts[endedSubject(id)] != 1 || starts > 1 || starts == 0 && len(counts) != 1 {
		t.Errorf("match %s: the stream holds %d events (messages by subject: %v) for a record of %d: run more than once?", id, stored, counts, len(events))
	}
	return events
}

// Two referee workers, each on its own connection to one real nats-server, share one
// tournament: every match runs exactly once and both do some of the work.
func TestTwoReferees(t *testing.T) {
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	slow := startAgent(t, 5*time.Millisecond, nil)
	wA, _ := startWorker(t, openBus(t, srv.URL), WorkerConfig{Concurrency: 2, Name: "A"})
	wB, _ := startWorker(t, openBus(t, srv.URL), WorkerConfig{Concurrency: 2, Name: "B"})

	js := openBus(t, srv.URL).JetStream()
	ended := enqueueAndWait(t, ctx, js, requests("two-refs", 2, slow, "builtin:fair", "builtin:random?seed=3"))
	if len(ended) != 12 {
		t.Fatalf("%d matches ended, want 12", len(ended))
	}
	for id, p := range ended {
		if p.recordedAs != id {
			t.Errorf("match %s recorded as %s", id, p.recordedAs)
		}
		if p.outcome.GetCause() == matchv1.EndCause_END_CAUSE_VOID {
			t.Errorf("match %s void: %s", id, p.outcome.GetSummary())
		}
		checkWhole(t, ctx, js, id, "two-refs")
		if _, retried, err := LookupRetry(ctx, js, id); err != nil || retried {
			t.Errorf("match %s has a retry record (%v)", id, err)
		}
	}
	for wA.Ran()+wB.Ran() < 12 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond) // a worker counts a match just after its record is stored
	}
	a, b := wA.Ran(), wB.Ran()
	t.Logf("worker A ran %d matches, worker B %d", a, b)
	if a == 0 || b == 0 || a+b != 12 {
		t.Errorf("workers ran %d and %d matches, want both some and 12 in all", a, b)
	}
	// Every request was acknowledged: the work queue is empty.
	rs, err := js.Stream(ctx, natsname.RequestStream)
	if err != nil {
		t.Fatal(err)
	}
	if info, err := rs.Info(ctx); err != nil || info.State.Msgs != 0 {
		t.Errorf("request stream holds %v messages after the tournament (%v)", info.State.Msgs, err)
	}
}

// waitStarted polls until a match has started.
func waitStarted(t *testing.T, ctx context.Context, js jetstream.JetStream, id string) {
	t.Helper()
	for {
		st, err := stateOf(ctx, js, id)
		if err != nil {
			t.Fatal(err)
		}
		if st != stateNone {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("match %s never started", id)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// A referee that dies mid-match (its connection gone: no more keep-alives, no ack) leaves an
// open record; the request is redelivered to another worker, which closes the record as void
// and runs the match again under a retry id. A referee shut down mid-match does the same
// through its own void ending.
func TestRedelivery(t *testing.T) {
	srv := natstest.Start(t)
	for _, tc := range []struct {
		name  string
		crash bool
	}{{"referee dies", true}, {"referee shut down", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			gate := make(chan struct{})
			blocked := startAgent(t, 0, gate)
			id := "redeliver-" + map[bool]string{true: "crash", false: "stop"}[tc.crash]
			reqs := requests(id, 1, blocked, "builtin:fair")[:1] // blocked as P1, fair as P2
			matchID := reqs[0].GetMatchId()

			busA := openBus(t, srv.URL)
			_, stopA := startWorker(t, busA, WorkerConfig{Name: "A", AckWait: time.Second})
			js := openBus(t, srv.URL).JetStream()
			result := make(chan map[string]played, 1)
			go func() { result <- enqueueAndWait(t, ctx, js, reqs) }()
			waitStarted(t, ctx, js, matchID)
			if tc.crash {
				busA.Conn().Close() // the process is gone as far as NATS can tell
			}
			stopA()
			close(gate)
			wB, _ := startWorker(t, openBus(t, srv.URL), WorkerConfig{Name: "B", AckWait: time.Second})

			var ps map[string]played
			select {
			case ps = <-result:
			case <-ctx.Done():
				t.Fatal("the match did not end")
			}
			retryID := RetryID(matchID, 1)
			if ps[matchID].recordedAs != retryID {
				t.Fatalf("the match was recorded as %s, want %s", ps[matchID].recordedAs, retryID)
			}
			// The worker counts a match once its record is stored, just after the tournament
			// may have seen it end.
			for wB.Ran() != 1 && ctx.Err() == nil {
				time.Sleep(10 * time.Millisecond)
			}
			if wB.Ran() != 1 {
				t.Errorf("worker B ran %d matches, want 1", wB.Ran())
			}
			// The interrupted match is closed, once, as void, naming its rerun.
			first := checkWhole(t, ctx, js, matchID, id)
			end := first[len(first)-1].GetMatchEnded().GetOutcome()
			if end.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(end.GetSummary(), "rerun as "+retryID) {
				t.Errorf("interrupted match ended %v %q", end.GetCause(), end.GetSummary())
			}
			retry, ok, err := LookupRetry(ctx, js, matchID)
			if err != nil || !ok || retry.GetRetryMatchId() != retryID {
				t.Fatalf("retry record %v (%v, %v)", retry, ok, err)
			}
			// The rerun is whole and counts.
			rerun := checkWhole(t, ctx, js, retryID, id)
			if c := rerun[len(rerun)-1].GetMatchEnded().GetOutcome().GetCause(); c == matchv1.EndCause_END_CAUSE_VOID {
				t.Errorf("rerun void: %v", rerun[len(rerun)-1])
			}
			// A request for a match that already ended is acknowledged without running it.
			req := &queuev1.MatchRequest{MatchId: matchID, TournamentId: id, Game: "ultimatum", Agents: []string{"builtin:fair", "builtin:fair"}}
			if err := wB.process(ctx, req, wB.logger); err != nil || wB.Ran() != 1 {
				t.Errorf("a request already done: %v, ran %d", err, wB.Ran())
			}
		})
	}
}

// A request with a human seat is given back, never recorded, by a worker whose process serves
// no human seats, and played by the worker of the process that does (`parley up`'s).
func TestHumanSeatWaitsForItsProcess(t *testing.T) {
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	js := openBus(t, srv.URL).JetStream()
	if _, err := EnsureConsumers(ctx, js, Config{AckWait: time.Second}); err != nil {
		t.Fatal(err)
	}
	ultimatum, err := families.New().Lookup("ultimatum")
	if err != nil {
		t.Fatal(err)
	}
	req := &queuev1.MatchRequest{
		MatchId: "with-a-person", Game: "ultimatum", Agents: []string{"human:ada", "builtin:fair"},
		Params: gametest.Resolve(t, ultimatum, nil),
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(20 * time.Millisecond)},
	}
	if err := Enqueue(ctx, js, req); err != nil {
		t.Fatal(err)
	}
	elsewhere, stopElsewhere := startWorker(t, openBus(t, srv.URL), WorkerConfig{Name: "elsewhere", AckWait: time.Second})
	time.Sleep(time.Second)
	stopElsewhere()
	if st, err := stateOf(ctx, js, req.GetMatchId()); err != nil || st != stateNone || elsewhere.Ran() != 0 {
		t.Fatalf("a worker with no human seats recorded the request (state %v, %v, ran %d)", st, err, elsewhere.Ran())
	}
	if queued, err := Taken(ctx, js, req.GetMatchId()); err != nil || !queued {
		t.Fatalf("the request left the queue (%v)", err)
	}
	// Its rerun, should the match be cut off, waits as the same request: a follower of the
	// rerun's id must not be told there is no such match while it waits for a worker.
	if queued, err := Taken(ctx, js, RetryID(req.GetMatchId(), 1)); err != nil || !queued {
		t.Fatalf("the rerun of a queued request is not taken (%v)", err)
	}
	if queued, err := Taken(ctx, js, RetryID("never-asked", 1)); err != nil || queued {
		t.Fatalf("the rerun of a match never asked for is taken (%v)", err)
	}

	hub := human.NewHub()
	hub.Mount(http.NewServeMux()) // the page that serves its seats
	w := NewWorker(openBus(t, srv.URL), withAgents(WorkerConfig{Name: "up", AckWait: time.Second}, hub), nil)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() { stop(); <-done }()
	for w.Ran() == 0 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	events := checkWhole(t, ctx, js, req.GetMatchId(), "")
	if end := events[len(events)-1].GetMatchEnded().GetOutcome(); end.GetCause() == matchv1.EndCause_END_CAUSE_VOID {
		t.Errorf("the match with a person ended void: %q", end.GetSummary())
	}
}

// A match started by someone else under the id a tournament schedules is never taken for the
// tournament's: the worker leaves it alone and plays the tournament's match under the next id
// of its chain, which is the one that counts.
func TestForeignRecordUnderATournamentsID(t *testing.T) {
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	js := openBus(t, srv.URL).JetStream()
	startWorker(t, openBus(t, srv.URL), WorkerConfig{Name: "A", AckWait: time.Second})

	// The forger's match, a single match under the id the tournament will use.
	forged := requests("cup", 1, "builtin:fair", "builtin:random?seed=9")[0]
	id := forged.GetMatchId()
	forged.TournamentId = ""
	enqueueAndWait(t, ctx, js, []*queuev1.MatchRequest{forged})
	before := checkWhole(t, ctx, js, id, "")

	// The tournament's own request for that id.
	real := requests("cup", 1, "builtin:fair", "builtin:random?seed=9")[0]
	real.MatchId = id
	got := enqueueAndWait(t, ctx, js, []*queuev1.MatchRequest{real})[id]
	if got.recordedAs != RetryID(id, 1) {
		t.Fatalf("the tournament's match counts as %s, want %s", got.recordedAs, RetryID(id, 1))
	}
	checkWhole(t, ctx, js, got.recordedAs, "cup")
	after := checkWhole(t, ctx, js, id, "")
	if len(after) != len(before) {
		t.Errorf("the foreign record changed: %d events, then %d", len(before), len(after))
	}
	// Both fast matches are stored in one message each, their starts on match_ended.
	if owner, started, err := Owner(ctx, js, id); err != nil || !started || owner != "" {
		t.Errorf("owner of the foreign record: %q, started %v, %v; want \"\", true", owner, started, err)
	}
	if owner, started, err := Owner(ctx, js, got.recordedAs); err != nil || !started || owner != "cup" {
		t.Errorf("owner of the tournament's record: %q, started %v, %v; want \"cup\", true", owner, started, err)
	}
	if _, started, err := Owner(ctx, js, RetryID(id, 2)); err != nil || started {
		t.Errorf("a match never run: started %v, %v; want false", started, err)
	}
}

// Matches that last several times AckWait keep their requests: the worker's one keep-alive
// ticker speaks for every match it plays, so no request comes back to the other worker while
// its match runs, and each match ends once, under its own id.
func TestLongMatchesKeptAlive(t *testing.T) {
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	slow := startAgent(t, 500*time.Millisecond, nil) // a match of four moves or more: two AckWaits
	wA, _ := startWorker(t, openBus(t, srv.URL), WorkerConfig{Concurrency: 3, Name: "A", AckWait: time.Second})
	js := openBus(t, srv.URL).JetStream()
	reqs := requests("long", 3, slow, "builtin:fair")[:3]
	for _, r := range reqs {
		if err := Enqueue(ctx, js, r); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range reqs {
		waitStarted(t, ctx, js, r.GetMatchId())
	}
	// A second worker now, idle: a request whose keep-alives stopped would come to it.
	wB, _ := startWorker(t, openBus(t, srv.URL), WorkerConfig{Concurrency: 3, Name: "B", AckWait: time.Second})
	for wA.Ran() < 3 && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond) // polling to the deadline
	}
	for _, r := range reqs {
		id := r.GetMatchId()
		end, ok, err := Ended(ctx, js, id)
		if err != nil || !ok || end.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_VOID {
			t.Errorf("match %s: ended %v (%v), %v", id, ok, err, end.GetOutcome())
		}
		if _, retried, err := LookupRetry(ctx, js, id); err != nil || retried {
			t.Errorf("match %s was rerun (%v): its request came back while it ran", id, err)
		}
	}
	if wB.Ran() != 0 {
		t.Errorf("the idle worker ran %d matches", wB.Ran())
	}
}

// A worker taken for dead, whose request was given to another worker that began the record
// under the same id, learns when it comes back that the record is not its own: the stream
// refuses its messages, and it leaves the request alone, so nobody closes the other worker's
// record or plays the match a third time. (Here the other worker's start is written straight
// to the stream while this worker's first move is pending, and this worker holds its events
// for a minute, so that its own start would go out only with its ending.)
func TestWorkerComingBackLeavesAnotherWritersRecord(t *testing.T) {
	srv := natstest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := openBus(t, srv.URL)
	js := b.JetStream()
	if err := EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}

	fair, err := builtin.New("fair", nil)
	if err != nil {
		t.Fatal(err)
	}
	called, gate := make(chan struct{}), make(chan struct{})
	var first sync.Once
	addr, stopAgent, err := sdk.Background("127.0.0.1:0", sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		first.Do(func() { close(called) })
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return fair.Act(ctx, obs)
	}), sdk.WithInfo(&gamev1.AgentInfo{Name: "gatedfair", Version: "1"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopAgent)

	w := NewWorker(b, withAgents(WorkerConfig{Name: "late", AckWait: 10 * time.Second}, nil), nil)
	w.settler.Linger = time.Minute
	wctx, stopWorker := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	t.Cleanup(func() {
		stopWorker()
		<-done
	})

	req := requests("taken", 1, "grpc://"+addr, "builtin:fair")[0]
	id := req.GetMatchId()
	req.TournamentId = ""
	if err := Enqueue(ctx, js, req); err != nil {
		t.Fatal(err)
	}
	select {
	case <-called:
	case <-ctx.Done():
		t.Fatal("the worker never asked for a move")
	}
	other := bus.NewPublisher(b).SettleEachMatch()
	start := &eventsv1.MatchEvent{MatchId: id, Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
		Game: "ultimatum", Seed: 7,
	}}}
	if err := other.Record(ctx, start); err != nil {
		t.Fatal(err)
	}
	if err := other.Settle(ctx, id); err != nil {
		t.Fatal(err)
	}
	close(gate)

	// The worker ends its match, is refused, and lets the request be; had it given the request
	// back (after retryDelay), it would have come back and the open record been closed void.
	for {
		if _, playing := w.running.Load(id); !playing {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the worker never finished its match")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n := w.Ran(); n != 0 {
		t.Errorf("the worker counts %d matches as played, want none", n)
	}
	time.Sleep(2*retryDelay + time.Second)
	if n, err := bus.StoredEvents(ctx, js, id); err != nil || n != 1 {
		t.Errorf("%d events stored under %s (%v), want the other writer's start alone", n, id, err)
	}
	if _, rerun, err := LookupRetry(ctx, js, id); err != nil || rerun {
		t.Errorf("a rerun of %s was named (%v)", id, err)
	}
}
