package gateway

import (
	"testing"
	"time"
)

// TestKeyedLimiterBounded fills a limiter's keys: a new key is refused while every key is in
// use, let in once some have gone quiet for a minute, and a full limiter is swept at most once
// a second however many new keys ask.
func TestKeyedLimiterBounded(t *testing.T) {
	k := newKeyedLimiter(60, 1)
	k.max = 3
	for _, key := range []string{"a", "b", "c"} {
		if !k.allow(key) {
			t.Fatalf("key %s refused before the limiter was full", key)
		}
	}
	if k.allow("d") {
		t.Fatal("a new key let in while every key is in use")
	}
	for _, e := range k.byKey {
		e.used = time.Now().Add(-2 * time.Minute)
	}
	if k.allow("e") {
		t.Error("a new key let in by a sweep less than a second after the last one")
	}
	k.lastSweep = time.Time{}
	if !k.allow("f") {
		t.Error("a new key refused though every other key has been quiet for two minutes")
	}
	if len(k.byKey) != 1 {
		t.Errorf("%d keys kept after the sweep, want 1", len(k.byKey))
	}
}
