package queue

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/hostile"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games/gametest"
)

// Requests asking for every limit at its largest int32, against bots that answer 8 MiB
// replies or flood the record, end with every match recorded once, each with a stated cause,
// the honest agent never faulted and nothing run again.
func TestHostileRequestsEndOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := openBus(t, "")
	startWorker(t, b, WorkerConfig{Concurrency: 2, Name: "A"})
	agents := []string{"builtin:fixed?offer=1"}
	for _, k := range []hostile.Kind{hostile.Huge, hostile.MessageFlood} {
		bot, err := hostile.Start(k)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(bot.Close)
		agents = append(agents, bot.Address())
	}
	reqs := requests("hostile", 1, agents...)
	ultimatum, err := families.New().Lookup("ultimatum")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		// 100 turns: the flood's messages, whole, would pass gRPC's 4 MiB by turn 70.
		r.Params = gametest.Resolve(t, ultimatum, &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{MaxTurns: proto.Int32(100)}}})
		r.Limits = &matchv1.Limits{MoveTimeout: durationpb.New(testTimeout / 4), MaxRetries: proto.Int32(math.MaxInt32), MaxReplyBytes: math.MaxInt32}
	}
	ended := enqueueAndWait(t, ctx, b.JetStream(), reqs)
	js := b.JetStream()
	for _, r := range reqs {
		p := ended[r.GetMatchId()]
		if p.recordedAs != r.GetMatchId() {
			t.Errorf("match %s was run again as %s", r.GetMatchId(), p.recordedAs)
		}
		if _, retried, err := LookupRetry(ctx, js, r.GetMatchId()); err != nil || retried {
			t.Errorf("match %s has a rerun (%v)", r.GetMatchId(), err)
		}
		events := checkWhole(t, ctx, js, p.recordedAs, "hostile")
		limits := events[0].GetMatchStarted().GetLimits()
		if limits.GetMaxRetries() != 10 || limits.GetMaxReplyBytes() != 512<<10 {
			t.Errorf("match %s played with limits %v", p.recordedAs, limits)
		}
		if p.outcome.GetCause() == matchv1.EndCause_END_CAUSE_VOID || p.outcome.GetSummary() == "" {
			t.Errorf("match %s ended %v: %q", p.recordedAs, p.outcome.GetCause(), p.outcome.GetSummary())
		}
		for _, ev := range events {
			f := ev.GetAgentFault()
			if f == nil {
				continue
			}
			switch r.GetAgents()[f.GetSeat()] {
			case agents[0]:
				t.Errorf("match %s: the honest agent was faulted: %v %s", p.recordedAs, f.GetKind(), f.GetDetail())
			case agents[1]:
				if f.GetKind() != eventsv1.FaultKind_FAULT_KIND_OVERSIZED {
					t.Errorf("match %s: the huge bot's fault is %v, want oversized", p.recordedAs, f.GetKind())
				}
			}
		}
	}
}

// A request too large to record whole is refused with a void record that fits the bus: the
// parameters and labels are left out, and the summary says so.
func TestRefusalFitsTheBus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := openBus(t, "")
	w := NewWorker(b, withAgents(WorkerConfig{}, nil), nil)
	label := strings.Repeat("l", 600<<10)
	req := &queuev1.MatchRequest{MatchId: "too-large", Game: "ultimatum", Agents: []string{"builtin:fair", "builtin:fair"}, Labels: []string{label, label}}
	if err := w.refuse(ctx, req, req.GetMatchId(), errors.New(strings.Repeat("why ", 1<<20))); err != nil {
		t.Fatalf("refuse: %v", err)
	}
	events := checkWhole(t, ctx, b.JetStream(), "too-large", "")
	end := events[len(events)-1].GetMatchEnded().GetOutcome()
	if end.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(end.GetSummary(), "left out") || len(end.GetSummary()) > 4<<10 {
		t.Errorf("refusal ended %v with a %d-byte summary %.200q", end.GetCause(), len(end.GetSummary()), end.GetSummary())
	}
	if seats := events[0].GetMatchStarted().GetSeats(); len(seats) != 2 || seats[0].GetLabel() != "" || seats[0].GetAgent().GetName() != "builtin:fair" {
		t.Errorf("refusal's seats %v", seats)
	}
}

// A request whose runs keep being interrupted is given up after MaxReruns reruns: its last
// run is closed void naming no rerun, so whoever waits for it is done.
func TestRerunsBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := openBus(t, "")
	js := b.JetStream()
	if err := EnsureStreams(ctx, js); err != nil {
		t.Fatal(err)
	}
	req := requests("doomed", 1, "builtin:fair", "builtin:random")[0]
	first := req.GetMatchId()
	// What MaxReruns interrupted runs leave behind: each started, closed void naming the
	// next, and the last one open.
	pub := bus.NewPublisher(b)
	w := NewWorker(b, withAgents(WorkerConfig{}, nil), nil)
	id := first
	for k := 1; ; k++ {
		started := &eventsv1.MatchEvent{MatchId: id, Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{Game: "ultimatum", TournamentId: "doomed"}}}
		if err := pub.Record(ctx, started); err != nil {
			t.Fatal(err)
		}
		if err := pub.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if k > MaxReruns {
			break
		}
		next := RetryID(first, k)
		if err := storeRetry(ctx, js, &queuev1.MatchRetried{MatchId: id, RetryMatchId: next, TournamentId: "doomed", Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		if err := w.closeVoid(ctx, id, "interrupted (test); rerun as "+next, next); err != nil {
			t.Fatal(err)
		}
		id = next
	}
	last := id
	startWorker(t, b, WorkerConfig{Name: "A"})
	p := enqueueAndWait(t, ctx, js, []*queuev1.MatchRequest{req})[first]
	if p.recordedAs != last {
		t.Fatalf("recorded as %s, want the match given up as %s", p.recordedAs, last)
	}
	if p.outcome.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(p.outcome.GetSummary(), "given up") || p.outcome.GetRerunMatchId() != "" {
		t.Errorf("last run ended %v: %q (rerun %q)", p.outcome.GetCause(), p.outcome.GetSummary(), p.outcome.GetRerunMatchId())
	}
	if _, retried, err := LookupRetry(ctx, js, last); err != nil || retried {
		t.Errorf("the last run names a rerun (%v)", err)
	}
}
