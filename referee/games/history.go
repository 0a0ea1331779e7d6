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
// History is append-only, and an entry never changes once added: observations show the
// entries themselves, shared by every observation (and every clone of the state) that shows
// them, so whoever is given one must treat its history as read-only. Copying every entry a
// seat sees on every move cost the referee about a tenth of a move's time; a seat that may not
// see all of an entry is shown an entry of its own, holding what it may see (still shared).
type History struct {
	entries []historyEntry
	// public counts the entries every seat sees; private[s] those only some seats see, seat s
	// among them. Together they say how many entries For leaves out, without reading them.
	public  int
	private map[Seat]int
}

// historyEntry is one entry as added: entry, shown whole to the seats that may see all of it,
// and History's own account of it, from which who is shown what is decided and the views of
// the other seats are built, so that nothing done to a shown entry changes what another seat
// is shown of it.
type historyEntry struct {
	entry *agentv1.HistoryEntry
	size  int // of entry, encoded

	turn      int32
	seat      Seat // the mover
	move      *gamev1.Move
	summary   string
	public    bool   // the move is shown to every seat
	visibleTo []Seat // else the seats besides the mover shown it
	messages  []*gamev1.Message
	to        [][]Seat // each message's recipients; none: every seat
}

// AddMove records seat's move and messages on turn. visibleTo limits who sees the move
// itself; pass nothing for a public move. Messages are always filtered by their recipients.
// The history keeps move and messages as they are (pass copies of what the caller may change)
// and shows them to the seats that may see them.
func (h *History) AddMove(turn int32, seat Seat, move *gamev1.Move, messages []*gamev1.Message, summary string, visibleTo ...Seat) {
	he := historyEntry{
		entry: &agentv1.HistoryEntry{
			Turn:     turn,
			Seat:     seat,
			Move:     move,
			Messages: messages,
			Summary:  summary,
		},
		turn:      turn,
		seat:      seat,
		move:      move,
		summary:   summary,
		public:    visibleTo == nil,
		visibleTo: slices.Clone(visibleTo),
		messages:  slices.Clone(messages),
	}
	for _, m := range messages {
		he.to = append(he.to, slices.Clone(m.GetTo()))
	}
	h.add(he)
}

// AddAnnouncement records a public note from the referee (a chance draw, a phase change).
func (h *History) AddAnnouncement(turn int32, summary string) {
	h.add(historyEntry{entry: &agentv1.HistoryEntry{Turn: turn, FromReferee: true, Summary: summary}, public: true})
}

func (h *History) add(he historyEntry) {
	he.size = proto.Size(he.entry)
	h.entries = append(h.entries, he)
	everyone := he.public
	seers := append([]Seat{he.seat}, he.visibleTo...)
	for _, to := range he.to {
		everyone = everyone || len(to) == 0
		seers = append(seers, to...)
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

// For returns the entries seat may see, oldest first, read-only (see History): the latest
// MaxHistoryEntries of them at most, and no more than MaxHistoryBytes of them encoded,
// whatever the match's length. omitted counts the older entries seat may see that
// are left out (Observation.history_omitted). The work is bounded the same way: entries
// before the window are counted, never read.
func (h *History) For(seat Seat) (entries []*agentv1.HistoryEntry, omitted int32) {
	if len(h.entries) > 0 {
		entries = make([]*agentv1.HistoryEntry, 0, min(len(h.entries), MaxHistoryEntries))
	}
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

// view returns the entry as seat may see it, and its encoded size; nil when seat may see none
// of it. A seat that may see all of it is shown the entry itself.
func (he historyEntry) view(seat Seat) (*agentv1.HistoryEntry, int) {
	moveVisible := he.public || he.seat == seat || slices.Contains(he.visibleTo, seat)
	sees := func(i int) bool { return he.seat == seat || len(he.to[i]) == 0 || slices.Contains(he.to[i], seat) }
	all := moveVisible
	for i := range he.to {
		all = all && sees(i)
	}
	if all {
		return he.entry, he.size
	}
	var msgs []*gamev1.Message
	for i, m := range he.messages {
		if sees(i) {
			msgs = append(msgs, m)
		}
	}
	if !moveVisible && len(msgs) == 0 {
		return nil, 0
	}
	ve := &agentv1.HistoryEntry{Turn: he.turn, Seat: he.seat, Messages: msgs}
	if moveVisible {
		ve.Move, ve.Summary = he.move, he.summary
	}
	return ve, proto.Size(ve)
}

// LastMove returns the summary recorded with seat's latest move on turn and the seats besides
// the mover it is shown to (nil: every seat), as AddMove was given them; ok is false when
// seat recorded no move on turn. The runner copies them into the record (games.MoveWorder).
func (h *History) LastMove(seat Seat, turn int32) (summary string, visibleTo []Seat, ok bool) {
	for i := len(h.entries) - 1; i >= 0; i-- {
		he := h.entries[i]
		if he.entry.GetTurn() < turn {
			break
		}
		if he.entry.GetTurn() == turn && he.seat == seat && !he.entry.GetFromReferee() {
			if he.public {
				return he.summary, nil, true
			}
			return he.summary, slices.Clone(he.visibleTo), true
		}
	}
	return "", nil, false
}

// Clone returns a history that shares the entries written so far; appends to either copy do
// not show in the other.
func (h History) Clone() History {
	return History{entries: slices.Clip(h.entries), public: h.public, private: maps.Clone(h.private)}
}
