package bus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

func TestEmbeddedRoundTrip(t *testing.T) {
	b := openEmbedded(t, Config{})
	if !b.Embedded() || b.URL() != "" {
		t.Fatalf("Embedded() = %v, URL() = %q; want true, \"\" without ListenAddr", b.Embedded(), b.URL())
	}
	checkRoundTrip(t, b)
}

func TestEmbeddedTempStoreRemoved(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b, err := Open(ctx, Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := b.tmpDir
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("temporary store %q: %v", dir, err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary store %q still there after Close (stat: %v)", dir, err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// A store directory outlives the Bus: events recorded before a restart are
// read after it.
func TestEmbeddedStoreDirSurvivesRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	dir := t.TempDir()
	want := syntheticMatch("m-durable", 10)

	b, err := Open(ctx, Config{StoreDir: dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := recordAll(ctx, NewPublisher(b), want); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}

	b = openEmbedded(t, Config{StoreDir: dir})
	got, err := ReadMatch(ctx, b.JetStream(), "m-durable")
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(got, want); err != nil {
		t.Fatalf("after restart: %v", err)
	}
}

// With ListenAddr the embedded server is reachable by URL, as another process
// would reach it.
func TestEmbeddedListen(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	host := openEmbedded(t, Config{ListenAddr: "127.0.0.1:0"})
	if host.URL() == "" {
		t.Fatal("URL() is empty with ListenAddr set")
	}
	want := syntheticMatch("m-shared", 5)
	if err := recordAll(ctx, NewPublisher(host), want); err != nil {
		t.Fatal(err)
	}

	client := openEmbedded(t, Config{URL: host.URL()})
	if client.Embedded() {
		t.Fatal("Embedded() = true for a URL connection")
	}
	got, err := ReadMatch(ctx, client.JetStream(), "m-shared")
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(got, want); err != nil {
		t.Fatalf("read through %s: %v", host.URL(), err)
	}
}

func TestOpenInvalidConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"store dir with URL", Config{URL: "nats://127.0.0.1:4222", StoreDir: "/tmp/x"}},
		{"listen with URL", Config{URL: "nats://127.0.0.1:4222", ListenAddr: ":4222"}},
		{"listen without port", Config{ListenAddr: "127.0.0.1"}},
		{"listen bad port", Config{ListenAddr: "127.0.0.1:http"}},
		{"replicas on the embedded server", Config{Replicas: 3}},
		{"too many replicas", Config{URL: "nats://127.0.0.1:4222", Replicas: 7}},
		{"negative replicas", Config{URL: "nats://127.0.0.1:4222", Replicas: -1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Open(context.Background(), tc.cfg, nil)
			if !errors.Is(err, ErrInvalidConfig) {
				if b != nil {
					b.Close()
				}
				t.Fatalf("Open(%+v) error = %v, want ErrInvalidConfig", tc.cfg, err)
			}
		})
	}
}

// When the server goes away, Flush reports it within its ctx instead of
// waiting for acks that will never come.
func TestFlushFailsWhenServerGone(t *testing.T) {
	b := openEmbedded(t, Config{})
	p := NewPublisher(b)
	evs := syntheticMatch("m-gone", 10)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := recordAll(ctx, p, evs[:5]); err != nil {
		t.Fatalf("recording before shutdown: %v", err)
	}

	b.srv.Shutdown()

	for _, ev := range evs[5:] {
		if err := p.Record(ctx, ev); err != nil {
			t.Logf("Record after shutdown: %v", err)
		}
	}
	err := flushWithin(t, p, 2*time.Second)
	if err == nil {
		t.Fatal("Flush with the server gone returned nil")
	}
	t.Logf("Flush with the server gone: %v", err)
}

// After Close, Record fails at once and Flush does not wait.
func TestRecordAfterClose(t *testing.T) {
	b := openEmbedded(t, Config{})
	p := NewPublisher(b)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	err := p.Record(ctx, syntheticMatch("m-closed", 2)[0])
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("Record after Close = %v, want ErrClosed", err)
	}
	if err := p.Flush(ctx); err != nil {
		t.Fatalf("Flush with nothing pending after Close = %v, want nil", err)
	}
}

// With the broker gone, acks stop and Record blocks once MaxPendingPublishes
// events await them, until its ctx ends.
func TestRecordBackPressure(t *testing.T) {
	b := openEmbedded(t, Config{})
	p := NewPublisher(b)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := recordAll(ctx, p, syntheticMatch("m-warmup", 2)); err != nil {
		t.Fatal(err)
	}
	b.srv.Shutdown()

	rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer rcancel()
	evs := syntheticMatch("m-stalled", 4*MaxPendingPublishes)
	var err error
	n := 0
	for _, ev := range evs {
		if err = p.Record(rctx, ev); err != nil {
			break
		}
		n++
	}
	// With the broker gone, Record must stop taking events: either it blocks until its ctx
	// ends (back-pressure) or the in-process connection reports itself closed first. Which
	// comes first is a race inside nats.go; both are clear errors, never a hang.
	if err == nil {
		t.Fatalf("all %d events recorded with the server shut down", n)
	}
	if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, ErrClosed) && !strings.Contains(err.Error(), "closed") {
		t.Fatalf("Record #%d = %v, want a deadline or closed-connection error", n+1, err)
	}
	if n > 2*MaxPendingPublishes {
		t.Fatalf("%d events recorded without acks, want at most about %d", n, MaxPendingPublishes)
	}
	t.Logf("Record blocked after %d events: %v", n, err)
}

func TestRecordRejectsBadEvents(t *testing.T) {
	b := openEmbedded(t, Config{})
	p := NewPublisher(b)
	good := syntheticMatch("m-good", 2)[0]
	tests := []struct {
		name    string
		mutate  func(ev *eventsv1.MatchEvent)
		wantErr error
	}{
		{"bad match id", func(ev *eventsv1.MatchEvent) { ev.MatchId = "a.b" }, ErrInvalidMatchID},
		{"empty match id", func(ev *eventsv1.MatchEvent) { ev.MatchId = "" }, ErrInvalidMatchID},
		{"seq 0", func(ev *eventsv1.MatchEvent) { ev.Seq = 0 }, ErrNoSeq},
		{"no payload", func(ev *eventsv1.MatchEvent) { ev.Payload = nil }, ErrNoPayload},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := proto.Clone(good).(*eventsv1.MatchEvent)
			tc.mutate(ev)
			if err := p.Record(context.Background(), ev); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Record = %v, want %v", err, tc.wantErr)
			}
		})
	}
}

// A MatchSettler flushes at each match's end: once Record returns for MatchEnded, nothing
// awaits an ack and the whole match reads back, with no Flush by the caller.
func TestMatchSettler(t *testing.T) {
	b := openEmbedded(t, Config{})
	p := NewPublisher(b)
	rec := p.SettleEachMatch()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	want := syntheticMatch("m-settled", 40)
	for _, ev := range want {
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatalf("Record seq %d: %v", ev.GetSeq(), err)
		}
	}
	if n := p.js.PublishAsyncPending(); n != 0 {
		t.Fatalf("%d events await acks after MatchEnded was recorded, want 0", n)
	}
	got, err := ReadMatch(ctx, b.JetStream(), "m-settled")
	if err != nil {
		t.Fatalf("ReadMatch: %v", err)
	}
	if err := sameEvents(got, want); err != nil {
		t.Fatalf("ReadMatch after the match ended: %v", err)
	}

	// An event Record refuses is reported as it is.
	bad := proto.Clone(want[0]).(*eventsv1.MatchEvent)
	bad.Seq = 0
	if err := rec.Record(ctx, bad); !errors.Is(err, ErrNoSeq) {
		t.Fatalf("Record(seq 0) = %v, want ErrNoSeq", err)
	}

	// With the server gone, the match's end reports the failure within its ctx.
	lost := syntheticMatch("m-settle-lost", 6)
	for _, ev := range lost[:3] {
		if err := rec.Record(ctx, ev); err != nil {
			t.Fatalf("Record seq %d: %v", ev.GetSeq(), err)
		}
	}
	b.srv.Shutdown()
	ectx, ecancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer ecancel()
	for _, ev := range lost[3:] {
		err := rec.Record(ectx, ev)
		if ev.GetMatchEnded() != nil && err == nil {
			t.Fatal("Record(MatchEnded) with the server gone returned nil")
		}
	}
}

// Matches sharing a Publisher each learn of their own failed events only: the match whose
// message the stream refused gets the error at its next Record, sends nothing more, and its
// ending is never stored (so its record stays open for a rerun to close as void, or is not
// begun at all), while the other match ends normally. With events held (the default), the
// refused event travels with the whole match, start to ending, and the ending learns of it;
// without, it travels alone, after the start, and the next event learns of it.
func TestMatchSettlerOwnFailures(t *testing.T) {
	for _, tc := range []struct {
		name      string
		linger    time.Duration
		refused   string // id of the message refused
		readsBack int    // events of the refused match stored
	}{
		{"held", time.Minute, "m-refused/5", 0},
		{"each alone", 0, "m-refused/2", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := openEmbedded(t, Config{})
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			st, err := b.js.Stream(ctx, natsname.MatchStream)
			if err != nil {
				t.Fatal(err)
			}
			cfg := st.CachedInfo().Config
			cfg.MaxMsgSize = 768
			if _, err := b.js.UpdateStream(ctx, cfg); err != nil {
				t.Fatal(err)
			}
			rec := NewPublisher(b).SettleEachMatch()
			rec.Linger = tc.linger
			bad, good := syntheticMatch("m-refused", 5), syntheticMatch("m-fine", 5)
			bad[1].GetActionTaken().Action = &agentv1.Action{PrivateReasoning: strings.Repeat("too long ", 100)}
			var refused error // what the refused match's Record said, after which it stops
			for i := range 5 {
				if refused == nil {
					refused = rec.Record(ctx, bad[i])
				}
				if err := rec.Record(ctx, good[i]); err != nil {
					t.Fatalf("Record %s/%d: %v", good[i].GetMatchId(), good[i].GetSeq(), err)
				}
			}
			if refused == nil || !strings.Contains(refused.Error(), tc.refused) {
				t.Errorf("the refused match's Records: %v, want the failure of %s", refused, tc.refused)
			}
			if got, err := ReadMatch(ctx, b.JetStream(), "m-fine"); err != nil || sameEvents(got, good) != nil {
				t.Errorf("the good match reads back as %d events (%v)", len(got), err)
			}
			got, err := ReadMatch(ctx, b.JetStream(), "m-refused")
			if err != nil || len(got) != tc.readsBack || len(got) > 0 && got[len(got)-1].GetMatchEnded() != nil {
				t.Errorf("the refused match reads back as %d events (%v), want %d and no ending", len(got), err, tc.readsBack)
			}
		})
	}
}

// Many matches share one Publisher from their own goroutines; every match
// reads back whole and in order.
func TestConcurrentMatches(t *testing.T) {
	b := openEmbedded(t, Config{})
	p := NewPublisher(b)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()

	const matches, events = 16, 60
	want := make([][]*eventsv1.MatchEvent, matches)
	var wg sync.WaitGroup
	for i := range matches {
		want[i] = syntheticMatch(fmt.Sprintf("m-conc-%02d", i), events)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := recordAll(ctx, p, want[i]); err != nil {
				t.Errorf("match %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}

	if got := streamMsgs(t, b); got != matches*events {
		t.Errorf("stream has %d messages, want %d", got, matches*events)
	}
	for i := range matches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("m-conc-%02d", i)
			got, err := ReadMatch(ctx, b.JetStream(), id)
			if err != nil {
				t.Errorf("ReadMatch(%s): %v", id, err)
				return
			}
			if err := sameEvents(got, want[i]); err != nil {
				t.Errorf("ReadMatch(%s): %v", id, err)
			}
		}()
	}
	wg.Wait()
}

// A match still running reads back up to its last stored event, without
// waiting for more.
func TestReadMatchUnfinished(t *testing.T) {
	b := openEmbedded(t, Config{})
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	want := syntheticMatch("m-live", 20)[:12]
	if err := recordAll(ctx, NewPublisher(b), want); err != nil {
		t.Fatal(err)
	}
	got, err := ReadMatch(ctx, b.JetStream(), "m-live")
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(got, want); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadMatch(ctx, b.JetStream(), "bad.id"); !errors.Is(err, ErrInvalidMatchID) {
		t.Fatalf("ReadMatch(bad.id) = %v, want ErrInvalidMatchID", err)
	}
}

func BenchmarkPublish(b *testing.B) {
	bus := openEmbedded(b, Config{})
	p := NewPublisher(bus)
	ctx := context.Background()
	// Each run of the function has its own server, so no event is dropped as
	// a duplicate of an earlier run's.
	ev := syntheticMatch("m-bench", 3)[1]
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ev.Seq = uint64(i + 1)
		if err := p.Record(ctx, ev); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// Servers older than the oldest Parley works with are refused by name and version.
func TestCheckServerVersion(t *testing.T) {
	for version, ok := range map[string]bool{
		"2.15.2": true, "2.11.0": true, "v2.11.1": true, "3.0.0": true, "2.12.0-dev": true,
		"2.10.22": false, "2.9.0": false, "1.99.0": false, "": false, "nats": false,
	} {
		err := checkServerVersion(version)
		if (err == nil) != ok {
			t.Errorf("checkServerVersion(%q) = %v; want ok=%v", version, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), "2.11 or later") {
			t.Errorf("checkServerVersion(%q) = %v; want it to name the version needed", version, err)
		}
	}
}
