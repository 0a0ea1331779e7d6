// Package coalition implements the n-player coalition game of specs/coalition.md (the "ice
// cream" game): players negotiate in private, then a randomly drawn proposer makes a binding
// proposal on how a coalition shares its value, and the coalition's members vote on it.
//
// Rules, as this package enforces them:
//
//   - Players (default A, B, C) sit in seats 0, 1, ... in rotation order. Every coalition (set
//     of players) has a value, a whole number of units (default AB=750, AC=750, BC=500,
//     ABC=1000, everything else 0).
//   - Phase 1 ("talk") has `rounds` rounds (default 3). Round r's active player is
//     players[(r-1) mod n]. On the round's first turn the active player alone moves: a say
//     move whose messages are exactly one to each other player, each addressed to that player
//     alone. On its second turn every other player moves at once: a say move with exactly one
//     message, addressed to the active player alone.
//   - Any message, in either phase, may carry a non-binding offer (Message.proposal): an
//     Allocation with one share per member of a coalition that contains the sender, each
//     receiving {unit: amount}, amounts whole, at least 0, adding up to the coalition's value.
//     A message is seen only by its recipients and its sender, offer included; in phase 1
//     nobody even learns that a reply was written except the player it was written to.
//   - Phase 2 ("proposals") allows at most `max_proposals` proposals (default 10). Before each
//     one, a proposer is drawn uniformly from all players, independently of earlier draws (the
//     k-th draw comes from a generator seeded with the match seed and k). The proposer's only
//     legal move is propose: an Allocation naming a coalition that contains it, by giving each
//     member, and nobody else, a share that receives {unit: amount}; amounts are whole, at
//     least 0, and add up exactly to the coalition's value. Anything else is refused with the
//     reason (REJECTION_CODE_INVALID_TERMS), and the runner lets the player try again.
//   - Every other member of the named coalition then votes at once, accept or reject;
//     non-members are not asked, and the proposer counts as accepting (so a proposal of the
//     proposer alone passes at once). Votes are kept secret until all are in; then the
//     proposal and every vote are announced to all.
//   - If all accept, the game ends (END_CAUSE_AGREEMENT): members get their amounts, everyone
//     else 0. If anyone rejects and proposals remain, the next proposer is drawn. If the last
//     allowed proposal is rejected, the game ends with everyone at 0 and the cause
//     END_CAUSE_TURN_LIMIT: the proposal limit is this game's turn limit, and no single player
//     chose to end it.
//
// Turns: each round of phase 1 takes two turns (the active player's messages, then the
// replies), and each proposal two (the proposal, then the votes; one when the proposer is
// alone), so a match lasts at most 2*rounds + 2*max_proposals turns.
//
// The default moves, played for a seat whose agent gives no usable answer, are:
//
//   - in phase 1, the required messages, each with the text "(no message)" and no offer;
//   - as proposer, the grand coalition with its value split as evenly as possible (the units
//     left over go one each to the first players in seat order);
//   - as voter, reject.
//
// Observations carry, besides the coalition view, the generic rules any agent can follow:
// required_messages for a talk turn, proposal_forms (one per coalition the proposer may name,
// with the total its amounts must reach) and message_term_forms for offers.
//
// Events: PhaseStarted when a phase begins (the first one among the opening events,
// games.Opener), ChanceDrawn for each proposer drawn, and ProposalResolved when the votes on a
// proposal are in.
package coalition

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	coalitionv1 "github.com/parley-arena/parley/gen/go/parley/games/coalition/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition/solution"
	"google.golang.org/protobuf/proto"
)

// Name is the game's name in the registry and in observations.
const Name = "coalition"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

// Phase names, as in Observation.phase and PhaseStarted.phase.
const (
	PhaseTalk      = "talk"
	PhaseProposals = "proposals"
)

// DefaultText is the text of the messages a default move sends.
const DefaultText = "(no message)"

// drawSalt separates the proposer draws from any other use of the match seed.
const drawSalt = 0x636f616c6974696f // "coalitio"

// New returns the coalition game.
func New() games.Game { return game{} }

type game struct{}

// Info describes the game, its seats (for the default players) and its parameters.
func (game) Info() *gamev1.GameInfo {
	return &gamev1.GameInfo{
		Name:         Name,
		Description:  "Coalition game: players negotiate in private, then randomly drawn proposers put binding splits of a coalition's value to its members' vote.",
		RulesVersion: RulesVersion,
		Seats:        slices.Clone(defaultPlayers[:]),
		SeatRoles:    []string{"", "", ""},
		Params:       games.ParamInfos(Name, nil),
	}
}

// Seats names the seats after the players of resolved params (the default players when the
// params are not valid).
func (g game) Seats(params *matchv1.GameParams) (names, roles []string) {
	s, err := NewSetup(params)
	if err != nil {
		info := g.Info()
		return info.GetSeats(), info.GetSeatRoles()
	}
	return slices.Clone(s.Players), make([]string, s.N())
}

// Resolve validates params and fills in the defaults, listing every coalition's value.
func (game) Resolve(params *matchv1.GameParams) (*matchv1.GameParams, error) {
	s, err := NewSetup(params)
	if err != nil {
		return nil, err
	}
	return s.Params(), nil
}

// NewState starts a match with resolved params. The seed drives the proposer draws.
func (game) NewState(params *matchv1.GameParams, seed uint64) (games.State, error) {
	if err := games.CheckResolved(Name, params); err != nil {
		return nil, err
	}
	s, err := read(params.GetCoalition())
	if err != nil {
		return nil, err
	}
	st := &state{r: newRules(s), seed: seed, turn: 1}
	if s.Rounds > 0 {
		st.phase, st.round = phaseTalk, 1
		st.awaiting = solution.CoalitionOf(int(st.active()))
		st.history.AddAnnouncement(1, fmt.Sprintf("Phase 1 (private negotiation) begins: %d %s. Round 1: %s is active.",
			s.Rounds, plural(int64(s.Rounds), "round", "rounds"), s.Players[st.active()]))
	} else {
		st.startProposals()
	}
	return st, nil
}

type phase int

const (
	phaseTalk phase = iota
	phaseProposals
	phaseOver
)

// rules is what a match knows from its parameters: shared by every state of the match and
// never changed.
type rules struct {
	s *Setup
	// forms[seat] lists one form per coalition containing seat, for proposals and offers;
	// bounds[seat] every amount any of them fills in.
	forms  [][]*gamev1.ProposalForm
	bounds [][]*gamev1.Bound
	values []*coalitionv1.CoalitionValue
	// text[seat] is the fixed part of seat's briefing, split[seat] the rule for seat's splits
	// and example[seat] an example allocation with its meaning.
	text    []string
	split   []string
	example [][2]string
}

func newRules(s *Setup) *rules {
	n := s.N()
	r := &rules{s: s, forms: make([][]*gamev1.ProposalForm, n), bounds: make([][]*gamev1.Bound, n),
		text: make([]string, n), split: make([]string, n), example: make([][2]string, n)}
	for _, c := range s.Coalitions() {
		cv := &coalitionv1.CoalitionValue{Value: s.Values[c]}
		for _, m := range c.Members() {
			cv.Members = append(cv.Members, int32(m))
		}
		r.values = append(r.values, cv)
	}
	for seat := range n {
		maxOf := make([]int64, n)
		for _, c := range s.Coalitions() {
			if !c.Has(seat) {
				continue
			}
			f := &gamev1.ProposalForm{
				Label:  "coalition " + s.Name(c),
				Totals: []*gamev1.AmountTotal{{Side: gamev1.ShareSide_SHARE_SIDE_RECEIVES, Resource: s.Unit, Total: s.Values[c]}},
			}
			for _, m := range c.Members() {
				f.Bounds = append(f.Bounds, &gamev1.Bound{Seat: int32(m), Side: gamev1.ShareSide_SHARE_SIDE_RECEIVES, Resource: s.Unit, Max: s.Values[c]})
				maxOf[m] = max(maxOf[m], s.Values[c])
			}
			r.forms[seat] = append(r.forms[seat], f)
		}
		for m := range n {
			r.bounds[seat] = append(r.bounds[seat], &gamev1.Bound{Seat: int32(m), Side: gamev1.ShareSide_SHARE_SIDE_RECEIVES, Resource: s.Unit, Max: maxOf[m]})
		}
		r.text[seat] = rulesText(s, games.Seat(seat))
		r.split[seat] = splitRule(s, games.Seat(seat))
		r.example[seat][0], r.example[seat][1] = allocationExample(s, games.Seat(seat))
	}
	return r
}

// proposal is a split of a coalition's value: a binding proposal or an offer in a message.
// Never changed once made.
type proposal struct {
	turn     int32
	proposer games.Seat
	members  solution.Coalition
	amounts  []int64 // by seat; 0 for non-members
}

// offer is a split offered in a message, kept for the briefings of its sender and recipients.
type offer struct {
	turn   int32
	round  int32 // 0 in phase 2
	from   games.Seat
	to     []games.Seat // empty: every other seat
	text   string
	terms  *proposal // nil: the message carried no offer
	public bool
	// asSent and asReceived are the message's line in the briefings of its sender and of its
	// recipients.
	asSent, asReceived string
}

// resolved is a proposal put to the vote, with the votes.
type resolved struct {
	p                  *proposal
	accepted, rejected solution.Coalition
}

// state is one match. Slices are append-only and shared by clones; the pointers it holds
// point to values never changed once made, so a shallow copy plus History.Clone is a deep
// enough clone.
type state struct {
	r    *rules
	seed uint64
	turn int32

	phase phase
	round int32 // phase 1: current round, 1-based
	// awaiting holds the seats that must still act on this turn.
	awaiting solution.Coalition

	// Phase 2.
	made     int32 // proposers drawn so far, the current one included
	proposer games.Seat
	pending  *proposal // the proposal being voted on, or nil
	accepted solution.Coalition
	rejected solution.Coalition
	past     []resolved // proposals decided so far

	// End.
	cause matchv1.EndCause
	final *proposal // the proposal carried out, on agreement

	talk    []offer // every message sent, for the briefings of those who may see it
	history games.History
}

var (
	_ games.State      = (*state)(nil)
	_ games.Opener     = (*state)(nil)
	_ games.SeatLister = game{}
)

func (st *state) n() int { return st.r.s.N() }
func (st *state) name(seat games.Seat) string {
	return games.SeatName(seat, st.r.s.Players)
}

// active is the active player of the current round.
func (st *state) active() games.Seat { return games.Seat((st.round - 1) % int32(st.n())) }

// draw returns the k-th proposer (1-based), uniformly from all players.
func (st *state) draw(k int32) games.Seat {
	rng := rand.New(rand.NewPCG(st.seed, drawSalt^uint64(k)))
	return games.Seat(rng.IntN(st.n()))
}

// ToMove returns the seats that must act now, in seat order.
func (st *state) ToMove() []games.Seat {
	out := make([]games.Seat, 0, st.awaiting.Size())
	for _, m := range st.awaiting.Members() {
		out = append(out, games.Seat(m))
	}
	return out
}

// Turn returns the current turn, 1-based.
func (st *state) Turn() int32 { return st.turn }

// LastMove returns the summary of seat's move on turn (games.MoveWorder).
func (st *state) LastMove(seat games.Seat, turn int32) (string, []games.Seat, bool) {
	return st.history.LastMove(seat, turn)
}

func (st *state) maxTurns() int32 { return 2*st.r.s.Rounds + 2*st.r.s.MaxProposals }

// OpeningEvents announces the first phase and, when phase 1 has no rounds, the first draw.
func (st *state) OpeningEvents() []*eventsv1.MatchEvent {
	s := st.r.s
	if s.Rounds > 0 {
		return []*eventsv1.MatchEvent{phaseEvent(PhaseTalk, fmt.Sprintf("Phase 1: private negotiation, %d %s; the active player rotates %s.",
			s.Rounds, plural(int64(s.Rounds), "round", "rounds"), strings.Join(s.Players, ", ")))}
	}
	first := st.draw(1)
	return []*eventsv1.MatchEvent{st.proposalsEvent(), st.drawEvent(1, first)}
}

func phaseEvent(name, summary string) *eventsv1.MatchEvent {
	return &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_PhaseStarted{PhaseStarted: &eventsv1.PhaseStarted{Phase: name, Summary: summary}}}
}

func (st *state) proposalsEvent() *eventsv1.MatchEvent {
	return phaseEvent(PhaseProposals, fmt.Sprintf("Phase 2: binding proposals, at most %d.", st.r.s.MaxProposals))
}

func (st *state) drawEvent(k int32, seat games.Seat) *eventsv1.MatchEvent {
	return &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_ChanceDrawn{ChanceDrawn: &eventsv1.ChanceDrawn{
		What: "proposer", Seat: proto.Int32(seat), Summary: st.drawText(k, seat),
	}}}
}

func (st *state) drawText(k int32, seat games.Seat) string {
	return fmt.Sprintf("Proposal %d of %d: %s is drawn to propose.", k, st.r.s.MaxProposals, st.name(seat))
}

// startProposals begins phase 2 with the first draw.
func (st *state) startProposals() {
	st.phase, st.round = phaseProposals, 0
	st.made = 1
	st.proposer = st.draw(1)
	st.awaiting = solution.CoalitionOf(int(st.proposer))
	st.history.AddAnnouncement(st.turn, fmt.Sprintf("Phase 2 (binding proposals) begins: at most %d. %s",
		st.r.s.MaxProposals, st.drawText(1, st.proposer)))
}

// Apply plays seat's action. Refused actions return a *games.Rejection and change nothing:
// every check comes before the first write.
func (st *state) Apply(seat games.Seat, action *agentv1.Action) ([]*eventsv1.MatchEvent, error) {
	if err := games.CheckAction(action, seat, st.n(), games.AllowMessageTerms()); err != nil {
		return nil, err
	}
	if st.phase == phaseOver {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "the game is over; no more moves can be made")
	}
	if seat < 0 || int(seat) >= st.n() || !st.awaiting.Has(int(seat)) {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "%s is not to move on turn %d: %s", st.name(seat), st.turn, st.waitingText())
	}
	move := action.GetMove()
	switch st.phase {
	case phaseTalk:
		if move.GetSay() == nil {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE,
				"phase 1 is talk only: %s", st.talkRule(seat))
		}
		if err := st.checkTalk(seat, action.GetMessages()); err != nil {
			return nil, err
		}
		terms, err := st.parseTerms(seat, action.GetMessages())
		if err != nil {
			return nil, err
		}
		return st.applyTalk(seat, action, terms), nil
	default: // phaseProposals
		if st.pending == nil { // seat is the proposer
			pr := move.GetPropose()
			if pr == nil {
				return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE,
					"you were drawn to propose, and propose is the only legal move: a proposal whose allocation %s", st.splitRule(seat))
			}
			p, err := st.parseSplit(seat, pr.GetProposal(), "the proposal")
			if err != nil {
				return nil, err
			}
			terms, err := st.parseTerms(seat, action.GetMessages())
			if err != nil {
				return nil, err
			}
			return st.applyProposal(seat, action, terms, p), nil
		}
		switch k := move.GetKind().(type) {
		case *gamev1.Move_Accept:
			if pt := k.Accept.GetProposalTurn(); pt != 0 && pt != st.pending.turn {
				return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN,
					"accept names the proposal of turn %d, but the proposal being voted on is %s's of turn %d (%s); set proposal_turn to %d or 0",
					pt, st.name(st.pending.proposer), st.pending.turn, st.r.s.splitText(st.pending.members, st.pending.amounts), st.pending.turn)
			}
		case *gamev1.Move_Reject:
		default:
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE,
				"you are voting on %s's proposal (%s): accept or reject are the only legal moves",
				st.name(st.pending.proposer), st.r.s.splitText(st.pending.members, st.pending.amounts))
		}
		terms, err := st.parseTerms(seat, action.GetMessages())
		if err != nil {
			return nil, err
		}
		return st.applyVote(seat, action, terms), nil
	}
}

// parseTerms reads the offers attached to messages; nil where a message carries none.
func (st *state) parseTerms(seat games.Seat, msgs []*gamev1.Message) ([]*proposal, error) {
	terms := make([]*proposal, len(msgs))
	for i, m := range msgs {
		if m.GetProposal() == nil {
			continue
		}
		p, err := st.parseSplit(seat, m.GetProposal(), fmt.Sprintf("the offer in message %d", i+1))
		if err != nil {
			return nil, err
		}
		terms[i] = p
	}
	return terms, nil
}

// checkTalk checks the messages of a phase-1 turn: one to each other player for the active
// player, one to the active player for the others.
func (st *state) checkTalk(seat games.Seat, msgs []*gamev1.Message) error {
	bad := func(format string, args ...any) error {
		return games.Reject(gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "%s; %s", fmt.Sprintf(format, args...), st.talkRule(seat))
	}
	count := make([]int, st.n())
	for i, m := range msgs {
		switch len(m.GetTo()) {
		case 0:
			return bad("message %d is public (no recipient), but every message in phase 1 is private", i+1)
		case 1:
			count[m.GetTo()[0]]++
		default:
			return bad("message %d is addressed to %d players, but each message in phase 1 goes to exactly one", i+1, len(m.GetTo()))
		}
	}
	active := st.active()
	want := func(other games.Seat) int {
		if other != seat && (seat == active || other == active) {
			return 1
		}
		return 0
	}
	for other := range games.Seat(st.n()) {
		switch got := count[other]; {
		case got > 0 && want(other) == 0:
			return bad("there is a message to %s, but replies go to the active player %s only", st.name(other), st.name(active))
		case got > 1:
			return bad("there are %d messages to %s, but exactly one is allowed", got, st.name(other))
		}
	}
	for other := range games.Seat(st.n()) {
		if count[other] < want(other) {
			return bad("there is no message to %s", st.name(other))
		}
	}
	return nil
}

func (st *state) applyTalk(seat games.Seat, action *agentv1.Action, terms []*proposal) []*eventsv1.MatchEvent {
	msgs := st.keepTalk(seat, action.GetMessages(), terms)
	active := st.active()
	if seat == active {
		st.history.AddMove(st.turn, seat, action.GetMove(), msgs,
			fmt.Sprintf("%s wrote privately to %s.", st.name(seat), st.othersText(seat)))
		st.awaiting = st.r.s.Grand() &^ solution.CoalitionOf(int(seat))
		st.turn++
		return nil
	}
	st.history.AddMove(st.turn, seat, action.GetMove(), msgs,
		fmt.Sprintf("%s replied privately to %s.", st.name(seat), st.name(active)), active)
	st.awaiting &^= solution.CoalitionOf(int(seat))
	if st.awaiting != 0 {
		return nil
	}
	st.turn++
	if st.round < st.r.s.Rounds {
		st.round++
		st.awaiting = solution.CoalitionOf(int(st.active()))
		st.history.AddAnnouncement(st.turn, fmt.Sprintf("Round %d of %d: %s is active.", st.round, st.r.s.Rounds, st.name(st.active())))
		return nil
	}
	st.startProposals()
	return []*eventsv1.MatchEvent{st.proposalsEvent(), st.drawEvent(1, st.proposer)}
}

// keepTalk remembers the messages for the briefings and returns them for the history.
func (st *state) keepTalk(seat games.Seat, msgs []*gamev1.Message, terms []*proposal) []*gamev1.Message {
	talk := slices.Clip(st.talk)
	for i, m := range msgs {
		o := offer{turn: st.turn, round: st.round, from: seat, to: slices.Clone(m.GetTo()), text: m.GetText(), terms: terms[i], public: len(m.GetTo()) == 0}
		if terms[i] != nil {
			t := *terms[i]
			t.turn = st.turn
			o.terms = &t
		}
		o.asSent, o.asReceived = st.talkLines(o)
		talk = append(talk, o)
	}
	st.talk = talk
	return msgs
}

func (st *state) applyProposal(seat games.Seat, action *agentv1.Action, terms []*proposal, p *proposal) []*eventsv1.MatchEvent {
	msgs := st.keepTalk(seat, action.GetMessages(), terms)
	p.turn = st.turn
	st.history.AddMove(st.turn, seat, action.GetMove(), msgs,
		fmt.Sprintf("%s proposes %s.", st.name(seat), st.r.s.splitText(p.members, p.amounts)))
	st.pending = p
	st.accepted = solution.CoalitionOf(int(seat))
	st.rejected = 0
	st.awaiting = p.members &^ solution.CoalitionOf(int(seat))
	if st.awaiting != 0 {
		st.turn++
		return nil
	}
	return st.resolve()
}

func (st *state) applyVote(seat games.Seat, action *agentv1.Action, terms []*proposal) []*eventsv1.MatchEvent {
	msgs := st.keepTalk(seat, action.GetMessages(), terms)
	vote := "accept"
	if action.GetMove().GetAccept() != nil {
		st.accepted |= solution.CoalitionOf(int(seat))
	} else {
		st.rejected |= solution.CoalitionOf(int(seat))
		vote = "reject"
	}
	// The vote itself stays secret until every vote is in; the resolution announces it.
	st.history.AddMove(st.turn, seat, action.GetMove(), msgs,
		fmt.Sprintf("%s votes %s on %s's proposal.", st.name(seat), vote, st.name(st.pending.proposer)), seat)
	st.awaiting &^= solution.CoalitionOf(int(seat))
	if st.awaiting != 0 {
		return nil
	}
	return st.resolve()
}

// resolve decides the pending proposal once every vote is in: carry it out, draw the next
// proposer, or end the game at the proposal limit.
func (st *state) resolve() []*eventsv1.MatchEvent {
	p, turn := st.pending, st.turn
	res := resolved{p: p, accepted: st.accepted, rejected: st.rejected}
	st.past = append(slices.Clip(st.past), res)
	st.pending, st.accepted, st.rejected = nil, 0, 0
	ev := &eventsv1.ProposalResolved{
		Proposer: p.proposer,
		Proposal: p.proto(st.r.s.Unit),
		Accepted: res.rejected == 0,
	}
	for _, m := range res.accepted.Members() {
		ev.AcceptedBy = append(ev.AcceptedBy, int32(m))
	}
	for _, m := range res.rejected.Members() {
		ev.RejectedBy = append(ev.RejectedBy, int32(m))
	}
	var summary string
	events := []*eventsv1.MatchEvent{{Payload: &eventsv1.MatchEvent_ProposalResolved{ProposalResolved: ev}}}
	switch {
	case ev.Accepted:
		st.phase, st.cause, st.final, st.awaiting = phaseOver, matchv1.EndCause_END_CAUSE_AGREEMENT, p, 0
		summary = fmt.Sprintf("%s The game ends: %s.", st.resolvedText(res), st.payoffText())
	case st.made < st.r.s.MaxProposals:
		st.turn++
		st.made++
		st.proposer = st.draw(st.made)
		st.awaiting = solution.CoalitionOf(int(st.proposer))
		summary = fmt.Sprintf("%s %s", st.resolvedText(res), st.drawText(st.made, st.proposer))
		events = append(events, st.drawEvent(st.made, st.proposer))
	default:
		st.phase, st.cause, st.awaiting = phaseOver, matchv1.EndCause_END_CAUSE_TURN_LIMIT, 0
		summary = fmt.Sprintf("%s That was the last of %d proposals: the game ends and everyone gets 0 %s.", st.resolvedText(res), st.r.s.MaxProposals, st.r.s.Unit)
	}
	ev.Summary = st.resolvedText(res)
	st.history.AddAnnouncement(turn, summary)
	return events
}

// resolvedText is one sentence on a decided proposal, e.g. "C's proposal 2 (A+C: A 500 g,
// C 250 g) is rejected: B rejects; A accepts."
func (st *state) resolvedText(res resolved) string {
	p := res.p
	head := fmt.Sprintf("%s's proposal (%s)", st.name(p.proposer), st.r.s.splitText(p.members, p.amounts))
	if p.members.Size() == 1 {
		return head + " passes at once: the proposer is its only member."
	}
	others := res.accepted &^ solution.CoalitionOf(int(p.proposer))
	if res.rejected == 0 {
		return fmt.Sprintf("%s passes: %s %s.", head, st.namesText(others), plural(int64(others.Size()), "accepts", "accept"))
	}
	text := fmt.Sprintf("%s is rejected: %s %s", head, st.namesText(res.rejected), plural(int64(res.rejected.Size()), "rejects", "reject"))
	if others != 0 {
		text += fmt.Sprintf(", %s %s", st.namesText(others), plural(int64(others.Size()), "accepts", "accept"))
	}
	return text + "."
}

// payoffText lists every seat's payoff at the end, e.g. "A gets 500 g, B gets 0 g, C gets 250 g".
func (st *state) payoffText() string {
	pay := st.payoffs()
	parts := make([]string, len(pay))
	for i, x := range pay {
		parts[i] = fmt.Sprintf("%s gets %s", st.name(games.Seat(i)), st.r.s.Amount(x))
	}
	return strings.Join(parts, ", ")
}

// payoffs returns each seat's amount at the end: the accepted split, or all 0.
func (st *state) payoffs() []int64 {
	out := make([]int64, st.n())
	if st.final != nil {
		copy(out, st.final.amounts)
	}
	return out
}

// proto writes the proposal as an Allocation: one share per member, receiving unit.
func (p *proposal) proto(unit string) *gamev1.Proposal {
	alloc := &gamev1.Allocation{}
	for _, m := range p.members.Members() {
		alloc.Shares = append(alloc.Shares, &gamev1.SeatShare{Seat: int32(m), Receives: map[string]int64{unit: p.amounts[m]}})
	}
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: alloc}}
}

// parseSplit reads a split of a coalition's value by seat (a proposal, or an offer in a
// message), or says what is wrong and what would be legal. what names it in the reason.
func (st *state) parseSplit(seat games.Seat, p *gamev1.Proposal, what string) (*proposal, error) {
	s := st.r.s
	n := st.n()
	bad := func(format string, args ...any) error {
		return games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "%s %s; a legal split %s", what, fmt.Sprintf(format, args...), st.splitRule(seat))
	}
	alloc := p.GetAllocation()
	if alloc == nil {
		return nil, bad("has no allocation")
	}
	out := &proposal{proposer: seat, amounts: make([]int64, n)}
	for _, sh := range alloc.GetShares() {
		m := sh.GetSeat()
		if m < 0 || int(m) >= n {
			return nil, bad("names seat %d, but the seats are 0 (%s) to %d (%s)", m, s.Players[0], n-1, s.Players[n-1])
		}
		if out.members.Has(int(m)) {
			return nil, bad("has two shares for %s (seat %d); give each member exactly one", s.Players[m], m)
		}
		out.members |= solution.CoalitionOf(int(m))
		for _, res := range sortedKeys(sh.GetGives()) {
			if x := sh.GetGives()[res]; x != 0 {
				return nil, bad("has %s giving %d %s, but in this game members only receive their part of the coalition's value", s.Players[m], x, quoteIfOdd(res))
			}
		}
		for _, res := range sortedKeys(sh.GetReceives()) {
			x := sh.GetReceives()[res]
			switch {
			case x < 0:
				return nil, bad("gives %s a negative amount (%d %s); amounts are 0 or more", s.Players[m], x, quoteIfOdd(res))
			case res != s.Unit && x != 0:
				return nil, bad("gives %s %d %s, but there is no resource %s: amounts are in %s", s.Players[m], x, quoteIfOdd(res), quoteIfOdd(res), s.Unit)
			case res == s.Unit:
				out.amounts[m] = x
			}
		}
	}
	if out.members == 0 {
		return nil, bad("names no coalition (it has no shares)")
	}
	if !out.members.Has(int(seat)) {
		return nil, bad("names the coalition %s, which does not include you (%s)", s.Name(out.members), s.Players[seat])
	}
	value := s.Values[out.members]
	var sum int64
	for _, m := range out.members.Members() {
		if out.amounts[m] > value {
			return nil, bad("gives %s %s, more than the coalition %s is worth (%s)", s.Players[m], s.Amount(out.amounts[m]), s.Name(out.members), s.Amount(value))
		}
		sum += out.amounts[m] // each at most 2^53, at most 8 of them: no overflow
	}
	if sum != value {
		return nil, bad("has amounts adding up to %s, but the coalition %s is worth %s", s.Amount(sum), s.Name(out.members), s.Amount(value))
	}
	return out, nil
}

// Default returns the documented move for seat's kind of turn; for a seat not to move, a
// reject (which the rules refuse).
func (st *state) Default(seat games.Seat) *agentv1.Action {
	if st.phase == phaseOver || seat < 0 || int(seat) >= st.n() || !st.awaiting.Has(int(seat)) {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}
	}
	switch {
	case st.phase == phaseTalk:
		a := &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}}
		for _, slot := range st.requiredMessages(seat) {
			a.Messages = append(a.Messages, &gamev1.Message{To: slot.GetTo(), Text: DefaultText})
		}
		return a
	case st.pending == nil: // the proposer
		n := int64(st.n())
		v := st.r.s.Values[st.r.s.Grand()]
		alloc := &gamev1.Allocation{}
		for m := range n {
			x := v / n
			if m < v%n {
				x++
			}
			alloc.Shares = append(alloc.Shares, &gamev1.SeatShare{Seat: int32(m), Receives: map[string]int64{st.r.s.Unit: x}})
		}
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
			Terms: &gamev1.Proposal_Allocation{Allocation: alloc},
		}}}}}
	default:
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}
	}
}

// requiredMessages lists the messages seat must send on a phase-1 turn.
func (st *state) requiredMessages(seat games.Seat) []*gamev1.MessageSlot {
	if st.phase != phaseTalk || !st.awaiting.Has(int(seat)) {
		return nil
	}
	active := st.active()
	if seat != active {
		return []*gamev1.MessageSlot{{To: []int32{active}}}
	}
	var out []*gamev1.MessageSlot
	for other := range games.Seat(st.n()) {
		if other != seat {
			out = append(out, &gamev1.MessageSlot{To: []int32{other}})
		}
	}
	return out
}

// Outcome returns how the game ended: the accepted split, or everyone at 0.
func (st *state) Outcome() *matchv1.Outcome {
	if st.phase != phaseOver {
		return &matchv1.Outcome{Summary: "The game is not over."}
	}
	pay := st.payoffs()
	out := &matchv1.Outcome{Cause: st.cause, Agreement: st.cause == matchv1.EndCause_END_CAUSE_AGREEMENT, Summary: st.outcomeText()}
	for _, x := range pay {
		out.Payoffs = append(out.Payoffs, float64(x))
	}
	return out
}

// outcomeText is one sentence on how the game ended.
func (st *state) outcomeText() string {
	if st.final != nil {
		p := st.final
		return fmt.Sprintf("%s's proposal %d of %d passed, so the coalition %s shares %s: %s.",
			st.name(p.proposer), len(st.past), st.r.s.MaxProposals, st.r.s.Name(p.members), st.r.s.Amount(st.r.s.Values[p.members]), st.payoffText())
	}
	return fmt.Sprintf("All %d proposals were rejected, so there is no deal and everyone gets 0 %s.", st.r.s.MaxProposals, st.r.s.Unit)
}

// Clone returns an independent copy: slices are append-only (appends go through
// slices.Clip), and everything pointed to is never changed.
func (st *state) Clone() games.State {
	c := *st
	c.history = st.history.Clone()
	return &c
}

// Observe builds seat's observation: public facts in the view, the seat's own private talk in
// its history and briefing.
func (st *state) Observe(seat games.Seat) *agentv1.Observation { return st.observe(seat, true) }

// ObserveUnbriefed is Observe without the briefing, none written (games.Unbriefed).
func (st *state) ObserveUnbriefed(seat games.Seat) *agentv1.Observation {
	return st.observe(seat, false)
}

func (st *state) observe(seat games.Seat, brief bool) *agentv1.Observation {
	s := st.r.s
	obs := &agentv1.Observation{Game: Name, Seat: seat, Turn: st.turn, MaxTurns: st.maxTurns()}
	if seat < 0 || int(seat) >= st.n() {
		obs.Briefing = fmt.Sprintf("Seat %d does not play in this game; the seats are 0 (%s) to %d (%s).", seat, s.Players[0], st.n()-1, s.Players[st.n()-1])
		return obs
	}
	for i, name := range s.Players {
		obs.Seats = append(obs.Seats, &gamev1.SeatInfo{Seat: int32(i), Name: name})
	}
	switch st.phase {
	case phaseTalk:
		obs.Phase = PhaseTalk
	case phaseProposals:
		obs.Phase = PhaseProposals
	}
	if st.phase != phaseOver && st.awaiting.Has(int(seat)) {
		switch {
		case st.phase == phaseTalk:
			obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_SAY}
			obs.RequiredMessages = st.requiredMessages(seat)
		case st.pending == nil:
			obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE}
			obs.ProposalBounds = copyBounds(st.r.bounds[seat])
			obs.ProposalForms = copyForms(st.r.forms[seat])
		default:
			obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_ACCEPT, gamev1.MoveKind_MOVE_KIND_REJECT}
		}
		obs.MessageTermForms = copyForms(st.r.forms[seat])
	}
	obs.History, obs.HistoryOmitted = st.history.For(seat)
	obs.View = &agentv1.Observation_Coalition{Coalition: st.view()}
	if brief {
		obs.Briefing = st.briefing(seat)
	}
	return obs
}

// view holds only public facts, the same for every seat.
func (st *state) view() *coalitionv1.View {
	s := st.r.s
	v := &coalitionv1.View{
		Players:       slices.Clone(s.Players),
		Values:        copyValues(st.r.values),
		Unit:          s.Unit,
		Rounds:        s.Rounds,
		MaxProposals:  s.MaxProposals,
		ProposalsMade: int32(len(st.past)),
	}
	switch st.phase {
	case phaseTalk:
		v.Round = st.round
		v.Active = proto.Int32(st.active())
	case phaseProposals:
		v.Proposer = proto.Int32(st.proposer)
		if st.pending != nil {
			v.ProposalsMade++
			v.Pending = st.pending.proto(s.Unit).GetAllocation()
		}
	}
	return v
}

// copyBounds, copyForms and copyValues return fresh copies of the match's fixed lists for an
// observation (field by field: proto.Clone's reflection was a large share of Observe's cost).
func copyBounds(bs []*gamev1.Bound) []*gamev1.Bound {
	out := make([]*gamev1.Bound, len(bs))
	for i, b := range bs {
		out[i] = &gamev1.Bound{Seat: b.GetSeat(), Side: b.GetSide(), Resource: b.GetResource(), Min: b.GetMin(), Max: b.GetMax()}
	}
	return out
}

func copyForms(fs []*gamev1.ProposalForm) []*gamev1.ProposalForm {
	out := make([]*gamev1.ProposalForm, len(fs))
	for i, f := range fs {
		totals := make([]*gamev1.AmountTotal, len(f.GetTotals()))
		for j, t := range f.GetTotals() {
			totals[j] = &gamev1.AmountTotal{Side: t.GetSide(), Resource: t.GetResource(), Total: t.GetTotal()}
		}
		out[i] = &gamev1.ProposalForm{Label: f.GetLabel(), Bounds: copyBounds(f.GetBounds()), Totals: totals}
	}
	return out
}

func copyValues(vs []*coalitionv1.CoalitionValue) []*coalitionv1.CoalitionValue {
	out := make([]*coalitionv1.CoalitionValue, len(vs))
	for i, v := range vs {
		out[i] = &coalitionv1.CoalitionValue{Members: slices.Clone(v.GetMembers()), Value: v.GetValue()}
	}
	return out
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// quoteIfOdd writes a resource name bare when it is a plain word and quoted otherwise, so that
// an empty or odd name stays visible in a message.
func quoteIfOdd(name string) string {
	if checkWord("resource", name, MaxUnitLen) == nil {
		return name
	}
	return strconv.Quote(name)
}

// plural picks the singular or plural form of a counted noun or verb.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
