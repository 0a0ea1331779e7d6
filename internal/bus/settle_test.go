package bus

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

// storedMsg is one message of a match as the stream holds it.
type storedMsg struct {
	subject string
	header  nats.Header
	data    []byte
}

// matchMsgs returns the messages stored for matchID, in stream order.
func matchMsgs(t *testing.T, b *Bus, matchID string) []storedMsg {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cons, err := b.JetStream().OrderedConsumer(ctx, natsname.MatchStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{natsname.MatchFilter(matchID)},
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []storedMsg
	for uint64(len(out)) < info.NumPending {
		batch, err := cons.Fetch(int(info.NumPending)-len(out), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for msg := range batch.Messages() {
			n++
			out = append(out, storedMsg{msg.Subject(), msg.Headers(), msg.Data()})
		}
		if n == 0 {
			t.Fatalf("read %d of the %d messages of %s", len(out), info.NumPending, matchID)
		}
	}
	return out
}

// decodeAll decodes msgs, checking that each travels on the subject of its last event (on
// match_started when it holds the start and not the ending), and returns their events in
// order.
func decodeAll(t *testing.T, msgs []storedMsg) []*eventsv1.MatchEvent {
	t.Helper()
	var all []*eventsv1.MatchEvent
	for i, m := range msgs {
		evs, err := Decode(m.header, m.data)
		if err != nil {
			t.Fatalf("message %d on %s: %v", i, m.subject, err)
		}
		last, named := evs[len(evs)-1], evs[len(evs)-1]
		if evs[0].GetMatchStarted() != nil && last.GetMatchEnded() == nil {
			named = evs[0]
		}
		if want := Subject(last.GetMatchId(), named); m.subject != want {
			t.Errorf("message %d (events %d to %d) on %s, want %s", i, evs[0].GetSeq(), last.GetSeq(), m.subject, want)
		}
		all = append(all, evs...)
	}
	return all
}

// A fast match is stored in one message, an EventBatch found on the match_ended subject; it
// reads back as it was recorded, and the lookups of a match's start find it.
func TestSettlerStoresAFastMatchInOneMessage(t *testing.T) {
	b := openEmbedded(t, Config{})
	rec := NewPublisher(b).SettleEachMatch()
	rec.Linger = time.Minute // longer than the test: nothing is sent for being old
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	want := syntheticMatch("m-fast", 12)
	for _, ev := range want {
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatalf("Record seq %d: %v", ev.GetSeq(), err)
		}
	}
	msgs := matchMsgs(t, b, "m-fast")
	if len(msgs) != 1 {
		t.Fatalf("the match is stored in %d messages, want 1", len(msgs))
	}
	if h := msgs[0].header.Get(EventsHeader); h != "12" {
		t.Errorf("the message carries %s: %q, want 12", EventsHeader, h)
	}
	if ok, err := MatchExists(ctx, b, "m-fast"); err != nil || !ok {
		t.Errorf("MatchExists = %v, %v; want true", ok, err)
	}
	if err := sameEvents(decodeAll(t, msgs), want); err != nil {
		t.Fatal(err)
	}
	if n, err := StoredEvents(ctx, b.JetStream(), "m-fast"); err != nil || n != len(want) {
		t.Errorf("StoredEvents = %d, %v; want %d", n, err, len(want))
	}
	got, err := ReadMatch(ctx, b.JetStream(), "m-fast")
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(got, want); err != nil {
		t.Fatalf("ReadMatch: %v", err)
	}
}

// Events held reach the stream within the linger while the match goes on, for those who
// watch it live; and a match whose events come slowly is stored one message per event, as
// plain MatchEvents.
func TestSettlerSendsHeldEventsAfterLinger(t *testing.T) {
	b := openEmbedded(t, Config{})
	rec := NewPublisher(b).SettleEachMatch()
	rec.Linger = 5 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	evs := syntheticMatch("m-slow", 6)
	for i, ev := range evs[:5] {
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatalf("Record seq %d: %v", ev.GetSeq(), err)
		}
		// Wait until the event is stored, with no ending recorded yet.
		for {
			stored := len(decodeAll(t, matchMsgs(t, b, "m-slow")))
			if stored == i+1 {
				break
			}
			if ctx.Err() != nil {
				t.Fatalf("event %d never stored before the match ended (%d stored)", ev.GetSeq(), stored)
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := rec.Record(ctx, evs[5]); err != nil {
		t.Fatal(err)
	}
	msgs := matchMsgs(t, b, "m-slow")
	for i, m := range msgs {
		if h := m.header.Get(EventsHeader); h != "" {
			t.Errorf("message %d carries %s: %q; one event at a time goes alone", i, EventsHeader, h)
		}
	}
	if err := sameEvents(decodeAll(t, msgs), evs); err != nil {
		t.Fatal(err)
	}
}

// Held events never make a message larger than the server carries: when the next event
// would not fit, those held go first. Each event here takes 40% of the limit, so two fit
// together and a third does not.
func TestSettlerSplitsWhatDoesNotFit(t *testing.T) {
	b := openEmbedded(t, Config{})
	p := NewPublisher(b)
	rec := p.SettleEachMatch()
	rec.Linger = time.Minute
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	evs := syntheticMatch("m-big", 6)
	for _, ev := range evs[1:4] {
		ev.Payload = &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{
			Action: &agentv1.Action{PrivateReasoning: strings.Repeat("x", p.MaxEventBytes()*2/5)},
		}}
	}
	for _, ev := range evs {
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatalf("Record seq %d: %v", ev.GetSeq(), err)
		}
	}
	msgs := matchMsgs(t, b, "m-big")
	var counts []string
	for _, m := range msgs {
		if len(m.data) > p.MaxEventBytes() {
			t.Errorf("a message of %d bytes, over the %d allowed", len(m.data), p.MaxEventBytes())
		}
		counts = append(counts, m.header.Get(EventsHeader))
	}
	// The start with events 2 and 3 (on match_started); event 4 with 5 and the ending.
	if got, want := strings.Join(counts, ","), "3,3"; got != want {
		t.Errorf("events per message (empty: one alone) %q, want %q", got, want)
	}
	if err := sameEvents(decodeAll(t, msgs), evs); err != nil {
		t.Fatal(err)
	}
}

// Decode refuses a message whose header does not say what it carries.
func TestDecodeRefusesABadBatch(t *testing.T) {
	two := &eventsv1.EventBatch{Events: syntheticMatch("m-x", 2)}
	data, err := proto.Marshal(two)
	if err != nil {
		t.Fatal(err)
	}
	for _, count := range []string{"3", "1", "0", "-2", "two"} {
		h := nats.Header{}
		h.Set(EventsHeader, count)
		if _, err := Decode(h, data); !errors.Is(err, ErrBadBatch) {
			t.Errorf("Decode with %s: %s of a batch of 2 = %v, want ErrBadBatch", EventsHeader, count, err)
		}
	}
	h := nats.Header{}
	h.Set(EventsHeader, "2")
	got, err := Decode(h, data)
	if err != nil || sameEvents(got, two.GetEvents()) != nil {
		t.Errorf("Decode of a good batch: %d events, %v", len(got), err)
	}
}

// BenchmarkSettleMatch records whole matches of 10 small events one after the other through a
// MatchSettler, as a referee playing fast matches in turn does: the time per match is what
// recording adds to a match's length. Sub-benchmarks: events held (the default) and each
// event alone.
func BenchmarkSettleMatch(b *testing.B) {
	for _, bc := range []struct {
		name   string
		linger time.Duration
	}{{"held", DefaultLinger}, {"alone", 0}} {
		b.Run(bc.name, func(b *testing.B) {
			rec := NewPublisher(openEmbedded(b, Config{})).SettleEachMatch()
			rec.Linger = bc.linger
			ctx := context.Background()
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				n++
				for _, ev := range syntheticMatch(fmt.Sprintf("m-%d", n), 10) {
					if err := rec.Record(ctx, ev); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// A held batch that cannot be sent when its linger ends (the connection is gone) is reported
// to the match's next Record, which records nothing more.
func TestSettlerReportsAFailedLingerSend(t *testing.T) {
	b := openEmbedded(t, Config{})
	rec := NewPublisher(b).SettleEachMatch()
	rec.Linger = time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	evs := syntheticMatch("m-cut", 4)
	if err := rec.Record(ctx, evs[0]); err != nil {
		t.Fatal(err)
	}
	if err := rec.Settle(ctx, "m-cut"); err != nil {
		t.Fatal(err)
	}
	b.nc.Close()
	if err := rec.Record(ctx, evs[1]); err != nil {
		t.Fatalf("holding an event: %v", err)
	}
	for {
		rec.mu.Lock()
		failed := rec.failed["m-cut"] != nil
		rec.mu.Unlock()
		if failed {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the held event was never sent")
		}
		time.Sleep(time.Millisecond)
	}
	if err := rec.Record(ctx, evs[2]); !errors.Is(err, ErrClosed) {
		t.Fatalf("the next Record = %v, want ErrClosed", err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.held) != 0 || len(rec.failed) != 0 || len(rec.sent) != 0 {
		t.Errorf("%d matches still hold events, %d failures and %d sent messages are kept after the failure was reported", len(rec.held), len(rec.failed), len(rec.sent))
	}
}

// A record has one writer. A second referee running a match whose record another has begun
// (it was taken for dead, came back, and raced the rerun under the same id) has its messages
// refused, whether its match is one message under the same id as the first's or a longer one,
// and the stored record is the first writer's alone.
func TestSettlerRecordHasOneWriter(t *testing.T) {
	b := openEmbedded(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for _, n := range []int{6, 9} {
		t.Run(fmt.Sprintf("second writer's match of %d events", n), func(t *testing.T) {
			id := fmt.Sprintf("m-race-%d", n)
			first, second := NewPublisher(b).SettleEachMatch(), NewPublisher(b).SettleEachMatch()
			want := syntheticMatch(id, 6)
			for _, ev := range want {
				if err := first.Record(ctx, ev); err != nil {
					t.Fatalf("first writer, seq %d: %v", ev.GetSeq(), err)
				}
			}
			other := syntheticMatch(id, n)
			other[0].GetMatchStarted().Seed = 7
			var err error
			for _, ev := range other {
				if err = second.Record(ctx, ev); err != nil {
					break
				}
			}
			if !errors.Is(err, ErrOtherWriter) {
				t.Errorf("the second writer's Records end with %v, want ErrOtherWriter", err)
			}
			got, err := ReadMatch(ctx, b.JetStream(), id)
			if err != nil {
				t.Fatal(err)
			}
			if err := sameEvents(got, want); err != nil {
				t.Errorf("the record is not the first writer's: %v", err)
			}
			if n, err := StoredEvents(ctx, b.JetStream(), id); err != nil || n != len(want) {
				t.Errorf("%d events stored (%v), want the first writer's %d", n, err, len(want))
			}
		})
	}
}

// A referee that comes back after its open record was closed void by another (the queue's
// closer) cannot add to it: its next message is refused, so the record ends at the void
// ending, with nothing after it.
func TestSettlerCannotWriteAfterAClosedRecord(t *testing.T) {
	b := openEmbedded(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	late := NewPublisher(b).SettleEachMatch()
	evs := syntheticMatch("m-late", 8)
	for _, ev := range evs[:3] {
		if err := late.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := late.Settle(ctx, "m-late"); err != nil {
		t.Fatal(err)
	}
	closing := &eventsv1.MatchEvent{MatchId: "m-late", Seq: 4, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{
		Outcome: &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_VOID, Summary: "Void: its referee was gone"},
	}}}
	if err := NewPublisher(b).SettleEachMatch().Record(ctx, closing); err != nil {
		t.Fatalf("the closer: %v", err)
	}
	var err error
	for _, ev := range evs[3:] {
		if err = late.Record(ctx, ev); err != nil {
			break
		}
	}
	if !errors.Is(err, ErrOtherWriter) {
		t.Errorf("the late referee's Records end with %v, want ErrOtherWriter", err)
	}
	if n, err := StoredEvents(ctx, b.JetStream(), "m-late"); err != nil || n != 4 {
		t.Errorf("%d events stored (%v), want 4: three, then the void ending", n, err)
	}
}
