package server

import (
	"slices"
	"sync"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
)

// store keeps the records of the matches this referee ran, in memory, and wakes readers when
// a match gets a new event.
type store struct {
	mu      sync.Mutex
	matches map[string]*matchLog
}

type matchLog struct {
	n       int // order of creation
	events  []*eventsv1.MatchEvent
	ended   bool
	changed chan struct{} // closed and replaced on every append
}

func newStore() *store { return &store{matches: make(map[string]*matchLog)} }

// create registers a new match; it reports false when the id is taken.
func (s *store) create(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, taken := s.matches[id]; taken {
		return false
	}
	s.matches[id] = &matchLog{n: len(s.matches), changed: make(chan struct{})}
	return true
}

// append adds an event to its match.
func (s *store) append(ev *eventsv1.MatchEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.matches[ev.GetMatchId()]
	if m == nil {
		return
	}
	m.events = append(m.events, ev)
	if ev.GetMatchEnded() != nil {
		m.ended = true
	}
	close(m.changed)
	m.changed = make(chan struct{})
}

// end marks a match over even if it never recorded MatchEnded (it could not start).
func (s *store) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m := s.matches[id]; m != nil && !m.ended {
		m.ended = true
		close(m.changed)
		m.changed = make(chan struct{})
	}
}

// since returns the events from index from on, whether the match has ended, and a channel
// closed at the next change. ok is false for an unknown match.
func (s *store) since(id string, from int) (events []*eventsv1.MatchEvent, ended bool, changed <-chan struct{}, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.matches[id]
	if m == nil {
		return nil, false, nil, false
	}
	if from < len(m.events) {
		events = m.events[from:len(m.events):len(m.events)]
	}
	return events, m.ended, m.changed, true
}

// summaries describes every match that has started, newest first.
func (s *store) summaries() []*refereev1.MatchSummary {
	s.mu.Lock()
	defer s.mu.Unlock()
	type entry struct {
		n int
		m *refereev1.MatchSummary
	}
	var all []entry
	for id, m := range s.matches {
		if len(m.events) == 0 {
			continue
		}
		sum := Summary(m.events[0])
		sum.MatchId = id
		last := m.events[len(m.events)-1]
		sum.Turn = last.GetTurn()
		if end := last.GetMatchEnded(); end != nil {
			sum.State = refereev1.MatchState_MATCH_STATE_ENDED
			sum.Outcome = end.GetOutcome()
		} else if m.ended {
			sum.State = refereev1.MatchState_MATCH_STATE_ENDED
		}
		all = append(all, entry{m.n, sum})
	}
	slices.SortFunc(all, func(a, b entry) int { return b.n - a.n })
	out := make([]*refereev1.MatchSummary, len(all))
	for i, e := range all {
		out[i] = e.m
	}
	return out
}

// Summary is the listing of a running match from its first event (MatchStarted).
func Summary(first *eventsv1.MatchEvent) *refereev1.MatchSummary {
	st := first.GetMatchStarted()
	return &refereev1.MatchSummary{
		MatchId:       first.GetMatchId(),
		Game:          st.GetGame(),
		TournamentId:  st.GetTournamentId(),
		Seats:         st.GetSeats(),
		State:         refereev1.MatchState_MATCH_STATE_RUNNING,
		Started:       first.GetTime(),
		RevealPrivate: st.GetRevealPrivate(),
	}
}
