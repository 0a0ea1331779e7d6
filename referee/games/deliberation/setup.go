package deliberation

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Limits of scenarios and parameters (the declarations in deliberation.proto repeat the ones
// --param can set; the suite checks they agree).
const (
	// DefaultTurnsPerParty is how many discussion turns each party gets by default.
	DefaultTurnsPerParty = 4

	// MinParties is the fewest parties a match can have: with two, no speaking order can keep
	// p1 from speaking twice in a row.
	MinParties = 3
	// MaxParties and MaxIssues bound a scenario (issue ids are the letters A to Z).
	MaxParties = 32
	MaxIssues  = 26
	// MaxOptions bounds the options of one issue.
	MaxOptions = 99
	// MaxPoints bounds every score, threshold and bonus in absolute value, so that sums of
	// them never overflow.
	MaxPoints = 1_000_000
	// MaxTurns bounds discussion_turns and solo_turns: each observation carries the whole
	// match, so a match of k turns costs O(k^2) to observe.
	MaxTurns = 1000
	// MaxTextLen bounds the scenario text and each briefing, in bytes.
	MaxTextLen = 64 << 10
)

// NoVetoes is the vetoes value that means no party holds a veto.
const NoVetoes = "none"

// Issue is one issue of a game: its letter id, display name and option names.
type Issue struct {
	// ID is the issue's letter, "A" for the first.
	ID string
	// Label is the display name, e.g. "Infrastructure mix".
	Label string
	// Options are the option names, in order; option k (0-based) has id ID + (k+1).
	Options []string
}

// OptionID returns the id of option k (0-based), e.g. "A2" for k = 1.
func (is Issue) OptionID(k int) string { return is.ID + strconv.Itoa(k+1) }

// Party is one party of a game. Points, Threshold and Briefing are private to its seat.
type Party struct {
	ID, Name string
	Role     deliberationv1.PartyRole
	// Threshold is the least score the party says yes to, and its payoff when no deal passes.
	Threshold int
	// Points[i][k] is the party's score for option k of issue i.
	Points [][]int
	// Briefing is the party's private briefing.
	Briefing string
}

// Max returns the party's best possible score.
func (p Party) Max() int {
	total := 0
	for _, pts := range p.Points {
		total += slices.Max(pts)
	}
	return total
}

// Setup is a resolved deliberation match: the scenario's data cut to the parties and issues
// that play, and every rule parameter. Seat 0 is p1. A Setup is never changed once made.
type Setup struct {
	// Game is the game parameter as given ("base", or a folder's path).
	Game string
	// Title, Text and Source describe the scenario (Source: "shipped" or a folder).
	Title, Text, Source string
	Parties             []Party
	Issues              []Issue
	// Opening is the deal p1 must table on the opening turn.
	Opening Deal
	// Discussion is the number of discussion turns (0 in the solo baseline); Solo the number
	// of p1's solo turns (0 unless the solo baseline is on).
	Discussion, Solo int
	// Quorum is the yes-votes a deal needs; Vetoes the seats that must all say yes.
	Quorum int
	Vetoes []int
	// Bonus is p1's unanimity bonus.
	Bonus int
	// NoDealValue is what adversarial agents are told no deal is worth (no rule uses it).
	NoDealValue int
	// HistoryWindow is how many of the latest public messages a seat's history shows; 0: all.
	HistoryWindow int
	// Order, when set, is the speaker of every discussion turn, fixed in advance (the
	// speaking_order parameter); nil: orders are drawn from the seed.
	Order []int

	scenario *deliberationv1.Scenario // the resolved scenario, for Params
	vetoIDs  []string
}

// N returns the number of parties.
func (s *Setup) N() int { return len(s.Parties) }

// Names returns the parties' display names in seat order.
func (s *Setup) Names() []string {
	out := make([]string, len(s.Parties))
	for i, p := range s.Parties {
		out[i] = p.Name
	}
	return out
}

// TalkTurns returns the turns between the opening and the final deal: the discussion turns,
// or p1's solo turns.
func (s *Setup) TalkTurns() int { return s.Discussion + s.Solo }

// MaxTurns returns the number of turns of a match: the opening, the talk, the final deal.
func (s *Setup) MaxTurns() int { return s.TalkTurns() + 2 }

// NewSetup reads resolved params (Game.Resolve's result, or any params whose scenario is set)
// into a Setup, or says what is wrong. It reads no file: the scenario must be in the params.
func NewSetup(gp *matchv1.GameParams) (*Setup, error) {
	if err := checkBranch(gp); err != nil {
		return nil, err
	}
	p := gp.GetDeliberation()
	if p.GetScenario() == nil {
		return nil, fmt.Errorf("deliberation: the params hold no scenario; resolve them first")
	}
	return resolve(p, nil)
}

// checkBranch refuses params for another family. It looks at the oneof reflectively so that a
// branch added for a future family is named in the error.
func checkBranch(gp *matchv1.GameParams) error {
	if gp == nil {
		return nil
	}
	m := gp.ProtoReflect()
	if od := m.Descriptor().Oneofs().ByName("family"); od != nil {
		if fd := m.WhichOneof(od); fd != nil && fd.Name() != Name {
			return fmt.Errorf("deliberation: params are for the %q game, not %q", fd.Name(), Name)
		}
	}
	return nil
}

// loader finds a scenario by the game parameter.
type loader func(game string) (*deliberationv1.Scenario, error)

// resolve fills in p's defaults and checks every value. When p has no scenario, load finds it
// from p.game; NewSetup passes nil, since its params always carry one.
func resolve(p *deliberationv1.Params, load loader) (*Setup, error) {
	filled, err := games.FillParams(Name, &matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: p}})
	if err != nil {
		return nil, err
	}
	p = filled.GetDeliberation()
	s := &Setup{Game: strings.TrimSpace(p.GetGame())}
	if s.Game == "" {
		return nil, fmt.Errorf("deliberation: game must name a scenario (%s) or a folder", strings.Join(ShippedNames(), ", "))
	}
	sc := p.GetScenario()
	if sc == nil {
		if load == nil {
			return nil, fmt.Errorf("deliberation: the params hold no scenario")
		}
		var err error
		if sc, err = load(s.Game); err != nil {
			return nil, err
		}
	}
	if err := CheckScenario(sc); err != nil {
		return nil, err
	}
	sc = proto.CloneOf(sc)
	// Cut to the parties and issues that play.
	if p.Parties != nil {
		k := int(p.GetParties())
		if k < MinParties || k > len(sc.GetParties()) {
			return nil, fmt.Errorf("deliberation: parties must be from %d to %d (the scenario's parties), got %d", MinParties, len(sc.GetParties()), k)
		}
		sc.Parties = sc.Parties[:k]
	}
	if p.Issues != nil {
		k := int(p.GetIssues())
		if k < 1 || k > len(sc.GetIssues()) {
			return nil, fmt.Errorf("deliberation: issues must be from 1 to %d (the scenario's issues), got %d", len(sc.GetIssues()), k)
		}
		full := issuesOf(sc)
		opening, err := parseDeal(full, sc.GetOpeningDeal())
		if err != nil {
			return nil, fmt.Errorf("deliberation: the scenario's opening deal: %w", err)
		}
		sc.Issues = sc.Issues[:k]
		for _, party := range sc.Parties {
			party.Points = party.Points[:k]
		}
		sc.OpeningDeal = dealString(full[:k], opening[:k])
	}
	s.scenario = sc
	s.Title, s.Text, s.Source = sc.GetTitle(), sc.GetText(), sc.GetSource()
	s.Issues = issuesOf(sc)
	for _, party := range sc.GetParties() {
		pt := Party{ID: party.GetId(), Name: party.GetName(), Role: party.GetRole(), Threshold: int(party.GetThreshold()), Briefing: party.GetBriefing()}
		for _, ip := range party.GetPoints() {
			row := make([]int, len(ip.GetPoints()))
			for k, x := range ip.GetPoints() {
				row[k] = int(x)
			}
			pt.Points = append(pt.Points, row)
		}
		s.Parties = append(s.Parties, pt)
	}
	n := s.N()
	if s.Opening, err = parseDeal(s.Issues, sc.GetOpeningDeal()); err != nil {
		return nil, fmt.Errorf("deliberation: the scenario's opening deal: %w", err)
	}
	if p.OpeningDeal != nil {
		if s.Opening, err = parseDeal(s.Issues, p.GetOpeningDeal()); err != nil {
			return nil, fmt.Errorf("deliberation: opening_deal: %w", err)
		}
	}
	s.Discussion = DefaultTurnsPerParty * n
	if p.DiscussionTurns != nil {
		s.Discussion = int(p.GetDiscussionTurns())
	}
	s.Quorum = n - 1
	if p.Quorum != nil {
		s.Quorum = int(p.GetQuorum())
	}
	s.Solo = int(p.GetSoloTurns())
	s.Bonus = int(p.GetP1Bonus())
	s.NoDealValue = int(p.GetAdversaryNoDealValue())
	s.HistoryWindow = int(p.GetHistoryWindow())
	if s.Quorum < 1 || s.Quorum > n {
		return nil, fmt.Errorf("deliberation: quorum must be from 1 to %d (the parties), got %d", n, s.Quorum)
	}
	if s.Solo > 0 {
		// Only p1 speaks: the discussion turns are replaced by its solo turns.
		s.Discussion = 0
	}
	if err := s.fixOrder(p); err != nil {
		return nil, err
	}
	vetoes := p.GetVetoes()
	if len(vetoes) == 1 && strings.EqualFold(strings.TrimSpace(vetoes[0]), NoVetoes) {
		s.vetoIDs = []string{NoVetoes}
	} else {
		for _, v := range vetoes {
			seat, ok := s.PartyByName(v)
			if !ok {
				return nil, fmt.Errorf("deliberation: vetoes: %q is no party (parties: %s; or p1, p2, or %q alone)", v, s.partyList(), NoVetoes)
			}
			if slices.Contains(s.Vetoes, seat) {
				return nil, fmt.Errorf("deliberation: vetoes: %s is named twice", s.Parties[seat].Name)
			}
			s.Vetoes = append(s.Vetoes, seat)
		}
		slices.Sort(s.Vetoes)
		for _, seat := range s.Vetoes {
			s.vetoIDs = append(s.vetoIDs, s.Parties[seat].ID)
		}
	}
	return s, nil
}

// fixOrder reads the speaking_order parameter into s.Order, with the discussion's length.
func (s *Setup) fixOrder(p *deliberationv1.Params) error {
	names := p.GetSpeakingOrder()
	if len(names) == 0 {
		return nil
	}
	switch {
	case s.Solo > 0:
		return fmt.Errorf("deliberation: speaking_order orders a discussion; with solo_turns only p1 speaks")
	case len(names) > MaxTurns:
		return fmt.Errorf("deliberation: speaking_order names %d turns; at most %d", len(names), MaxTurns)
	case p.DiscussionTurns != nil && int(p.GetDiscussionTurns()) != len(names):
		return fmt.Errorf("deliberation: speaking_order names %d turns but discussion_turns is %d", len(names), p.GetDiscussionTurns())
	}
	s.Order = make([]int, len(names))
	for i, name := range names {
		seat, ok := s.PartyByName(name)
		if !ok {
			return fmt.Errorf("deliberation: speaking_order: turn %d: %q is no party (parties: %s, or p1, p2)", i+1, name, s.partyList())
		}
		s.Order[i] = seat
	}
	s.Discussion = len(names)
	return nil
}

// PartyByName finds a party by id, display name (both case-insensitive) or role ("p1", "p2").
func (s *Setup) PartyByName(name string) (int, bool) {
	name = strings.TrimSpace(name)
	switch strings.ToLower(name) {
	case "p1":
		return 0, true
	case "p2":
		return 1, true
	}
	for i, p := range s.Parties {
		if strings.EqualFold(p.ID, name) || strings.EqualFold(p.Name, name) {
			return i, true
		}
	}
	return 0, false
}

func (s *Setup) partyList() string {
	parts := make([]string, len(s.Parties))
	for i, p := range s.Parties {
		parts[i] = p.ID
	}
	return strings.Join(parts, ", ")
}

// Params returns the resolved parameters, every field set and the scenario included.
func (s *Setup) Params() *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{
		Game:                 proto.String(s.Game),
		Parties:              proto.Int32(int32(s.N())),
		Issues:               proto.Int32(int32(len(s.Issues))),
		DiscussionTurns:      proto.Int32(int32(s.Discussion)),
		Quorum:               proto.Int32(int32(s.Quorum)),
		Vetoes:               slices.Clone(s.vetoIDs),
		P1Bonus:              proto.Int32(int32(s.Bonus)),
		OpeningDeal:          proto.String(s.DealString(s.Opening)),
		SoloTurns:            proto.Int32(int32(s.Solo)),
		AdversaryNoDealValue: proto.Int32(int32(s.NoDealValue)),
		HistoryWindow:        proto.Int32(int32(s.HistoryWindow)),
		Scenario:             proto.CloneOf(s.scenario),
		SpeakingOrder:        s.orderIDs(),
	}}}
}

// orderIDs writes a fixed speaking order by party id; nil when none is fixed.
func (s *Setup) orderIDs() []string {
	if s.Order == nil {
		return nil
	}
	out := make([]string, len(s.Order))
	for i, seat := range s.Order {
		out[i] = s.Parties[seat].ID
	}
	return out
}

// issuesOf reads a checked scenario's issues.
func issuesOf(sc *deliberationv1.Scenario) []Issue {
	out := make([]Issue, len(sc.GetIssues()))
	for i, is := range sc.GetIssues() {
		out[i] = Issue{ID: is.GetId(), Label: is.GetLabel()}
		for _, o := range is.GetOptions() {
			out[i].Options = append(out[i].Options, o.GetLabel())
		}
	}
	return out
}

// IssueID returns the id of issue i (0-based): "A", "B", ...
func IssueID(i int) string { return string(rune('A' + i)) }

// CheckScenario checks a scenario's data: 3 to MaxParties parties in seat order (p1 first, p2
// second, then players), unique ids and names, issues A, B, ... with options A1, A2, ...,
// one score per option for every party, numbers within MaxPoints, and an opening deal.
func CheckScenario(sc *deliberationv1.Scenario) error {
	parties, issues := sc.GetParties(), sc.GetIssues()
	switch {
	case len(parties) < MinParties || len(parties) > MaxParties:
		return fmt.Errorf("deliberation: a scenario has %d to %d parties, this one %d", MinParties, MaxParties, len(parties))
	case len(issues) < 1 || len(issues) > MaxIssues:
		return fmt.Errorf("deliberation: a scenario has 1 to %d issues, this one %d", MaxIssues, len(issues))
	case len(sc.GetText()) > MaxTextLen:
		return fmt.Errorf("deliberation: the scenario text is longer than %d bytes", MaxTextLen)
	}
	for i, is := range issues {
		if is.GetId() != IssueID(i) {
			return fmt.Errorf("deliberation: issue %d has id %q, want %q", i+1, is.GetId(), IssueID(i))
		}
		if len(is.GetOptions()) < 1 || len(is.GetOptions()) > MaxOptions {
			return fmt.Errorf("deliberation: issue %s has %d options; it needs 1 to %d", is.GetId(), len(is.GetOptions()), MaxOptions)
		}
		for k, o := range is.GetOptions() {
			if want := (Issue{ID: is.GetId()}).OptionID(k); o.GetId() != want {
				return fmt.Errorf("deliberation: option %d of issue %s has id %q, want %q", k+1, is.GetId(), o.GetId(), want)
			}
		}
	}
	for i, p := range parties {
		id, name := p.GetId(), p.GetName()
		switch {
		case strings.TrimSpace(id) == "" || strings.TrimSpace(name) == "":
			return fmt.Errorf("deliberation: party %d has no id or no name", i+1)
		case strings.ContainsAny(id, ",\n") || strings.ContainsAny(name, ",\n"):
			return fmt.Errorf("deliberation: party %q: ids and names cannot hold commas or line breaks", name)
		case strings.EqualFold(id, "p1") || strings.EqualFold(id, "p2") || strings.EqualFold(id, NoVetoes):
			return fmt.Errorf("deliberation: party %q: the id %q is reserved", name, id)
		case len(p.GetBriefing()) > MaxTextLen:
			return fmt.Errorf("deliberation: party %q: the briefing is longer than %d bytes", name, MaxTextLen)
		}
		for _, q := range parties[:i] {
			if strings.EqualFold(q.GetId(), id) || strings.EqualFold(q.GetName(), name) ||
				strings.EqualFold(q.GetId(), name) || strings.EqualFold(q.GetName(), id) {
				return fmt.Errorf("deliberation: parties %q and %q share an id or a name", q.GetName(), name)
			}
		}
		want := []deliberationv1.PartyRole{deliberationv1.PartyRole_PARTY_ROLE_P1, deliberationv1.PartyRole_PARTY_ROLE_P2}
		switch {
		case i < 2 && p.GetRole() != want[i]:
			return fmt.Errorf("deliberation: party %q sits in seat %d, which belongs to %s", name, i, []string{"p1", "p2"}[i])
		case i >= 2 && p.GetRole() != deliberationv1.PartyRole_PARTY_ROLE_PLAYER && p.GetRole() != deliberationv1.PartyRole_PARTY_ROLE_TARGET:
			return fmt.Errorf("deliberation: party %q has role %v; only seats 0 and 1 hold p1 and p2", name, p.GetRole())
		case p.GetThreshold() < -MaxPoints || p.GetThreshold() > MaxPoints:
			return fmt.Errorf("deliberation: party %q: the threshold %d is out of range", name, p.GetThreshold())
		case len(p.GetPoints()) != len(issues):
			return fmt.Errorf("deliberation: party %q scores %d issues, the scenario has %d", name, len(p.GetPoints()), len(issues))
		}
		for j, ip := range p.GetPoints() {
			if len(ip.GetPoints()) != len(issues[j].GetOptions()) {
				return fmt.Errorf("deliberation: party %q scores %d options of issue %s, which has %d", name, len(ip.GetPoints()), issues[j].GetId(), len(issues[j].GetOptions()))
			}
			for _, x := range ip.GetPoints() {
				if x < -MaxPoints || x > MaxPoints {
					return fmt.Errorf("deliberation: party %q: the score %d on issue %s is out of range", name, x, issues[j].GetId())
				}
			}
		}
	}
	if _, err := parseDeal(issuesOf(sc), sc.GetOpeningDeal()); err != nil {
		return fmt.Errorf("deliberation: the scenario's opening deal: %w", err)
	}
	return nil
}

// issueProto writes an issue as the generic game.v1 Issue.
func (is Issue) proto(only int) *gamev1.Issue {
	out := &gamev1.Issue{Id: is.ID, Label: is.Label}
	for k, label := range is.Options {
		if only >= 0 && k != only {
			continue
		}
		out.Options = append(out.Options, &gamev1.Option{Id: is.OptionID(k), Label: label})
	}
	return out
}
