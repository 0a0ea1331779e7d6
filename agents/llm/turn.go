package llm

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// turn is one observation seen through the fields every game fills: seats, legal moves,
// proposal bounds and forms, choices and required messages. The agent reads nothing else of
// the observation (never a family's view), so it plays games written after it.
type turn struct {
	obs       *agentv1.Observation
	names     []string // display name by seat index
	roles     []string
	self      int32
	legal     []gamev1.MoveKind
	bounds    []*gamev1.Bound        // every amount a proposal may fill in
	forms     []*gamev1.ProposalForm // shapes a proposal must take, when set
	termForms []*gamev1.ProposalForm // shapes of terms attached to messages; empty: no terms
	termBnds  []*gamev1.Bound        // union of termForms' bounds
	choices   []*gamev1.Option
	slots     []*gamev1.MessageSlot
}

func newTurn(obs *agentv1.Observation) *turn {
	t := &turn{obs: obs, self: obs.GetSeat()}
	n := int(obs.GetSeat()) + 1
	for _, s := range obs.GetSeats() {
		n = max(n, int(s.GetSeat())+1)
	}
	for _, b := range obs.GetProposalBounds() {
		n = max(n, int(b.GetSeat())+1)
	}
	n = min(n, 1<<10) // a garbled observation must not make us allocate without bound
	t.names = make([]string, n)
	t.roles = make([]string, n)
	for _, s := range obs.GetSeats() {
		if i := int(s.GetSeat()); i >= 0 && i < n {
			t.names[i] = s.GetName()
			t.roles[i] = s.GetRole()
		}
	}
	for i := range t.names {
		if t.names[i] == "" {
			t.names[i] = fmt.Sprintf("seat %d", i)
		}
	}
	t.legal = obs.GetLegalMoves()
	if len(t.legal) == 0 {
		// Asked to act with nothing listed: the turn can only be talk.
		t.legal = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_SAY}
	}
	t.forms = obs.GetProposalForms()
	t.bounds = obs.GetProposalBounds()
	if len(t.bounds) == 0 {
		t.bounds = unionBounds(t.forms)
	}
	t.termForms = obs.GetMessageTermForms()
	t.termBnds = unionBounds(t.termForms)
	t.choices = obs.GetChoices()
	t.slots = obs.GetRequiredMessages()
	return t
}

// unionBounds lists each (seat, side, resource) of the forms once, with the widest range.
func unionBounds(forms []*gamev1.ProposalForm) []*gamev1.Bound {
	var out []*gamev1.Bound
	for _, f := range forms {
		for _, b := range f.GetBounds() {
			i := slices.IndexFunc(out, func(o *gamev1.Bound) bool { return sameAmount(o, b) })
			if i < 0 {
				out = append(out, &gamev1.Bound{Seat: b.GetSeat(), Side: b.GetSide(), Resource: b.GetResource(), Min: b.GetMin(), Max: b.GetMax(), MaxUnknown: b.GetMaxUnknown()})
				continue
			}
			out[i].Min = min(out[i].Min, b.GetMin())
			out[i].Max = max(out[i].Max, b.GetMax())
			out[i].MaxUnknown = out[i].MaxUnknown || b.GetMaxUnknown()
		}
	}
	return out
}

func sameAmount(a, b *gamev1.Bound) bool {
	return a.GetSeat() == b.GetSeat() && a.GetSide() == b.GetSide() && a.GetResource() == b.GetResource()
}

// name is seat's display name.
func (t *turn) name(seat int32) string { return games.SeatName(seat, t.names) }

// others are the seats other than the agent's, in seat order.
func (t *turn) others() []int32 {
	var out []int32
	for i := range t.names {
		if int32(i) != t.self {
			out = append(out, int32(i))
		}
	}
	return out
}

func (t *turn) isLegal(k gamev1.MoveKind) bool { return slices.Contains(t.legal, k) }

// seatByName finds a seat by its display name ("P2", also after "player ") or as "seat N" (N
// the seat index). One-letter names match case-sensitively, so that the article "a" is not
// seat "A".
func (t *turn) seatByName(s string) (int32, bool) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), `"'`))
	for i, n := range t.names {
		if n == s {
			return int32(i), true
		}
	}
	if len([]rune(s)) > 1 {
		for i, n := range t.names {
			if strings.EqualFold(n, s) {
				return int32(i), true
			}
		}
	}
	lower := strings.ToLower(s)
	if rest, ok := strings.CutPrefix(lower, "player "); ok {
		return t.seatByName(s[len(lower)-len(rest):])
	}
	if rest, ok := strings.CutPrefix(lower, "seat "); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(rest)); err == nil && n >= 0 && n < len(t.names) {
			return int32(n), true
		}
	}
	return 0, false
}

// seatList writes seats as "P1, P2".
func (t *turn) seatList(seats []int32) string {
	names := make([]string, len(seats))
	for i, s := range seats {
		names[i] = t.name(s)
	}
	return strings.Join(names, ", ")
}

// kindOf reads the word a model wrote for a move.
func kindOf(word string) (gamev1.MoveKind, bool) {
	switch strings.ToLower(strings.Trim(word, " \t\r\n:.,;!\"'`*_")) {
	case "propose", "proposal", "offer", "counteroffer", "counter-offer", "counter", "final", "split":
		return gamev1.MoveKind_MOVE_KIND_PROPOSE, true
	case "accept", "accepts", "agree", "yes":
		return gamev1.MoveKind_MOVE_KIND_ACCEPT, true
	case "reject", "rejects", "decline", "refuse", "no":
		return gamev1.MoveKind_MOVE_KIND_REJECT, true
	case "pass", "wait":
		return gamev1.MoveKind_MOVE_KIND_PASS, true
	case "choose", "choice", "pick", "select":
		return gamev1.MoveKind_MOVE_KIND_CHOOSE, true
	case "say", "talk", "speak", "message":
		return gamev1.MoveKind_MOVE_KIND_SAY, true
	}
	return gamev1.MoveKind_MOVE_KIND_UNSPECIFIED, false
}

func (t *turn) legalWords() string {
	words := make([]string, len(t.legal))
	for i, k := range t.legal {
		words[i] = games.KindWord(k)
	}
	return strings.Join(words, ", ")
}

// sideWord is the verb of a share side.
func sideWord(s gamev1.ShareSide) string {
	if s == gamev1.ShareSide_SHARE_SIDE_RECEIVES {
		return "receives"
	}
	return "gives"
}

// amountName writes a bound as "P1 gives Dollars".
func (t *turn) amountName(b *gamev1.Bound) string {
	return fmt.Sprintf("%s %s %s", t.name(b.GetSeat()), sideWord(b.GetSide()), b.GetResource())
}

// findOption resolves what the model wrote for a choice: an option id, then a label.
func (t *turn) findOption(s string) (string, bool) {
	s = strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "\"'`*.:"))
	for _, o := range t.choices {
		if o.GetId() == s {
			return o.GetId(), true
		}
	}
	for _, o := range t.choices {
		if strings.EqualFold(o.GetId(), s) || (o.GetLabel() != "" && strings.EqualFold(o.GetLabel(), s)) {
			return o.GetId(), true
		}
	}
	return "", false
}

// formOf returns the deal form among forms that an example is written for: the one whose
// (empty) bounds were passed, that is any deal form when bounds is empty; nil when bounds name
// amounts or no form is a deal.
func (t *turn) formOf(bounds []*gamev1.Bound, forms []*gamev1.ProposalForm) *gamev1.ProposalForm {
	if len(bounds) > 0 {
		return nil
	}
	return dealForm(forms)
}
