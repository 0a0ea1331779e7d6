package deliberation

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

func newRand(seed, salt uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, salt)) }

// statement is one public message of the match with the deal it tabled. Never changed once made.
type statement struct {
	turn  int32
	seat  int
	stage deliberationv1.Stage
	text  string
	deal  Deal // nil: no deal
}

// fixed is what a match knows from its parameters and seed: shared by every state of the match
// and never changed.
type fixed struct {
	s        *Setup
	speakers []int // speaker of each talk turn
	lastTalk []int // lastTalk[seat]: index into speakers of seat's last talk turn, -1 for none
	rules    []string
}

// match is the state of one match. Slices are append-only and shared by clones (appends go
// through slices.Clip); everything pointed to is never changed.
type match struct {
	f     *fixed
	turn  int32
	stage deliberationv1.Stage

	statements []statement
	final      Deal  // the final deal, when p1 tabled one
	vote       *Vote // the computed votes on it
	history    games.History
}

func newMatch(s *Setup, seed uint64) *match {
	f := &fixed{s: s, speakers: Schedule(s, seed), lastTalk: make([]int, s.N())}
	for seat := range f.lastTalk {
		f.lastTalk[seat] = -1
	}
	for i, seat := range f.speakers {
		f.lastTalk[seat] = i
	}
	f.rules = make([]string, s.N())
	for seat := range s.N() {
		f.rules[seat] = rulesText(s, seat)
	}
	m := &match{f: f, turn: 1, stage: deliberationv1.Stage_STAGE_OPENING}
	m.history.AddAnnouncement(1, fmt.Sprintf("The match begins. Turn 1: %s (p1) tables the opening deal %s.", s.Parties[0].Name, s.DealString(s.Opening)))
	return m
}

func (m *match) s() *Setup { return m.f.s }

// talkIndex is the index of the current turn among the talk turns (turn 2 is index 0).
func (m *match) talkIndex() int { return int(m.turn) - 2 }

// speaker is the seat to move, or -1 when the match is over.
func (m *match) speaker() int {
	switch m.stage {
	case deliberationv1.Stage_STAGE_OPENING, deliberationv1.Stage_STAGE_FINAL:
		return 0
	case deliberationv1.Stage_STAGE_DISCUSSION:
		return m.f.speakers[m.talkIndex()]
	}
	return -1
}

// ToMove returns the one seat to move, or none at the end.
func (m *match) ToMove() []games.Seat {
	if sp := m.speaker(); sp >= 0 {
		return []games.Seat{games.Seat(sp)}
	}
	return nil
}

// Turn returns the current turn, 1-based: 1 is the opening, the last is the final deal.
func (m *match) Turn() int32 { return m.turn }

// LastMove returns the summary of seat's move on turn (games.MoveWorder).
func (m *match) LastMove(seat games.Seat, turn int32) (string, []games.Seat, bool) {
	return m.history.LastMove(seat, turn)
}

// OpeningEvents announces the opening phase.
func (m *match) OpeningEvents() []*eventsv1.MatchEvent {
	s := m.s()
	return []*eventsv1.MatchEvent{phaseEvent(PhaseOpening, fmt.Sprintf("Opening: %s (p1) tables the opening deal %s.", s.Parties[0].Name, s.DealText(s.Opening)))}
}

func phaseEvent(name, summary string) *eventsv1.MatchEvent {
	return &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_PhaseStarted{PhaseStarted: &eventsv1.PhaseStarted{Phase: name, Summary: summary}}}
}

// isLastTalk reports whether the current talk turn is its speaker's last.
func (m *match) isLastTalk() bool {
	return m.stage == deliberationv1.Stage_STAGE_DISCUSSION && m.f.lastTalk[m.speaker()] == m.talkIndex()
}

// Apply plays seat's action. Refused actions return a *games.Rejection and change nothing:
// every check comes before the first write.
func (m *match) Apply(seat games.Seat, action *agentv1.Action) ([]*eventsv1.MatchEvent, error) {
	s := m.s()
	if err := games.CheckAction(action, seat, s.N(), games.AllowMessageTerms()); err != nil {
		return nil, err
	}
	if m.stage == deliberationv1.Stage_STAGE_OVER {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "the match is over; no more moves can be made")
	}
	if int(seat) != m.speaker() {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "%s is not to move on turn %d: %s", m.name(int(seat)), m.turn, m.waitingText())
	}
	msgs := action.GetMessages()
	if len(msgs) != 1 || len(msgs[0].GetTo()) != 0 {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE,
			"every turn carries exactly one public message (to left empty), and the action has %s; %s", m.messagesText(msgs), m.moveRule())
	}
	msg := msgs[0]
	move := action.GetMove()
	var deal Deal
	var err error
	switch m.stage {
	case deliberationv1.Stage_STAGE_OPENING:
		p := move.GetPropose()
		if p == nil {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "the opening turn's only legal move is propose; %s", m.moveRule())
		}
		if msg.GetProposal() != nil {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "on this turn the deal goes in the propose move, not in the message; %s", m.moveRule())
		}
		if deal, err = m.dealOf(p.GetProposal(), "the proposal"); err != nil {
			return nil, err
		}
		if !deal.Equal(s.Opening) {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "the opening deal is fixed: it must be %s, not %s", s.DealString(s.Opening), s.DealString(deal))
		}
	case deliberationv1.Stage_STAGE_DISCUSSION:
		if move.GetSay() == nil {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "a discussion turn's only legal move is say; %s", m.moveRule())
		}
		if msg.GetProposal() != nil {
			if deal, err = m.dealOf(msg.GetProposal(), "the deal attached to the message"); err != nil {
				return nil, err
			}
		}
	case deliberationv1.Stage_STAGE_FINAL:
		switch {
		case move.GetPropose() != nil:
			if deal, err = m.dealOf(move.GetPropose().GetProposal(), "the final deal"); err != nil {
				return nil, err
			}
		case move.GetReject() != nil:
		default:
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "on the final turn the legal moves are propose (the final deal) and reject (no deal); %s", m.moveRule())
		}
		if msg.GetProposal() != nil {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "on this turn the deal goes in the propose move, not in the message; %s", m.moveRule())
		}
	}
	return m.apply(int(seat), action, deal), nil
}

// dealOf reads a proposal's deal, refusing other terms.
func (m *match) dealOf(p *gamev1.Proposal, what string) (Deal, error) {
	d := p.GetDeal()
	if d == nil {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "%s must be a deal (proposal.deal), not %s; %s", what, termsKind(p), dealRule(m.s().Issues))
	}
	deal, err := m.s().DealFromProto(d)
	if err != nil {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "%s: %v", what, err)
	}
	return deal, nil
}

func termsKind(p *gamev1.Proposal) string {
	if p.GetAllocation() != nil {
		return "an allocation"
	}
	return "empty terms"
}

// apply records a checked action and moves the match on.
func (m *match) apply(seat int, action *agentv1.Action, deal Deal) []*eventsv1.MatchEvent {
	s := m.s()
	msg := action.GetMessages()[0]
	st := statement{turn: m.turn, seat: seat, stage: m.stage, text: msg.GetText(), deal: deal}
	m.statements = append(slices.Clip(m.statements), st)
	var summary string
	switch m.stage {
	case deliberationv1.Stage_STAGE_OPENING:
		summary = fmt.Sprintf("%s tables the opening deal %s.", m.name(seat), s.DealString(deal))
	case deliberationv1.Stage_STAGE_DISCUSSION:
		summary = fmt.Sprintf("%s speaks.", m.name(seat))
		if deal != nil {
			summary = fmt.Sprintf("%s speaks and attaches the deal %s.", m.name(seat), s.DealString(deal))
		}
	case deliberationv1.Stage_STAGE_FINAL:
		summary = fmt.Sprintf("%s tables no final deal.", m.name(seat))
		if deal != nil {
			summary = fmt.Sprintf("%s tables the final deal %s.", m.name(seat), s.DealString(deal))
		}
	}
	m.history.AddMove(m.turn, games.Seat(seat), action.GetMove(), []*gamev1.Message{msg}, summary)
	if m.stage == deliberationv1.Stage_STAGE_FINAL {
		return m.end(deal)
	}
	m.turn++
	var events []*eventsv1.MatchEvent
	idx := m.talkIndex()
	switch {
	case idx >= s.TalkTurns():
		m.stage = deliberationv1.Stage_STAGE_FINAL
		text := fmt.Sprintf("Final turn %d: %s (p1) tables the final deal; then every party's vote is computed from its score sheet.", m.turn, s.Parties[0].Name)
		events = append(events, phaseEvent(PhaseFinal, text))
		m.history.AddAnnouncement(m.turn, text)
	case idx == 0:
		m.stage = deliberationv1.Stage_STAGE_DISCUSSION
		var text string
		if s.Solo > 0 {
			text = fmt.Sprintf("Solo turns: %s (p1) speaks alone for %d %s; the other parties do not speak but will vote.", s.Parties[0].Name, s.Solo, plural(s.Solo, "turn", "turns"))
			events = append(events, phaseEvent(PhaseSolo, text))
		} else {
			text = fmt.Sprintf("Discussion: %d %s in blocks of %d, each block in a speaking order drawn at random; every party is told when it speaks for the last time.", s.Discussion, plural(s.Discussion, "turn", "turns"), s.N())
			if s.Order != nil {
				text = fmt.Sprintf("Discussion: %d %s in a speaking order fixed in advance; every party is told when it speaks for the last time.", s.Discussion, plural(s.Discussion, "turn", "turns"))
			}
			events = append(events, phaseEvent(PhaseDiscussion, text))
		}
		m.history.AddAnnouncement(m.turn, text)
	}
	if m.stage == deliberationv1.Stage_STAGE_DISCUSSION && s.Solo == 0 && s.Order == nil && idx%s.N() == 0 {
		// A fixed order is in the params; only drawn ones are chance events.
		events = append(events, m.orderEvent(idx/s.N()))
	}
	return events
}

// orderEvent records block b's speaking order.
func (m *match) orderEvent(b int) *eventsv1.MatchEvent {
	s := m.s()
	n := s.N()
	order := m.f.speakers[b*n : min((b+1)*n, len(m.f.speakers))]
	names := make([]string, len(order))
	for i, seat := range order {
		names[i] = s.Parties[seat].Name
	}
	return &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_ChanceDrawn{ChanceDrawn: &eventsv1.ChanceDrawn{
		What:    "speaking order",
		Value:   proto.Int64(int64(b + 1)),
		Summary: fmt.Sprintf("Speaking order of block %d (turns %d to %d): %s.", b+1, int(m.turn), int(m.turn)+len(order)-1, strings.Join(names, ", ")),
	}}}
}

// end decides the final deal (nil: p1 tabled none) and ends the match.
func (m *match) end(deal Deal) []*eventsv1.MatchEvent {
	s := m.s()
	m.stage = deliberationv1.Stage_STAGE_OVER
	if deal == nil {
		m.history.AddAnnouncement(m.turn, fmt.Sprintf("%s tabled no final deal: there is no deal, and every party gets its minimum score. The match is over.", s.Parties[0].Name))
		return nil
	}
	v := s.Vote(deal)
	m.final, m.vote = deal, &v
	ev := &eventsv1.ProposalResolved{Proposer: 0, Proposal: &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: s.DealProto(deal)}}, Accepted: v.Passed}
	for seat, yes := range v.Yes {
		if yes {
			ev.AcceptedBy = append(ev.AcceptedBy, int32(seat))
		} else {
			ev.RejectedBy = append(ev.RejectedBy, int32(seat))
		}
	}
	ev.Summary = m.voteText(v, true)
	m.history.AddAnnouncement(m.turn, m.voteText(v, false)+" The match is over.")
	return []*eventsv1.MatchEvent{{Payload: &eventsv1.MatchEvent_ProposalResolved{ProposalResolved: ev}}}
}

// voteText writes the votes on the final deal: who said yes and no, and whether it passed; with
// numbers set, every party's score and threshold too (for the record, after the match: the
// history every seat sees never carries another party's numbers).
func (m *match) voteText(v Vote, numbers bool) string {
	s := m.s()
	var yes, no []string
	for seat, y := range v.Yes {
		if y {
			yes = append(yes, s.Parties[seat].Name)
		} else {
			no = append(no, s.Parties[seat].Name)
		}
	}
	verdict := "fails"
	if v.Passed {
		verdict = "passes"
	}
	text := fmt.Sprintf("The final deal %s %s with %d of %d yes-votes (quorum %d%s).", s.DealString(m.final), verdict, v.YesCount, s.N(), s.Quorum, m.vetoText())
	if len(yes) > 0 {
		text += " Yes: " + strings.Join(yes, ", ") + "."
	}
	if len(no) > 0 {
		text += " No: " + strings.Join(no, ", ") + "."
	}
	if !numbers {
		return text
	}
	var b strings.Builder
	b.WriteString(text)
	for seat, p := range s.Parties {
		vote := "no"
		if v.Yes[seat] {
			vote = "yes"
		}
		extra := ""
		if seat == 0 && v.ByBonus {
			extra = fmt.Sprintf(", through its bonus of %d", s.Bonus)
		}
		fmt.Fprintf(&b, "\n    %s: %s (score %d, minimum %d%s)", p.Name, vote, v.Scores[seat], p.Threshold, extra)
	}
	return b.String()
}

func (m *match) vetoText() string {
	if len(m.s().Vetoes) == 0 {
		return ", no vetoes"
	}
	names := make([]string, len(m.s().Vetoes))
	for i, seat := range m.s().Vetoes {
		names[i] = m.s().Parties[seat].Name
	}
	return ", vetoes " + strings.Join(names, " and ")
}

// Default returns the documented move of the seat to move; for any other seat, a reject (which
// the rules refuse).
func (m *match) Default(seat games.Seat) *agentv1.Action {
	msg := []*gamev1.Message{{Text: DefaultText}}
	if int(seat) != m.speaker() {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, Messages: msg}
	}
	switch m.stage {
	case deliberationv1.Stage_STAGE_OPENING:
		return &agentv1.Action{Move: proposeMove(m.s().DealProto(m.s().Opening)), Messages: msg}
	case deliberationv1.Stage_STAGE_DISCUSSION:
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, Messages: msg}
	default:
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, Messages: msg}
	}
}

func proposeMove(d *gamev1.Deal) *gamev1.Move {
	return &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: d}}}}}
}

// Outcome returns how the match ended.
func (m *match) Outcome() *matchv1.Outcome {
	s := m.s()
	if m.stage != deliberationv1.Stage_STAGE_OVER {
		return &matchv1.Outcome{Summary: "The match is not over."}
	}
	out := &matchv1.Outcome{}
	var pay []int
	switch {
	case m.final == nil:
		out.Cause = matchv1.EndCause_END_CAUSE_REJECTED
		out.Summary = fmt.Sprintf("%s tabled no final deal, so every party gets its minimum score.", s.Parties[0].Name)
		pay = s.Thresholds()
	case m.vote.Passed:
		out.Cause, out.Agreement = matchv1.EndCause_END_CAUSE_AGREEMENT, true
		kind := fmt.Sprintf("%d-way", m.vote.YesCount)
		if m.vote.Unanimous {
			kind = fmt.Sprintf("unanimous (%d-way)", s.N())
		}
		out.Summary = fmt.Sprintf("The final deal %s passed, %s: every party gets its score for it", s.DealText(m.final), kind)
		if m.vote.Unanimous && s.Bonus != 0 {
			out.Summary += fmt.Sprintf(", and %s its bonus of %d", s.Parties[0].Name, s.Bonus)
		}
		out.Summary += "."
		pay = m.vote.Payoffs(s)
	default:
		out.Cause = matchv1.EndCause_END_CAUSE_TURN_LIMIT
		out.Summary = fmt.Sprintf("The final deal %s failed the vote (%d of %d yes-votes), so every party gets its minimum score.", s.DealText(m.final), m.vote.YesCount, s.N())
		pay = m.vote.Payoffs(s)
	}
	for _, x := range pay {
		out.Payoffs = append(out.Payoffs, float64(x))
	}
	return out
}

// Clone returns an independent copy.
func (m *match) Clone() games.State {
	c := *m
	c.history = m.history.Clone()
	return &c
}

// Observe builds seat's observation: the public view, its own score sheet and briefing, and the
// latest history_window messages of its history.
func (m *match) Observe(seat games.Seat) *agentv1.Observation { return m.observe(seat, true) }

// ObserveUnbriefed is Observe without the briefing, none written (games.Unbriefed).
func (m *match) ObserveUnbriefed(seat games.Seat) *agentv1.Observation { return m.observe(seat, false) }

func (m *match) observe(seat games.Seat, brief bool) *agentv1.Observation {
	s := m.s()
	obs := &agentv1.Observation{Game: Name, Seat: seat, Turn: m.turn, MaxTurns: int32(s.MaxTurns())}
	if seat < 0 || int(seat) >= s.N() {
		obs.Briefing = fmt.Sprintf("Seat %d does not play in this match; the seats are 0 (%s) to %d (%s).", seat, s.Parties[0].Name, s.N()-1, s.Parties[s.N()-1].Name)
		return obs
	}
	me := int(seat)
	obs.Phase = m.phase()
	if me == m.speaker() {
		obs.RequiredMessages = []*gamev1.MessageSlot{{}}
		switch m.stage {
		case deliberationv1.Stage_STAGE_OPENING:
			obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE}
			obs.ProposalForms = []*gamev1.ProposalForm{s.fixedForm(s.Opening, "the opening deal", me)}
		case deliberationv1.Stage_STAGE_DISCUSSION:
			obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_SAY}
			obs.MessageTermForms = []*gamev1.ProposalForm{s.DealForm(me)}
		case deliberationv1.Stage_STAGE_FINAL:
			obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE, gamev1.MoveKind_MOVE_KIND_REJECT}
			obs.ProposalForms = []*gamev1.ProposalForm{s.DealForm(me)}
		}
	}
	entries, omitted := m.history.For(seat)
	obs.History = window(entries, s.HistoryWindow)
	obs.HistoryOmitted = omitted + int32(len(entries)-len(obs.History))
	obs.View = &agentv1.Observation_Deliberation{Deliberation: m.view(me)}
	if brief {
		obs.Briefing = m.briefing(me)
	}
	return obs
}

// window keeps the entries from the window-th latest entry with messages on (all when window is
// 0 or not reached).
func window(entries []*agentv1.HistoryEntry, window int) []*agentv1.HistoryEntry {
	if window <= 0 {
		return entries
	}
	seen := 0
	for i := len(entries) - 1; i >= 0; i-- {
		if len(entries[i].GetMessages()) == 0 {
			continue
		}
		if seen++; seen == window {
			return entries[i:]
		}
	}
	return entries
}

func (m *match) phase() string {
	switch m.stage {
	case deliberationv1.Stage_STAGE_OPENING:
		return PhaseOpening
	case deliberationv1.Stage_STAGE_DISCUSSION:
		if m.s().Solo > 0 {
			return PhaseSolo
		}
		return PhaseDiscussion
	case deliberationv1.Stage_STAGE_FINAL:
		return PhaseFinal
	}
	return ""
}

// view builds seat's view: public facts, and seat's own score sheet, threshold and briefing.
func (m *match) view(seat int) *deliberationv1.View {
	s := m.s()
	v := &deliberationv1.View{
		Title:                s.Title,
		Scenario:             s.Text,
		Quorum:               int32(s.Quorum),
		DiscussionTurns:      int32(s.TalkTurns()),
		SoloTurns:            int32(s.Solo),
		HistoryWindow:        int32(s.HistoryWindow),
		AdversaryNoDealValue: int32(s.NoDealValue),
		OpeningDeal:          s.DealProto(s.Opening),
		Stage:                m.stage,
		Threshold:            int32(s.Parties[seat].Threshold),
		Briefing:             s.Parties[seat].Briefing,
	}
	for i, p := range s.Parties {
		role := deliberationv1.PartyRole_PARTY_ROLE_PLAYER
		if p.Role == deliberationv1.PartyRole_PARTY_ROLE_P1 || p.Role == deliberationv1.PartyRole_PARTY_ROLE_P2 {
			role = p.Role
		}
		v.Parties = append(v.Parties, &deliberationv1.PartyInfo{Seat: int32(i), Id: p.ID, Name: p.Name, Role: role})
	}
	for _, is := range s.Issues {
		v.Issues = append(v.Issues, is.proto(-1))
	}
	for _, seat := range s.Vetoes {
		v.Vetoes = append(v.Vetoes, int32(seat))
	}
	for _, row := range s.Parties[seat].Points {
		ip := &deliberationv1.IssuePoints{Points: make([]int32, len(row))}
		for k, x := range row {
			ip.Points[k] = int32(x)
		}
		v.Points = append(v.Points, ip)
	}
	if seat == 0 {
		v.P1Bonus = proto.Int32(int32(s.Bonus))
	}
	if m.stage == deliberationv1.Stage_STAGE_DISCUSSION {
		v.DiscussionTurn = int32(m.talkIndex() + 1)
	}
	if sp := m.speaker(); sp >= 0 {
		v.Speaker = proto.Int32(int32(sp))
		v.LastTurn = sp == seat && m.isLastTalk()
	}
	for _, st := range m.statements {
		ps := &deliberationv1.Statement{Turn: st.turn, Seat: int32(st.seat), Stage: st.stage, Text: st.text}
		if st.deal != nil {
			ps.Deal = s.DealProto(st.deal)
		}
		v.Statements = append(v.Statements, ps)
	}
	if m.final != nil {
		v.FinalDeal = s.DealProto(m.final)
		v.Passed = m.vote.Passed
		for i, y := range m.vote.Yes {
			if y {
				v.YesVotes = append(v.YesVotes, int32(i))
			}
		}
	}
	return v
}

func (m *match) name(seat int) string { return games.SeatName(games.Seat(seat), m.s().Names()) }

// waitingText says who the match is waiting for.
func (m *match) waitingText() string {
	switch m.stage {
	case deliberationv1.Stage_STAGE_OVER:
		return "the match is over"
	case deliberationv1.Stage_STAGE_OPENING:
		return fmt.Sprintf("it is %s's turn to table the opening deal", m.name(0))
	case deliberationv1.Stage_STAGE_FINAL:
		return fmt.Sprintf("it is %s's turn to table the final deal", m.name(0))
	}
	return fmt.Sprintf("it is %s's turn to speak", m.name(m.speaker()))
}

// moveRule says what the move of the seat to move must be.
func (m *match) moveRule() string {
	s := m.s()
	switch m.stage {
	case deliberationv1.Stage_STAGE_OPENING:
		return fmt.Sprintf("the opening turn is a propose move with the deal %s (proposal.deal) and one public message", s.DealString(s.Opening))
	case deliberationv1.Stage_STAGE_DISCUSSION:
		return "a discussion turn is a say move with exactly one public message, which may carry one complete deal in its proposal field (proposal.deal)"
	case deliberationv1.Stage_STAGE_FINAL:
		return "the final turn is a propose move with a complete deal (proposal.deal), or a reject move for no deal, with one public message"
	}
	return "the match is over"
}

func (m *match) messagesText(msgs []*gamev1.Message) string {
	switch {
	case len(msgs) == 0:
		return "no message"
	case len(msgs) > 1:
		return fmt.Sprintf("%d messages", len(msgs))
	}
	return "a message addressed to particular parties"
}

// plural picks the singular or plural form of a counted noun.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
