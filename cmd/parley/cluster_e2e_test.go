package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-arena/parley/agents/builtin"
	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/referee/tournament"
)

// subjectCounts counts the messages of the match stream on each subject matching filter.
func subjectCounts(t *testing.T, ctx context.Context, js jetstream.JetStream, filter string) map[string]uint64 {
	t.Helper()
	s, err := js.Stream(ctx, natsname.MatchStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx, jetstream.WithSubjectFilter(filter))
	if err != nil {
		t.Fatal(err)
	}
	return info.State.Subjects
}

// retryNoResponders calls f again while it fails for want of a responder: for a moment after
// a server is killed, a request may reach no one while the cluster elects new leaders.
func retryNoResponders(ctx context.Context, f func() error) error {
	for {
		err := f()
		if !errors.Is(err, nats.ErrNoResponders) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Scale-out on a real NATS cluster: three clustered nats-server processes with the streams
// replicated on all three, two `parley referee` processes sharing a tournament's work queue,
// `parley analytics` storing every event, and `parley tournament --workers 0` scheduling.
// Mid-run one referee is killed (SIGKILL) with matches in flight, and so is the NATS server
// leading the match stream. Every scheduled match must still end exactly once: the matches
// the dead referee was playing are closed void (never resumed) and rerun under <id>-r<k> by
// the other referee, each match id holds one match_ended, and the analytics totals add up.
func TestClusterScaleOut(t *testing.T) {
	t.Parallel()
	cluster := natstest.StartCluster(t, 3)
	url := cluster.URL()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()

	const delay = 300 * time.Millisecond
	agents := []string{
		"fair=" + serveSlow(t, "fair", delay),
		"spe=" + serveSlow(t, "spe", delay),
		"random=" + serveSlow(t, "random", delay),
	}

	// The first referee creates the streams, replicated on the three servers.
	refArgs := []string{"referee", "--listen", "127.0.0.1:0", "--nats", url, "--nats-replicas", "3", "--allow-dial", "127.0.0.1/32",
		"--worker-concurrency", "3", "--ack-wait", "3s"}
	refA := startProc(t, "", parleyBin, refArgs...)
	refA.waitLine("referee worker taking match requests")
	refB := startProc(t, "", parleyBin, refArgs...)
	refB.waitLine("referee worker taking match requests")
	ana := startProc(t, "", parleyBin, "analytics", "--nats", url, "--db", dir+"/analytics.db", "--listen", "127.0.0.1:0")
	anaAddr, _, _ := strings.Cut(ana.waitLine("analytics listening on "), ",")

	watcher, err := bus.Open(ctx, bus.Config{URL: url}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close()
	js := watcher.JetStream()
	for _, name := range []string{natsname.MatchStream, natsname.RequestStream, natsname.TournamentStream} {
		st, err := js.Stream(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if r := st.CachedInfo().Config.Replicas; r != 3 {
			t.Fatalf("stream %s has %d replicas, want 3", name, r)
		}
	}

	const id = "cluster"
	targs := []string{"tournament", "--game", "ultimatum", "--games-per-pair", "3", "--seed", "11", "--id", id,
		"--nats", url, "--workers", "0", "--concurrency", "6", "--move-timeout", "10s"}
	for _, a := range agents {
		targs = append(targs, "--agent", a)
	}
	tour := startProc(t, "", parleyBin, targs...)

	// Kill referee A once more matches are running than B alone could hold, so some of
	// them are A's; then kill the server leading the match stream.
	startedF := bus.Subject("*", &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{}}})
	endedF := bus.Subject("*", &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{}}})
	for {
		started, ended := len(subjectCounts(t, ctx, js, startedF)), len(subjectCounts(t, ctx, js, endedF))
		if started-ended > 3 && ended >= 2 {
			t.Logf("killing referee A with %d matches running, %d ended", started-ended, ended)
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("never more than 3 matches running at once\n--- tournament:\n%s", tour.output())
		case <-tour.exited:
			t.Fatalf("the tournament ended before the faults\n%s", tour.output())
		case <-time.After(20 * time.Millisecond):
		}
	}
	_ = refA.cmd.Process.Kill()
	<-refA.exited
	st, err := js.Stream(ctx, natsname.MatchStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("stream info: %v, %+v", err, info)
	}
	killed := false
	for i, s := range cluster.Servers {
		if info.Cluster.Leader == fmt.Sprintf("parley-test-%d", i) {
			t.Logf("killing NATS server %s (%s), the match stream's leader", info.Cluster.Leader, s.URL)
			s.Kill(t)
			killed = true
		}
	}
	if !killed {
		t.Fatalf("no server leads the match stream: %+v", info.Cluster)
	}

	select {
	case <-tour.exited:
	case <-ctx.Done():
		// Where it is stuck: a Go program prints every goroutine's stack on SIGQUIT.
		_ = tour.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-tour.exited:
		case <-time.After(5 * time.Second):
		}
		t.Fatalf("the tournament did not finish\n--- tournament:\n%s\n--- referee B:\n%s", tour.output(), refB.output())
	}
	if code := tour.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("the tournament failed (exit status %d)\n%s\n--- referee B:\n%s", code, tour.output(), refB.output())
	}

	// Every scheduled match counts once; the interrupted ones are void and name their rerun.
	var spec *tournamentv1.TournamentSpec
	var records []tournament.Record
	if err := retryNoResponders(ctx, func() (err error) {
		if spec, err = tournament.LoadSpec(ctx, js, id); err != nil {
			return err
		}
		records, err = tournament.LoadRecords(ctx, js, spec)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	counted := map[string]*tournament.Record{}
	interrupted, events := 0, 0
	for i := range records {
		r := &records[i]
		events += len(r.Events)
		end := r.Events[len(r.Events)-1].GetMatchEnded()
		if end == nil {
			t.Errorf("match %s never ended", r.MatchID)
			continue
		}
		for j, ev := range r.Events {
			if ev.GetSeq() != uint64(j+1) {
				t.Errorf("match %s: event %d has seq %d", r.MatchID, j, ev.GetSeq())
				break
			}
		}
		if r.Interrupted {
			interrupted++
			if end.GetOutcome().GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(end.GetOutcome().GetSummary(), "rerun as "+r.MatchID+"-r") {
				t.Errorf("interrupted match %s ended %v: %q", r.MatchID, end.GetOutcome().GetCause(), end.GetOutcome().GetSummary())
			}
			continue
		}
		if end.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_VOID {
			t.Errorf("match %s counts but is void: %s", r.MatchID, end.GetOutcome().GetSummary())
		}
		if counted[r.Scheduled.GetMatchId()] != nil {
			t.Errorf("scheduled match %s counts twice: %s and %s", r.Scheduled.GetMatchId(), counted[r.Scheduled.GetMatchId()].MatchID, r.MatchID)
		}
		counted[r.Scheduled.GetMatchId()] = r
	}
	if len(counted) != len(spec.GetMatches()) || len(spec.GetMatches()) != 18 {
		t.Errorf("%d of %d scheduled matches counted, want all 18", len(counted), len(spec.GetMatches()))
	}
	if interrupted == 0 {
		t.Error("no match was interrupted: the killed referee had none running")
	}
	t.Logf("%d matches counted, %d interrupted and rerun", len(counted), interrupted)

	// The stream holds exactly one match_started and one match_ended per match id.
	starts, ends := subjectCounts(t, ctx, js, startedF), subjectCounts(t, ctx, js, endedF)
	if len(starts) != len(records) || len(ends) != len(records) {
		t.Errorf("the stream has %d started and %d ended match ids, want %d", len(starts), len(ends), len(records))
	}
	for _, r := range records {
		if s, e := starts[startedSubject(r.MatchID)], ends[endedSubject(r.MatchID)]; s != 1 || e != 1 {
			t.Errorf("match %s: %d match_started and %d match_ended in the stream, want 1 and 1", r.MatchID, s, e)
		}
	}
	// Nothing stored twice: the stream's messages hold as many events as the records.
	stored := 0
	if err := retryNoResponders(ctx, func() error {
		stored = 0
		return bus.ReadSince(ctx, js, time.Unix(0, 0), func(string) bool { return true }, func(string, *eventsv1.MatchEvent) error {
			stored++
			return nil
		})
	}); err != nil {
		t.Fatal(err)
	}
	if stored != events {
		t.Errorf("the match stream holds %d events, the records %d", stored, events)
	}

	// Analytics stored every event once and rates the 18 matches that count.
	client := analyticsv1.NewAnalyticsServiceClient(dialGRPC(t, anaAddr))
	var status *analyticsv1.GetStatusResponse
	for {
		if status, err = client.GetStatus(ctx, &analyticsv1.GetStatusRequest{}); err != nil {
			t.Fatalf("analytics status: %v\n--- analytics:\n%s", err, ana.output())
		}
		if status.GetMatches() >= int64(len(records)) || ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if status.GetEvents() != int64(events) || status.GetMatches() != int64(len(records)) ||
		status.GetVoidMatches() != int64(interrupted) || status.GetErrors() != 0 {
		t.Errorf("analytics status %v, want %d events, %d matches of which %d void, no errors", status, events, len(records), interrupted)
	}
	lb, err := client.GetLeaderboard(ctx, &analyticsv1.GetLeaderboardRequest{Filter: &analyticsv1.MatchFilter{TournamentId: id, Game: "ultimatum"}})
	if err != nil {
		t.Fatal(err)
	}
	if lb.GetMatches() != 18 || lb.GetVoidMatches() != int32(interrupted) {
		t.Errorf("leaderboard of %d matches (%d void left out), want 18 (%d)", lb.GetMatches(), lb.GetVoidMatches(), interrupted)
	}
	// Each agent's seats and mean payoff, from the records that count.
	played, payoff := map[string]int{}, map[string]float64{}
	for _, r := range counted {
		seats := r.Events[0].GetMatchStarted().GetSeats()
		for seat, v := range r.Events[len(r.Events)-1].GetMatchEnded().GetOutcome().GetPayoffs() {
			label := seats[seat].GetLabel()
			played[label]++
			payoff[label] += v
		}
	}
	if len(lb.GetEntries()) != 3 {
		t.Fatalf("leaderboard %v, want the 3 agents", lb.GetEntries())
	}
	for _, e := range lb.GetEntries() {
		want := payoff[e.GetAgent()] / float64(played[e.GetAgent()])
		if int(e.GetMatches()) != played[e.GetAgent()] || played[e.GetAgent()] != 12 || math.Abs(e.GetMeanPayoff()-want) > 1e-9 {
			t.Errorf("leaderboard: %s played %d with mean payoff %g; the records say %d and %g", e.GetAgent(), e.GetMatches(), e.GetMeanPayoff(), played[e.GetAgent()], want)
		}
	}
}

// Subjects of a match's first and last events.
func startedSubject(id string) string {
	return bus.Subject(id, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{}}})
}

func endedSubject(id string) string {
	return bus.Subject(id, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{}}})
}

// serveSlow serves the built-in agent name over gRPC from the test process, each move taking
// at least delay, and returns its address.
func serveSlow(t *testing.T, name string, delay time.Duration) string {
	t.Helper()
	addr, stop, err := builtin.Background("builtin:"+name, delay)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}
