package dealornodeal

import (
	"fmt"
	"slices"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	dondv1 "github.com/parley-arena/parley/gen/go/parley/games/dealornodeal/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// division is a proposal's terms: what Alice receives of each type (Bob gets the rest). Never
// changed once made.
type division = solution.Alloc

// match is the engine's state with divisions as terms.
type match = bargain.Match[division]

// rules are the game's hooks into the engine. Never changed once the match starts.
type rules struct {
	s *setup
	// text is the fixed part of each seat's briefing.
	text [2]string
}

var (
	_ bargain.Rules[division] = (*rules)(nil)
	_ bargain.Forms[division] = (*rules)(nil)
)

// Terms reads a division: shares that only receive items of the pool, each type's amounts
// adding up to its count.
func (r *rules) Terms(_ games.Seat, alloc *gamev1.Allocation) (division, error) {
	if alloc == nil {
		return nil, r.badTerms("the proposal has no allocation")
	}
	g := r.s.game
	got := [2][]int{make([]int, len(g.Counts)), make([]int, len(g.Counts))}
	var seen [2]bool
	for _, sh := range alloc.GetShares() {
		seat := sh.GetSeat()
		if seat != Alice && seat != Bob {
			return nil, r.badTerms("the allocation names seat %d, but only seats 0 (Alice) and 1 (Bob) play", seat)
		}
		if seen[seat] {
			return nil, r.badTerms("the allocation has two shares for %s; give at most one per seat", seatNames[seat])
		}
		seen[seat] = true
		for _, k := range bargain.SortedKeys(sh.GetGives()) {
			if v := sh.GetGives()[k]; v != 0 {
				return nil, r.badTerms("%s gives %d %s, but in this game nobody gives: each seat receives its part of the pool", seatNames[seat], v, bargain.NameText(k))
			}
		}
		for _, k := range bargain.SortedKeys(sh.GetReceives()) {
			v := sh.GetReceives()[k]
			i := slices.Index(r.s.items, k)
			switch {
			case i < 0 && v == 0:
				continue
			case i < 0:
				return nil, r.badTerms("there is no item %s in the pool", bargain.NameText(k))
			case v < 0 || v > int64(g.Counts[i]):
				return nil, r.badTerms("%s receives %d %s, but the pool holds %d", seatNames[seat], v, k, g.Counts[i])
			}
			got[seat][i] = int(v)
		}
	}
	for i, c := range g.Counts {
		if got[0][i]+got[1][i] != c {
			return nil, r.badTerms("Alice and Bob receive %d %s together, but the pool holds %d: every item goes to one of you", got[0][i]+got[1][i], r.s.items[i], c)
		}
	}
	return division(got[0]), nil
}

// badTerms refuses terms, saying what a legal proposal looks like.
func (r *rules) badTerms(format string, args ...any) error {
	return games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS,
		"%s; a proposal divides the whole pool (%s): seat 0 (Alice) receives {item: count, ...} and seat 1 (Bob) receives the rest, each item type's counts adding up to the pool's",
		fmt.Sprintf(format, args...), r.poolText())
}

// bounds lists every amount of a division: each seat receives 0 to the count of each type.
func (r *rules) bounds() []*gamev1.Bound {
	var out []*gamev1.Bound
	for _, seat := range []games.Seat{Alice, Bob} {
		for i, it := range r.s.items {
			out = append(out, &gamev1.Bound{Seat: seat, Side: gamev1.ShareSide_SHARE_SIDE_RECEIVES, Resource: it, Min: 0, Max: int64(r.s.game.Counts[i])})
		}
	}
	return out
}

// Bounds: each seat receives 0 to the count of each type.
func (r *rules) Bounds(*match, games.Seat) []*gamev1.Bound { return r.bounds() }

// Forms: one form, whose totals say that each type's amounts add up to its count, and what
// each item is worth to the seat it is shown to (its own values only).
func (r *rules) Forms(_ *match, seat games.Seat) []*gamev1.ProposalForm {
	w := &gamev1.Worth{ReceivedUnitPoints: map[string]int64{}}
	f := &gamev1.ProposalForm{Label: "division of the pool", Bounds: r.bounds(), Worth: w}
	for i, it := range r.s.items {
		f.Totals = append(f.Totals, &gamev1.AmountTotal{Side: gamev1.ShareSide_SHARE_SIDE_RECEIVES, Resource: it, Total: int64(r.s.game.Counts[i])})
		w.ReceivedUnitPoints[it] = int64(r.s.game.Values[seat][i])
	}
	return []*gamev1.ProposalForm{f}
}

// Payoffs: each seat's score by its own values; no deal, 0 each.
func (r *rules) Payoffs(deal *division) [2]float64 {
	if deal == nil {
		return [2]float64{}
	}
	p := r.s.game.Payoffs(*deal)
	return [2]float64{float64(p[0]), float64(p[1])}
}

// bundleText writes counts of items as "1 book, 2 hats", or "nothing".
func (r *rules) bundleText(b []int) string {
	var parts []string
	for i, x := range b {
		if x > 0 {
			parts = append(parts, r.itemCount(i, x))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

func (r *rules) itemCount(i, x int) string {
	name := r.s.items[i]
	if x != 1 {
		name += "s"
	}
	return fmt.Sprintf("%d %s", x, name)
}

func (r *rules) poolText() string { return r.bundleText(r.s.game.Counts) }

// Describe writes a division: "Alice gets 1 book; Bob gets 2 hats, 2 balls". No scores: they
// would tell each side the other's values.
func (r *rules) Describe(d division) string {
	c := r.s.game.Counts
	return fmt.Sprintf("Alice gets %s; Bob gets %s", r.bundleText(d.Bundle(0, c)), r.bundleText(d.Bundle(1, c)))
}

// Result says whether there was a deal.
func (r *rules) Result(deal *division) string {
	if deal == nil {
		return "there is no deal and both score 0"
	}
	return r.Describe(*deal)
}

// proto writes a division as the view's Division.
func (r *rules) proto(d division) *dondv1.Division {
	c := r.s.game.Counts
	return &dondv1.Division{Alice: int64s(d.Bundle(0, c)), Bob: int64s(d.Bundle(1, c))}
}

// View holds seat's own values only.
func (r *rules) View(m *match, seat games.Seat, obs *agentv1.Observation) {
	v := &dondv1.View{
		Items:     slices.Clone(r.s.items),
		Counts:    int64s(r.s.game.Counts),
		Values:    int64s(r.s.game.Values[seat]),
		PoolValue: int64(r.s.game.Total()),
		MaxTurns:  r.s.maxTurns,
		TurnsLeft: m.TurnsLeft(),
	}
	if st, ok := m.Standing(); ok && seat == m.Mover() {
		v.Standing = r.proto(st.Terms)
	}
	if own, ok := m.Own(seat); ok {
		v.Own = r.proto(own.Terms)
	}
	if deal, ok := m.Deal(); ok {
		v.Deal = r.proto(deal)
	}
	obs.View = &agentv1.Observation_Dealornodeal{Dealornodeal: v}
}

// rulesText is the fixed part of seat's briefing: the pool, its own values and the rules.
func (r *rules) rulesText(seat games.Seat) string {
	g := r.s.game
	me, other := seatNames[seat], seatNames[1-seat]
	var b strings.Builder
	fmt.Fprintf(&b, "You are %s, negotiating with %s how to divide a pool of items: %s. Every item goes to one of you.\n", me, other, r.poolText())
	var vals []string
	for i, it := range r.s.items {
		vals = append(vals, fmt.Sprintf("a %s is worth %d to you", it, g.Values[seat][i]))
	}
	fmt.Fprintf(&b, "Your values, private (%s does not know them): %s; the whole pool is worth %d to you. "+
		"%s has private values too, which you do not know; the whole pool is worth %d to %s as well.\n",
		other, strings.Join(vals, ", "), g.Total(), other, g.Total(), other)
	b.WriteString("Your score is what the items you get are worth by your values. Without a deal both of you score 0.\n")
	fmt.Fprintf(&b, "\nHow to play\n- Turns alternate, Alice first, %d turns in all. On your turn you either:\n", r.s.maxTurns)
	fmt.Fprintf(&b, "  - propose a division: an allocation in which seat 0 (Alice) receives {item: count, ...} and seat 1 (Bob) receives the rest, each item's counts adding up to the pool's (%s);\n", r.poolText())
	fmt.Fprintf(&b, "  - accept %s's proposal of the turn just before: that division is carried out and the game ends;\n", other)
	b.WriteString("  - or pass: talk only; a proposal you do not accept lapses.\n")
	b.WriteString("- With any move you may send messages to the other player. Nothing said binds anyone; only an accepted proposal does.\n")
	return b.String()
}

// Briefing is the fixed rules plus where the match stands for seat.
func (r *rules) Briefing(m *match, seat games.Seat) string {
	var b strings.Builder
	b.WriteString(r.text[seat])
	b.WriteString("\nNow\n")
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	g := r.s.game
	if m.Over() {
		line("- The game is over: %s.", m.Summary())
		return b.String()
	}
	m.TurnLines(seat, line)
	if st, ok := m.Standing(); ok && seat == m.Mover() {
		mine := st.Terms.Bundle(int(seat), g.Counts)
		line("- %s proposes that you get %s and %s gets %s: worth %d to you. You may accept it.", seatNames[1-seat],
			r.bundleText(mine), seatNames[1-seat], r.bundleText(st.Terms.Bundle(int(1-seat), g.Counts)), solution.Score(mine, g.Values[seat]))
	}
	if own, ok := m.Own(seat); ok {
		mine := own.Terms.Bundle(int(seat), g.Counts)
		line("- Your latest proposal (turn %d): you get %s, worth %d to you.", own.Turn, r.bundleText(mine), solution.Score(mine, g.Values[seat]))
	}
	return b.String()
}
