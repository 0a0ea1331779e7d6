package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

// EventsHeader marks a message of the match stream that carries an eventsv1.EventBatch; its
// value is the number of events in it. A message without it carries one MatchEvent.
const EventsHeader = "Parley-Events"

// DefaultLinger is how long a MatchSettler holds a match's events before storing them when
// the match goes on. Storing a message costs the broker about as much as a move costs the
// referee, so a fast match is stored in one message instead of one per event; a slow match
// loses nothing by it, and a spectator never notices a fiftieth of a second.
const DefaultLinger = 20 * time.Millisecond

// batchField is EventBatch.events' field number.
const batchField = 1

// ErrBadBatch reports a message whose Parley-Events header does not match what it carries.
var ErrBadBatch = errors.New("bus: bad event batch")

// ErrOtherWriter reports a message of a match that JetStream did not store because the match's
// record was begun, or added to, by another writer (see MatchSettler).
var ErrOtherWriter = errors.New("bus: the match's record has another writer")

// Decode returns the events one message of the match stream carries, oldest first: the
// EventBatch of a message with the Parley-Events header, or the single MatchEvent of one
// without.
func Decode(header nats.Header, data []byte) ([]*eventsv1.MatchEvent, error) {
	return decode(header, data, nil)
}

// decode is Decode leaving out what leave says (nil: nothing).
func decode(header nats.Header, data []byte, leave *projection) ([]*eventsv1.MatchEvent, error) {
	count := header.Get(EventsHeader)
	if leave != nil {
		var root protoreflect.MessageDescriptor = (&eventsv1.MatchEvent{}).ProtoReflect().Descriptor()
		if count != "" {
			root = (&eventsv1.EventBatch{}).ProtoReflect().Descriptor()
		}
		var err error
		if data, err = leave.prune(data, root); err != nil {
			return nil, err
		}
	}
	if count == "" {
		ev := new(eventsv1.MatchEvent)
		if err := proto.Unmarshal(data, ev); err != nil {
			return nil, err
		}
		return []*eventsv1.MatchEvent{ev}, nil
	}
	n, err := strconv.Atoi(count)
	if err != nil || n < 1 {
		return nil, fmt.Errorf("%w: header %s is %q, not a count of events", ErrBadBatch, EventsHeader, count)
	}
	var batch eventsv1.EventBatch
	if err := proto.Unmarshal(data, &batch); err != nil {
		return nil, err
	}
	if len(batch.GetEvents()) != n {
		return nil, fmt.Errorf("%w: header %s says %d events, the message holds %d", ErrBadBatch, EventsHeader, n, len(batch.GetEvents()))
	}
	return batch.GetEvents(), nil
}

// MatchSettler records match events through a Publisher, few messages per match, and settles
// each match at its end.
//
// Events are held for up to Linger and sent together as one message (an EventBatch); the
// ending goes out with the events still held. So a match that ends within Linger is stored in
// one message, and by the time Record returns for the ending the record is stored (or the
// failure is returned), before anyone is told the match is over. A failure leaves the record
// open, for whoever runs the match again to close as void. Its Record has the signature of
// the referee's match.Recorder; it expects the events of one match from one goroutine at a
// time, as the runner records them.
//
// A record has one writer. The message that begins a record (it holds the start) is stored
// only if the match has nothing stored yet, and each later message only if the match's last
// stored message is still this settler's previous one, which it waits for (JetStream's
// expected-last-sequence check on the match's subjects). So a referee that was taken for dead
// and comes back cannot add to a record another referee began or closed: its message is
// refused, and its Record fails. A message closing a record this settler did not begin (a
// void ending for a referee that died) carries no such check.
type MatchSettler struct {
	p *Publisher
	// Linger is how long events are held; set it before the first Record. Zero sends every
	// event at once, in a message of its own.
	Linger time.Duration

	// mu is held while a message is sent, so that the messages of a match leave in order
	// whether Record or the linger timer sends them.
	mu     sync.Mutex
	held   map[string]*heldEvents // by match, only while some are held
	failed map[string]error       // a send of held events that failed, for the match's next Record
	sent   map[string]*sentMsg    // by match, the latest message sent, until the match ends
}

// heldEvents are events of one match waiting to be sent together.
type heldEvents struct {
	parts [][]byte // each event, marshalled
	size  int      // of the parts encoded as an EventBatch
	last  encoded  // the newest
	// start is the kind of the match's start when it is the first of the parts; ends is set
	// when the last is the match's ending.
	start string
	ends  bool
	timer *time.Timer
}

// sentMsg is a message of a match sent, and once JetStream has answered, where it is stored.
type sentMsg struct {
	id      string
	guarded bool          // sent to be stored only where it continues this settler's record
	done    chan struct{} // closed once seq or err is set
	seq     uint64        // its sequence in the stream
	err     error
}

// SettleEachMatch returns a MatchSettler recording through p that holds events for
// DefaultLinger.
func (p *Publisher) SettleEachMatch() *MatchSettler {
	return &MatchSettler{p: p, Linger: DefaultLinger}
}

// MaxEventBytes is the Publisher's.
func (s *MatchSettler) MaxEventBytes() int { return s.p.MaxEventBytes() }

// Settle sends the events of matchID still held, waits until every event of the match
// recorded so far is stored, and returns the first failure among them.
func (s *MatchSettler) Settle(ctx context.Context, matchID string) error {
	s.mu.Lock()
	err := s.takeFailureLocked(matchID)
	if err == nil {
		_, err = s.sendHeldLocked(ctx, matchID, true)
	}
	last := s.sent[matchID]
	s.mu.Unlock()
	if err == nil && last != nil {
		_, err = last.wait(ctx)
	}
	if err != nil {
		s.forget(matchID)
	}
	return err
}

// Record records ev: held (see MatchSettler), or for an ending sent with the events held once
// the match's earlier messages are stored; then it waits for the ending to be stored too.
// Errors are Publisher.Record's, and for a later event the failure to store events held
// before it. Once Record or Settle has failed for a match, or recorded its ending, the settler
// keeps nothing of it: whatever is recorded of it next is a new writer's (as the queue's void
// closer is).
func (s *MatchSettler) Record(ctx context.Context, ev *eventsv1.MatchEvent) error {
	enc, err := s.p.encode(ctx, ev)
	if err != nil {
		return err
	}
	matchID := ev.GetMatchId()
	if ev.GetMatchEnded() != nil {
		return s.end(ctx, matchID, enc)
	}
	if err := s.hold(ctx, matchID, enc, ev.GetMatchStarted() != nil); err != nil {
		s.forget(matchID)
		return err
	}
	return nil
}

// hold holds enc (a start when start is set), sending what is held first when enc would not
// fit with it, or sends enc at once when nothing lingers.
func (s *MatchSettler) hold(ctx context.Context, matchID string, enc encoded, start bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.takeFailureLocked(matchID); err != nil {
		return err
	}
	if s.Linger <= 0 {
		h := &heldEvents{}
		h.add(enc, start)
		_, err := s.sendLocked(ctx, matchID, h, true)
		return err
	}
	h := s.held[matchID]
	if h != nil && !h.fits(enc, s.p.MaxEventBytes()) {
		if _, err := s.sendHeldLocked(ctx, matchID, true); err != nil {
			return err
		}
		h = nil
	}
	if h == nil {
		h = &heldEvents{}
		if s.held == nil {
			s.held = make(map[string]*heldEvents)
		}
		s.held[matchID] = h
		h.timer = time.AfterFunc(s.Linger, func() { s.expire(matchID, h) })
	}
	h.add(enc, start)
	return nil
}

// end records a match's ending: with the events held when they fit in one message, once the
// match's earlier messages are stored.
func (s *MatchSettler) end(ctx context.Context, matchID string, enc encoded) error {
	defer s.forget(matchID)
	s.mu.Lock()
	h := s.take(matchID)
	err := s.takeFailureLocked(matchID)
	if err == nil && h != nil && !h.fits(enc, s.p.MaxEventBytes()) {
		_, err = s.sendLocked(ctx, matchID, h, true)
		h = nil
	}
	prev := s.sent[matchID]
	s.mu.Unlock()
	if err == nil && prev != nil {
		// Waited for here rather than in sendLocked, so that other matches need not wait.
		_, err = prev.wait(ctx)
	}
	if err != nil {
		return fmt.Errorf("%w; the match's ending was not recorded", err)
	}
	if h == nil {
		h = &heldEvents{}
	}
	h.add(enc, false)
	h.ends = true
	s.mu.Lock()
	_, err = s.sendLocked(ctx, matchID, h, true)
	last := s.sent[matchID]
	s.mu.Unlock()
	if err != nil {
		return err
	}
	_, err = last.wait(ctx)
	return err
}

// expire sends h when its linger is over, unless Record has taken it meanwhile; while the
// match's previous message is not yet stored, it waits another linger rather than hold up
// other matches. A failure is kept for the match's next Record.
func (s *MatchSettler) expire(matchID string, h *heldEvents) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[matchID] != h {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	sent, err := s.sendLocked(ctx, matchID, h, false)
	switch {
	case err != nil:
		delete(s.held, matchID)
		if s.failed == nil {
			s.failed = make(map[string]error)
		}
		s.failed[matchID] = err
	case sent:
		delete(s.held, matchID)
	default:
		h.timer.Reset(s.Linger)
	}
}

// takeFailureLocked returns and forgets the failure kept for matchID's next Record, if any.
func (s *MatchSettler) takeFailureLocked(matchID string) error {
	err := s.failed[matchID]
	delete(s.failed, matchID)
	return err
}

// take removes and returns the events held for matchID, if any.
func (s *MatchSettler) take(matchID string) *heldEvents {
	h := s.held[matchID]
	if h != nil {
		h.timer.Stop()
		delete(s.held, matchID)
	}
	return h
}

// forget drops what is kept of a match that has ended.
func (s *MatchSettler) forget(matchID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.take(matchID)
	delete(s.failed, matchID)
	delete(s.sent, matchID)
}

// sendHeldLocked sends the events held for matchID, if any.
func (s *MatchSettler) sendHeldLocked(ctx context.Context, matchID string, wait bool) (bool, error) {
	if h := s.take(matchID); h != nil {
		return s.sendLocked(ctx, matchID, h, wait)
	}
	return true, nil
}

// sendLocked sends h as one message: its only event as it is, or an EventBatch. The message
// takes the id its newest event would have alone, and that event's subject, but for one that
// holds the match's start and not its ending: that one travels on match_started, where
// listings and lookups of a match's start find it. It is stored only where it continues what
// this settler stored of the match (see MatchSettler): once the previous message is stored,
// which sendLocked waits for, or when wait is false reports by sending nothing (false).
func (s *MatchSettler) sendLocked(ctx context.Context, matchID string, h *heldEvents, wait bool) (bool, error) {
	var after []jetstream.PublishOpt
	switch prev := s.sent[matchID]; {
	case h.start != "":
		after = append(after, jetstream.WithExpectLastSequenceForSubject(0, natsname.MatchFilter(matchID)))
	case prev != nil:
		if !wait && !prev.answered() {
			return false, nil
		}
		seq, err := prev.wait(ctx)
		if err != nil {
			return false, err
		}
		after = append(after, jetstream.WithExpectLastSequenceForSubject(seq, natsname.MatchFilter(matchID)))
	}
	name := h.last.name
	if h.start != "" && !h.ends {
		name = h.start
	}
	data, header := h.parts[0], nats.Header(nil)
	if len(h.parts) > 1 {
		data = make([]byte, 0, h.size)
		for _, part := range h.parts {
			data = protowire.AppendTag(data, batchField, protowire.BytesType)
			data = protowire.AppendBytes(data, part)
		}
		header = make(nats.Header, 5)
		header.Set(EventsHeader, strconv.Itoa(len(h.parts)))
	}
	ack, err := s.p.publish(ctx, matchID, h.last.id, name, data, header, after...)
	if err != nil {
		return false, err
	}
	if s.sent == nil {
		s.sent = make(map[string]*sentMsg)
	}
	m := &sentMsg{id: h.last.id, guarded: len(after) > 0, done: make(chan struct{})}
	s.sent[matchID] = m
	go m.await(ack, s.p.closed)
	return true, nil
}

// await waits for JetStream's answer to m.
func (m *sentMsg) await(ack jetstream.PubAckFuture, closed <-chan struct{}) {
	defer close(m.done)
	var apiErr *jetstream.APIError
	select {
	case a := <-ack.Ok():
		m.seq = a.Sequence
		if a.Duplicate && m.guarded {
			// The settler never sends a message twice: another writer stored one by this id.
			m.err = fmt.Errorf("bus: publish %s: %w: a message by this id is stored already", m.id, ErrOtherWriter)
		}
	case err := <-ack.Err():
		if errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence {
			err = fmt.Errorf("%w: %w", ErrOtherWriter, err)
		}
		m.err = fmt.Errorf("bus: publish %s: %w", m.id, err)
	case <-closed:
		m.err = fmt.Errorf("bus: publish %s: %w", m.id, ErrClosed)
	}
}

// answered reports whether JetStream has answered.
func (m *sentMsg) answered() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

// wait returns where m is stored, or why it is not, once JetStream has answered; or ctx's
// error.
func (m *sentMsg) wait(ctx context.Context) (uint64, error) {
	select {
	case <-m.done:
		return m.seq, m.err
	case <-ctx.Done():
		return 0, fmt.Errorf("bus: waiting for %s to be stored: %w", m.id, context.Cause(ctx))
	}
}

// fits reports whether enc can join the held events within limit bytes (0: no limit).
func (h *heldEvents) fits(enc encoded, limit int) bool {
	return limit <= 0 || h.size+partSize(enc) <= limit
}

// add holds enc, the match's start when start is set.
func (h *heldEvents) add(enc encoded, start bool) {
	if start && len(h.parts) == 0 {
		h.start = enc.name
	}
	h.parts = append(h.parts, enc.data)
	h.size += partSize(enc)
	h.last = enc
}

// partSize is what an event takes in an EventBatch.
func partSize(enc encoded) int {
	return protowire.SizeTag(batchField) + protowire.SizeBytes(len(enc.data))
}
