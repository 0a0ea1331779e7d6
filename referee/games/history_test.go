package games_test

import (
	"fmt"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

func chooseMove(option string) *gamev1.Move {
	return &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: option}}}
}

func msg(text string, to ...games.Seat) *gamev1.Message {
	return &gamev1.Message{To: to, Text: text}
}

// threeSeatHistory is a history of a made-up three-seat game:
//
//	turn 1: seat 0 moves in public and sends a public message, one to seat 1, one to seat 2
//	        and one to seats 1 and 2;
//	turn 2: seat 1 moves so that only seat 2 sees the move, and messages seat 0;
//	turn 2: the referee announces a draw;
//	turn 3: seat 2 moves so that nobody else sees it, with no messages.
func threeSeatHistory() *games.History {
	h := &games.History{}
	h.AddMove(1, 0, chooseMove("open"),
		[]*gamev1.Message{msg("hi all"), msg("psst 1", 1), msg("psst 2", 2), msg("both", 1, 2)},
		"seat 0 opens")
	h.AddMove(2, 1, chooseMove("hidden"), []*gamev1.Message{msg("for 0", 0)}, "seat 1 chooses", 2)
	h.AddAnnouncement(2, "a card is drawn")
	h.AddMove(3, 2, chooseMove("secret"), nil, "seat 2 chooses in secret", 2)
	return h
}

func TestHistoryFor(t *testing.T) {
	announcement := &agentv1.HistoryEntry{Turn: 2, FromReferee: true, Summary: "a card is drawn"}
	tests := []struct {
		name string
		seat games.Seat
		want []*agentv1.HistoryEntry
	}{
		{
			name: "seat 0 sees all its own messages, only the message addressed to it on turn 2",
			seat: 0,
			want: []*agentv1.HistoryEntry{
				{Turn: 1, Seat: 0, Move: chooseMove("open"), Summary: "seat 0 opens",
					Messages: []*gamev1.Message{msg("hi all"), msg("psst 1", 1), msg("psst 2", 2), msg("both", 1, 2)}},
				{Turn: 2, Seat: 1, Messages: []*gamev1.Message{msg("for 0", 0)}},
				announcement,
			},
		},
		{
			name: "seat 1 sees public and its messages, and its own hidden move",
			seat: 1,
			want: []*agentv1.HistoryEntry{
				{Turn: 1, Seat: 0, Move: chooseMove("open"), Summary: "seat 0 opens",
					Messages: []*gamev1.Message{msg("hi all"), msg("psst 1", 1), msg("both", 1, 2)}},
				{Turn: 2, Seat: 1, Move: chooseMove("hidden"), Summary: "seat 1 chooses",
					Messages: []*gamev1.Message{msg("for 0", 0)}},
				announcement,
			},
		},
		{
			name: "seat 2 sees the move shown to it without the message not for it, and its secret move",
			seat: 2,
			want: []*agentv1.HistoryEntry{
				{Turn: 1, Seat: 0, Move: chooseMove("open"), Summary: "seat 0 opens",
					Messages: []*gamev1.Message{msg("hi all"), msg("psst 2", 2), msg("both", 1, 2)}},
				{Turn: 2, Seat: 1, Move: chooseMove("hidden"), Summary: "seat 1 chooses"},
				announcement,
				{Turn: 3, Seat: 2, Move: chooseMove("secret"), Summary: "seat 2 chooses in secret"},
			},
		},
		{
			name: "a seat that is not playing sees only public things",
			seat: 7,
			want: []*agentv1.HistoryEntry{
				{Turn: 1, Seat: 0, Move: chooseMove("open"), Summary: "seat 0 opens",
					Messages: []*gamev1.Message{msg("hi all")}},
				announcement,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := threeSeatHistory()
			if h.Len() != 4 {
				t.Fatalf("Len() = %d, want 4", h.Len())
			}
			got, omitted := h.For(tc.seat)
			assertEntries(t, got, tc.want)
			if omitted != 0 {
				t.Errorf("omitted = %d, want 0 for a history inside the window", omitted)
			}
		})
	}
}

// seen returns the entries h shows seat.
func seen(h *games.History, seat games.Seat) []*agentv1.HistoryEntry {
	entries, _ := h.For(seat)
	return entries
}

func assertEntries(t *testing.T, got, want []*agentv1.HistoryEntry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d:\ngot  %v\nwant %v", len(got), len(want), got, want)
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("entry %d:\ngot  %v\nwant %v", i, got[i], want[i])
		}
	}
}

// A seat that may see all of an entry is shown the entry itself, the same one on every call
// and to every such seat: observations share the history, read-only, instead of copying it on
// every move.
func TestHistoryForSharesEntries(t *testing.T) {
	h := threeSeatHistory()
	first, again := seen(h, 2), seen(h, 2)
	// Seat 2 sees all of the announcement and of its own secret move (of turn 2's move, not
	// the message for seat 0).
	for i := 2; i < len(first); i++ {
		if first[i] != again[i] {
			t.Errorf("seat 2's entry %d is a new copy on each call", i)
		}
	}
	// The announcement is one entry for every seat.
	a0, a1, a2 := seen(h, 0)[2], seen(h, 1)[2], seen(h, 2)[2]
	if a0 != a1 || a1 != a2 {
		t.Error("the announcement is shown to each seat as an entry of its own")
	}
}

// Who is shown what is decided by what the history kept when the entry was added: changing
// what one seat was shown (which a caller must not do: it is shared) cannot show another seat
// a move or a message it may not see.
func TestHistoryForPrivacyHoldsWhenShownEntriesChange(t *testing.T) {
	// shape is what a seat is shown, by identity: each entry's move and messages.
	type shape struct {
		move     *gamev1.Move
		messages []*gamev1.Message
	}
	shapes := func(entries []*agentv1.HistoryEntry) []shape {
		var out []shape
		for _, e := range entries {
			out = append(out, shape{e.GetMove(), slices.Clone(e.GetMessages())})
		}
		return out
	}
	mutations := []struct {
		name   string
		mutate func(e []*agentv1.HistoryEntry)
	}{
		// Seat 1 is shown entry 0 in part, entry 1 (its own move) whole, then the announcement.
		{"recipients of a message shown in part", func(e []*agentv1.HistoryEntry) { e[0].Messages[1].To = []int32{0, 2} }},
		{"recipients of the last message", func(e []*agentv1.HistoryEntry) { e[0].Messages[2].To[0] = 0 }},
		{"recipients of a whole entry's message", func(e []*agentv1.HistoryEntry) { e[1].Messages[0].To = nil }},
		{"mover of a whole entry", func(e []*agentv1.HistoryEntry) { e[1].Seat = 2 }},
		{"messages of a whole entry dropped", func(e []*agentv1.HistoryEntry) { e[1].Messages = nil }},
	}
	for _, tc := range mutations {
		t.Run(tc.name, func(t *testing.T) {
			h := threeSeatHistory()
			before0, before2 := shapes(seen(h, 0)), shapes(seen(h, 2))
			tc.mutate(seen(h, 1))
			if got := shapes(seen(h, 0)); !slices.EqualFunc(got, before0, func(a, b shape) bool { return a.move == b.move && slices.Equal(a.messages, b.messages) }) {
				t.Errorf("seat 0 is shown %v, was %v", got, before0)
			}
			if got := shapes(seen(h, 2)); !slices.EqualFunc(got, before2, func(a, b shape) bool { return a.move == b.move && slices.Equal(a.messages, b.messages) }) {
				t.Errorf("seat 2 is shown %v, was %v", got, before2)
			}
		})
	}
}

func TestHistoryClone(t *testing.T) {
	// Every entry is a public announcement, so For(0) lists every entry's summary.
	summaries := func(h *games.History) []string {
		var out []string
		for _, e := range seen(h, 0) {
			out = append(out, e.GetSummary())
		}
		return out
	}
	tests := []struct {
		name string
		// prefix entries are written before cloning; 3 or 5 leave spare capacity in the slice
		// (appends grow it to 4 and 8), which is where an append to one could show in the other.
		prefix     int
		afterOrig  []string // appended to the original after cloning
		afterClone []string // appended to the clone after cloning
		origFirst  bool
	}{
		{name: "empty", prefix: 0, afterOrig: []string{"o1"}, afterClone: []string{"c1"}, origFirst: true},
		{name: "original appends first", prefix: 3, afterOrig: []string{"o1"}, afterClone: []string{"c1"}, origFirst: true},
		{name: "clone appends first", prefix: 3, afterOrig: []string{"o1"}, afterClone: []string{"c1"}, origFirst: false},
		{name: "several each, original first", prefix: 5, afterOrig: []string{"o1", "o2"}, afterClone: []string{"c1", "c2", "c3"}, origFirst: true},
		{name: "several each, clone first", prefix: 5, afterOrig: []string{"o1", "o2", "o3"}, afterClone: []string{"c1", "c2"}, origFirst: false},
		{name: "only the clone appends", prefix: 5, afterClone: []string{"c1"}},
		{name: "only the original appends", prefix: 5, afterOrig: []string{"o1"}, origFirst: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var orig games.History
			var prefix []string
			for i := range tc.prefix {
				s := fmt.Sprintf("p%d", i)
				orig.AddAnnouncement(int32(i), s)
				prefix = append(prefix, s)
			}
			clone := orig.Clone()
			add := func(h *games.History, ss []string) {
				for _, s := range ss {
					h.AddAnnouncement(9, s)
				}
			}
			if tc.origFirst {
				add(&orig, tc.afterOrig)
				add(&clone, tc.afterClone)
			} else {
				add(&clone, tc.afterClone)
				add(&orig, tc.afterOrig)
			}
			wantOrig := append(append([]string{}, prefix...), tc.afterOrig...)
			wantClone := append(append([]string{}, prefix...), tc.afterClone...)
			if got := summaries(&orig); fmt.Sprint(got) != fmt.Sprint(wantOrig) {
				t.Errorf("original = %q, want %q", got, wantOrig)
			}
			if got := summaries(&clone); fmt.Sprint(got) != fmt.Sprint(wantClone) {
				t.Errorf("clone = %q, want %q", got, wantClone)
			}
			if orig.Len() != len(wantOrig) || clone.Len() != len(wantClone) {
				t.Errorf("Len: original %d, clone %d; want %d and %d", orig.Len(), clone.Len(), len(wantOrig), len(wantClone))
			}
			// A clone of the clone is independent of both.
			grand := clone.Clone()
			grand.AddAnnouncement(10, "g")
			if got := summaries(&clone); fmt.Sprint(got) != fmt.Sprint(wantClone) {
				t.Errorf("after appending to a clone of the clone, clone = %q, want %q", got, wantClone)
			}
		})
	}
}

// A long history is shown as its latest entries, within MaxHistoryEntries and
// MaxHistoryBytes, and the count of the older entries each seat may see is exact.
func TestHistoryForWindow(t *testing.T) {
	// Three seats. Turn k: seat k%3 moves. Every third turn is a public move; the others are
	// hidden moves shown to one other seat, some with a message to a third. Sizes vary: every
	// 50th entry carries the longest messages the rules allow.
	long := make([]*gamev1.Message, games.MaxMessages)
	for i := range long {
		long[i] = msg(string(make([]byte, games.MaxTextBytes)))
	}
	type made struct {
		turn  int32
		seers map[games.Seat]bool // nil: everyone
		full  *agentv1.HistoryEntry
	}
	var all []made
	h := &games.History{}
	const n = 3*games.MaxHistoryEntries + 7
	for k := range int32(n) {
		seat := k % 3
		switch {
		case k%50 == 0:
			h.AddMove(k, seat, chooseMove("loud"), long, "loud")
			all = append(all, made{turn: k, full: &agentv1.HistoryEntry{Turn: k, Seat: seat, Move: chooseMove("loud"), Messages: long, Summary: "loud"}})
		case k%3 == 0:
			h.AddMove(k, seat, chooseMove("public"), nil, "public")
			all = append(all, made{turn: k, full: &agentv1.HistoryEntry{Turn: k, Seat: seat, Move: chooseMove("public"), Summary: "public"}})
		case k%3 == 1:
			other := (seat + 1) % 3
			h.AddMove(k, seat, chooseMove("hidden"), nil, "hidden", other)
			all = append(all, made{turn: k, seers: map[games.Seat]bool{seat: true, other: true},
				full: &agentv1.HistoryEntry{Turn: k, Seat: seat, Move: chooseMove("hidden"), Summary: "hidden"}})
		default:
			other, third := (seat+1)%3, (seat+2)%3
			psst := []*gamev1.Message{msg("psst", third)}
			h.AddMove(k, seat, chooseMove("hidden"), psst, "hidden", other)
			all = append(all, made{turn: k, seers: map[games.Seat]bool{seat: true, other: true, third: true},
				full: &agentv1.HistoryEntry{Turn: k, Seat: seat, Move: chooseMove("hidden"), Messages: psst, Summary: "hidden"}})
		}
	}
	for _, seat := range []games.Seat{0, 1, 2, 5} {
		var visible []made
		for _, m := range all {
			if m.seers == nil || m.seers[seat] {
				visible = append(visible, m)
			}
		}
		got, omitted := h.For(seat)
		if len(got) == 0 || len(got) > games.MaxHistoryEntries {
			t.Fatalf("seat %d: %d entries, want 1 to %d", seat, len(got), games.MaxHistoryEntries)
		}
		size := 0
		for _, e := range got {
			size += proto.Size(e) + 4
		}
		if size > games.MaxHistoryBytes {
			t.Errorf("seat %d: the entries take %d bytes, over %d", seat, size, games.MaxHistoryBytes)
		}
		if int(omitted)+len(got) != len(visible) {
			t.Errorf("seat %d: %d shown + %d omitted, want the %d it may see", seat, len(got), omitted, len(visible))
		}
		// The entries shown are the latest the seat may see, in order.
		for i, e := range got {
			if want := visible[len(visible)-len(got)+i].turn; e.GetTurn() != want {
				t.Fatalf("seat %d: entry %d is turn %d, want %d", seat, i, e.GetTurn(), want)
			}
		}
		// The window is as full as the budget allows: the next older entry would not fit (a
		// seat's view of an entry is never larger than the whole entry).
		if next := len(visible) - len(got) - 1; next >= 0 && len(got) < games.MaxHistoryEntries {
			if extra := proto.Size(visible[next].full) + 4; size+extra <= games.MaxHistoryBytes {
				t.Errorf("seat %d: the window stops at %d entries with room for turn %d", seat, len(got), visible[next].turn)
			}
		}
	}
}

// A clone counts what it leaves out on its own.
func TestHistoryCloneCounts(t *testing.T) {
	var h games.History
	for k := range int32(games.MaxHistoryEntries) {
		h.AddAnnouncement(k, "a")
	}
	c := h.Clone()
	c.AddMove(999, 1, chooseMove("hidden"), nil, "hidden", 2)
	c.AddAnnouncement(1000, "b")
	if _, omitted := h.For(2); omitted != 0 {
		t.Errorf("original: omitted %d, want 0", omitted)
	}
	if _, omitted := c.For(2); omitted != 2 {
		t.Errorf("clone, seat 2: omitted %d, want 2", omitted)
	}
	if _, omitted := c.For(0); omitted != 1 {
		t.Errorf("clone, seat 0 (does not see the hidden move): omitted %d, want 1", omitted)
	}
}

// BenchmarkHistoryFor measures the history part of an observation late in a bargaining
// match: eight proposals, each with a public message, seen whole by the seat asking.
func BenchmarkHistoryFor(b *testing.B) {
	var h games.History
	for turn := range int32(8) {
		move := &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
			Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
				{Seat: 0, Gives: map[string]int64{"Dollars": int64(40 + turn)}},
			}}},
		}}}}
		h.AddMove(turn+1, games.Seat(turn%2), move, []*gamev1.Message{{Text: "a fair split, I think"}}, "P1 proposes to give 40 Dollars")
	}
	b.ReportAllocs()
	for b.Loop() {
		if entries, _ := h.For(0); len(entries) != 8 {
			b.Fatalf("%d entries, want 8", len(entries))
		}
	}
}
