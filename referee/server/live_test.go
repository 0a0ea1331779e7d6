package server

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
)

// TestFollowSaysWhomTheMatchWaitsFor: a stream of a running match carries, besides its
// events, the news of seats asked to move: at once the latest ask published before it was
// opened, then each ask as it is published; none of it is in the record.
func TestFollowSaysWhomTheMatchWaitsFor(t *testing.T) {
	f := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const id = "m-live"
	p := bus.NewPublisher(f.bus)
	record := func(ev *eventsv1.MatchEvent) {
		t.Helper()
		if err := p.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
		if err := p.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ask := func(seat, turn int32) *refereev1.Waiting {
		t.Helper()
		w := &refereev1.Waiting{Seat: seat, Turn: turn, Attempt: 1, Deadline: timestamppb.New(time.Now().Add(time.Minute))}
		data, err := proto.Marshal(w)
		if err != nil {
			t.Fatal(err)
		}
		if err := f.bus.Conn().Publish(natsname.LiveSubject(id), data); err != nil {
			t.Fatal(err)
		}
		return w
	}
	record(&eventsv1.MatchEvent{MatchId: id, Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{Game: "ultimatum"}}})
	first := ask(0, 1)
	waitUntil(t, "the referee to keep the first ask", func() bool { return len(f.server.live.current(id)) == 1 })

	stream, err := f.client.StreamMatchEvents(ctx, &refereev1.StreamMatchEventsRequest{MatchId: id})
	if err != nil {
		t.Fatal(err)
	}
	var waits []*refereev1.Waiting
	var events []*eventsv1.MatchEvent
	next := func() {
		t.Helper()
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		if w := resp.GetWaiting(); w != nil {
			waits = append(waits, w)
		} else {
			events = append(events, resp.GetEvent())
		}
	}
	for len(waits) < 1 || len(events) < 1 {
		next()
	}
	second := ask(1, 2)
	for len(waits) < 2 {
		next()
	}
	record(&eventsv1.MatchEvent{MatchId: id, Seq: 2, Turn: 2, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_VOID}}}})
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetWaiting() != nil {
			t.Errorf("news after the asks: %v", resp.GetWaiting())
		} else {
			events = append(events, resp.GetEvent())
		}
	}
	if len(waits) != 2 || !proto.Equal(waits[0], first) || !proto.Equal(waits[1], second) {
		t.Errorf("news %v, want the first ask then the second", waits)
	}
	if len(events) != 2 || events[1].GetMatchEnded() == nil {
		t.Errorf("%d events, want the start and the end", len(events))
	}
}

// TestLiveNewsForgets: an ask is forgotten a minute after its deadline, and a later ask of a
// seat replaces its earlier one.
func TestLiveNewsForgets(t *testing.T) {
	l := newLiveNews()
	now := time.Unix(1000, 0)
	l.now = func() time.Time { return now }
	at := func(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(now.Add(d)) }
	l.put("m", &refereev1.Waiting{Seat: 0, Turn: 1, Attempt: 1, Deadline: at(10 * time.Second)})
	l.put("m", &refereev1.Waiting{Seat: 0, Turn: 3, Attempt: 1, Deadline: at(20 * time.Second)})
	l.put("m", &refereev1.Waiting{Seat: 0, Turn: 2, Attempt: 1, Deadline: at(30 * time.Second)}) // older news, late
	if got := l.current("m"); len(got) != 1 || got[0].GetTurn() != 3 {
		t.Errorf("current %v, want seat 0's ask of turn 3", got)
	}
	now = now.Add(20*time.Second + forgetAfter + time.Second)
	if got := l.current("m"); len(got) != 0 {
		t.Errorf("current %v a minute past its deadline, want nothing", got)
	}
	for i := range 256 { // enough puts for a sweep
		l.put("other", &refereev1.Waiting{Seat: int32(i % 2), Turn: int32(i + 1), Deadline: at(time.Minute)})
	}
	if _, kept := l.byMatch["m"]; kept {
		t.Error("a match whose asks are long past is still kept")
	}
}

// waitUntil polls cond until it holds, failing the test after a generous deadline.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
