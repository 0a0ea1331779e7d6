package tournament

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/hostile"
	"github.com/parley-arena/parley/referee/catalog"
)

// A tournament whose requests ask for every limit at its largest int32, against bots that
// answer 8 MiB replies or flood the record, completes with every match recorded once, each
// ending with a stated cause, the honest entrant never faulted and nothing run again.
func TestHostileTournamentEndsOnce(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := openBus(t, "")
	startWorker(t, b, WorkerConfig{Concurrency: 2, Name: "A"})
	var entrants []*tournamentv1.Entrant
	for _, k := range []hostile.Kind{hostile.Huge, hostile.MessageFlood} {
		bot, err := hostile.Start(k)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(bot.Close)
		entrants = append(entrants, &tournamentv1.Entrant{Label: string(k), Address: bot.Address()})
	}
	entrants = append(entrants, &tournamentv1.Entrant{Label: "honest", Address: "builtin:fixed?offer=1"})
	spec, err := Plan(PlanConfig{
		ID: "hostile-cup", Game: "ultimatum", Seats: 2, Entrants: entrants, GamesPerAssignment: 1, Seed: 7,
		// 100 turns: the flood's messages, whole, would pass gRPC's 4 MiB by turn 70.
		Params: &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{MaxTurns: proto.Int32(100)}}},
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(5 * time.Second), MaxRetries: proto.Int32(math.MaxInt32), MaxReplyBytes: math.MaxInt32},
	})
	if err != nil {
		t.Fatal(err)
	}
	var progress []Progress
	if err := Run(ctx, b, spec, RunConfig{Concurrency: 3, Progress: func(p Progress) { progress = append(progress, p) }}); err != nil {
		t.Fatal(err)
	}
	if len(progress) != len(spec.GetMatches()) {
		t.Fatalf("%d of %d matches ended", len(progress), len(spec.GetMatches()))
	}
	js := b.JetStream()
	for _, p := range progress {
		if p.RecordedAs != p.Match.GetMatchId() {
			t.Errorf("match %s was run again as %s", p.Match.GetMatchId(), p.RecordedAs)
		}
		if _, retried, err := LookupRetry(ctx, js, p.Match.GetMatchId()); err != nil || retried {
			t.Errorf("match %s has a rerun (%v)", p.Match.GetMatchId(), err)
		}
		events := checkWhole(t, ctx, js, p.RecordedAs, "hostile-cup")
		seats := events[0].GetMatchStarted().GetSeats()
		limits := events[0].GetMatchStarted().GetLimits()
		if limits.GetMaxRetries() != 10 || limits.GetMaxReplyBytes() != 512<<10 {
			t.Errorf("match %s played with limits %v", p.RecordedAs, limits)
		}
		if p.Outcome.GetCause() == matchv1.EndCause_END_CAUSE_VOID || p.Outcome.GetSummary() == "" {
			t.Errorf("match %s ended %v: %q", p.RecordedAs, p.Outcome.GetCause(), p.Outcome.GetSummary())
		}
		for _, ev := range events {
			f := ev.GetAgentFault()
			if f == nil {
				continue
			}
			switch seats[f.GetSeat()].GetLabel() {
			case "honest":
				t.Errorf("match %s: the honest entrant was faulted: %v %s", p.RecordedAs, f.GetKind(), f.GetDetail())
			case string(hostile.Huge):
				if f.GetKind() != eventsv1.FaultKind_FAULT_KIND_OVERSIZED {
					t.Errorf("match %s: the huge bot's fault is %v, want oversized", p.RecordedAs, f.GetKind())
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
	w := NewWorker(b, catalog.New(), WorkerConfig{}, nil)
	label := strings.Repeat("l", 600<<10)
	req := &tournamentv1.MatchRequest{MatchId: "too-large", Game: "ultimatum", Agents: []string{"builtin:fair", "builtin:fair"}, Labels: []string{label, label}}
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
// run is closed void naming no rerun, so the tournament waiting for it completes.
func TestRerunsBounded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := openBus(t, "")
	js := b.JetStream()
	if _, err := EnsureQueue(ctx, js, QueueConfig{}); err != nil {
		t.Fatal(err)
	}
	spec := plan(t, "doomed", 1, "builtin:fair", "builtin:random")
	spec.Matches = spec.Matches[:1]
	first := spec.Matches[0].GetMatchId()
	// What MaxReruns interrupted runs leave behind: each started, closed void naming the
	// next, and the last one open.
	pub := bus.NewPublisher(b)
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
		if err := storeRetry(ctx, js, &tournamentv1.MatchRetried{MatchId: id, RetryMatchId: next, TournamentId: "doomed", Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		w := NewWorker(b, catalog.New(), WorkerConfig{}, nil)
		if err := w.closeVoid(ctx, id, "interrupted (test); rerun as "+next); err != nil {
			t.Fatal(err)
		}
		id = next
	}
	last := id
	startWorker(t, b, WorkerConfig{Name: "A"})
	var progress []Progress
	if err := Run(ctx, b, spec, RunConfig{Progress: func(p Progress) { progress = append(progress, p) }}); err != nil {
		t.Fatal(err)
	}
	if len(progress) != 1 || progress[0].RecordedAs != last {
		t.Fatalf("progress %+v, want the match given up as %s", progress, last)
	}
	if out := progress[0].Outcome; out.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(out.GetSummary(), "given up") {
		t.Errorf("last run ended %v: %q", out.GetCause(), out.GetSummary())
	}
	if _, retried, err := LookupRetry(ctx, js, last); err != nil || retried {
		t.Errorf("the last run names a rerun (%v)", err)
	}
}
