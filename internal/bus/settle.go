package bus

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
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

// Decode returns the events one message of the match stream carries, oldest first: the
// EventBatch of a message with the Parley-Events header, or the single MatchEvent of one
// without.
func Decode(header nats.Header, data []byte) ([]*eventsv1.MatchEvent, error) {
	count := header.Get(EventsHeader)
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
// ending goes out with the events still held, after every earlier message of the match is
// stored. So a match that ends within Linger is stored in one message, a stored match_ended
// always closes a whole record, and by the time Record returns for it the record is stored
// (or the failure is returned), before anyone is told the match is over. A failure leaves the
// record open, for whoever runs the match again to close as void. Its Record has the
// signature of the referee's match.Recorder; it expects the events of one match from one
// goroutine at a time, as the runner records them.
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

// SettleEachMatch returns a MatchSettler recording through p that holds events for
// DefaultLinger.
func (p *Publisher) SettleEachMatch() *MatchSettler {
	return &MatchSettler{p: p, Linger: DefaultLinger}
}

// MaxEventBytes is the Publisher's.
func (s *MatchSettler) MaxEventBytes() int { return s.p.MaxEventBytes() }

// Settle sends the events of matchID still held, waits until every event of the match
// recorded so far is stored, and returns the first failure among them (see FlushMatch).
func (s *MatchSettler) Settle(ctx context.Context, matchID string) error {
	s.mu.Lock()
	err := s.takeFailureLocked(matchID)
	if err == nil {
		err = s.sendHeldLocked(ctx, matchID)
	}
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.p.FlushMatch(ctx, matchID)
}

// Record records ev: held (see MatchSettler), or for an ending sent with the events held once
// the match's earlier messages are stored; then it waits for the ending to be stored too.
// Errors are Publisher.Record's, and for a later event the failure to store events held
// before it.
func (s *MatchSettler) Record(ctx context.Context, ev *eventsv1.MatchEvent) error {
	enc, err := s.p.encode(ctx, ev)
	if err != nil {
		return err
	}
	matchID := ev.GetMatchId()
	if ev.GetMatchEnded() != nil {
		return s.end(ctx, matchID, enc)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.takeFailureLocked(matchID); err != nil {
		return err
	}
	if s.Linger <= 0 {
		if err := s.sendHeldLocked(ctx, matchID); err != nil {
			return err
		}
		return s.p.send(ctx, matchID, enc.id, enc.name, enc.data, nil)
	}
	h := s.held[matchID]
	if h != nil && !h.fits(enc, s.p.MaxEventBytes()) {
		if err := s.sendHeldLocked(ctx, matchID); err != nil {
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
	h.add(enc, ev.GetMatchStarted() != nil)
	return nil
}

// end records a match's ending: with the events held when they fit in one message, after
// every earlier message of the match is stored.
func (s *MatchSettler) end(ctx context.Context, matchID string, enc encoded) error {
	s.mu.Lock()
	h := s.take(matchID)
	err := s.takeFailureLocked(matchID)
	if err == nil && h != nil && !h.fits(enc, s.p.MaxEventBytes()) {
		err = s.sendLocked(ctx, matchID, h)
		h = nil
	}
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("%w; the match's ending was not recorded", err)
	}
	if err := s.p.FlushMatch(ctx, matchID); err != nil {
		return fmt.Errorf("%w; the match's ending was not recorded", err)
	}
	if h == nil {
		h = &heldEvents{}
	}
	h.add(enc, false)
	h.ends = true
	s.mu.Lock()
	err = s.sendLocked(ctx, matchID, h)
	s.mu.Unlock()
	if err != nil {
		return err
	}
	return s.p.FlushMatch(ctx, matchID)
}

// expire sends h when its linger is over, unless Record has taken it meanwhile. A failure is
// kept for the match's next Record.
func (s *MatchSettler) expire(matchID string, h *heldEvents) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held[matchID] != h {
		return
	}
	delete(s.held, matchID)
	ctx, cancel := context.WithTimeout(context.Background(), ackTimeout)
	defer cancel()
	if err := s.sendLocked(ctx, matchID, h); err != nil {
		if s.failed == nil {
			s.failed = make(map[string]error)
		}
		s.failed[matchID] = err
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

// sendHeldLocked sends the events held for matchID, if any.
func (s *MatchSettler) sendHeldLocked(ctx context.Context, matchID string) error {
	if h := s.take(matchID); h != nil {
		return s.sendLocked(ctx, matchID, h)
	}
	return nil
}

// sendLocked sends h as one message: its only event as it is, or an EventBatch. The message
// takes the id its newest event would have alone, and that event's subject, but for one that
// holds the match's start and not its ending: that one travels on match_started, where
// listings and lookups of a match's start find it.
func (s *MatchSettler) sendLocked(ctx context.Context, matchID string, h *heldEvents) error {
	name := h.last.name
	if h.start != "" && !h.ends {
		name = h.start
	}
	if len(h.parts) == 1 {
		return s.p.send(ctx, matchID, h.last.id, name, h.parts[0], nil)
	}
	data := make([]byte, 0, h.size)
	for _, part := range h.parts {
		data = protowire.AppendTag(data, batchField, protowire.BytesType)
		data = protowire.AppendBytes(data, part)
	}
	header := make(nats.Header, 3)
	header.Set(EventsHeader, strconv.Itoa(len(h.parts)))
	return s.p.send(ctx, matchID, h.last.id, name, data, header)
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
