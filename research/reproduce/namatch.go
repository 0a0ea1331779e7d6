package reproduce

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/research/studies"
)

// NegotiationArena's set-ups are told apart by their content: the game and its parameters as
// the log states them (holdings and turns; the amount split; the seller's cost, the buyer's
// willingness and money, a set-up that draws them taking any values in its ranges), and for
// every seat the model and the persona. A set-up played by every ordered pair of the paper's
// models takes the matches of two different paper models without personas; a seat the study
// scripts (builtin:fixed?offer=K, the proposer told to offer K) is matched by the persona the
// import gives such a seat (offers-K), whatever its model. The names of the money and the item
// do not matter (the one-shot ultimatum splits ZUP, not Dollars).

type arenaSeat struct {
	slot, persona string // slot "" with persona offers-K: a scripted proposer
}

type arenaRun struct {
	id     string
	game   string
	params *matchv1.GameParams // resolved
	pairs  bool
	seats  []arenaSeat
}

type arenaMatcher struct {
	study *studies.Study
	runs  []arenaRun
	// drawn holds the tournaments whose buyer/seller values vary from match to match: only
	// their matches can be of a set-up that draws them (a tournament of fixed values merely
	// falls within the ranges).
	drawn map[string]bool
}

// Prepare notes the tournaments whose buyer/seller values vary (Preparer).
func (m *arenaMatcher) Prepare(started []*eventsv1.MatchStarted) {
	first := map[string][2]int64{}
	m.drawn = map[string]bool{}
	for _, s := range started {
		b := s.GetParams().GetBuysell()
		if b == nil {
			continue
		}
		v := [2]int64{b.GetCost(), b.GetWillingness()}
		tid := s.GetTournamentId()
		if f, seen := first[tid]; !seen {
			first[tid] = v
		} else if f != v {
			m.drawn[tid] = true
		}
	}
}

func newArenaMatcher(study *studies.Study, reg *games.Registry) (Matcher, error) {
	m := &arenaMatcher{study: study}
	runs, err := study.ExpandRuns()
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		game, err := reg.Lookup(r.Game)
		if err != nil {
			return nil, fmt.Errorf("set-up %s: %w", r.ID, err)
		}
		var kvs []string
		for _, k := range slices.Sorted(maps.Keys(r.Params)) {
			kvs = append(kvs, k+"="+r.Params[k])
		}
		gp, err := games.ParseParams(r.Game, kvs)
		if err != nil {
			return nil, fmt.Errorf("set-up %s: %w", r.ID, err)
		}
		if gp, err = game.Resolve(gp); err != nil {
			return nil, fmt.Errorf("set-up %s: %w", r.ID, err)
		}
		run := arenaRun{id: r.ID, game: r.Game, params: gp, pairs: r.Pairs}
		for _, s := range r.Seats {
			seat := arenaSeat{slot: s.Slot, persona: s.Persona}
			if offer, ok := strings.CutPrefix(s.Agent, "builtin:fixed?offer="); ok {
				seat = arenaSeat{persona: "offers-" + offer}
			}
			run.seats = append(run.seats, seat)
		}
		m.runs = append(m.runs, run)
	}
	return m, nil
}

// seatOf reads a seat's label, MODEL[/PERSONA] (the import's) or SLOT[/PERSONA/...]
// (parley reproduce's own).
func (m *arenaMatcher) seatOf(label string) (slot, persona string, known bool) {
	parts := strings.Split(label, "/")
	slot, known = m.study.SlotOfModel(parts[0])
	if !known {
		slot = parts[0]
	}
	if len(parts) > 1 {
		persona = parts[1]
	}
	return slot, persona, known
}

func (m *arenaMatcher) Models(started *eventsv1.MatchStarted) []string {
	var out []string
	for _, s := range started.GetSeats() {
		if model := strings.Split(s.GetLabel(), "/")[0]; model != "" && !slices.Contains(out, model) {
			out = append(out, model)
		}
	}
	return out
}

func (m *arenaMatcher) Runs(started *eventsv1.MatchStarted) ([]string, string) {
	var out []string
	for _, r := range m.runs {
		if r.params.GetBuysell().GetDraw() && m.drawn != nil && !m.drawn[started.GetTournamentId()] {
			continue
		}
		if r.params.GetBuysell().GetSelfInterestedBuyer() != m.selfInterestedBuyer(started) {
			continue
		}
		if r.game == started.GetGame() && sameArenaParams(r.params, started.GetParams()) && m.seatsFit(r, started.GetSeats()) {
			out = append(out, r.id)
		}
	}
	if len(out) == 0 {
		return nil, m.describe(started)
	}
	return out, ""
}

func (m *arenaMatcher) seatsFit(r arenaRun, seats []*gamev1.SeatInfo) bool {
	if r.pairs {
		if len(seats) != 2 {
			return false
		}
		a, pa, ka := m.seatOf(seats[0].GetLabel())
		b, pb, kb := m.seatOf(seats[1].GetLabel())
		return ka && kb && a != b && pa == "" && pb == "" && slices.Contains(m.study.Slots, a) && slices.Contains(m.study.Slots, b)
	}
	if len(seats) != len(r.seats) {
		return false
	}
	for i, want := range r.seats {
		slot, persona, _ := m.seatOf(seats[i].GetLabel())
		if persona == selfInterested && i == 1 && r.params.GetBuysell().GetSelfInterestedBuyer() {
			persona = "" // the set-up's parameter, which Runs compares
		}
		if persona != want.persona || want.slot != "" && slot != want.slot {
			return false
		}
	}
	return true
}

// selfInterested is the persona the import gives a player its log tells to be self-interested.
const selfInterested = "self-interested"

// selfInterestedBuyer reports whether a buyer/seller match's buyer was told to be
// self-interested: by the game's parameter (a match parley reproduce played) or by its persona
// (an imported log's text). Figure 8b's over-valuing buyers are told apart by it alone.
func (m *arenaMatcher) selfInterestedBuyer(started *eventsv1.MatchStarted) bool {
	if started.GetParams().GetBuysell() == nil {
		return false
	}
	if started.GetParams().GetBuysell().GetSelfInterestedBuyer() {
		return true
	}
	seats := started.GetSeats()
	if len(seats) != 2 {
		return false
	}
	_, persona, _ := m.seatOf(seats[1].GetLabel())
	return persona == selfInterested
}

// describe says what a match that fits no set-up played, for the summary.
func (m *arenaMatcher) describe(started *eventsv1.MatchStarted) string {
	var labels []string
	for _, s := range started.GetSeats() {
		slot, persona, _ := m.seatOf(s.GetLabel())
		if persona != "" {
			slot += "/" + persona
		}
		labels = append(labels, slot)
	}
	return fmt.Sprintf("%s %s between %s", started.GetGame(), arenaParamsText(started.GetParams()), strings.Join(labels, " and "))
}

func arenaParamsText(gp *matchv1.GameParams) string {
	switch {
	case gp.GetUltimatum() != nil:
		u := gp.GetUltimatum()
		return fmt.Sprintf("(%d %s, %d turns)", u.GetTotal(), u.GetCurrency(), u.GetMaxTurns())
	case gp.GetBuysell() != nil:
		b := gp.GetBuysell()
		return fmt.Sprintf("(cost %d, willingness %d, budget %d, %d turns)", b.GetCost(), b.GetWillingness(), b.GetBudget(), b.GetMaxTurns())
	case gp.GetTrading() != nil:
		t := gp.GetTrading()
		return fmt.Sprintf("(P1 %v, P2 %v, %d turns)", t.GetP1Holdings(), t.GetP2Holdings(), t.GetMaxTurns())
	}
	return ""
}

// sameArenaParams reports whether a match's resolved params are a set-up's: every amount and
// limit equal, a drawn value within its range, names of money and item aside.
func sameArenaParams(set, got *matchv1.GameParams) bool {
	switch {
	case set.GetUltimatum() != nil:
		a, b := set.GetUltimatum(), got.GetUltimatum()
		return b != nil && a.GetTotal() == b.GetTotal() && a.GetMaxTurns() == b.GetMaxTurns()
	case set.GetTrading() != nil:
		a, b := set.GetTrading(), got.GetTrading()
		nonzero := func(m map[string]int64) map[string]int64 {
			out := map[string]int64{}
			for k, v := range m {
				if v != 0 {
					out[k] = v
				}
			}
			return out
		}
		return b != nil && a.GetMaxTurns() == b.GetMaxTurns() && a.GetMaxProposals() == b.GetMaxProposals() &&
			maps.Equal(nonzero(a.GetP1Holdings()), nonzero(b.GetP1Holdings())) && maps.Equal(nonzero(a.GetP2Holdings()), nonzero(b.GetP2Holdings())) &&
			maps.Equal(a.GetP1Goal(), b.GetP1Goal()) && maps.Equal(a.GetP2Goal(), b.GetP2Goal())
	case set.GetBuysell() != nil:
		a, b := set.GetBuysell(), got.GetBuysell()
		if b == nil || b.GetDraw() || a.GetBudget()*a.GetScale() != b.GetBudget()*b.GetScale() || a.GetMaxTurns() != b.GetMaxTurns() || a.GetMaxProposals() != b.GetMaxProposals() {
			return false
		}
		cost, willingness := valuesOf(b)
		if !a.GetDraw() {
			c, w := valuesOf(a)
			return c == cost && w == willingness
		}
		s := a.GetScale()
		return cost >= a.GetCostMin()*s && cost <= a.GetCostMax()*s && willingness >= a.GetWillingnessMin()*s && willingness <= a.GetWillingnessMax()*s
	}
	return false
}

func valuesOf(b *buysellv1.Params) (cost, willingness int64) {
	return b.GetCost() * b.GetScale(), b.GetWillingness() * b.GetScale()
}
