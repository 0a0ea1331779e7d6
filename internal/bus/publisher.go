package bus

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

const (
	// MaxPendingPublishes bounds the events a Publisher has sent but JetStream
	// has not yet acknowledged. When the broker falls this far behind, Record
	// blocks until acks come back (or its ctx ends): back-pressure rather than
	// unbounded memory.
	MaxPendingPublishes = 1024

	// ackTimeout is how long an event may wait for its ack before it counts
	// as failed. It frees the slot of an ack lost on the way; Flush then
	// reports the failure and the caller may record the event again.
	ackTimeout = 30 * time.Second

	// stallPoll is how long one attempt of Record waits for a free slot
	// before looking at its ctx again.
	stallPoll = 100 * time.Millisecond

	// headerRoom is what the headers Record adds (message id, expected
	// stream) may take of the server's payload limit, which counts them.
	headerRoom = 1 << 10
)

// Errors returned, wrapped, by Record.
var (
	// ErrNoPayload reports an event with no payload branch set.
	ErrNoPayload = errors.New("bus: event has no payload")
	// ErrNoSeq reports an event with seq 0; sequences start at 1.
	ErrNoSeq = errors.New("bus: event has seq 0")
	// ErrTooLarge reports an event larger than MaxEventBytes: the server
	// would refuse it, every time.
	ErrTooLarge = errors.New("bus: event too large")
)

// Publisher records match events to JetStream without waiting for each ack.
// One Publisher may serve many matches at once: Record and Flush are safe for
// concurrent use.
//
// Events are sent in the order Record is called, on one connection, so the
// events of a match recorded one after the other are stored in that order.
type Publisher struct {
	js     jetstream.JetStream
	nc     *nats.Conn
	closed <-chan struct{}

	mu       sync.Mutex
	failure  error // first failure not yet reported by Flush
	failures int   // how many failures since the last report
}

// NewPublisher returns a Publisher sending through b's connection. It has its
// own JetStream handle, so its pending acks and failures are its own.
func NewPublisher(b *Bus) *Publisher {
	p := &Publisher{closed: b.closed, nc: b.nc}
	js, err := jetstream.New(b.nc,
		jetstream.WithPublishAsyncMaxPending(MaxPendingPublishes),
		jetstream.WithPublishAsyncTimeout(ackTimeout),
		jetstream.WithPublishAsyncErrHandler(p.fail),
	)
	if err != nil {
		// The options above are constants; an error is a bug here.
		panic(fmt.Sprintf("bus: jetstream options: %v", err))
	}
	p.js = js
	return p
}

// MaxEventBytes is the largest encoded event Record sends: the server's
// payload limit (1 MiB unless its max_payload says otherwise) less room for
// the headers. The match runner keeps every event within it
// (match.EventSizer).
func (p *Publisher) MaxEventBytes() int {
	return max(int(p.nc.MaxPayload())-headerRoom, 0)
}

// Record sends ev on its subject with its message id and returns without
// waiting for JetStream to store it; Flush waits. ev must have a valid match
// id (ValidMatchID), seq >= 1, a payload, and encode in at most
// MaxEventBytes. Recording an event twice is harmless: JetStream keeps the
// first within DuplicateWindow.
//
// When MaxPendingPublishes events are awaiting acks, Record blocks until one
// is acked or ctx ends. Errors wrap ErrInvalidMatchID, ErrNoSeq, ErrNoPayload,
// ErrTooLarge, ctx's error, ErrClosed once the connection is closed, or the
// NATS error.
func (p *Publisher) Record(ctx context.Context, ev *eventsv1.MatchEvent) error {
	enc, err := p.encode(ctx, ev)
	if err != nil {
		return err
	}
	_, err = p.publish(ctx, ev.GetMatchId(), enc.id, enc.name, enc.data, nil)
	return err
}

// encoded is an event checked and marshalled for the stream.
type encoded struct {
	id   string // message id of the event alone
	name string // its kind, the last token of its subject
	data []byte
}

// encode checks ev as Record documents and marshals it.
func (p *Publisher) encode(ctx context.Context, ev *eventsv1.MatchEvent) (encoded, error) {
	matchID := ev.GetMatchId()
	if err := ValidMatchID(matchID); err != nil {
		return encoded{}, err
	}
	if ev.GetSeq() == 0 {
		return encoded{}, fmt.Errorf("%w (match %s)", ErrNoSeq, matchID)
	}
	name := EventName(ev)
	if name == UnknownEvent {
		return encoded{}, fmt.Errorf("%w (match %s, seq %d)", ErrNoPayload, matchID, ev.GetSeq())
	}
	id := MsgID(matchID, ev.GetSeq())
	if err := ctx.Err(); err != nil {
		return encoded{}, fmt.Errorf("bus: record %s: %w", id, err)
	}
	data, err := proto.Marshal(ev)
	if err != nil {
		return encoded{}, fmt.Errorf("bus: record %s: marshal: %w", id, err)
	}
	if limit := p.MaxEventBytes(); limit > 0 && len(data) > limit {
		return encoded{}, fmt.Errorf("bus: record %s: %w: %d bytes, over the %d the server carries", id, ErrTooLarge, len(data), limit)
	}
	return encoded{id: id, name: name, data: data}, nil
}

// publish sends one message of matchID's record (one event, or a batch when header says so)
// under message id id on the subject of event kind name, with opts besides, and returns the
// future of its ack; Flush waits for every one.
func (p *Publisher) publish(ctx context.Context, matchID, id, name string, data []byte, header nats.Header, opts ...jetstream.PublishOpt) (jetstream.PubAckFuture, error) {
	if header == nil {
		header = make(nats.Header, 2)
	}
	msg := &nats.Msg{Subject: natsname.MatchSubject(matchID, name), Data: data, Header: header}
	opts = append([]jetstream.PublishOpt{
		jetstream.WithMsgID(id),
		jetstream.WithExpectStream(natsname.MatchStream),
		// No silent re-send on "no responders": a late re-send would be
		// stored after later events of the match. Flush reports it instead.
		jetstream.WithRetryAttempts(0),
		jetstream.WithStallWait(stallPoll),
	}, opts...)
	for {
		ack, err := p.js.PublishMsgAsync(msg, opts...)
		if err == nil {
			return ack, nil
		}
		if !errors.Is(err, jetstream.ErrTooManyStalledMsgs) {
			// nats.go does not always wrap its "connection closed" error, and
			// its closed handler (which closes p.closed) runs later than a
			// publish on the closed connection may fail: either says closed.
			closed := errors.Is(err, nats.ErrConnectionClosed)
			select {
			case <-p.closed:
				closed = true
			default:
			}
			if closed {
				return nil, fmt.Errorf("bus: record %s: %w: %v", id, ErrClosed, err)
			}
			return nil, fmt.Errorf("bus: record %s: %w", id, err)
		}
		// All slots taken: nothing was sent, so trying again is safe.
		if ctx.Err() != nil {
			return nil, fmt.Errorf("bus: record %s: %d events awaiting acks: %w",
				id, p.js.PublishAsyncPending(), context.Cause(ctx))
		}
	}
}

// Flush waits until JetStream has acknowledged every event recorded so far,
// then returns the first failure since the previous Flush, if any (with the
// message id and a count of the others), and forgets it. Failures include
// JetStream errors, ack timeouts and nats.ErrDisconnected for events pending
// during a reconnect: such an event may or may not be stored, and recording it
// again is safe.
//
// A Publisher shared by several matches reports a failure to whichever Flush
// runs next; a match that must know about its own events is recorded through a
// MatchSettler.
//
// Flush returns early with an error when ctx ends (wrapping ctx's error) or
// the connection is closed (wrapping ErrClosed).
func (p *Publisher) Flush(ctx context.Context) error {
	done := p.js.PublishAsyncComplete()
	select {
	case <-done: // checked first: when all is acked, ctx or Close do not matter
		return p.takeFailure()
	default:
	}
	select {
	case <-done:
		return p.takeFailure()
	case <-ctx.Done():
		if err := p.takeFailure(); err != nil {
			return err
		}
		return fmt.Errorf("bus: flush: %d events still awaiting acks: %w",
			p.js.PublishAsyncPending(), context.Cause(ctx))
	case <-p.closed:
		if err := p.takeFailure(); err != nil {
			return err
		}
		return fmt.Errorf("bus: flush: %d events awaiting acks: %w",
			p.js.PublishAsyncPending(), ErrClosed)
	}
}

// fail is the JetStream async error handler: it keeps the first failure.
func (p *Publisher) fail(_ jetstream.JetStream, m *nats.Msg, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failures++
	if p.failure == nil {
		p.failure = fmt.Errorf("bus: publish %s on %s: %w", m.Header.Get(jetstream.MsgIDHeader), m.Subject, err)
	}
}

// takeFailure returns and clears the recorded failure.
func (p *Publisher) takeFailure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	err, n := p.failure, p.failures
	p.failure, p.failures = nil, 0
	if n > 1 {
		return fmt.Errorf("%w (and %d more failed)", err, n-1)
	}
	return err
}
