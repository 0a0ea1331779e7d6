package tournament

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/natstest"
)

// madeUp is a short made-up match record of tournament "rec": started, one action, then ended
// with cause (none: still running).
func madeUp(id string, cause matchv1.EndCause) []*eventsv1.MatchEvent {
	evs := []*eventsv1.MatchEvent{
		{MatchId: id, Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{Game: "ultimatum", TournamentId: "rec"}}},
		{MatchId: id, Seq: 2, Turn: 1, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: 0}}},
	}
	if cause != matchv1.EndCause_END_CAUSE_UNSPECIFIED {
		evs = append(evs, &eventsv1.MatchEvent{MatchId: id, Seq: 3, Turn: 1, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{
			Outcome: &matchv1.Outcome{Cause: cause},
		}}})
	}
	return evs
}

// LoadRecords reads a tournament's records in schedule order, interrupted runs before their
// reruns, from one read of the stream, and leaves no consumer behind. The schedule holds a
// match that ended, one interrupted and rerun, one never started, one still running, one
// whose rerun was stored before its interrupted run's ending (so the read learns of the rerun
// only after passing it), and one whose id another match took first (not the tournament's
// record: it plays under the next id).
func TestLoadRecords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	js := b.JetStream()
	spec, err := Plan(PlanConfig{ID: "rec", Game: "ultimatum", Seats: 2, Entrants: entrants(2), GamesPerAssignment: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if fresh, err := StoreSpec(ctx, js, spec); err != nil || !fresh {
		t.Fatalf("StoreSpec: fresh %v, %v", fresh, err)
	}
	if fresh, err := StoreSpec(ctx, js, spec); err != nil || fresh {
		t.Fatalf("StoreSpec again: fresh %v, %v; want it found stored", fresh, err)
	}
	ids := make([]string, len(spec.GetMatches()))
	for i, m := range spec.GetMatches() {
		ids[i] = m.GetMatchId()
	}
	// Another match on the same stream, not the tournament's; and one under its id.
	other := madeUp("not-ours", matchv1.EndCause_END_CAUSE_AGREEMENT)
	forged := madeUp(ids[6], matchv1.EndCause_END_CAUSE_AGREEMENT)
	forged[0].GetMatchStarted().TournamentId = ""
	retry := func(id, rerun string) []func() {
		return []func(){func() {
			data, err := proto.Marshal(&queuev1.MatchRetried{MatchId: id, RetryMatchId: rerun, TournamentId: "rec"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := js.Publish(ctx, natsname.RetrySubject(id), data); err != nil {
				t.Fatal(err)
			}
		}}
	}
	p := bus.NewPublisher(b)
	events := func(evs []*eventsv1.MatchEvent) []func() {
		var out []func()
		for _, ev := range evs {
			out = append(out, func() {
				if err := p.Record(ctx, ev); err != nil {
					t.Fatal(err)
				}
				if err := p.Flush(ctx); err != nil {
					t.Fatal(err)
				}
			})
		}
		return out
	}
	interrupted := madeUp(ids[1], matchv1.EndCause_END_CAUSE_VOID)
	early := madeUp(ids[4], matchv1.EndCause_END_CAUSE_VOID)
	var steps []func()
	for _, s := range [][]func(){
		events(madeUp(ids[0], matchv1.EndCause_END_CAUSE_AGREEMENT)),
		events(other),
		events(interrupted[:2]), retry(ids[1], ids[1]+"-r1"), events(interrupted[2:]),
		events(madeUp(ids[1]+"-r1", matchv1.EndCause_END_CAUSE_TURN_LIMIT)),
		// ids[2] never starts.
		events(madeUp(ids[3], matchv1.EndCause_END_CAUSE_UNSPECIFIED)),
		events(early[:2]), retry(ids[4], ids[4]+"-r1"),
		events(madeUp(ids[4]+"-r1", matchv1.EndCause_END_CAUSE_AGREEMENT)), events(early[2:]),
		events(madeUp(ids[5], matchv1.EndCause_END_CAUSE_AGREEMENT)),
		events(forged), retry(ids[6], ids[6]+"-r1"), events(madeUp(ids[6]+"-r1", matchv1.EndCause_END_CAUSE_AGREEMENT)),
		// ids[7] never starts.
	} {
		steps = append(steps, s...)
	}
	for _, step := range steps {
		step()
	}

	records, err := LoadRecords(ctx, js, spec)
	if err != nil {
		t.Fatal(err)
	}
	type got struct {
		id          string
		events      int
		interrupted bool
		scheduled   string
	}
	var have []got
	for _, r := range records {
		have = append(have, got{r.MatchID, len(r.Events), r.Interrupted, r.Scheduled.GetMatchId()})
	}
	want := []got{
		{ids[0], 3, false, ids[0]},
		{ids[1], 3, true, ids[1]}, {ids[1] + "-r1", 3, false, ids[1]},
		{ids[3], 2, false, ids[3]},
		{ids[4], 3, true, ids[4]}, {ids[4] + "-r1", 3, false, ids[4]},
		{ids[5], 3, false, ids[5]},
		{ids[6] + "-r1", 3, false, ids[6]},
	}
	if !slices.Equal(have, want) {
		t.Errorf("records:\n got %v\nwant %v", have, want)
	}
	if n := natstest.Consumers(t, js, natsname.MatchStream); n != 0 {
		t.Errorf("%d consumers left on the match stream", n)
	}
}
