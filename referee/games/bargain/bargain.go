// Package bargain is the engine of the two-player alternating-offer games of
// specs/negotiationarena.md: the multi-turn ultimatum, buyer and seller, and resource exchange.
// It holds once the skeleton the three share, and each game supplies what differs through
// Rules: how a proposal's terms are read and checked, what a deal pays, what each seat sees of
// the match, the legal range of a proposal's amounts, and the briefing.
//
// The skeleton, as Match enforces it:
//
//   - Seats P1 (0) and P2 (1). P1 moves on odd turns and P2 on even turns, from turn 1 to
//     Config.MaxTurns, which counts the turns of both players together.
//   - propose puts terms on the table. It replaces the mover's own earlier proposal and
//     implicitly declines the opponent's. A player may make at most Config.MaxProposals
//     proposals (0: no limit) and, with Config.NoLastProposal, none on the game's last turn.
//   - accept takes the standing proposal: the opponent's most recent proposal, and only when
//     it was made on the turn just before (turn 1 has nothing to accept; after a pass nothing
//     stands). Accept.proposal_turn, when not 0, must name that proposal's turn. The deal is
//     carried out and the match ends with END_CAUSE_AGREEMENT.
//   - pass (the spec's "wait"), where Config.Pass allows it: no proposal, no acceptance; play
//     goes on.
//   - reject, where Config.Reject allows it: the match ends at once with no deal
//     (END_CAUSE_REJECTED).
//   - When Config.MaxTurns turns have been played without an accept or a reject, the match ends
//     with no deal (END_CAUSE_TURN_LIMIT).
//
// Every move and its summary are public: both seats see every move, and each seat sees the
// messages addressed to it. Private reasoning and notes are never kept in the match. What is
// private to a seat is the game's business, through Rules.View and Rules.Briefing.
//
// The default move, for a seat whose agent gives no usable answer, is reject in games that
// have it and pass otherwise: one of them is always legal, so the default is never refused.
//
// The engine draws nothing at random and Apply returns no events of its own: the runner's record
// of each action is the whole story.
package bargain

import (
	"fmt"
	"slices"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"google.golang.org/protobuf/proto"
)

// Seats.
const (
	P1 games.Seat = 0 // moves on odd turns, first
	P2 games.Seat = 1 // moves on even turns
)

// Phase is the observation's phase while a match runs.
const Phase = "bargaining"

// Limits shared by the games, so that every amount and every match stays manageable.
const (
	// MaxAmount keeps every amount exactly representable in the float64 payoffs of the record.
	MaxAmount int64 = 1 << 53
	// MaxMaxTurns bounds a match's length: each observation carries the whole history, so a
	// match of n turns costs O(n^2) to observe, and no published variant goes beyond 10 turns.
	MaxMaxTurns int32 = 10000
)

// seatNames is indexed by seat. An array, so that no caller can change it.
var seatNames = [2]string{"P1", "P2"}

// SeatName returns "P1" or "P2", or "seat N" for a seat that does not play.
func SeatName(seat games.Seat) string { return games.SeatName(seat, seatNames[:]) }

// SeatNames returns the seats' display names, in seat order.
func SeatNames() []string { return []string{seatNames[P1], seatNames[P2]} }

// Config is what a game fixes for one match: its name and the turn rules.
type Config struct {
	// Game is the game's name, as in observations (e.g. "buysell").
	Game string
	// Title names the game in refusals, e.g. "buyer/seller" in "the buyer/seller game has no
	// pass move".
	Title string
	// Roles are the seats' roles, e.g. "seller" and "buyer"; empty when seats are symmetric.
	Roles [2]string
	// MaxTurns is the number of turns of both players together, at least 1.
	MaxTurns int32
	// MaxProposals is the number of proposals each player may make; 0 means no limit.
	MaxProposals int32
	// Pass says whether the game has a pass move (the spec's "wait").
	Pass bool
	// Reject says whether the game has a reject move, which ends it with no deal.
	Reject bool
	// NoLastProposal forbids proposals on the game's last turn (the ultimatum's rule): whoever
	// moves there may only accept or reject.
	NoLastProposal bool
	// Opening are events the rules record before the first move (e.g. values drawn from the
	// seed); see games.Opener. Payload only.
	Opening []*eventsv1.MatchEvent
	// Names are the seats' display names; empty strings take the defaults P1 and P2.
	Names [2]string
}

// name returns seat's display name in this match.
func (m *Match[T]) name(seat games.Seat) string {
	if seat != P1 && seat != P2 {
		return fmt.Sprintf("seat %d", seat)
	}
	if n := m.cfg.Names[seat]; n != "" {
		return n
	}
	return seatNames[seat]
}

// Name returns seat's display name in this match (Config.Names, else P1 and P2).
func (m *Match[T]) Name(seat games.Seat) string { return m.name(seat) }

// Forms is implemented by Rules that describe their proposals as forms with totals
// (Observation.proposal_forms), e.g. a division of a pool whose amounts must add up.
type Forms[T any] interface {
	// Forms returns the forms of mover's proposals; asked only when mover may propose.
	Forms(m *Match[T], mover games.Seat) []*gamev1.ProposalForm
}

func (c Config) check() error {
	switch {
	case c.MaxTurns < 1 || c.MaxTurns > MaxMaxTurns:
		return fmt.Errorf("bargain: max_turns must be from 1 to %d, got %d", MaxMaxTurns, c.MaxTurns)
	case c.MaxProposals < 0:
		return fmt.Errorf("bargain: max_proposals must be 0 (no limit) or more, got %d", c.MaxProposals)
	case !c.Pass && !c.Reject:
		// With neither, a player with no proposal left and nothing to accept could not move.
		return fmt.Errorf("bargain: a game needs a pass or a reject move")
	}
	return nil
}

// Rules is what differs between the games. The engine calls it; an implementation holds the
// match's parameters and must not change once the match starts, since clones of a match share
// it. Everything it returns must be freshly built, as callers may change what they get.
type Rules[T any] interface {
	// Terms reads and checks the allocation of a proposal by mover, which may be nil when the
	// proposal carries no allocation. It returns the terms, or a *games.Rejection (code
	// REJECTION_CODE_INVALID_TERMS) that says what is wrong and what a legal proposal looks
	// like. The terms returned are kept by the match and its clones and never changed.
	Terms(mover games.Seat, alloc *gamev1.Allocation) (T, error)
	// Bounds returns the range of each amount mover may fill in a proposal
	// (Observation.proposal_bounds); asked only when mover may propose. They must say only
	// what mover may know.
	Bounds(m *Match[T], mover games.Seat) []*gamev1.Bound
	// Payoffs returns each seat's payoff at the end of a match: deal holds the terms carried out
	// on agreement, and is nil when there was no deal.
	Payoffs(deal *T) [2]float64
	// Describe writes terms in plain words, e.g. "P1 gives 40 Dollars to P2 and keeps 60".
	// Every seat sees it, so it must hold nothing private.
	Describe(terms T) string
	// Result says in plain words what the end means, given the terms carried out (nil: no
	// deal), e.g. "P1 gets 60 Dollars, P2 gets 40 Dollars" or "there is no sale and both get
	// 0". Every seat sees it, so it must hold nothing private.
	Result(deal *T) string
	// View sets obs.View to seat's view of m.
	View(m *Match[T], seat games.Seat, obs *agentv1.Observation)
	// Briefing returns seat's briefing: the rules and its situation in plain words, enough to
	// act on with nothing else. It must be a pure function of m.
	Briefing(m *Match[T], seat games.Seat) string
}

// Proposal is terms a seat put on the table.
type Proposal[T any] struct {
	// Turn is the turn on which it was made.
	Turn int32
	// By is the seat that made it.
	By games.Seat
	// Terms are the terms, as Rules.Terms read them.
	Terms T
}

// Match is the state of one match of a bargaining game; it implements games.State. Every field
// is a value or points to something never changed once written (proposals, terms, history
// entries), so a shallow copy plus History.Clone is a deep enough clone.
type Match[T any] struct {
	cfg   Config
	rules Rules[T]
	turn  int32 // turn being played; once over, the turn of the ending move

	latest *Proposal[T]    // the most recent proposal, by either seat
	own    [2]*Proposal[T] // each seat's most recent proposal
	made   [2]int32        // proposals each seat has made

	over  bool
	cause matchv1.EndCause
	endBy games.Seat
	// final is the proposal standing at the end: the one accepted, or the one rejected.
	final *Proposal[T]

	history games.History
}

var _ games.State = (*Match[int])(nil)

// New starts a match with cfg and rules on turn 1.
func New[T any](cfg Config, rules Rules[T]) (*Match[T], error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if rules == nil {
		return nil, fmt.Errorf("bargain: no rules")
	}
	return &Match[T]{cfg: cfg, rules: rules, turn: 1}, nil
}

// Config returns the match's configuration.
func (m *Match[T]) Config() Config { return m.cfg }

// Mover returns the seat whose turn it is (once over, the seat that made the last move).
func (m *Match[T]) Mover() games.Seat { return (m.turn + 1) % 2 }

// IsLastTurn reports whether the current turn is the game's last.
func (m *Match[T]) IsLastTurn() bool { return m.turn == m.cfg.MaxTurns }

// Over reports whether the match has ended.
func (m *Match[T]) Over() bool { return m.over }

// Cause returns why the match ended; END_CAUSE_UNSPECIFIED while it runs.
func (m *Match[T]) Cause() matchv1.EndCause { return m.cause }

// EndedBy returns the seat that accepted or rejected, or made the last move at the turn limit.
func (m *Match[T]) EndedBy() games.Seat { return m.endBy }

// ToMove returns the seat whose turn it is, or nothing once the match is over.
func (m *Match[T]) ToMove() []games.Seat {
	if m.over {
		return nil
	}
	return []games.Seat{m.Mover()}
}

// Turn returns the current turn, 1-based.
func (m *Match[T]) Turn() int32 { return m.turn }

// LastMove returns the summary of seat's move on turn (games.MoveWorder).
func (m *Match[T]) LastMove(seat games.Seat, turn int32) (string, []games.Seat, bool) {
	return m.history.LastMove(seat, turn)
}

// TurnsLeft returns the turns left after the current one; 0 once over.
func (m *Match[T]) TurnsLeft() int32 {
	if m.over {
		return 0
	}
	return m.cfg.MaxTurns - m.turn
}

// Standing returns the proposal made on the turn just before, which the mover may accept; none
// once the match is over. Seen from the seat that made it, it is that seat's proposal awaiting
// an answer.
func (m *Match[T]) Standing() (Proposal[T], bool) {
	if m.over || m.latest == nil || m.latest.Turn != m.turn-1 {
		return Proposal[T]{}, false
	}
	return *m.latest, true
}

// Own returns seat's most recent proposal, if it made one.
func (m *Match[T]) Own(seat games.Seat) (Proposal[T], bool) {
	if seat != P1 && seat != P2 || m.own[seat] == nil {
		return Proposal[T]{}, false
	}
	return *m.own[seat], true
}

// Final returns the proposal standing when the match ended: the one accepted, or the one
// rejected. None while the match runs, at the turn limit, or for a reject with nothing standing.
func (m *Match[T]) Final() (Proposal[T], bool) {
	if m.final == nil {
		return Proposal[T]{}, false
	}
	return *m.final, true
}

// Deal returns the terms carried out, when the match ended in agreement.
func (m *Match[T]) Deal() (T, bool) {
	if m.over && m.cause == matchv1.EndCause_END_CAUSE_AGREEMENT && m.final != nil {
		return m.final.Terms, true
	}
	var zero T
	return zero, false
}

// ProposalsMade returns how many proposals seat has made.
func (m *Match[T]) ProposalsMade(seat games.Seat) int32 {
	if seat != P1 && seat != P2 {
		return 0
	}
	return m.made[seat]
}

// ProposalsLeft returns how many more proposals seat may make: what the proposal limit leaves,
// counting only the turns left on which seat may propose. 0 once the match is over.
func (m *Match[T]) ProposalsLeft(seat games.Seat) int32 {
	if m.over {
		return 0
	}
	_, _, proposable := m.SeatTurns(seat)
	return proposable
}

// SeatTurns counts seat's turns from now on (the current one included when it is seat's): how
// many, the last of them, and on how many seat may still propose (the proposal limit and the
// no-proposal-on-the-last-turn rule applied). All 0 once over or for a seat that does not play.
func (m *Match[T]) SeatTurns(seat games.Seat) (n, last, proposable int32) {
	if m.over || (seat != P1 && seat != P2) {
		return 0, 0, 0
	}
	first := m.turn
	if m.Mover() != seat {
		first++
	}
	if first > m.cfg.MaxTurns {
		return 0, 0, 0
	}
	n = (m.cfg.MaxTurns-first)/2 + 1
	last = first + 2*(n-1)
	proposable = n
	if m.cfg.NoLastProposal && last == m.cfg.MaxTurns {
		proposable--
	}
	if m.cfg.MaxProposals > 0 {
		proposable = min(proposable, max(0, m.cfg.MaxProposals-m.made[seat]))
	}
	return n, last, proposable
}

// CanPropose reports whether seat may propose now.
func (m *Match[T]) CanPropose(seat games.Seat) bool {
	return !m.over && seat == m.Mover() && m.proposeRefusal(seat) == ""
}

// proposeRefusal says why the mover may not propose now, or "" when it may.
func (m *Match[T]) proposeRefusal(seat games.Seat) string {
	switch {
	case m.cfg.NoLastProposal && m.IsLastTurn():
		return fmt.Sprintf("turn %d is the last turn, on which no proposal may be made", m.turn)
	case m.cfg.MaxProposals > 0 && m.made[seat] >= m.cfg.MaxProposals:
		return fmt.Sprintf("%s has made all %d of its proposals and may make no more", m.name(seat), m.cfg.MaxProposals)
	}
	return ""
}

// LegalMoves returns the kinds seat may play now, in a fixed order: propose, accept, pass,
// reject. Empty when seat is not to move.
func (m *Match[T]) LegalMoves(seat games.Seat) []gamev1.MoveKind {
	if m.over || seat != m.Mover() {
		return nil
	}
	var kinds []gamev1.MoveKind
	if m.proposeRefusal(seat) == "" {
		kinds = append(kinds, gamev1.MoveKind_MOVE_KIND_PROPOSE)
	}
	if _, ok := m.Standing(); ok {
		kinds = append(kinds, gamev1.MoveKind_MOVE_KIND_ACCEPT)
	}
	if m.cfg.Pass {
		kinds = append(kinds, gamev1.MoveKind_MOVE_KIND_PASS)
	}
	if m.cfg.Reject {
		kinds = append(kinds, gamev1.MoveKind_MOVE_KIND_REJECT)
	}
	return kinds
}

// legalText names the mover's legal moves, for refusals: "legal now: propose or reject".
func (m *Match[T]) legalText() string {
	return "legal now: " + OrList(games.KindWords(m.LegalMoves(m.Mover())))
}

// Apply plays seat's action. A refused action returns a *games.Rejection and changes nothing:
// every check comes before the first write.
func (m *Match[T]) Apply(seat games.Seat, action *agentv1.Action) ([]*eventsv1.MatchEvent, error) {
	if err := games.CheckAction(action, seat, len(seatNames)); err != nil {
		return nil, err
	}
	if m.over {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "the game is over; no more moves can be made")
	}
	if seat != m.Mover() {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN,
			"it is %s's turn (turn %d of %d), not %s", m.name(m.Mover()), m.turn, m.cfg.MaxTurns, m.name(seat))
	}
	move := action.GetMove()
	msgs := action.GetMessages()
	switch k := move.GetKind().(type) {
	case *gamev1.Move_Propose:
		if why := m.proposeRefusal(seat); why != "" {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "%s; %s", why, m.legalText())
		}
		terms, err := m.rules.Terms(seat, k.Propose.GetProposal().GetAllocation())
		if err != nil {
			if _, ok := games.AsRejection(err); !ok {
				err = games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "%s", err.Error())
			}
			return nil, err
		}
		p := &Proposal[T]{Turn: m.turn, By: seat, Terms: terms}
		m.record(seat, move, msgs, fmt.Sprintf("%s proposes: %s.", m.name(seat), m.rules.Describe(terms)))
		m.latest, m.own[seat] = p, p
		m.made[seat]++
		m.advance(seat)
	case *gamev1.Move_Accept:
		st, ok := m.Standing()
		if !ok {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE,
				"there is no proposal to accept on turn %d; %s", m.turn, m.legalText())
		}
		if pt := k.Accept.GetProposalTurn(); pt != 0 && pt != st.Turn {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN,
				"accept names the proposal of turn %d, but the only proposal that can be accepted is %s's of turn %d (%s); set proposal_turn to %d or 0",
				pt, m.name(st.By), st.Turn, m.rules.Describe(st.Terms), st.Turn)
		}
		m.end(seat, matchv1.EndCause_END_CAUSE_AGREEMENT, m.latest)
		m.record(seat, move, msgs, m.Summary())
	case *gamev1.Move_Reject:
		if !m.cfg.Reject {
			return nil, m.noSuchMove("reject")
		}
		var standing *Proposal[T]
		if _, ok := m.Standing(); ok {
			standing = m.latest
		}
		m.end(seat, matchv1.EndCause_END_CAUSE_REJECTED, standing)
		m.record(seat, move, msgs, m.Summary())
	case *gamev1.Move_Pass:
		if !m.cfg.Pass {
			return nil, m.noSuchMove("pass")
		}
		m.record(seat, move, msgs, fmt.Sprintf("%s waits.", m.name(seat)))
		m.advance(seat)
	case *gamev1.Move_Choose:
		return nil, m.noSuchMove("choose")
	case *gamev1.Move_Say:
		return nil, m.noSuchMove("say")
	default:
		return nil, m.noSuchMove("such")
	}
	return nil, nil
}

func (m *Match[T]) noSuchMove(kind string) error {
	return games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "the %s game has no %s move; %s", m.cfg.Title, kind, m.legalText())
}

// advance ends the turn of a move that does not end the game: on to the next turn, or the end
// at the turn limit.
func (m *Match[T]) advance(seat games.Seat) {
	if m.turn >= m.cfg.MaxTurns {
		m.end(seat, matchv1.EndCause_END_CAUSE_TURN_LIMIT, nil)
		return
	}
	m.turn++
}

func (m *Match[T]) end(seat games.Seat, cause matchv1.EndCause, final *Proposal[T]) {
	m.over, m.cause, m.endBy, m.final = true, cause, seat, final
}

// record adds the move to the history, with the action's messages (the state's from now on:
// see games.State.Apply); reasoning and notes are not kept.
func (m *Match[T]) record(seat games.Seat, move *gamev1.Move, msgs []*gamev1.Message, summary string) {
	m.history.AddMove(m.turn, seat, move, msgs, summary)
}

// Default is reject in games that have it (an agent that cannot answer ends the game with no
// deal), and pass otherwise (play goes on without it).
func (m *Match[T]) Default(games.Seat) *agentv1.Action {
	if m.cfg.Reject {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}
	}
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}
}

// Payoffs returns each seat's payoff: the deal's once agreed, the no-deal payoffs otherwise.
// Meaningful once the match is over.
func (m *Match[T]) Payoffs() [2]float64 {
	if deal, ok := m.Deal(); ok {
		return m.rules.Payoffs(&deal)
	}
	return m.rules.Payoffs(nil)
}

// Outcome returns how the match ended.
func (m *Match[T]) Outcome() *matchv1.Outcome {
	if !m.over {
		return &matchv1.Outcome{Summary: "The game is not over."}
	}
	pay := m.Payoffs()
	return &matchv1.Outcome{
		Cause:     m.cause,
		Payoffs:   []float64{pay[P1], pay[P2]},
		Agreement: m.cause == matchv1.EndCause_END_CAUSE_AGREEMENT,
		Summary:   m.Summary(),
	}
}

// Summary is one sentence on how the match ended, which every seat may see.
func (m *Match[T]) Summary() string {
	by := m.name(m.endBy)
	switch {
	case !m.over:
		return "The game is not over."
	case m.cause == matchv1.EndCause_END_CAUSE_AGREEMENT:
		return fmt.Sprintf("%s accepted %s's offer: %s.", by, m.name(m.final.By), m.rules.Result(&m.final.Terms))
	case m.cause == matchv1.EndCause_END_CAUSE_REJECTED && m.final != nil:
		return fmt.Sprintf("%s rejected %s's offer (%s) on turn %d, so %s.",
			by, m.name(m.final.By), m.rules.Describe(m.final.Terms), m.turn, m.rules.Result(nil))
	case m.cause == matchv1.EndCause_END_CAUSE_REJECTED:
		return fmt.Sprintf("%s rejected on turn %d, so %s.", by, m.turn, m.rules.Result(nil))
	default:
		return fmt.Sprintf("No proposal was accepted in the %d %s of the game, so %s.",
			m.cfg.MaxTurns, Plural(int64(m.cfg.MaxTurns), "turn", "turns"), m.rules.Result(nil))
	}
}

// OpeningEvents returns fresh copies of Config.Opening (games.Opener).
func (m *Match[T]) OpeningEvents() []*eventsv1.MatchEvent {
	out := make([]*eventsv1.MatchEvent, len(m.cfg.Opening))
	for i, ev := range m.cfg.Opening {
		out[i] = proto.CloneOf(ev)
	}
	return out
}

// Clone returns an independent copy.
func (m *Match[T]) Clone() games.State {
	c := *m
	c.history = m.history.Clone()
	return &c
}

// Observe builds seat's observation: the shared parts here, the view and briefing from Rules.
func (m *Match[T]) Observe(seat games.Seat) *agentv1.Observation { return m.observe(seat, true) }

// ObserveUnbriefed is Observe without the briefing, none written (games.Unbriefed).
func (m *Match[T]) ObserveUnbriefed(seat games.Seat) *agentv1.Observation {
	return m.observe(seat, false)
}

func (m *Match[T]) observe(seat games.Seat, brief bool) *agentv1.Observation {
	obs := &agentv1.Observation{
		Game:     m.cfg.Game,
		Seat:     seat,
		Turn:     m.turn,
		MaxTurns: m.cfg.MaxTurns,
	}
	if seat != P1 && seat != P2 {
		obs.Briefing = fmt.Sprintf("Seat %d does not play in this game; the seats are 0 (P1) and 1 (P2).", seat)
		return obs
	}
	obs.Seats = make([]*gamev1.SeatInfo, 0, len(seatNames))
	for i := range seatNames {
		obs.Seats = append(obs.Seats, &gamev1.SeatInfo{Seat: games.Seat(i), Name: m.name(games.Seat(i)), Role: m.cfg.Roles[i]})
	}
	if !m.over {
		obs.Phase = Phase
	}
	obs.LegalMoves = m.LegalMoves(seat)
	if slices.Contains(obs.LegalMoves, gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		obs.ProposalBounds = m.rules.Bounds(m, seat)
		if f, ok := m.rules.(Forms[T]); ok {
			obs.ProposalForms = f.Forms(m, seat)
		}
	}
	obs.History, obs.HistoryOmitted = m.history.For(seat)
	m.rules.View(m, seat, obs)
	if brief {
		obs.Briefing = m.rules.Briefing(m, seat)
	}
	return obs
}
