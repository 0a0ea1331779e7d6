package reproduce

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	"github.com/parley-arena/parley/referee/games"
	rules "github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/research/studies"
)

// The deliberation study's set-ups are told apart by their content: the scenario (one of the
// shipped games, compared by every party's name, role, points and minimum and the opening
// deal), who talks (the discussion, p1 alone for k turns, or nobody), and for every seat the
// model, the persona (cooperative, greedy, adversarial, targeted or not) and the reasoning
// steps its prompts ask for. Of the steps only restate, infer, candidates and plan can be told
// from the study's prompts (every prompt asks for a proposal: "think" is in all of them), so
// only those are compared.

// observableSteps are the reasoning steps a published prompt shows.
var observableSteps = []string{"restate", "infer", "candidates", "plan"}

type delibSeat struct {
	slot, persona string
	targeted      bool
	steps         string // "" when not known (a seat that never spoke)
}

// fits reports whether a match's seat is the set-up's: the same model and persona, and for a
// cooperative seat whose prompts are known the same steps (a greedy or adversarial seat gets
// its incentive's own prompt, whose steps the study varied apart from the set-up's).
func (set delibSeat) fits(got delibSeat) bool {
	if set.slot != got.slot || set.persona != got.persona || set.targeted != got.targeted {
		return false
	}
	return set.persona != "cooperative" || got.steps == "" || set.steps == got.steps
}

type delibSig struct {
	scenario string // a shipped scenario's name; "" for one of none
	talk     string // "discussion", "solo N" or "none"
	seats    []delibSeat
}

func (set delibSig) fits(got delibSig) bool {
	if set.scenario != got.scenario || set.scenario == "" || set.talk != got.talk || len(set.seats) != len(got.seats) {
		return false
	}
	for i := range set.seats {
		if !set.seats[i].fits(got.seats[i]) {
			return false
		}
	}
	return true
}

type deliberationMatcher struct {
	study   *studies.Study
	shipped map[string]string // scenario fingerprint -> shipped name
	runs    []delibRun
}

type delibRun struct {
	id  string
	sig delibSig
}

func newDeliberationMatcher(study *studies.Study, reg *games.Registry) (Matcher, error) {
	m := &deliberationMatcher{study: study, shipped: map[string]string{}}
	for _, name := range rules.ShippedNames() {
		s, err := setupOf(reg, "game="+name)
		if err != nil {
			return nil, err
		}
		m.shipped[fingerprint(s)] = name
	}
	runs, err := study.ExpandRuns()
	if err != nil {
		return nil, err
	}
	for _, r := range runs {
		if r.Game != rules.Name {
			continue
		}
		var kvs []string
		for _, k := range slices.Sorted(maps.Keys(r.Params)) {
			kvs = append(kvs, k+"="+r.Params[k])
		}
		s, err := setupOf(reg, kvs...)
		if err != nil {
			return nil, fmt.Errorf("set-up %s: %w", r.ID, err)
		}
		sig := delibSig{scenario: m.shipped[fingerprint(s)], talk: talkOf(s)}
		for _, seat := range r.Seats {
			sig.seats = append(sig.seats, delibSeat{slot: seat.Slot, persona: personaOf(seat.Persona), targeted: seat.Target != "", steps: stepsOf(seat.Reasoning)})
		}
		m.runs = append(m.runs, delibRun{r.ID, sig})
	}
	return m, nil
}

func setupOf(reg *games.Registry, kvs ...string) (*rules.Setup, error) {
	game, err := reg.Lookup(rules.Name)
	if err != nil {
		return nil, err
	}
	gp, err := games.ParseParams(rules.Name, kvs)
	if err != nil {
		return nil, err
	}
	resolved, err := game.Resolve(gp)
	if err != nil {
		return nil, err
	}
	return rules.NewSetup(resolved)
}

// fingerprint writes what makes a scenario the same game: parties in seat order (name, role,
// minimum, points) and the opening deal. A targeted adversary's target is a player to the
// rules.
func fingerprint(s *rules.Setup) string {
	var b strings.Builder
	for _, p := range s.Parties {
		role := p.Role
		if role == deliberationv1.PartyRole_PARTY_ROLE_TARGET {
			role = deliberationv1.PartyRole_PARTY_ROLE_PLAYER
		}
		fmt.Fprintf(&b, "%s/%d/%d/%v;", strings.ToLower(p.Name), role, p.Threshold, p.Points)
	}
	b.WriteString(s.DealString(s.Opening))
	return b.String()
}

func talkOf(s *rules.Setup) string {
	switch {
	case s.Solo > 0:
		return "solo " + strconv.Itoa(s.Solo)
	case s.Discussion == 0:
		return "none"
	}
	return "discussion"
}

// personaOf names a seat's persona as the study's set-ups do: the platform's incentives
// untargeted_adv and targeted_adv are the adversarial persona.
func personaOf(p string) string {
	switch p = strings.ToLower(strings.TrimSpace(p)); p {
	case "", "cooperative":
		return "cooperative"
	case "untargeted_adv", "targeted_adv":
		return "adversarial"
	}
	return p
}

// stepsOf keeps the observable steps of a reasoning setting, in their order.
func stepsOf(setting string) string {
	have := strings.Split(strings.ReplaceAll(setting, " ", ""), ",")
	var out []string
	for _, s := range observableSteps {
		if slices.Contains(have, s) {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ",")
}

// seatOf reads a seat's label, MODEL/PERSONA/STEPS (the import's; no steps for a seat that
// never spoke) or SLOT/PERSONA/STEPS/... (parley reproduce's own).
func (m *deliberationMatcher) seatOf(label string) delibSeat {
	parts := strings.Split(label, "/")
	slot := parts[0]
	if known, ok := m.study.SlotOfModel(slot); ok {
		slot = known
	}
	seat := delibSeat{slot: slot, persona: "cooperative"}
	if len(parts) > 1 {
		seat.persona = personaOf(parts[1])
		seat.targeted = strings.EqualFold(strings.TrimSpace(parts[1]), "targeted_adv")
	}
	if len(parts) > 2 {
		seat.steps = stepsOf(parts[2])
	}
	return seat
}

func (m *deliberationMatcher) Models(started *eventsv1.MatchStarted) []string {
	var out []string
	for _, s := range started.GetSeats() {
		model := strings.Split(s.GetLabel(), "/")[0]
		if model != "" && !slices.Contains(out, model) {
			out = append(out, model)
		}
	}
	return out
}

func (m *deliberationMatcher) Runs(started *eventsv1.MatchStarted) ([]string, string) {
	if started.GetGame() != rules.Name {
		return nil, "not a deliberation game: " + started.GetGame()
	}
	s, err := rules.NewSetup(started.GetParams())
	if err != nil {
		return nil, "parameters the rules refuse: " + err.Error()
	}
	sig := delibSig{scenario: m.shipped[fingerprint(s)], talk: talkOf(s)}
	for _, seat := range started.GetSeats() {
		sig.seats = append(sig.seats, m.seatOf(seat.GetLabel()))
	}
	var runs []string
	for _, r := range m.runs {
		if r.sig.fits(sig) {
			runs = append(runs, r.id)
		}
	}
	if len(runs) > 0 {
		return runs, ""
	}
	return nil, describeSig(sig, s)
}

// describeSig says in words what set-up a match played, for the set-ups no table has.
func describeSig(sig delibSig, s *rules.Setup) string {
	game := sig.scenario
	if game == "" {
		game = fmt.Sprintf("a game none of %s is (%q, p2 %s)", strings.Join(rules.ShippedNames(), ", "), s.Title, s.Parties[1].Name)
	}
	var kinds []string
	count := map[string]int{}
	for _, st := range sig.seats {
		who := st.slot + " " + st.persona
		if st.targeted {
			who += " (targeted)"
		}
		if st.steps != "" {
			who += ", steps " + st.steps
		}
		if count[who] == 0 {
			kinds = append(kinds, who)
		}
		count[who]++
	}
	for i, k := range kinds {
		kinds[i] = fmt.Sprintf("%d × %s", count[k], k)
	}
	return fmt.Sprintf("%s, talk: %s; %s", game, sig.talk, strings.Join(kinds, "; "))
}
