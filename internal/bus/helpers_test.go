package bus

import (
	"context"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

// testTimeout bounds each step that talks to a server.
const testTimeout = time.Minute

// syntheticMatch returns the events of a made-up match of n >= 2 events:
// MatchStarted, then actions, refusals and faults, then MatchEnded, with seq
// 1..n.
func syntheticMatch(matchID string, n int) []*eventsv1.MatchEvent {
	evs := make([]*eventsv1.MatchEvent, 0, n)
	for seq := 1; seq <= n; seq++ {
		ev := &eventsv1.MatchEvent{MatchId: matchID, Seq: uint64(seq), Turn: int32(seq / 2)}
		switch {
		case seq == 1:
			ev.Payload = &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
				Game: "ultimatum", RulesVersion: "test", Seed: 42,
			}}
		case seq == n:
			ev.Payload = &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{
				Outcome: &matchv1.Outcome{Payoffs: []float64{60, 40}, Agreement: true, Summary: "deal"},
			}}
		case seq%7 == 0:
			ev.Payload = &eventsv1.MatchEvent_ActionRefused{ActionRefused: &eventsv1.ActionRefused{
				Seat: int32(seq % 2), Attempt: 1,
			}}
		case seq%11 == 0:
			ev.Payload = &eventsv1.MatchEvent_AgentFault{AgentFault: &eventsv1.AgentFault{
				Seat: int32(seq % 2), Attempt: 2, Kind: eventsv1.FaultKind_FAULT_KIND_TIMEOUT, Detail: "deadline exceeded",
			}}
		default:
			ev.Payload = &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{
				Seat: int32(seq % 2), Attempt: 1,
			}}
		}
		evs = append(evs, ev)
	}
	return evs
}

// openEmbedded opens a Bus on a fresh embedded server, closed at cleanup.
func openEmbedded(t testing.TB, cfg Config) *Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b, err := Open(ctx, cfg, nil)
	if err != nil {
		t.Fatalf("Open(%+v): %v", cfg, err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return b
}

// recordAll records evs and flushes.
func recordAll(ctx context.Context, p *Publisher, evs []*eventsv1.MatchEvent) error {
	for _, ev := range evs {
		if err := p.Record(ctx, ev); err != nil {
			return err
		}
	}
	return p.Flush(ctx)
}

// streamMsgs returns the number of messages in the match stream.
func streamMsgs(t testing.TB, b *Bus) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s, err := b.JetStream().Stream(ctx, natsname.MatchStream)
	if err != nil {
		t.Fatalf("stream %s: %v", natsname.MatchStream, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatalf("stream %s info: %v", natsname.MatchStream, err)
	}
	return info.State.Msgs
}

// sameEvents reports how got differs from want: order, content and each
// seq once.
func sameEvents(got, want []*eventsv1.MatchEvent) error {
	seen := make(map[uint64]bool, len(got))
	for i, ev := range got {
		if seen[ev.GetSeq()] {
			return fmt.Errorf("seq %d returned twice (index %d)", ev.GetSeq(), i)
		}
		seen[ev.GetSeq()] = true
	}
	if len(got) != len(want) {
		return fmt.Errorf("got %d events, want %d", len(got), len(want))
	}
	for i := range want {
		if !proto.Equal(got[i], want[i]) {
			return fmt.Errorf("event %d:\n got  %v\n want %v", i, got[i], want[i])
		}
	}
	return nil
}

// checkRoundTrip records a match through b, reads it back, and records it
// again to check that JetStream drops the repeats.
func checkRoundTrip(t *testing.T, b *Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	const matchID = "m-roundtrip_1"
	want := syntheticMatch(matchID, 50)
	p := NewPublisher(b)
	before := streamMsgs(t, b)
	if err := recordAll(ctx, p, want); err != nil {
		t.Fatalf("recording: %v", err)
	}
	got, err := ReadMatch(ctx, b.JetStream(), matchID)
	if err != nil {
		t.Fatalf("ReadMatch: %v", err)
	}
	if err := sameEvents(got, want); err != nil {
		t.Fatalf("ReadMatch after first recording: %v", err)
	}
	after := streamMsgs(t, b)
	if after-before != uint64(len(want)) {
		t.Fatalf("stream grew by %d messages, want %d", after-before, len(want))
	}

	// Same events, same message ids: nothing new is stored.
	if err := recordAll(ctx, p, want); err != nil {
		t.Fatalf("recording again: %v", err)
	}
	if again := streamMsgs(t, b); again != after {
		t.Fatalf("stream has %d messages after recording the match twice, want %d (no de-duplication)", again, after)
	}
	got, err = ReadMatch(ctx, b.JetStream(), matchID)
	if err != nil {
		t.Fatalf("ReadMatch after second recording: %v", err)
	}
	if err := sameEvents(got, want); err != nil {
		t.Fatalf("ReadMatch after second recording: %v", err)
	}

	// Another match's filter sees none of these.
	none, err := ReadMatch(ctx, b.JetStream(), "m-other")
	if err != nil || len(none) != 0 {
		t.Fatalf("ReadMatch(other match) = %d events, %v; want 0, nil", len(none), err)
	}
}

// flushWithin calls p.Flush with a ctx of d and returns its error; it fails the test when
// Flush has not returned testTimeout after its ctx ended (it must give up with its ctx).
func flushWithin(t *testing.T, p *Publisher, d time.Duration) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- p.Flush(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(d + testTimeout):
		t.Fatalf("Flush had not returned %s after its ctx of %s ended", testTimeout, d)
		return nil
	}
}
