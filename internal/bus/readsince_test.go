package bus

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/natstest"
)

// ReadSince with Records reads the records of many matches, each as ReadMatch would:
// duplicates of a seq and events after the ending are left out, an unfinished record reads up
// to its last event, a match with no events is absent, events stored before the start time
// and matches not wanted are not seen; and no consumer is left on the stream.
func TestReadSince(t *testing.T) {
	b := openEmbedded(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	p := NewPublisher(b)
	const matches = 1200
	// An earlier match, stored before the read's start time.
	if err := recordAll(ctx, p, syntheticMatch("rm-before", 5)); err != nil {
		t.Fatal(err)
	}
	last, _, err := LastMsg(ctx, b.JetStream(), natsname.MatchStream, natsname.MatchFilter("rm-before"))
	if err != nil {
		t.Fatal(err)
	}
	since := last.Time.Add(time.Nanosecond)
	want := make(map[string][]*eventsv1.MatchEvent, matches)
	var ids []string
	for i := range matches {
		id := fmt.Sprintf("rm-%05d", i)
		ids = append(ids, id)
		evs := syntheticMatch(id, 3+i%4)
		if i == 7 {
			evs = evs[:2] // still running
		}
		want[id] = evs
		for _, ev := range evs {
			if err := p.Record(ctx, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	// Match 3 gets a re-send of its second event (stored: no message id) and a late event
	// after its ending, as from a referee that was cut off.
	js := b.JetStream()
	late := want["rm-00003"]
	for _, ev := range []*eventsv1.MatchEvent{late[1], {MatchId: "rm-00003", Seq: uint64(len(late) + 1),
		Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: 1}}}} {
		data, err := proto.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := js.Publish(ctx, Subject("rm-00003", ev), data); err != nil {
			t.Fatal(err)
		}
	}
	var recs Records
	seen := map[string]bool{}
	err = ReadSince(ctx, js, since, func(id string) bool { return id != "rm-00005" }, func(id string, ev *eventsv1.MatchEvent) error {
		seen[id] = true
		recs.Add(id, ev)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen["rm-before"] || seen["rm-00005"] || len(seen) != matches-1 {
		t.Errorf("read events of %d matches (the earlier one: %v, the unwanted one: %v), want %d", len(seen), seen["rm-before"], seen["rm-00005"], matches-1)
	}
	for _, id := range ids {
		if id == "rm-00005" {
			continue
		}
		if err := sameEvents(recs.Take(id), want[id]); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	if n := natstest.Consumers(t, js, natsname.MatchStream); n != 0 {
		t.Errorf("%d consumers left on the stream after the reads", n)
	}
}
