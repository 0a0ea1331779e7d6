package games

import (
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
}

type historyEntry struct {
	entry     *agentv1.HistoryEntry // full entry: every message, the move
	visibleTo []Seat                // nil: the move is public
}

// AddMove records seat's move and messages on turn. visibleTo limits who sees the move
// itself; pass nothing for a public move. Messages are always filtered by their recipients.
func (h *History) AddMove(turn int32, seat Seat, move *gamev1.Move, messages []*gamev1.Message, summary string, visibleTo ...Seat) {
	h.entries = append(h.entries, historyEntry{
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
	h.entries = append(h.entries, historyEntry{entry: &agentv1.HistoryEntry{Turn: turn, FromReferee: true, Summary: summary}})
}

// Len returns the number of entries.
func (h *History) Len() int { return len(h.entries) }

// For returns the entries seat may see, as fresh copies the caller may keep.
func (h *History) For(seat Seat) []*agentv1.HistoryEntry {
	out := make([]*agentv1.HistoryEntry, 0, len(h.entries))
	for _, he := range h.entries {
		e := he.entry
		moveVisible := e.FromReferee || he.visibleTo == nil || e.Seat == seat || slices.Contains(he.visibleTo, seat)
		var msgs []*gamev1.Message
		for _, m := range e.Messages {
			if e.Seat == seat || len(m.To) == 0 || slices.Contains(m.To, seat) {
				msgs = append(msgs, proto.CloneOf(m))
			}
		}
		if !moveVisible && len(msgs) == 0 {
			continue
		}
		ve := &agentv1.HistoryEntry{Turn: e.Turn, Seat: e.Seat, FromReferee: e.FromReferee, Messages: msgs}
		if moveVisible {
			ve.Move = proto.CloneOf(e.Move)
			ve.Summary = e.Summary
		}
		out = append(out, ve)
	}
	return out
}

// Clone returns a history that shares the entries written so far; appends to either copy do
// not show in the other.
func (h History) Clone() History {
	return History{entries: slices.Clip(h.entries)}
}
