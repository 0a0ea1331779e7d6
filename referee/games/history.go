package games

import (
	"maps"
	"slices"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"google.golang.org/protobuf/proto"
)

// History is the log of what happened in a match, kept by a state so that each seat's
// observation can show the part that seat may see. Messages are filtered by recipient; a move
// recorded with visibleTo is shown only to those seats (and the mover).
//
// History is append-only; Clone shares the entries already written.
type History struct {
	entries []historyEntry
	// public counts the entries every seat sees; private[s] those only some seats see, seat s
	// among them. Together they say how many entries For leaves out, without reading them.
	public  int
	private map[Seat]int
}

type historyEntry struct {
	entry     *agentv1.HistoryEntry // full entry: every message, the move
	visibleTo []Seat                // nil: the move is public
	// whole is entry encoded when it was added: a seat that sees all of it gets a copy decoded
	// from it, which costs less than a deep clone, and its size for nothing.
	whole []byte
}

// AddMove records seat's move and messages on turn. visibleTo limits who sees the move
// itself; pass nothing for a public move. Messages are always filtered by their recipients.
func (h *History) AddMove(turn int32, seat Seat, move *gamev1.Move, messages []*gamev1.Message, summary string, visibleTo ...Seat) {
	h.add(historyEntry{
		entry: &agentv1.HistoryEntry{
			Turn:     turn,
			Seat:     seat,
			Move:     move,
			Messages: messages,
			Summary:  summary,
		},
		visibleTo: visibleTo,
	})
}

// AddAnnouncement records a public note from the referee (a chance draw, a phase change).
func (h *History) AddAnnouncement(turn int32, summary string) {
	h.add(historyEntry{entry: &agentv1.HistoryEntry{Turn: turn, FromReferee: true, Summary: summary}})
}

func (h *History) add(he historyEntry) {
	var err error
	if he.whole, err = proto.Marshal(he.entry); err != nil {
		he.whole = nil // never for the messages above; view then copies field by field
	}
	h.entries = append(h.entries, he)
	e := he.entry
	everyone := e.FromReferee || he.visibleTo == nil
	seers := append([]Seat{e.Seat}, he.visibleTo...)
	for _, m := range e.Messages {
		everyone = everyone || len(m.To) == 0
		seers = append(seers, m.To...)
	}
	if everyone {
		h.public++
		return
	}
	if h.private == nil {
		h.private = map[Seat]int{}
	}
	slices.Sort(seers)
	for _, s := range slices.Compact(seers) {
		h.private[s]++
	}
}

// Len returns the number of entries.
func (h *History) Len() int { return len(h.entries) }

// For returns the entries seat may see, oldest first, as fresh copies the caller may keep:
// the latest MaxHistoryEntries of them at most, and no more than MaxHistoryBytes of them
// encoded, whatever the match's length. omitted counts the older entries seat may see that
// are left out (Observation.history_omitted). The work is bounded the same way: entries
// before the window are counted, never read.
func (h *History) For(seat Seat) (entries []*agentv1.HistoryEntry, omitted int32) {
	size := 0
	for i := len(h.entries) - 1; i >= 0 && len(entries) < MaxHistoryEntries; i-- {
		ve, n := h.entries[i].view(seat)
		if ve == nil {
			continue
		}
		n = listedSize(historyField, n)
		if size+n > MaxHistoryBytes {
			break
		}
		size += n
		entries = append(entries, ve)
	}
	slices.Reverse(entries)
	return entries, int32(h.public + h.private[seat] - len(entries))
}

// view returns a copy of the entry as seat may see it, and its encoded size; nil when seat may
// see none of it.
func (he historyEntry) view(seat Seat) (*agentv1.HistoryEntry, int) {
	e := he.entry
	moveVisible := e.FromReferee || he.visibleTo == nil || e.Seat == seat || slices.Contains(he.visibleTo, seat)
	sees := func(m *gamev1.Message) bool { return e.Seat == seat || len(m.To) == 0 || slices.Contains(m.To, seat) }
	if moveVisible && he.whole != nil && !slices.ContainsFunc(e.Messages, func(m *gamev1.Message) bool { return !sees(m) }) {
		ve := new(agentv1.HistoryEntry)
		if err := proto.Unmarshal(he.whole, ve); err == nil {
			return ve, len(he.whole)
		}
	}
	var msgs []*gamev1.Message
	for _, m := range e.Messages {
		if sees(m) {
			msgs = append(msgs, proto.CloneOf(m))
		}
	}
	if !moveVisible && len(msgs) == 0 {
		return nil, 0
	}
	ve := &agentv1.HistoryEntry{Turn: e.Turn, Seat: e.Seat, FromReferee: e.FromReferee, Messages: msgs}
	if moveVisible {
		ve.Move = proto.CloneOf(e.Move)
		ve.Summary = e.Summary
	}
	return ve, proto.Size(ve)
}

// Clone returns a history that shares the entries written so far; appends to either copy do
// not show in the other.
func (h History) Clone() History {
	return History{entries: slices.Clip(h.entries), public: h.public, private: maps.Clone(h.private)}
}
