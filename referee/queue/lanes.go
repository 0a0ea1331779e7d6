package queue

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-arena/parley/internal/natsname"
)

// Lanes is how many lanes the work queue has. Each owner's requests wait in one lane (a hash
// of the owner: stochastic fair queueing), each lane has its own consumer, and a worker takes
// from the lanes in turn: a backlog in one lane delays a match of another by at most one match
// per worker and lane in use. Two owners share a lane with probability 1/Lanes.
const Lanes = 32

// legacyLane is the lane of requests stored before lanes (natsname.LegacyRequests).
const legacyLane = Lanes

// LaneOf returns the lane of owner's requests: "00" to "31".
func LaneOf(owner string) string {
	h := fnv.New32a()
	h.Write([]byte(owner))
	return fmt.Sprintf("%02d", h.Sum32()%Lanes)
}

// laneName is the name of lane i's consumer (and of its subject token).
func laneName(i int) string {
	if i == legacyLane {
		return natsname.RefereeConsumer + "-legacy"
	}
	return fmt.Sprintf("%s-%02d", natsname.RefereeConsumer, i)
}

// LaneConsumers names the durable consumers of the lanes, for metrics.
func LaneConsumers() []string {
	out := make([]string, Lanes+1)
	for i := range out {
		out[i] = laneName(i)
	}
	return out
}

// laneConfig is the consumer of lane i.
func laneConfig(i int, ackWait time.Duration) jetstream.ConsumerConfig {
	filter := natsname.LegacyRequests
	if i != legacyLane {
		filter = natsname.LaneRequests(fmt.Sprintf("%02d", i))
	}
	return jetstream.ConsumerConfig{
		Durable:       laneName(i),
		Description:   "referee workers: one lane of the requests; each request goes to one of them at a time",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       ackWait,
		MaxDeliver:    -1,
		MaxAckPending: 100_000,
		FilterSubject: filter,
	}
}

// lanes is a worker's view of the lanes: their consumers, which may hold a request, and
// whose turn is next.
type lanes struct {
	cons []jetstream.Consumer

	mu    sync.Mutex
	maybe []bool // a request may wait there
	next  int
	wake  chan struct{}
}

// ensureLanes creates, or updates, every lane's consumer; the single consumer of the queue
// before lanes is removed (its filter overlaps theirs, which a work queue refuses).
func ensureLanes(ctx context.Context, js jetstream.JetStream, cfg Config) ([]jetstream.Consumer, error) {
	err := js.DeleteConsumer(ctx, natsname.RequestStream, natsname.RefereeConsumer)
	if err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return nil, fmt.Errorf("queue: remove the consumer before lanes: %w", err)
	}
	out := make([]jetstream.Consumer, Lanes+1)
	for i := range out {
		c := laneConfig(i, cfg.AckWait)
		cons, err := js.CreateOrUpdateConsumer(ctx, natsname.RequestStream, c)
		if err != nil {
			return nil, fmt.Errorf("queue: consumer %s: %w", c.Durable, err)
		}
		out[i] = cons
	}
	return out, nil
}

func newLanes(cons []jetstream.Consumer) *lanes {
	l := &lanes{cons: cons, maybe: make([]bool, len(cons)), wake: make(chan struct{}, 1)}
	l.rescan()
	return l
}

// rescan marks every lane as possibly holding a request: requests given back (Nak) come back
// without a word.
func (l *lanes) rescan() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range l.maybe {
		l.maybe[i] = true
	}
}

// published is told of each request published (a core subscription to the request subjects):
// its lane may hold one now.
func (l *lanes) published(msg *nats.Msg) {
	i := legacyLane
	rest, _ := strings.CutPrefix(msg.Subject, strings.TrimSuffix(natsname.AllRequests, ">"))
	if lane, _, ok := strings.Cut(rest, "."); ok {
		if n, err := fmt.Sscanf(lane, "%d", &i); n != 1 || err != nil || i < 0 || i >= Lanes {
			return
		}
	}
	l.mu.Lock()
	l.maybe[i] = true
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// take returns the next request, taking from the lanes in turn starting after the lane served
// last; nil when no lane holds one now.
func (l *lanes) take(ctx context.Context) (jetstream.Msg, error) {
	l.mu.Lock()
	start := l.next
	l.mu.Unlock()
	var firstErr error
	for k := range len(l.cons) {
		i := (start + k) % len(l.cons)
		l.mu.Lock()
		maybe := l.maybe[i]
		l.maybe[i] = false
		l.mu.Unlock()
		if !maybe {
			continue
		}
		batch, err := l.cons[i].FetchNoWait(1)
		if err != nil {
			l.mark(i)
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		for msg := range batch.Messages() {
			l.mu.Lock()
			l.next = i + 1
			l.maybe[i] = true // more may wait behind it
			l.mu.Unlock()
			return msg, nil
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) {
			l.mark(i)
			if firstErr == nil {
				firstErr = err
			}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return nil, firstErr
}

func (l *lanes) mark(i int) {
	l.mu.Lock()
	l.maybe[i] = true
	l.mu.Unlock()
}
