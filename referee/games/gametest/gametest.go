// Package gametest is the conformance suite every game family runs, after open_spiel's
// RandomSimTest: many random matches, each checked at every step against the rules the Game
// and State interfaces promise (refusals change nothing, clones are independent, a record
// replays to the same match, and no seat ever sees what is private to another, as the family's
// parameter proto declares it).
package gametest

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

const (
	// Seeds is the number of random matches per variant (a quarter of it with -short or -race).
	Seeds = 32
	// MaxSteps bounds the actions of one match; a match still running after it fails.
	MaxSteps = 5000
	// MaxAttempts bounds the random actions tried for one move before the suite plays the
	// game's default, for families whose bounds cannot express every constraint.
	MaxAttempts = 8
)

// Run checks g with each of variants (a nil variant means all defaults; no variants means one
// nil variant). For every variant it plays Seeds random matches to the end with
// games.RandomAction and checks, at every step:
//
//   - Observe never panics, is a pure function of the state (a second call is equal, and
//     scribbling on a returned observation changes nothing), names the game, seat and turn,
//     and lists legal moves exactly for the seats in ToMove;
//   - actions that must be refused are (no move, a move kind not listed as legal, a proposal
//     amount outside its bound, an unlisted resource, an unknown option, a message to a seat
//     that does not exist, a seat acting out of turn, any move after the end), with a
//     *games.Rejection, and leave every seat's observation unchanged;
//   - Default(seat) is accepted for every seat to move, and is the least decisive legal move: it
//     never accepts, never ends the game in an agreement, and never ends it while pass or say
//     is legal (it is what an agent whose answers cannot be used plays; see games.State);
//   - Clone is independent: applying on a clone leaves the original unchanged, and applying
//     the same action to both gives equal observations;
//   - Apply leaves the action it is given as it was (the runner records it as given);
//   - a random legal action is accepted; a refusal is tolerated only with
//     REJECTION_CODE_INVALID_TERMS, then the suite retries (MaxAttempts) and plays Default;
//   - where the observation prescribes messages (required_messages), an action missing one of
//     them or carrying one more is refused; where it gives proposal forms with totals, a
//     proposal that misses a total by one is refused;
//   - privacy: every applied action carries unique markers in private_reasoning,
//     private_notes and in messages to the public, to one seat and to a subset of seats (when
//     the observation prescribes the messages, the markers go into the texts of those instead);
//     no seat's observation (text and wire form) ever holds another seat's reasoning or notes,
//     or a message not addressed to it, and each holds every message addressed to it; a number
//     of four digits or more drawn for some seats only (ChanceDrawn.visible_to) is seen by
//     those seats and by no other.
//
// Then, for each variant, it checks what the family's parameter proto declares private (the
// (parley.game.v1.privacy) option; see privacy.go): each private value, varied within the
// rules, changes no other seat's observations and no spectator's redacted record in lockstep
// matches with the same actions, and does change its owner's in some variant; each public
// parameter, varied, reaches the first observations of every seat or of none, unless declared
// unequal. A family writes no list of its secrets for the suite.
//
// First it checks the family's parameters against their declarations (the
// (parley.game.v1.param) option; see params.go): Info().Params, the defaults Resolve fills in,
// the limits it enforces, and that NewState takes resolved params as they are.
//
// At the end it checks the outcome (a cause, a summary, one finite payoff per seat) and
// replays the applied actions on a fresh NewState with the same seed, which must reproduce
// every observation and the outcome.
//
// When several seats are to move at once, all are asked (from the same state) before any
// action is applied.
func Run(t *testing.T, g games.Game, variants ...*matchv1.GameParams) {
	t.Helper()
	Suite{}.Run(t, g, variants...)
}

// Suite is the conformance suite with options; the zero Suite is what Run runs.
type Suite struct {
	// Seeds, when above 0, replaces Seeds as the number of random matches per variant (still
	// a quarter of it with -short), for games whose matches are long to check.
	Seeds int
}

// Run runs the suite on g with each of variants, as the package-level Run does, plus the
// checks the Suite's options ask for.
func (s Suite) Run(t *testing.T, g games.Game, variants ...*matchv1.GameParams) {
	t.Helper()
	info := g.Info()
	switch {
	case info.GetName() == "":
		t.Fatal("Info().Name is empty")
	case info.GetRulesVersion() == "":
		t.Fatal("Info().RulesVersion is empty")
	case len(info.GetSeats()) == 0:
		t.Fatal("Info().Seats is empty")
	}
	if len(variants) == 0 {
		variants = []*matchv1.GameParams{nil}
	}
	seeds := Seeds
	if s.Seeds > 0 {
		seeds = s.Seeds
	}
	if testing.Short() || Race {
		// The race detector slows every step several times; the invariants are the same.
		seeds = max(1, seeds/4)
	}
	t.Run("params", func(t *testing.T) { checkParams(t, g, variants) })
	cov := newPrivacyCoverage()
	for i, v := range variants {
		t.Run(fmt.Sprintf("variant%d", i), func(t *testing.T) {
			t.Logf("params: %v", v)
			params, err := g.Resolve(v)
			if err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			again, err := g.Resolve(params)
			if err != nil || !proto.Equal(again, params) {
				t.Fatalf("Resolve is not idempotent: Resolve(%v) = %v, %v", params, again, err)
			}
			for seed := range uint64(seeds) {
				t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
					seats, _ := games.Seats(g, params)
					m := &match{t: t, g: g, name: info.GetName(), nSeats: len(seats), params: params, seed: seed,
						rng: rand.New(rand.NewPCG(seed, 0x9a3e))}
					m.play()
				})
			}
			t.Run("privacy", func(t *testing.T) {
				seats, _ := games.Seats(g, params)
				m := &match{t: t, g: g, name: info.GetName(), nSeats: len(seats), params: params}
				m.checkParamPrivacy(cov, max(1, seeds/4), i)
			})
		})
	}
	cov.check(t)
}

// applied is one action the suite applied, kept for the replay.
type applied struct {
	seat   games.Seat
	action *agentv1.Action
}

// marker is a unique string planted in an action, or a number drawn for some seats only, and
// the seats allowed to see it.
type marker struct {
	text    string
	number  bool         // text is a number, to be found as a whole number in the text form
	visible []games.Seat // seats that may see it
	must    []games.Seat // seats that must see it
}

type match struct {
	t      *testing.T
	g      games.Game
	name   string
	nSeats int
	params *matchv1.GameParams
	seed   uint64
	rng    *rand.Rand

	st          games.State
	log         []applied
	snapshots   [][]*agentv1.Observation // every seat's observation after each applied action
	markers     []marker
	lastMarkers int // markers added by the latest decorate, dropped if its action is refused
	tolerated   int // random actions refused with INVALID_TERMS
	// shown is every history entry observations have shown, with a copy of it as first shown:
	// entries are shared read-only (games.History), so none may ever change.
	shown map[*agentv1.HistoryEntry]*agentv1.HistoryEntry
}

func (m *match) play() {
	t := m.t
	st, err := m.g.NewState(m.params, m.seed)
	if err != nil {
		t.Fatalf("NewState: %v", err)
	}
	m.st = st
	if o, ok := st.(games.Opener); ok {
		m.markDraws(o.OpeningEvents())
	}
	m.snapshots = append(m.snapshots, m.observeAll(st, "initial state"))
	for step := 0; ; step++ {
		toMove := st.ToMove()
		if len(toMove) == 0 {
			break
		}
		if step >= MaxSteps {
			t.Fatalf("match still running after %d steps", MaxSteps)
		}
		m.checkNotToMove(toMove)
		// Ask every seat to move before applying anything: simultaneous moves are chosen
		// from the same state.
		obs := m.snapshots[len(m.snapshots)-1]
		actions := make([]*agentv1.Action, len(toMove))
		for i, seat := range toMove {
			actions[i] = games.RandomAction(obs[seat], m.rng)
		}
		for i, seat := range toMove {
			m.move(seat, actions[i])
		}
	}
	if m.tolerated > 0 {
		t.Logf("%d random actions refused with REJECTION_CODE_INVALID_TERMS", m.tolerated)
	}
	m.checkEnd()
	m.replay()
}

// move makes seat's move, starting with action (chosen earlier, possibly from an older state).
func (m *match) move(seat games.Seat, action *agentv1.Action) {
	t := m.t
	st := m.st
	if !slices.Contains(st.ToMove(), seat) {
		return // an earlier simultaneous action ended the round or the match
	}
	m.checkRefusals(seat)
	m.checkDefault(seat)
	for attempt := 1; ; attempt++ {
		obs := m.snapshots[len(m.snapshots)-1]
		if action == nil || attempt > 1 {
			action = games.RandomAction(obs[seat], m.rng)
		}
		fromDefault := false
		if action == nil || attempt > MaxAttempts {
			action, fromDefault = st.Default(seat), true
		}
		action = m.decorate(seat, action)
		err := m.applyChecked(seat, action)
		if err == nil {
			return
		}
		rej, ok := games.AsRejection(err)
		switch {
		case !ok:
			t.Fatalf("seat %d: Apply(%v) returned %T %v, want nil or *games.Rejection", seat, action, err, err)
		case fromDefault:
			t.Fatalf("seat %d: Default refused: %v", seat, err)
		case rej.Code != gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS:
			t.Fatalf("seat %d: random legal action %v refused with %v: %s", seat, action, rej.Code, rej.Message)
		}
		m.tolerated++
		m.markers = m.markers[:len(m.markers)-m.lastMarkers]
	}
}

// applyChecked applies action on a clone first and then on the state, checking the clone's
// independence; on success it records the step and checks the new observations.
func (m *match) applyChecked(seat games.Seat, action *agentv1.Action) error {
	t := m.t
	before := m.snapshots[len(m.snapshots)-1]
	clone := m.st.Clone()
	cloneErr := safeApply(t, clone, seat, proto.CloneOf(action))
	m.expectUnchanged(before, "after Apply on a clone")
	kept := proto.CloneOf(action)
	turn := m.st.Turn()
	events, err := safeApplyEvents(t, m.st, seat, action)
	if (err == nil) != (cloneErr == nil) {
		t.Fatalf("seat %d: Apply on the state gives %v, on a clone %v", seat, err, cloneErr)
	}
	if err != nil {
		m.expectRefused(err, before, fmt.Sprintf("seat %d: refused action %v", seat, action))
		return err
	}
	if !proto.Equal(action, kept) {
		t.Fatalf("seat %d: Apply changed the action it was given:\nnow: %v\nwas: %v", seat, action, kept)
	}
	m.log = append(m.log, applied{seat: seat, action: kept})
	m.markDraws(events)
	after := m.observeAll(m.st, fmt.Sprintf("after seat %d played %v", seat, kept))
	for s, o := range m.observeAll(clone, "clone") {
		if !proto.Equal(o, after[s]) {
			t.Fatalf("seat %d: the clone and the state differ after the same action:\nclone: %v\nstate: %v", s, o, after[s])
		}
	}
	m.snapshots = append(m.snapshots, after)
	m.checkWords(seat, turn, after)
	return nil
}

// checkWords checks that the state words seat's move on turn for the record (games.MoveWorder)
// as the observations' histories word it: each seat shown the move reads that summary there,
// and no other seat reads any.
func (m *match) checkWords(seat games.Seat, turn int32, after []*agentv1.Observation) {
	t := m.t
	w, ok := m.st.(games.MoveWorder)
	if !ok {
		t.Fatalf("%T does not word its moves for the record (games.MoveWorder)", m.st)
	}
	summary, to, ok := w.LastMove(seat, turn)
	if !ok || summary == "" {
		t.Fatalf("seat %d's move on turn %d: LastMove gives %q, %v", seat, turn, summary, ok)
	}
	for s, o := range after {
		var seen string
		for _, h := range o.GetHistory() {
			if !h.GetFromReferee() && h.GetSeat() == seat && h.GetTurn() == turn {
				seen = h.GetSummary()
			}
		}
		shown := to == nil || games.Seat(s) == seat || slices.Contains(to, games.Seat(s))
		if shown && seen != summary || !shown && seen != "" {
			t.Fatalf("seat %d's move on turn %d: the record would say %q (shown to %v besides the mover), seat %d's history says %q", seat, turn, summary, to, s, seen)
		}
	}
}

// checkRefusals tries actions seat may not play now. Each must be refused and change nothing.
func (m *match) checkRefusals(seat games.Seat) {
	before := m.snapshots[len(m.snapshots)-1]
	obs := before[seat]
	legal := obs.GetLegalMoves()
	type probe struct {
		why    string
		action *agentv1.Action
	}
	probes := []probe{
		{"nil action", nil},
		{"action without a move", &agentv1.Action{}},
		{"move without a kind", &agentv1.Action{Move: &gamev1.Move{}}},
	}
	if d := m.st.Default(seat); d != nil {
		d.Messages = append(d.Messages, &gamev1.Message{To: []int32{int32(m.nSeats)}, Text: "to nobody"})
		probes = append(probes, probe{"message to a seat that does not exist", d})
	}
	for _, k := range []gamev1.MoveKind{
		gamev1.MoveKind_MOVE_KIND_PROPOSE, gamev1.MoveKind_MOVE_KIND_ACCEPT, gamev1.MoveKind_MOVE_KIND_REJECT,
		gamev1.MoveKind_MOVE_KIND_PASS, gamev1.MoveKind_MOVE_KIND_CHOOSE,
	} {
		if !slices.Contains(legal, k) {
			narrowed := proto.CloneOf(obs)
			narrowed.LegalMoves = []gamev1.MoveKind{k}
			probes = append(probes, probe{fmt.Sprintf("%v, which is not listed as legal", k), games.RandomAction(narrowed, m.rng)})
		}
	}
	if slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		bounds := obs.GetProposalBounds()
		for i, b := range bounds {
			if b.GetMax() == math.MaxInt64 {
				continue
			}
			probes = append(probes, probe{fmt.Sprintf("amount above bound %v", b), proposal(bounds, i, b.GetMax()+1, "")})
			break
		}
		for i, b := range bounds {
			if b.GetMin() == math.MinInt64 {
				continue
			}
			probes = append(probes, probe{fmt.Sprintf("amount below bound %v", b), proposal(bounds, i, b.GetMin()-1, "")})
			break
		}
		probes = append(probes, probe{"an unlisted resource", proposal(bounds, -1, 1, "gametest-unlisted-resource")})
		for i, b := range bounds {
			// The contract's rule: an absent amount is 0; the referee fills nothing in.
			if b.GetMin() == b.GetMax() && b.GetMin() != 0 {
				probes = append(probes, probe{fmt.Sprintf("the amount fixed by bound %v left out", b), leftOut(bounds, i)})
			}
		}
	}
	if required := obs.GetRequiredMessages(); len(required) > 0 {
		if d := m.st.Default(seat); len(d.GetMessages()) == len(required) {
			fewer := proto.CloneOf(d)
			fewer.Messages = fewer.Messages[:len(fewer.Messages)-1]
			more := proto.CloneOf(d)
			more.Messages = append(more.Messages, proto.CloneOf(more.Messages[0]))
			probes = append(probes,
				probe{"a required message left out", fewer},
				probe{"a message more than required", more})
		}
	}
	if slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		for _, f := range obs.GetProposalForms() {
			if a := missTotal(f, m.rng); a != nil {
				probes = append(probes, probe{fmt.Sprintf("amounts that miss a total of %v", f), a})
				break
			}
		}
	}
	if slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_CHOOSE) {
		const bogus = "gametest-no-such-option"
		if !slices.ContainsFunc(obs.GetChoices(), func(o *gamev1.Option) bool { return o.GetId() == bogus }) {
			probes = append(probes, probe{"an unknown option", &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: bogus}}}}})
		}
	}
	for _, p := range probes {
		err := safeApply(m.t, m.st, seat, p.action)
		m.expectRefused(err, before, fmt.Sprintf("seat %d: %s (%v)", seat, p.why, p.action))
	}
}

// missTotal returns a proposal of form f whose amounts miss the form's first total by one, or
// nil when the bounds leave no room to.
func missTotal(f *gamev1.ProposalForm, rng *rand.Rand) *agentv1.Action {
	if len(f.GetTotals()) == 0 {
		return nil
	}
	obs := &agentv1.Observation{LegalMoves: []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE}, ProposalForms: []*gamev1.ProposalForm{f}}
	a := games.RandomAction(obs, rng)
	total := f.GetTotals()[0]
	for _, sh := range a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares() {
		amounts := sh.GetGives()
		if total.GetSide() == gamev1.ShareSide_SHARE_SIDE_RECEIVES {
			amounts = sh.GetReceives()
		}
		for _, b := range f.GetBounds() {
			if b.GetSeat() != sh.GetSeat() || b.GetSide() != total.GetSide() || b.GetResource() != total.GetResource() {
				continue
			}
			x := amounts[total.GetResource()]
			switch {
			case x < b.GetMax():
				amounts[total.GetResource()] = x + 1
			case x > b.GetMin():
				amounts[total.GetResource()] = x - 1
			default:
				continue
			}
			return a
		}
	}
	return nil
}

// proposal builds an allocation from bounds with every amount at its minimum, except bound
// index i set to amount; with extra set, an unlisted resource of that name gets amount too.
func proposal(bounds []*gamev1.Bound, i int, amount int64, extra string) *agentv1.Action {
	obs := &agentv1.Observation{LegalMoves: []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE}}
	for j, b := range bounds {
		b = proto.CloneOf(b)
		b.Max = b.GetMin()
		if j == i {
			b.Min, b.Max = amount, amount
		}
		obs.ProposalBounds = append(obs.ProposalBounds, b)
	}
	if extra != "" {
		seat, side := int32(0), gamev1.ShareSide_SHARE_SIDE_GIVES
		if len(bounds) > 0 {
			seat, side = bounds[0].GetSeat(), bounds[0].GetSide()
		}
		obs.ProposalBounds = append(obs.ProposalBounds, &gamev1.Bound{Seat: seat, Side: side, Resource: extra, Min: amount, Max: amount})
	}
	// Every amount is fixed, so any rng gives the same action.
	return games.RandomAction(obs, rand.New(rand.NewPCG(0, 0)))
}

// leftOut builds an allocation from bounds with every amount at its minimum, except that bound
// i's amount is not there at all.
func leftOut(bounds []*gamev1.Bound, i int) *agentv1.Action {
	a := proposal(bounds, -1, 0, "")
	b := bounds[i]
	for _, sh := range a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares() {
		if sh.GetSeat() == b.GetSeat() {
			delete(sh.Gives, b.GetResource())
			delete(sh.Receives, b.GetResource())
		}
	}
	return a
}

// checkDefault checks on a clone that Default(seat) is accepted.
func (m *match) checkDefault(seat games.Seat) {
	d := m.st.Default(seat)
	if d == nil {
		m.t.Fatalf("seat %d: Default returned nil", seat)
	}
	clone := m.st.Clone()
	if err := safeApply(m.t, clone, seat, d); err != nil {
		m.t.Fatalf("seat %d: Default %v refused: %v", seat, d, err)
	}
	m.expectUnchanged(m.snapshots[len(m.snapshots)-1], "after Default on a clone")
	// The default is the least decisive legal move: it never accepts, never ends the game in
	// an agreement, and never ends it at all while passing or talking would go on.
	if d.GetMove().GetAccept() != nil {
		m.t.Fatalf("seat %d: Default %v accepts", seat, d)
	}
	if len(clone.ToMove()) > 0 {
		return
	}
	if out := clone.Outcome(); out.GetAgreement() || out.GetCause() == matchv1.EndCause_END_CAUSE_AGREEMENT {
		m.t.Fatalf("seat %d: Default %v ends the game in an agreement: %v", seat, d, out)
	}
	legal := m.snapshots[len(m.snapshots)-1][seat].GetLegalMoves()
	for _, k := range []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PASS, gamev1.MoveKind_MOVE_KIND_SAY} {
		if slices.Contains(legal, k) && games.KindOf(d.GetMove()) != k {
			m.t.Fatalf("seat %d: Default %v ends the game, though %v, which would not, is legal", seat, d, k)
		}
	}
}

// checkNotToMove checks that seats not to move have no legal move and cannot act.
func (m *match) checkNotToMove(toMove []games.Seat) {
	before := m.snapshots[len(m.snapshots)-1]
	for s := range games.Seat(m.nSeats) {
		if slices.Contains(toMove, s) {
			continue
		}
		d := m.st.Default(s)
		err := safeApply(m.t, m.st, s, d)
		m.expectRefused(err, before, fmt.Sprintf("seat %d acting out of turn with %v", s, d))
	}
}

// checkEnd checks the final state: outcome, no moves left, every move refused.
func (m *match) checkEnd() {
	t := m.t
	out := m.st.Outcome()
	switch {
	case out.GetCause() == matchv1.EndCause_END_CAUSE_UNSPECIFIED:
		t.Errorf("Outcome has no cause: %v", out)
	case out.GetSummary() == "":
		t.Errorf("Outcome has no summary: %v", out)
	case len(out.GetPayoffs()) != m.nSeats:
		t.Errorf("Outcome has %d payoffs for %d seats: %v", len(out.GetPayoffs()), m.nSeats, out)
	}
	for s, p := range out.GetPayoffs() {
		if math.IsNaN(p) || math.IsInf(p, 0) {
			t.Errorf("seat %d's payoff is %v", s, p)
		}
	}
	final := m.snapshots[len(m.snapshots)-1]
	for s := range games.Seat(m.nSeats) {
		d := m.st.Default(s)
		m.expectRefused(safeApply(t, m.st, s, d), final, fmt.Sprintf("seat %d moving after the end with %v", s, d))
	}
}

// replay folds the applied actions over a fresh state with the same seed: every observation
// and the outcome must come out the same.
func (m *match) replay() {
	t := m.t
	st, err := m.g.NewState(m.params, m.seed)
	if err != nil {
		t.Fatalf("replay: NewState: %v", err)
	}
	compare := func(step int) {
		for s := range games.Seat(m.nSeats) {
			if got := safeObserve(t, st, s); !proto.Equal(got, m.snapshots[step][s]) {
				t.Fatalf("replay differs after %d actions for seat %d:\nreplay: %v\nfirst:  %v", step, s, got, m.snapshots[step][s])
			}
		}
	}
	compare(0)
	for i, a := range m.log {
		if err := safeApply(t, st, a.seat, proto.CloneOf(a.action)); err != nil {
			t.Fatalf("replay: action %d by seat %d refused: %v", i+1, a.seat, err)
		}
		compare(i + 1)
	}
	if len(st.ToMove()) != 0 {
		t.Fatalf("replay: the match is not over after the same actions")
	}
	if got, want := st.Outcome(), m.st.Outcome(); !proto.Equal(got, want) {
		t.Fatalf("replay outcome %v, first %v", got, want)
	}
}

// observeAll returns every seat's observation, checking it on the way.
func (m *match) observeAll(st games.State, when string) []*agentv1.Observation {
	t := m.t
	toMove := st.ToMove()
	out := make([]*agentv1.Observation, m.nSeats)
	for s := range games.Seat(m.nSeats) {
		o := safeObserve(t, st, s)
		switch {
		case o == nil:
			t.Fatalf("%s: Observe(%d) is nil", when, s)
		case o.GetGame() != m.name:
			t.Fatalf("%s: Observe(%d).Game = %q, want %q", when, s, o.GetGame(), m.name)
		case o.GetSeat() != s:
			t.Fatalf("%s: Observe(%d).Seat = %d", when, s, o.GetSeat())
		case o.GetTurn() != st.Turn():
			t.Fatalf("%s: Observe(%d).Turn = %d, State.Turn() = %d", when, s, o.GetTurn(), st.Turn())
		case o.GetBriefing() == "":
			t.Fatalf("%s: Observe(%d) has no briefing", when, s)
		case slices.Contains(toMove, s) && len(o.GetLegalMoves()) == 0:
			t.Fatalf("%s: seat %d is to move but has no legal move", when, s)
		case !slices.Contains(toMove, s) && len(o.GetLegalMoves()) != 0:
			t.Fatalf("%s: seat %d is not to move but has legal moves %v", when, s, o.GetLegalMoves())
		case len(o.GetHistory()) > games.MaxHistoryEntries || o.GetHistoryOmitted() < 0:
			// The history window (History.For) keeps observations bounded.
			t.Fatalf("%s: Observe(%d) shows %d history entries, leaving out %d: not a window of at most %d", when, s, len(o.GetHistory()), o.GetHistoryOmitted(), games.MaxHistoryEntries)
		}
		// Purity: a second call is equal, and scribbling on what was returned does not reach
		// the state (nor a cached observation). All but the history, which observations
		// share with the state, read-only: that its entries never change is checked instead.
		keep := proto.CloneOf(o)
		second := safeObserve(t, st, s)
		if !proto.Equal(keep, second) {
			t.Fatalf("%s: two calls of Observe(%d) differ", when, s)
		}
		m.checkShown(o.GetHistory(), when)
		o.History, second.History = nil, nil
		scribble(o.ProtoReflect())
		scribble(second.ProtoReflect())
		if third := safeObserve(t, st, s); !proto.Equal(keep, third) {
			t.Fatalf("%s: changing an observation of seat %d changed the state", when, s)
		}
		m.checkMarkers(s, keep, when)
		if u, ok := st.(games.Unbriefed); ok {
			// The observation of an agent that reads no briefing is the same without it.
			want := proto.CloneOf(keep)
			want.Briefing = ""
			if got := u.ObserveUnbriefed(s); !proto.Equal(got, want) {
				t.Fatalf("%s: ObserveUnbriefed(%d) is not Observe(%d) without its briefing:\n%v\nwant\n%v", when, s, s, got, want)
			}
		}
		out[s] = keep
	}
	return out
}

// checkShown records the history entries an observation shows, and checks that none shown so
// far has changed since it was first shown.
func (m *match) checkShown(entries []*agentv1.HistoryEntry, when string) {
	if m.shown == nil {
		m.shown = make(map[*agentv1.HistoryEntry]*agentv1.HistoryEntry)
	}
	for _, e := range entries {
		if _, ok := m.shown[e]; !ok {
			m.shown[e] = proto.CloneOf(e)
		}
	}
	for e, first := range m.shown {
		if !proto.Equal(e, first) {
			m.t.Fatalf("%s: a history entry changed after it was shown:\nnow   %v\nshown %v", when, e, first)
		}
	}
}

// checkMarkers searches seat's observation for the planted markers, in text and wire form.
func (m *match) checkMarkers(seat games.Seat, o *agentv1.Observation, when string) {
	text := prototext.Format(o)
	wire, err := proto.Marshal(o)
	if err != nil {
		m.t.Fatalf("%s: marshal observation: %v", when, err)
	}
	for _, mk := range m.markers {
		found := strings.Contains(text, mk.text) || bytes.Contains(wire, []byte(mk.text))
		if mk.number {
			found = containsNumber(text, mk.text)
		}
		switch {
		case found && !slices.Contains(mk.visible, seat):
			m.t.Fatalf("%s: seat %d's observation leaks %q:\n%s", when, seat, mk.text, text)
		case !found && slices.Contains(mk.must, seat):
			m.t.Fatalf("%s: seat %d's observation lacks %q, a message addressed to it:\n%s", when, seat, mk.text, text)
		}
	}
}

// minDrawDigits is the fewest digits a number drawn for some seats only must have to be looked
// for in observations: shorter numbers turn up in play by chance.
const minDrawDigits = 4

// markDraws adds a marker for each number drawn for some seats only (ChanceDrawn.visible_to)
// that is long enough to look for: those seats must see it, no other seat may.
func (m *match) markDraws(events []*eventsv1.MatchEvent) {
	for _, ev := range events {
		d := ev.GetChanceDrawn()
		if d == nil || len(d.GetVisibleTo()) == 0 || d.Value == nil {
			continue
		}
		text := strconv.FormatInt(d.GetValue(), 10)
		if len(strings.TrimPrefix(text, "-")) < minDrawDigits {
			continue
		}
		m.markers = append(m.markers, marker{text: text, number: true, visible: d.GetVisibleTo(), must: d.GetVisibleTo()})
	}
}

// containsNumber reports whether text holds n as a whole number, not inside a longer one.
func containsNumber(text, n string) bool {
	for i := 0; ; {
		k := strings.Index(text[i:], n)
		if k < 0 {
			return false
		}
		start, end := i+k, i+k+len(n)
		if (start == 0 || !isDigit(text[start-1])) && (end == len(text) || !isDigit(text[end])) {
			return true
		}
		i = start + 1
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// decorate returns a copy of action carrying fresh markers: reasoning, notes, and messages to
// everyone, to one other seat and to a subset of the others.
func (m *match) decorate(seat games.Seat, action *agentv1.Action) *agentv1.Action {
	a := proto.CloneOf(action)
	if len(m.snapshots[len(m.snapshots)-1][seat].GetRequiredMessages()) > 0 {
		return m.decorateRequired(seat, a)
	}
	n := len(m.markers)
	mk := func(kind string) string { return fmt.Sprintf("gametest-%s-seat%d-n%d.", kind, seat, n) }
	only := []games.Seat{seat}
	a.PrivateReasoning = mk("reasoning")
	a.PrivateNotes = mk("notes")
	m.markers = append(m.markers,
		marker{text: a.PrivateReasoning, visible: only},
		marker{text: a.PrivateNotes, visible: only})
	added := 2
	var others []games.Seat
	for s := range games.Seat(m.nSeats) {
		if s != seat {
			others = append(others, s)
		}
	}
	if len(others) > 0 && len(a.Messages)+3 <= games.MaxMessages {
		all := make([]games.Seat, m.nSeats)
		for i := range all {
			all[i] = games.Seat(i)
		}
		public := mk("public")
		a.Messages = append(a.Messages, &gamev1.Message{Text: public})
		m.markers = append(m.markers, marker{text: public, visible: all, must: others})

		one := others[m.rng.IntN(len(others))]
		direct := mk("direct")
		a.Messages = append(a.Messages, &gamev1.Message{To: []int32{one}, Text: direct})
		m.markers = append(m.markers, marker{text: direct, visible: []games.Seat{seat, one}, must: []games.Seat{one}})
		added += 2

		if len(others) > 1 {
			var sub []games.Seat
			for _, s := range others {
				if m.rng.IntN(2) == 0 {
					sub = append(sub, s)
				}
			}
			if len(sub) == 0 || len(sub) == len(others) {
				sub = others[:1] // a proper subset, so that some seat must not see it
			}
			group := mk("group")
			a.Messages = append(a.Messages, &gamev1.Message{To: slices.Clone(sub), Text: group})
			m.markers = append(m.markers, marker{text: group, visible: append([]games.Seat{seat}, sub...), must: sub})
			added++
		}
	}
	m.lastMarkers = added
	return a
}

// decorateRequired marks an action whose messages the game prescribes: reasoning, notes and the
// text of each message, visible to the message's recipients (everyone when it is public).
func (m *match) decorateRequired(seat games.Seat, a *agentv1.Action) *agentv1.Action {
	n := len(m.markers)
	mk := func(kind string) string { return fmt.Sprintf("gametest-%s-seat%d-n%d.", kind, seat, n) }
	a.PrivateReasoning = mk("reasoning")
	a.PrivateNotes = mk("notes")
	m.markers = append(m.markers,
		marker{text: a.PrivateReasoning, visible: []games.Seat{seat}},
		marker{text: a.PrivateNotes, visible: []games.Seat{seat}})
	added := 2
	for i, msg := range a.GetMessages() {
		text := mk(fmt.Sprintf("required%d", i))
		msg.Text += " " + text
		must := slices.Clone(msg.GetTo())
		if len(must) == 0 {
			for s := range games.Seat(m.nSeats) {
				if s != seat {
					must = append(must, s)
				}
			}
		}
		m.markers = append(m.markers, marker{text: text, visible: append([]games.Seat{seat}, must...), must: must})
		added++
	}
	m.lastMarkers = added
	return a
}

// expectRefused checks that err is a *games.Rejection and that nothing changed.
func (m *match) expectRefused(err error, before []*agentv1.Observation, what string) {
	m.t.Helper()
	if err == nil {
		m.t.Fatalf("%s: accepted, want a refusal", what)
	}
	rej, ok := games.AsRejection(err)
	switch {
	case !ok:
		m.t.Fatalf("%s: returned %T %v, want *games.Rejection", what, err, err)
	case rej.Code == gamev1.RejectionCode_REJECTION_CODE_UNSPECIFIED || rej.Message == "":
		m.t.Fatalf("%s: rejection without code or message: %+v", what, rej)
	}
	m.expectUnchanged(before, what)
}

// expectUnchanged checks that every seat's observation of the state equals before.
func (m *match) expectUnchanged(before []*agentv1.Observation, what string) {
	m.t.Helper()
	for s := range games.Seat(m.nSeats) {
		if got := safeObserve(m.t, m.st, s); !proto.Equal(got, before[s]) {
			m.t.Fatalf("%s: seat %d's observation changed:\nbefore: %v\nafter:  %v", what, s, before[s], got)
		}
	}
}

// safeApply calls Apply, turning a panic into a test failure that names the action.
func safeApply(t *testing.T, st games.State, seat games.Seat, a *agentv1.Action) error {
	t.Helper()
	_, err := safeApplyEvents(t, st, seat, a)
	return err
}

// safeApplyEvents is safeApply keeping the events.
func safeApplyEvents(t *testing.T, st games.State, seat games.Seat, a *agentv1.Action) (evs []*eventsv1.MatchEvent, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Apply(%d, %v) panicked: %v", seat, a, r)
		}
	}()
	return st.Apply(seat, a)
}

// safeObserve calls Observe, turning a panic into a test failure.
func safeObserve(t *testing.T, st games.State, seat games.Seat) (o *agentv1.Observation) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("Observe(%d) panicked: %v", seat, r)
		}
	}()
	return st.Observe(seat)
}

// scribble overwrites every scalar of msg and of the messages it holds, in place (list
// elements and map values too), so that a state sharing any part of it with a caller shows
// the change.
func scribble(msg protoreflect.Message) {
	type field struct {
		fd protoreflect.FieldDescriptor
		v  protoreflect.Value
	}
	var fields []field
	msg.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		fields = append(fields, field{fd, v})
		return true
	})
	for _, f := range fields {
		fd, v := f.fd, f.v
		switch {
		case fd.IsList():
			l := v.List()
			for i := range l.Len() {
				if fd.Message() != nil {
					scribble(l.Get(i).Message())
				} else {
					l.Set(i, junk(fd, l.Get(i)))
				}
			}
		case fd.IsMap():
			mp := v.Map()
			var keys []protoreflect.MapKey
			mp.Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				keys = append(keys, k)
				return true
			})
			for _, k := range keys {
				if fd.MapValue().Message() != nil {
					scribble(mp.Get(k).Message())
				} else {
					mp.Set(k, junk(fd.MapValue(), mp.Get(k)))
				}
			}
		case fd.Message() != nil:
			scribble(v.Message())
		default:
			msg.Set(fd, junk(fd, v))
		}
	}
}

// junk returns a value of fd's kind that differs from v.
func junk(fd protoreflect.FieldDescriptor, v protoreflect.Value) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(!v.Bool())
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(v.Enum() + 1)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(v.Int()) + 1)
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(v.Int() + 1)
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(v.Uint()) + 1)
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(v.Uint() + 1)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(v.Float()) + 1)
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(v.Float() + 1)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(v.String() + "~scribbled")
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes(append(slices.Clone(v.Bytes()), '~'))
	}
	return v
}
