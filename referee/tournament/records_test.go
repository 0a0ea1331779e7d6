package tournament

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
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

// EachRecordOf reads several tournaments in one read: each one's records in its schedule
// order, under its id, a rerun followed in either; a match scheduled by two of them is an
// error, not a guess.
func TestEachRecordOf(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	js := b.JetStream()
	var specs []*tournamentv1.TournamentSpec
	ids := map[string][]string{}
	for _, id := range []string{"ra", "rb"} {
		spec, err := Plan(PlanConfig{ID: id, Game: "ultimatum", Seats: 2, Entrants: entrants(2), GamesPerAssignment: 1, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := StoreSpec(ctx, js, spec); err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
		for _, m := range spec.GetMatches() {
			ids[id] = append(ids[id], m.GetMatchId())
		}
	}
	of := func(tid, id string, cause matchv1.EndCause) []*eventsv1.MatchEvent {
		evs := madeUp(id, cause)
		evs[0].GetMatchStarted().TournamentId = tid
		return evs
	}
	p := bus.NewPublisher(b)
	record := func(evs []*eventsv1.MatchEvent) {
		for _, ev := range evs {
			if err := p.Record(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// rb's first match is interrupted and rerun; ra's second is stored last.
	record(of("rb", ids["rb"][0], matchv1.EndCause_END_CAUSE_VOID))
	data, err := proto.Marshal(&queuev1.MatchRetried{MatchId: ids["rb"][0], RetryMatchId: ids["rb"][0] + "-r1", TournamentId: "rb"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, natsname.RetrySubject(ids["rb"][0]), data); err != nil {
		t.Fatal(err)
	}
	record(of("ra", ids["ra"][0], matchv1.EndCause_END_CAUSE_AGREEMENT))
	record(of("rb", ids["rb"][0]+"-r1", matchv1.EndCause_END_CAUSE_AGREEMENT))
	record(of("rb", ids["rb"][1], matchv1.EndCause_END_CAUSE_TURN_LIMIT))
	record(of("ra", ids["ra"][1], matchv1.EndCause_END_CAUSE_AGREEMENT))

	type got struct {
		id          string
		interrupted bool
		scheduled   string
	}
	have := map[string][]got{}
	err = EachRecordOf(ctx, js, specs, func(r Record) error {
		have[r.TournamentID] = append(have[r.TournamentID], got{r.MatchID, r.Interrupted, r.Scheduled.GetMatchId()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]got{
		"ra": {{ids["ra"][0], false, ids["ra"][0]}, {ids["ra"][1], false, ids["ra"][1]}},
		"rb": {{ids["rb"][0], true, ids["rb"][0]}, {ids["rb"][0] + "-r1", false, ids["rb"][0]}, {ids["rb"][1], false, ids["rb"][1]}},
	}
	for tid, w := range want {
		if !slices.Equal(have[tid], w) {
			t.Errorf("%s's records:\n got %v\nwant %v", tid, have[tid], w)
		}
	}
	if n := natstest.Consumers(t, js, natsname.MatchStream); n != 0 {
		t.Errorf("%d consumers left on the match stream", n)
	}
	if err := EachRecordOf(ctx, js, []*tournamentv1.TournamentSpec{specs[0], specs[0]}, func(Record) error { return nil }); err == nil || !strings.Contains(err.Error(), "scheduled by both") {
		t.Errorf("a tournament given twice: %v, want its matches said to be scheduled by both", err)
	}
}
