// Package ultimatum implements the multi-turn ultimatum game of NegotiationArena
// (specs/negotiationarena.md): P1 holds a sum of money, P2 holds nothing, and the two take
// turns proposing how to split P1's money until one accepts the other's latest proposal,
// someone rejects, or the turns run out.
//
// Rules, as this package enforces them:
//
//   - P1 (seat 0) moves on odd turns, P2 (seat 1) on even turns, turns 1 to max_turns.
//   - A proposal is x, the amount P1 hands to P2, written as an Allocation in which seat 0
//     gives {currency: x}, 0 <= x <= total. Either player may propose; P2 never gives.
//   - propose is legal on every turn but the last; it replaces the mover's earlier proposal
//     and declines the opponent's.
//   - accept is legal when the opponent proposed on the previous turn (every turn after the
//     first, since every move that does not end the game is a proposal). It executes the split:
//     P1 gets total - x, P2 gets x.
//   - reject is always legal and ends the game at once; both get 0.
//
// Because the last turn allows only accept or reject, a match always ends with an agreement or
// a rejection; the turn limit itself is never what ends it.
//
// The default move, played for a seat whose agent gives no usable answer, is reject: if your
// agent fails to answer, you reject.
//
// The game has no chance moves; the match seed is not used. Apply returns no events of its
// own: the runner's record of each action is the whole story.
package ultimatum

import (
	"fmt"
	"slices"
	"strconv"
	"unicode"
	"unicode/utf8"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/referee/games"
	"google.golang.org/protobuf/proto"
)

// Name is the game's name in the registry and in observations.
const Name = "ultimatum"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

// Parameter defaults and limits.
const (
	DefaultTotal    int64  = 100
	DefaultMaxTurns int32  = 8
	DefaultCurrency string = "Dollars"

	// MaxTotal keeps every amount exactly representable in the float64 payoffs of the record.
	MaxTotal int64 = 1 << 53
	// MaxMaxTurns bounds a match's length: each observation carries the whole history, so a
	// match of n turns costs O(n^2) to observe, and no published variant goes beyond 10 turns.
	MaxMaxTurns int32 = 10000
	// MaxCurrencyLen is the longest currency name, in characters.
	MaxCurrencyLen = 32
)

// Seats.
const (
	P1 games.Seat = 0 // holds the money and moves first
	P2 games.Seat = 1 // holds nothing; receives x in a deal
)

const phaseBargaining = "bargaining"

// seatNames and seatRoles are indexed by seat. Arrays, so that no caller can change them.
var (
	seatNames = [2]string{"P1", "P2"}
	seatRoles = [2]string{"holder", "receiver"}
)

// New returns the multi-turn ultimatum game.
func New() games.Game { return game{} }

type game struct{}

// Info describes the game, its seats and its parameters.
func (game) Info() *refereev1.GameInfo {
	return &refereev1.GameInfo{
		Name:         Name,
		Description:  "Multi-turn ultimatum: P1 holds money, P2 nothing; they take turns proposing how to split it until one accepts or rejects.",
		RulesVersion: RulesVersion,
		Seats:        seatNames[:],
		SeatRoles:    seatRoles[:],
		Params: []*refereev1.ParamInfo{
			{
				Name:         "total",
				Kind:         refereev1.ParamKind_PARAM_KIND_INT,
				DefaultValue: strconv.FormatInt(DefaultTotal, 10),
				Description:  fmt.Sprintf("Money P1 holds at the start, which the players split. A whole number from 1 to %d (2^53).", MaxTotal),
			},
			{
				Name:         "max_turns",
				Kind:         refereev1.ParamKind_PARAM_KIND_INT,
				DefaultValue: strconv.Itoa(int(DefaultMaxTurns)),
				Description:  fmt.Sprintf("Turns of both players together; P1 moves on odd turns, P2 on even ones, and no proposal may be made on the last. From 1 to %d.", MaxMaxTurns),
			},
			{
				Name:         "currency",
				Kind:         refereev1.ParamKind_PARAM_KIND_STRING,
				DefaultValue: DefaultCurrency,
				Description:  fmt.Sprintf("Name of the money, used as the resource name in proposals and in briefings. One word of letters, digits, '_' or '-', starting with a letter, at most %d characters.", MaxCurrencyLen),
			},
		},
	}
}

// Resolve validates params and fills in the defaults. It refuses params meant for another game.
func (game) Resolve(params *matchv1.GameParams) (*matchv1.GameParams, error) {
	p, err := resolve(params)
	if err != nil {
		return nil, err
	}
	return p.proto(), nil
}

// NewState starts a match. params are resolved again, so unresolved ones work too; the seed is
// unused since the game has no chance.
func (game) NewState(params *matchv1.GameParams, _ uint64) (games.State, error) {
	p, err := resolve(params)
	if err != nil {
		return nil, err
	}
	return &state{p: p, turn: 1, rules: &[2]string{rulesText(p, P1), rulesText(p, P2)}}, nil
}

// params are the resolved parameters, as plain values.
type params struct {
	total    int64
	maxTurns int32
	currency string
}

func resolve(gp *matchv1.GameParams) (params, error) {
	p := params{total: DefaultTotal, maxTurns: DefaultMaxTurns, currency: DefaultCurrency}
	if gp == nil {
		return p, nil
	}
	// Look at the oneof reflectively so that a branch added for a future family is named in
	// the error instead of being mistaken for "all defaults".
	m := gp.ProtoReflect()
	if od := m.Descriptor().Oneofs().ByName("family"); od != nil {
		if fd := m.WhichOneof(od); fd != nil && fd.Name() != Name {
			return params{}, fmt.Errorf("ultimatum: params are for the %q game, not %q", fd.Name(), Name)
		}
	}
	u := gp.GetUltimatum()
	if u == nil {
		return p, nil
	}
	if u.Total != nil {
		p.total = u.GetTotal()
	}
	if u.MaxTurns != nil {
		p.maxTurns = u.GetMaxTurns()
	}
	if u.Currency != nil {
		p.currency = u.GetCurrency()
	}
	switch {
	case p.total < 1:
		return params{}, fmt.Errorf("ultimatum: total must be at least 1, got %d", p.total)
	case p.total > MaxTotal:
		return params{}, fmt.Errorf("ultimatum: total must be at most %d (2^53), got %d", MaxTotal, p.total)
	case p.maxTurns < 1:
		return params{}, fmt.Errorf("ultimatum: max_turns must be at least 1, got %d", p.maxTurns)
	case p.maxTurns > MaxMaxTurns:
		return params{}, fmt.Errorf("ultimatum: max_turns must be at most %d, got %d", MaxMaxTurns, p.maxTurns)
	}
	if err := checkCurrency(p.currency); err != nil {
		return params{}, err
	}
	return p, nil
}

// checkCurrency insists on one plain word, because the name is a map key agents must type back
// and it is spliced into briefings.
func checkCurrency(c string) error {
	if !utf8.ValidString(c) {
		return fmt.Errorf("ultimatum: currency must be valid UTF-8")
	}
	if c == "" {
		return fmt.Errorf("ultimatum: currency must not be empty")
	}
	if n := utf8.RuneCountInString(c); n > MaxCurrencyLen {
		return fmt.Errorf("ultimatum: currency must be at most %d characters, got %d", MaxCurrencyLen, n)
	}
	for i, r := range c {
		ok := unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || r == '_' || r == '-'))
		if !ok {
			return fmt.Errorf("ultimatum: currency must be one word of letters, digits, '_' or '-' starting with a letter, got %q", c)
		}
	}
	return nil
}

func (p params) proto() *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: p.ultimatum()}}
}

func (p params) ultimatum() *ultimatumv1.Params {
	return &ultimatumv1.Params{Total: proto.Int64(p.total), MaxTurns: proto.Int32(p.maxTurns), Currency: proto.String(p.currency)}
}

// offer is a proposal on the table: x is what P1 hands to P2.
type offer struct {
	turn     int32
	proposer games.Seat
	x        int64
}

// state is one match. Every field is a value except history, whose entries are never changed
// once written, so a shallow copy plus History.Clone is a deep enough clone.
type state struct {
	p    params
	turn int32 // turn being played; once over, the turn of the ending move

	// standing is the opponent's proposal the mover may accept: always the previous turn's.
	standing    offer
	hasStanding bool
	// last holds each seat's most recent proposal, for the briefing.
	last    [2]offer
	hasLast [2]bool

	over  bool
	cause matchv1.EndCause
	endBy games.Seat // seat that accepted or rejected
	// final is the proposal standing at the end: the one accepted, or the one rejected.
	final    offer
	hasFinal bool

	history games.History

	// rules is the fixed part of each seat's briefing; shared by clones, never changed.
	rules *[2]string
}

var _ games.State = (*state)(nil)

func (s *state) mover() games.Seat { return (s.turn + 1) % 2 }

func (s *state) isLastTurn() bool { return s.turn == s.p.maxTurns }

// ToMove returns the seat whose turn it is, or nothing once the game is over.
func (s *state) ToMove() []games.Seat {
	if s.over {
		return nil
	}
	return []games.Seat{s.mover()}
}

// Turn returns the current turn, 1-based.
func (s *state) Turn() int32 { return s.turn }

// legalMoves returns the kinds the mover may play now, in a fixed order.
func (s *state) legalMoves() []gamev1.MoveKind {
	if s.over {
		return nil
	}
	var kinds []gamev1.MoveKind
	if !s.isLastTurn() {
		kinds = append(kinds, gamev1.MoveKind_MOVE_KIND_PROPOSE)
	}
	if s.hasStanding {
		kinds = append(kinds, gamev1.MoveKind_MOVE_KIND_ACCEPT)
	}
	return append(kinds, gamev1.MoveKind_MOVE_KIND_REJECT)
}

// Apply plays seat's action. Refused actions return a *games.Rejection and change nothing: every
// check comes before the first write.
func (s *state) Apply(seat games.Seat, action *agentv1.Action) ([]*eventsv1.MatchEvent, error) {
	if err := games.CheckAction(action, seat, len(seatNames)); err != nil {
		return nil, err
	}
	if s.over {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "the game is over; no more moves can be made")
	}
	if seat != s.mover() {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN,
			"it is %s's turn (turn %d of %d), not %s", seatNames[s.mover()], s.turn, s.p.maxTurns, seatName(seat))
	}
	move := action.GetMove()
	switch k := move.GetKind().(type) {
	case *gamev1.Move_Propose:
		if s.isLastTurn() {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE,
				"turn %d is the last turn, on which no proposal may be made; %s", s.turn, s.legalText())
		}
		x, err := s.parseOffer(k.Propose.GetProposal())
		if err != nil {
			return nil, err
		}
		o := offer{turn: s.turn, proposer: seat, x: x}
		s.record(seat, move, action.GetMessages(), fmt.Sprintf("%s proposes: %s.", seatNames[seat], s.splitText(x)))
		s.standing, s.hasStanding = o, true
		s.last[seat], s.hasLast[seat] = o, true
		s.turn++
	case *gamev1.Move_Accept:
		if !s.hasStanding {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE,
				"there is no proposal to accept on turn %d; %s", s.turn, s.legalText())
		}
		if pt := k.Accept.GetProposalTurn(); pt != 0 && pt != s.standing.turn {
			return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN,
				"accept names the proposal of turn %d, but the only proposal that can be accepted is %s's of turn %d (%s); set proposal_turn to %d or 0",
				pt, seatNames[s.standing.proposer], s.standing.turn, s.splitText(s.standing.x), s.standing.turn)
		}
		s.end(seat, matchv1.EndCause_END_CAUSE_AGREEMENT)
		s.record(seat, move, action.GetMessages(), s.outcomeSummary())
	case *gamev1.Move_Reject:
		s.end(seat, matchv1.EndCause_END_CAUSE_REJECTED)
		s.record(seat, move, action.GetMessages(), s.outcomeSummary())
	default:
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE,
			"the ultimatum game has no %s move; %s", kindName(move), s.legalText())
	}
	return nil, nil
}

func (s *state) end(seat games.Seat, cause matchv1.EndCause) {
	s.final, s.hasFinal = s.standing, s.hasStanding
	s.over, s.cause, s.endBy = true, cause, seat
	s.hasStanding = false
}

// record adds the move to the history. Move and messages are copied so that a caller reusing
// its action cannot rewrite the record.
func (s *state) record(seat games.Seat, move *gamev1.Move, msgs []*gamev1.Message, summary string) {
	copied := make([]*gamev1.Message, len(msgs))
	for i, m := range msgs {
		copied[i] = proto.CloneOf(m)
	}
	s.history.AddMove(s.turn, seat, proto.CloneOf(move), copied, summary)
}

// parseOffer reads x from a proposal, or says what is wrong and what would be legal. Zero
// amounts are allowed anywhere, as the Bound contract says ("absent or 0"); negative ones never.
func (s *state) parseOffer(p *gamev1.Proposal) (int64, error) {
	alloc := p.GetAllocation()
	if alloc == nil {
		return 0, s.badTerms("the proposal has no allocation")
	}
	var x int64
	var seen [2]bool
	for _, sh := range alloc.GetShares() {
		seat := sh.GetSeat()
		if seat != P1 && seat != P2 {
			return 0, s.badTerms("the allocation names seat %d, but only seats 0 (P1) and 1 (P2) play", seat)
		}
		if seen[seat] {
			return 0, s.badTerms("the allocation has two shares for seat %d (%s); give at most one per seat", seat, seatNames[seat])
		}
		seen[seat] = true
		for _, kv := range append(sortedEntries(sh.GetGives()), sortedEntries(sh.GetReceives())...) {
			if kv.amount < 0 {
				return 0, s.badTerms("amounts cannot be negative, but %s has %d %s", seatNames[seat], kv.amount, quoteIfOdd(kv.name))
			}
		}
		for _, kv := range sortedEntries(sh.GetReceives()) {
			if kv.amount != 0 {
				return 0, s.badTerms("%s cannot receive %d %s from a pool: in this game money only moves from P1 to P2", seatNames[seat], kv.amount, quoteIfOdd(kv.name))
			}
		}
		for _, kv := range sortedEntries(sh.GetGives()) {
			switch {
			case kv.amount == 0:
				continue
			case kv.name != s.p.currency:
				return 0, s.badTerms("there is no resource %q in this game; the only one is %s", kv.name, s.p.currency)
			case seat == P2:
				return 0, s.badTerms("P2 holds no %s", s.p.currency)
			case kv.amount > s.p.total:
				return 0, s.badTerms("P1 holds only %d %s and cannot give %d", s.p.total, s.p.currency, kv.amount)
			}
			x = kv.amount
		}
	}
	return x, nil
}

// badTerms refuses terms, explaining what a legal proposal looks like.
func (s *state) badTerms(format string, args ...any) error {
	return games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS,
		"%s; a proposal moves x %s from P1 to P2 with 0 <= x <= %d (seat 0 gives {%q: x}, nothing else)",
		fmt.Sprintf(format, args...), s.p.currency, s.p.total, s.p.currency)
}

// legalText names the legal moves for a rejection message.
func (s *state) legalText() string {
	names := make([]string, 0, 3)
	for _, k := range s.legalMoves() {
		names = append(names, kindWord(k))
	}
	return "legal now: " + orList(names)
}

// Default is reject: an agent that cannot answer ends the game with no deal.
func (s *state) Default(games.Seat) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}
}

// payoffs returns each seat's final holdings.
func (s *state) payoffs() [2]int64 {
	if s.over && s.cause == matchv1.EndCause_END_CAUSE_AGREEMENT {
		return [2]int64{s.p.total - s.final.x, s.final.x}
	}
	return [2]int64{}
}

// Outcome returns how the game ended: the split on agreement, zeros otherwise.
func (s *state) Outcome() *matchv1.Outcome {
	if !s.over {
		return &matchv1.Outcome{Summary: "The game is not over."}
	}
	pay := s.payoffs()
	return &matchv1.Outcome{
		Cause:     s.cause,
		Payoffs:   []float64{float64(pay[P1]), float64(pay[P2])},
		Agreement: s.cause == matchv1.EndCause_END_CAUSE_AGREEMENT,
		Summary:   s.outcomeSummary(),
	}
}

// outcomeSummary is one sentence on how the game ended.
func (s *state) outcomeSummary() string {
	c := s.p.currency
	by := seatNames[s.endBy]
	switch {
	case !s.over:
		return "The game is not over."
	case s.cause == matchv1.EndCause_END_CAUSE_AGREEMENT:
		pay := s.payoffs()
		return fmt.Sprintf("%s accepted %s's offer: P1 gets %d %s, P2 gets %d %s.",
			by, seatNames[s.final.proposer], pay[P1], c, pay[P2], c)
	case s.hasFinal:
		return fmt.Sprintf("%s rejected %s's offer (%s) on turn %d, so there is no deal and both get 0 %s.",
			by, seatNames[s.final.proposer], s.splitText(s.final.x), s.turn, c)
	default:
		return fmt.Sprintf("%s rejected on turn %d, so there is no deal and both get 0 %s.", by, s.turn, c)
	}
}

// Clone returns an independent copy: the struct holds only values, and the history's entries
// are immutable.
func (s *state) Clone() games.State {
	c := *s
	c.history = s.history.Clone()
	return &c
}

// Observe builds seat's observation. The game has complete information, so the only filtering
// is the messages, which History.For does.
func (s *state) Observe(seat games.Seat) *agentv1.Observation {
	obs := &agentv1.Observation{
		Game:     Name,
		Seat:     seat,
		Turn:     s.turn,
		MaxTurns: s.p.maxTurns,
	}
	if seat != P1 && seat != P2 {
		obs.Briefing = fmt.Sprintf("Seat %d does not play in this game; the seats are 0 (P1) and 1 (P2).", seat)
		return obs
	}
	for i := range seatNames {
		obs.Seats = append(obs.Seats, &gamev1.SeatInfo{Seat: games.Seat(i), Name: seatNames[i], Role: seatRoles[i]})
	}
	toMove := !s.over && seat == s.mover()
	if !s.over {
		obs.Phase = phaseBargaining
	}
	if toMove {
		obs.LegalMoves = s.legalMoves()
		if !s.isLastTurn() {
			obs.ProposalBounds = []*gamev1.Bound{{
				Seat: P1, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: s.p.currency, Min: 0, Max: s.p.total,
			}}
		}
	}
	obs.History = s.history.For(seat)
	obs.View = &agentv1.Observation_Ultimatum{Ultimatum: s.view(seat, toMove)}
	obs.Briefing = s.briefing(seat)
	return obs
}

func (s *state) view(seat games.Seat, toMove bool) *ultimatumv1.View {
	held := [2]int64{s.p.total, 0}
	if s.over {
		held = s.payoffs() // with no deal the money is lost to both: the spec's "both get 0"
	}
	v := &ultimatumv1.View{
		Params:       s.p.ultimatum(),
		Held:         held[seat],
		OpponentHeld: held[1-seat],
	}
	if !s.over {
		v.TurnsLeft = s.p.maxTurns - s.turn
	}
	if toMove && s.hasStanding {
		v.StandingOffer = proto.Int64(s.standing.x)
		v.StandingProposer = proto.Int32(s.standing.proposer)
	}
	return v
}

// splitText describes a split: "P1 gives 40 Dollars to P2 and keeps 60".
func (s *state) splitText(x int64) string {
	return fmt.Sprintf("P1 gives %d %s to P2 and keeps %d", x, s.p.currency, s.p.total-x)
}

func seatName(seat games.Seat) string {
	if seat == P1 || seat == P2 {
		return seatNames[seat]
	}
	return fmt.Sprintf("seat %d", seat)
}

func kindWord(k gamev1.MoveKind) string {
	switch k {
	case gamev1.MoveKind_MOVE_KIND_PROPOSE:
		return "propose"
	case gamev1.MoveKind_MOVE_KIND_ACCEPT:
		return "accept"
	case gamev1.MoveKind_MOVE_KIND_REJECT:
		return "reject"
	case gamev1.MoveKind_MOVE_KIND_PASS:
		return "pass"
	case gamev1.MoveKind_MOVE_KIND_CHOOSE:
		return "choose"
	}
	return k.String()
}

func kindName(m *gamev1.Move) string {
	switch m.GetKind().(type) {
	case *gamev1.Move_Pass:
		return "pass"
	case *gamev1.Move_Choose:
		return "choose"
	}
	return "such"
}

// orList joins words as "a", "a or b", "a, b or c".
func orList(words []string) string {
	switch len(words) {
	case 0:
		return "nothing"
	case 1:
		return words[0]
	}
	out := words[0]
	for _, w := range words[1 : len(words)-1] {
		out += ", " + w
	}
	return out + " or " + words[len(words)-1]
}

type entry struct {
	name   string
	amount int64
}

// sortedEntries lists a map by key so that rejection messages do not depend on map order.
func sortedEntries(m map[string]int64) []entry {
	out := make([]entry, 0, len(m))
	for k, v := range m {
		out = append(out, entry{k, v})
	}
	slices.SortFunc(out, func(a, b entry) int {
		switch {
		case a.name < b.name:
			return -1
		case a.name > b.name:
			return 1
		}
		return 0
	})
	return out
}

// quoteIfOdd writes a resource name bare when it is a plain word and quoted otherwise, so that
// an empty or odd name stays visible in a message.
func quoteIfOdd(name string) string {
	if checkCurrency(name) == nil {
		return name
	}
	return strconv.Quote(name)
}

// plural picks the singular or plural form of a counted noun.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
