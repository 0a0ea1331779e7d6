package server

import (
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"

	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

// liveNews keeps, for every running match, the latest ask of each seat (a Waiting) whose time
// is not long up, so that whoever starts following a match learns at once whom it waits for.
// What it keeps is bounded by the matches running: an ask is forgotten a minute after its
// deadline.
type liveNews struct {
	mu      sync.Mutex
	byMatch map[string]map[int32]*refereev1.Waiting
	puts    int
	now     func() time.Time
}

// forgetAfter is how long past its deadline an ask is kept.
const forgetAfter = time.Minute

func newLiveNews() *liveNews {
	return &liveNews{byMatch: map[string]map[int32]*refereev1.Waiting{}, now: time.Now}
}

// listen keeps the news published on every match's live subject until the subscription ends.
func (l *liveNews) listen(nc *nats.Conn) (*nats.Subscription, error) {
	return nc.Subscribe(natsname.LiveSubject("*"), func(msg *nats.Msg) {
		w := new(refereev1.Waiting)
		if proto.Unmarshal(msg.Data, w) == nil {
			l.put(natsname.LiveMatchOf(msg.Subject), w)
		}
	})
}

func (l *liveNews) put(matchID string, w *refereev1.Waiting) {
	l.mu.Lock()
	defer l.mu.Unlock()
	seats := l.byMatch[matchID]
	if seats == nil {
		seats = map[int32]*refereev1.Waiting{}
		l.byMatch[matchID] = seats
	}
	if old := seats[w.GetSeat()]; old == nil || old.GetTurn() < w.GetTurn() || old.GetTurn() == w.GetTurn() && old.GetAttempt() <= w.GetAttempt() {
		seats[w.GetSeat()] = w
	}
	// Now and then, forget what is long past: matches that ended or stopped asking.
	if l.puts++; l.puts%256 == 0 {
		cut := l.now().Add(-forgetAfter)
		for id, seats := range l.byMatch {
			for seat, w := range seats {
				if w.GetDeadline().AsTime().Before(cut) {
					delete(seats, seat)
				}
			}
			if len(seats) == 0 {
				delete(l.byMatch, id)
			}
		}
	}
}

// current returns the latest ask of each seat of the match whose time is not long up, in seat
// order.
func (l *liveNews) current(matchID string) []*refereev1.Waiting {
	l.mu.Lock()
	defer l.mu.Unlock()
	cut := l.now().Add(-forgetAfter)
	var out []*refereev1.Waiting
	for _, w := range l.byMatch[matchID] {
		if !w.GetDeadline().AsTime().Before(cut) {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, func(a, b *refereev1.Waiting) int { return int(a.GetSeat() - b.GetSeat()) })
	return out
}
