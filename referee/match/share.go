package match

import (
	"fmt"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/policy"
)

// What one seat may fill of what the match shares. A match's record and every seat's
// observation are bounded for everyone; a seat that fills more than its share is charged for
// it — its moves are refused or it plays the game's default move from then on, recorded as
// its fault — and the match goes on: never void, never run again, for a flood.
const (
	// DefaultMaxRecordBytes bounds a match's record when the Spec does not (MaxRecordBytes);
	// MaxRecordBytes is the most a Spec may ask. Each seat may fill an equal share of it.
	DefaultMaxRecordBytes = policy.RecordBytesCeiling
	MaxRecordBytes        = policy.RecordBytesCeiling
	// roomCheckEvery is how many bytes of accepted actions, over every seat, pass between two
	// checks that every seat's observation keeps roomHeadroom to spare without its history and
	// notes (which are cut to fit); the check applies the action to a copy of the state.
	roomCheckEvery = 16 << 10
	// roomHeadroom is what the seats' shares of the observations leave free of the budget, for
	// what the actions between two checks add (a text may be shown twice in a view) and what
	// the rules add by themselves.
	roomHeadroom = 64 << 10
)

// shares is what each seat has filled of the match's record and of the observations, and
// which seats have filled more than their share of the record.
type shares struct {
	record      int64 // bytes a seat's own events may fill of the record
	eventsLimit int   // events a seat's own events may number
	sinceCheck  atomic.Int64

	mu    sync.Mutex
	seats []seatShare
	// The observations' room: every seat's accepted public bytes so far, the fullest
	// observation's size at the last check, and each seat's share of the room (set at the
	// first check).
	total    int64
	lastSize int
	share    int64
}

// seatShare is what one seat has filled.
type seatShare struct {
	recorded int64  // bytes of the seat's own events so far
	events   int    // and their number
	cutOff   string // why the seat plays defaults from now on ("" while it plays)
	told     bool   // the seat's cut-off fault is recorded
	pending  int64  // public bytes of its actions accepted since the last room check
	charged  int64  // the fullest observation's growth charged to it
}

func newShares(seats int, maxRecord int64) *shares {
	if maxRecord <= 0 {
		maxRecord = DefaultMaxRecordBytes
	}
	maxRecord = min(maxRecord, MaxRecordBytes)
	seats = max(seats, 1)
	return &shares{record: maxRecord / int64(seats), eventsLimit: maxEvents / seats, seats: make([]seatShare, seats)}
}

// seatOf is the seat whose own doing ev records (-1: the rules' or the referee's).
func seatOf(ev *eventsv1.MatchEvent) games.Seat {
	switch p := ev.GetPayload().(type) {
	case *eventsv1.MatchEvent_ActionTaken:
		return p.ActionTaken.GetSeat()
	case *eventsv1.MatchEvent_ActionRefused:
		return p.ActionRefused.GetSeat()
	case *eventsv1.MatchEvent_AgentFault:
		return p.AgentFault.GetSeat()
	}
	return -1
}

// recordedEvent counts an event of size bytes; a seat past its share of the record is cut off.
func (s *shares) recordedEvent(ev *eventsv1.MatchEvent, size int) {
	seat := seatOf(ev)
	if seat < 0 || int(seat) >= len(s.seats) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := &s.seats[seat]
	ss.recorded += int64(size)
	ss.events++
	switch {
	case ss.cutOff != "":
	case ss.recorded > s.record:
		ss.cutOff = fmt.Sprintf("the seat filled its share of the match's record (%d bytes of %d: max_record_bytes over the seats)", ss.recorded, s.record)
	case ss.events > s.eventsLimit:
		ss.cutOff = fmt.Sprintf("the seat filled its share of the match's events (%d of %d)", ss.events, s.eventsLimit)
	}
}

// cut returns why seat plays defaults from now on ("" while it plays), and whether its fault
// is still to be recorded (once).
func (s *shares) cut(seat games.Seat) (why string, tell bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := &s.seats[seat]
	if ss.cutOff != "" && !ss.told {
		ss.told, tell = true, true
	}
	return ss.cutOff, tell
}

// publicBytes is what an action holds that other seats may be shown.
func publicBytes(a *agentv1.Action) int64 {
	return int64(proto.Size(a) - len(a.GetPrivateReasoning()) - len(a.GetPrivateNotes()))
}

// roomRefusal keeps the rules' part of every observation (all but history and notes, which
// are cut to fit) within the budget, less roomHeadroom, each seat charged for what it fills.
// Every roomCheckEvery bytes of accepted actions it applies seat's action (validated on st,
// not yet applied) to a copy of the state and measures the fullest observation: its growth
// since the last check is charged to the seats in proportion to what their actions held, and
// the action is refused when seat's charge passes its share of the room (the room left by
// the rules' own part at the first check, split evenly). It returns the refusal, or nil.
func (m *run) roomRefusal(st games.State, seat games.Seat, action *agentv1.Action) *games.Rejection {
	s := m.shares
	n := publicBytes(action)
	if s.sinceCheck.Load()+n < roomCheckEvery {
		s.sinceCheck.Add(n)
		s.mu.Lock()
		s.seats[seat].pending += n
		s.total += n
		s.mu.Unlock()
		return nil
	}
	after := st.Clone()
	if _, err := after.Apply(seat, action); err != nil {
		return nil // the real Apply refuses it
	}
	fullest, size := m.fullestView(after)

	s.mu.Lock()
	defer s.mu.Unlock()
	if s.share == 0 {
		// The rules' own part: what the fullest observation holds but what actions put in.
		base := max(int64(size)-s.total-n, 0)
		s.share = max(max(int64(games.MaxObservationBytes-roomHeadroom)-base, 0)/int64(len(s.seats)), 1)
	}
	sum := n
	for _, ss := range s.seats {
		sum += ss.pending
	}
	sum = max(sum, 1)
	growth := int64(max(size-s.lastSize, 0))
	// The charge of each seat once this check's growth is split by what each seat's actions held.
	charge := func(i int) int64 {
		w := s.seats[i].pending
		if i == int(seat) {
			w += n
		}
		return s.seats[i].charged + growth*w/sum
	}
	if mine := charge(int(seat)); mine > s.share {
		return games.Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE,
			"this seat has filled %d bytes of the other seats' observations (the fullest, %s's, would be %d of its %d-byte budget), over its share of %d: send shorter messages",
			mine, m.seats[fullest].GetName(), size, games.MaxObservationBytes, s.share)
	}
	for i := range s.seats {
		s.seats[i].charged = charge(i)
	}
	for i := range s.seats {
		s.seats[i].pending = 0
	}
	s.lastSize, s.total = size, s.total+n
	s.sinceCheck.Store(0)
	return nil
}

// fullestView returns the seat whose observation of st is the largest without history and
// notes, and that size, with what the runner adds to the rules' part.
func (m *run) fullestView(st games.State) (games.Seat, int) {
	var seat games.Seat
	most := 0
	for s := range m.seats {
		obs := st.Observe(games.Seat(s))
		obs.History = nil
		obs.Seats = m.seats
		size := proto.Size(obs) + len(m.whoPlays()[s])
		if size > most {
			seat, most = games.Seat(s), size
		}
	}
	return seat, most
}
