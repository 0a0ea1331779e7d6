package bus

import (
	"context"
	"testing"
	"time"

	"github.com/parley-arena/parley/internal/natstest"
)

// TestExternalServer runs the round trip against a nats-server process, built
// from the module version in go.mod, reached by URL.
func TestExternalServer(t *testing.T) {
	srv := natstest.Start(t)

	b := openEmbedded(t, Config{URL: srv.URL})
	if b.Embedded() || b.URL() != srv.URL {
		t.Fatalf("Embedded() = %v, URL() = %q; want false, %q", b.Embedded(), b.URL(), srv.URL)
	}
	checkRoundTrip(t, b)

	// The server dies mid-match: Flush reports it within its ctx.
	p := NewPublisher(b)
	evs := syntheticMatch("m-killed", 10)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := recordAll(ctx, p, evs[:5]); err != nil {
		t.Fatalf("recording before kill: %v", err)
	}
	srv.Kill(t)
	for _, ev := range evs[5:] {
		if err := p.Record(ctx, ev); err != nil {
			t.Logf("Record after kill: %v", err)
		}
	}
	err := flushWithin(t, p, 2*time.Second)
	if err == nil {
		t.Fatal("Flush with the server gone returned nil")
	}
	t.Logf("Flush with the server gone: %v", err)
}
