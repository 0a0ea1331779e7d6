package bus

import (
	"context"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natstest"
)

// padded returns a refused action's event whose encoding is exactly size bytes (the action's
// reasoning makes up the difference).
func padded(t *testing.T, ev *eventsv1.MatchEvent, size int) *eventsv1.MatchEvent {
	t.Helper()
	ev = proto.CloneOf(ev)
	ev.Payload = &eventsv1.MatchEvent_ActionRefused{ActionRefused: &eventsv1.ActionRefused{Seat: 1, Attempt: 1}}
	for n := size - proto.Size(ev); n >= 0; n-- {
		ev.GetActionRefused().Action = &agentv1.Action{PrivateReasoning: strings.Repeat("r", n)}
		if proto.Size(ev) == size {
			return ev
		}
	}
	t.Fatalf("cannot pad an event to %d bytes", size)
	return nil
}

// The publisher carries events as large as its server does, less room for headers, and
// refuses larger ones itself with ErrTooLarge rather than send what the server would drop.
func TestEventSizeLimit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxPayload int32 // 0: the embedded server's default
	}{{"default embedded server", 0}, {"server with a 64 KiB payload limit", 64 << 10}} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{}
			want := 1<<20 - headerRoom
			if tc.maxPayload > 0 {
				cfg.URL = natstest.StartWithMaxPayload(t, int(tc.maxPayload)).URL
				want = int(tc.maxPayload) - headerRoom
			}
			b := openEmbedded(t, cfg)
			p := NewPublisher(b)
			if got := p.MaxEventBytes(); got != want {
				t.Fatalf("MaxEventBytes() = %d, want %d", got, want)
			}
			if got := p.SettleEachMatch().MaxEventBytes(); got != want {
				t.Fatalf("the settler's MaxEventBytes() = %d, want %d", got, want)
			}
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			evs := syntheticMatch("m-size", 3)
			evs[1] = padded(t, evs[1], want)
			if err := recordAll(ctx, p, evs); err != nil {
				t.Fatalf("recording an event of exactly MaxEventBytes: %v", err)
			}
			got, err := ReadMatch(ctx, b.JetStream(), "m-size")
			if err != nil {
				t.Fatal(err)
			}
			if err := sameEvents(got, evs); err != nil {
				t.Fatal(err)
			}
			// ErrTooLarge is the publisher's own refusal, before anything is sent: the
			// server's would be another error (nats: maximum payload exceeded).
			over := padded(t, syntheticMatch("m-over", 3)[1], want+1)
			if err := p.Record(ctx, over); !errors.Is(err, ErrTooLarge) {
				t.Fatalf("Record of an event one byte over = %v, want ErrTooLarge", err)
			}
		})
	}
}
