package queue

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
)

// One owner's backlog does not hold back another owner's match (attack 2): with 200 of the
// flooder's matches queued first, the victim's match, queued last, ends after a few of them,
// not after all of them as a single first-in-first-out queue would have it.
func TestBacklogDoesNotHoldBackAnotherOwner(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b := openBus(t, "")
	js := b.JetStream()
	if _, err := EnsureConsumers(ctx, js, Config{}); err != nil {
		t.Fatal(err)
	}
	flooder := "client:198.51.100.7"
	victim := ""
	for i := 1; victim == "" || LaneOf(victim) == LaneOf(flooder); i++ {
		victim = fmt.Sprintf("client:203.0.113.%d", i)
	}
	flood := requests("flood", 100, "builtin:fair", "builtin:fixed?offer=1")
	for _, r := range flood {
		r.Owner = flooder
		if err := Enqueue(ctx, js, r); err != nil {
			t.Fatal(err)
		}
	}
	mine := requests("mine", 1, "builtin:fair", "builtin:fixed?offer=1")[0]
	mine.Owner = victim
	if err := Enqueue(ctx, js, mine); err != nil {
		t.Fatal(err)
	}
	const concurrency = 2
	startWorker(t, b, WorkerConfig{Concurrency: concurrency, Name: "fair"})

	var mineEnd uint64
	for mineEnd == 0 {
		msg, ok, err := bus.LastMsg(ctx, js, natsname.MatchStream, endedSubject(mine.GetMatchId()))
		switch {
		case err != nil:
			t.Fatal(err)
		case ok:
			mineEnd = msg.Sequence
		case ctx.Err() != nil:
			t.Fatal("the victim's match never ended")
		default:
			time.Sleep(20 * time.Millisecond)
		}
	}
	before := 0
	for _, r := range flood {
		msg, ok, err := bus.LastMsg(ctx, js, natsname.MatchStream, endedSubject(r.GetMatchId()))
		if err != nil {
			t.Fatal(err)
		}
		if ok && msg.Sequence < mineEnd {
			before++
		}
	}
	// Ahead of it: at most one of the flooder's per worker slot; beside it, the few that end
	// while it plays.
	if limit := 4 * concurrency; before > limit {
		t.Errorf("%d of the flooder's %d matches ended before the victim's (at most %d expected)", before, len(flood), limit)
	}
	t.Logf("%d of the flooder's %d matches ended before the victim's", before, len(flood))
}
