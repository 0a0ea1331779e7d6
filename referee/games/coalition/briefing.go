package coalition

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition/solution"
)

// briefing is the plain-language account of the rules and of seat's situation, complete
// enough that a person or a language model can act on it alone: the values, the phase and
// round, who is active or proposes, what is pending, the seat's own private conversations,
// and the exact form of every legal move. It is a pure function of the state and shows only
// what seat may see.
func (st *state) briefing(seat games.Seat) string {
	return games.Brief(st.r.text[seat], "Where the game stands",
		func(line games.BriefingLine) {
			st.situation(seat, line)
			st.conversations(seat, line)
		},
		func(line games.BriefingLine) { st.options(seat, line) })
}

// rulesText is the part of the briefing that depends only on the parameters and the seat,
// written once per match.
func rulesText(s *Setup, seat games.Seat) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	n := s.N()
	u := s.Unit
	seats := make([]string, n)
	for i, p := range s.Players {
		seats[i] = fmt.Sprintf("%s (seat %d)", p, i)
	}
	line("You are %s (seat %d), one of %d players in a coalition game: %s. The players negotiate in private, then vote on binding proposals for sharing what a coalition (a group of players) can get, counted in %s.",
		s.Players[seat], seat, n, andList(seats), u)
	line("")
	line("What each coalition can share")
	for _, c := range s.Coalitions() {
		line("- %s: %s", coalitionLabel(s, c), s.Amount(s.Values[c]))
	}
	line("Every player knows these values, the rules below, and which agent sits in every seat.")
	line("")
	line("Rules")
	if s.Rounds > 0 {
		line("Phase 1, private negotiation: %d %s. The active player rotates in seat order: %s.", s.Rounds, plural(int64(s.Rounds), "round", "rounds"), rotationText(s))
		line("- In each round, the active player first sends exactly one private message to each other player.")
		line("- Then every other player sends exactly one private reply, to the active player only. They write at the same time, without seeing each other's replies.")
		line("- A message is seen only by the player it is addressed to (and its writer). It may carry a split offer: a coalition that contains the writer, with whole amounts of %s for its members adding up to the coalition's value. Offers bind nobody.", u)
	} else {
		line("There is no negotiation phase in this match (0 rounds): the game starts with the binding proposals.")
	}
	line("Phase 2, binding proposals: at most %d.", s.MaxProposals)
	line("- A proposer is drawn uniformly at random from all players (the draw comes from the match seed).")
	line("- The proposer names a coalition that contains itself and a split: a whole number of %s, 0 or more, for each member, adding up exactly to the coalition's value.", u)
	line("- Every other member of that coalition votes accept or reject, all at the same time; players outside the coalition do not vote, and the proposer counts as accepting. A proposal of the proposer alone passes at once.")
	line("- If every member accepts, the game ends: each member gets its amount and everyone else gets 0 %s.", u)
	if s.MaxProposals > 1 {
		line("- If any member rejects, a new proposer is drawn (uniformly from all players, whoever proposed before) for the next proposal. If proposal %d is rejected too, the game ends and everyone gets 0 %s.", s.MaxProposals, u)
	} else {
		line("- There is only one proposal: if any member rejects it, the game ends and everyone gets 0 %s.", u)
	}
	line("- Proposals and, once every vote is in, the votes are announced to all players.")
	line("Also")
	line("- Your payoff is the %s you receive; your goal is to make it as large as you can. This is the only game between these players: nothing carries over.", u)
	line("- In phase 2 any move may also carry messages, each seen only by the players it is addressed to (a message addressed to no one in particular goes to all), and each may carry a non-binding offer as in phase 1.")
	line("- A move that breaks the rules is refused with the reason, and you may try again a limited number of times. If your agent gives no usable answer, the referee moves for you: in phase 1 it sends %q wherever you must write; as proposer it proposes %s with its value split as evenly as possible; as a voter it rejects.", DefaultText, s.Name(s.Grand()))
	line("- Your private reasoning and notes are never shown to anyone else.")
	line("")
	return b.String()
}

// coalitionLabel names a coalition in the values table: "A alone" for single players.
func coalitionLabel(s *Setup, c solution.Coalition) string {
	if c.Size() == 1 {
		return s.Name(c) + " alone"
	}
	return s.Name(c)
}

// rotationText says who is active in which round, e.g. "round 1: A, round 2: B, round 3: C".
func rotationText(s *Setup) string {
	k := min(int(s.Rounds), s.N())
	parts := make([]string, k)
	for r := range k {
		parts[r] = fmt.Sprintf("round %d: %s", r+1, s.Players[r])
	}
	text := strings.Join(parts, ", ")
	if int(s.Rounds) > s.N() {
		text += ", and so on in the same order"
	}
	return text
}

// situation restates where the game stands for seat.
func (st *state) situation(seat games.Seat, line func(string, ...any)) {
	s := st.r.s
	me := int(seat)
	switch st.phase {
	case phaseOver:
		line("- The game is over. %s", st.outcomeText())
		line("- You get %s.", s.Amount(st.payoffs()[seat]))
		st.pastProposals(line)
		return
	case phaseTalk:
		active := st.active()
		line("- Phase 1 (private negotiation), round %d of %d, turn %d. The active player is %s.", st.round, s.Rounds, st.turn, st.you(seat, active))
		switch {
		case seat == active && st.awaiting.Has(me):
			line("- You must now write one private message to each of %s.", st.othersText(seat))
		case seat == active:
			line("- You have written to %s; you are waiting for their replies to you.", st.othersText(seat))
		case st.awaiting == solution.CoalitionOf(int(active)):
			line("- You are waiting for %s's message to you; then you will reply to %s.", st.name(active), st.name(active))
		case st.awaiting.Has(me):
			line("- %s has written to each other player. You must now reply to %s, privately.", st.name(active), st.name(active))
		default:
			line("- You have replied to %s; waiting for %s to reply too.", st.name(active), st.namesText(st.awaiting))
		}
		if st.round < s.Rounds {
			line("- After this round: %d more %s of negotiation, then phase 2 with at most %d binding proposals.", s.Rounds-st.round, plural(int64(s.Rounds-st.round), "round", "rounds"), s.MaxProposals)
		} else {
			line("- This is the last round of negotiation; then phase 2 begins with at most %d binding proposals.", s.MaxProposals)
		}
		return
	}
	line("- Phase 2 (binding proposals), proposal %d of %d, turn %d. %s drawn to propose.", st.made, s.MaxProposals, st.turn, st.youWere(seat, st.proposer))
	st.pastProposals(line)
	p := st.pending
	switch {
	case p == nil && seat == st.proposer:
		line("- You must now make proposal %d.", st.made)
	case p == nil:
		line("- You are waiting for %s's proposal.", st.name(st.proposer))
	default:
		line("- %s proposes %s.", st.you(seat, p.proposer), s.splitText(p.members, p.amounts))
		switch {
		case seat == p.proposer:
			line("- You are waiting for the votes of %s.", st.namesText(p.members&^solution.CoalitionOf(int(seat))))
		case st.awaiting.Has(me):
			line("- You are a member of this coalition and must vote. If every member accepts, you get %s and the game ends.", s.Amount(p.amounts[seat]))
		case p.members.Has(me):
			line("- You have voted; waiting for %s to vote too.", st.namesText(st.awaiting))
		default:
			line("- You are not in this coalition, so you do not vote; if it passes, you get 0 %s.", s.Unit)
		}
		if st.made < s.MaxProposals {
			line("- If it is rejected, a new proposer is drawn for proposal %d of %d.", st.made+1, s.MaxProposals)
		} else {
			line("- This is the last proposal: if it is rejected, the game ends and everyone gets 0 %s.", s.Unit)
		}
	}
}

// pastProposals lists the proposals decided so far, with the votes.
func (st *state) pastProposals(line func(string, ...any)) {
	if len(st.past) == 0 {
		return
	}
	line("- Proposals so far:")
	for i, res := range st.past {
		line("  %d. (turn %d) %s", i+1, res.p.turn, st.resolvedText(res))
	}
}

// conversations lists the messages seat wrote or received, with any offer: seat's own
// correspondence and public messages, nothing else.
func (st *state) conversations(seat games.Seat, line func(string, ...any)) {
	first := true
	for _, o := range st.talk {
		var text string
		switch {
		case o.from == seat:
			text = o.asSent
		case o.public || containsSeat(o.to, seat):
			text = o.asReceived
		default:
			continue
		}
		if first {
			line("- Messages you sent or received (offers bind nobody):")
			first = false
		}
		line("%s", text)
	}
	if first && st.r.s.Rounds > 0 {
		line("- You have sent and received no messages yet.")
	}
}

// talkLines writes a message's line in the briefings of its sender and of its recipients.
func (st *state) talkLines(o offer) (asSent, asReceived string) {
	s := st.r.s
	when := fmt.Sprintf("turn %d", o.turn)
	if o.round > 0 {
		when = fmt.Sprintf("round %d", o.round)
	}
	tail := ": " + strconv.Quote(o.text)
	if o.terms != nil {
		tail += " [offer: " + s.splitText(o.terms.members, o.terms.amounts) + "]"
	}
	switch {
	case o.public:
		return "  - " + when + ", you to everyone" + tail, "  - " + when + ", " + st.name(o.from) + " to everyone" + tail
	case len(o.to) == 1:
		return "  - " + when + ", you to " + st.seatsText(o.to) + tail, "  - " + when + ", " + st.name(o.from) + " to you" + tail
	default:
		return "  - " + when + ", you to " + st.seatsText(o.to) + tail, "  - " + when + ", " + st.name(o.from) + " to " + st.seatsText(o.to) + tail
	}
}

// options lists the moves seat may make now, with the exact form of each.
func (st *state) options(seat games.Seat, line func(string, ...any)) {
	s := st.r.s
	if st.phase == phaseOver {
		line("- Nothing: the game is over.")
		return
	}
	if !st.awaiting.Has(int(seat)) {
		line("- Nothing: %s.", st.waitingText())
		return
	}
	switch {
	case st.phase == phaseTalk:
		line("- say: %s.", st.talkRule(seat))
		line("  In the action: move {say: {}} and messages %s.", st.messagesExample(seat))
		line("  Any of these messages may carry an offer in its proposal field: an allocation that %s", st.splitRule(seat))
	case st.pending == nil:
		line("- propose: an allocation that %s", st.splitRule(seat))
		shares, example := st.allocationExample(seat)
		line("  In the action: move {propose: {proposal: {allocation: {shares: %s}}}}; this example %s.", shares, example)
		line("  Messages are optional; they may carry non-binding offers of the same form.")
	default:
		p := st.pending
		line("- accept: vote for %s's proposal; if every member accepts, you get %s and the game ends. In the action: move {accept: {proposal_turn: %d}} (or proposal_turn 0).",
			st.name(p.proposer), s.Amount(p.amounts[seat]), p.turn)
		next := fmt.Sprintf("a new proposer is drawn for proposal %d", st.made+1)
		if st.made >= s.MaxProposals {
			next = fmt.Sprintf("the game ends and everyone gets 0 %s", s.Unit)
		}
		line("- reject: vote against it; then %s. In the action: move {reject: {}}.", next)
		line("  Messages are optional; they may carry non-binding offers as described for proposals.")
	}
}

// talkRule says what a phase-1 move of seat must be.
func (st *state) talkRule(seat games.Seat) string {
	active := st.active()
	if seat == active {
		return fmt.Sprintf("the active player sends a say move with exactly %d %s, one to each other player and addressed to that player alone: %s",
			st.n()-1, plural(int64(st.n()-1), "message", "messages"), st.addressText(seat))
	}
	return fmt.Sprintf("a reply is a say move with exactly one message, addressed to the active player alone: %s (to: [%d])", st.name(active), active)
}

// addressText lists the other seats with their "to" field, e.g. "B (to: [1]) and C (to: [2])".
func (st *state) addressText(seat games.Seat) string {
	var parts []string
	for other := range games.Seat(st.n()) {
		if other != seat {
			parts = append(parts, fmt.Sprintf("%s (to: [%d])", st.name(other), other))
		}
	}
	return andList(parts)
}

// messagesExample writes the messages of a legal phase-1 move.
func (st *state) messagesExample(seat games.Seat) string {
	var parts []string
	for _, slot := range st.requiredMessages(seat) {
		parts = append(parts, fmt.Sprintf("{to: [%d], text: \"...\"}", slot.GetTo()[0]))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// splitRule explains a legal split (a proposal or an offer) for seat, as the predicate of "an
// allocation that ...".
func (st *state) splitRule(seat games.Seat) string { return st.r.split[seat] }

// allocationExample writes the shares of a legal allocation for seat, and what they mean.
func (st *state) allocationExample(seat games.Seat) (shares, meaning string) {
	return st.r.example[seat][0], st.r.example[seat][1]
}

// splitRule explains a legal split for seat; written once per match (see newRules).
func splitRule(s *Setup, seat games.Seat) string {
	var mine []string
	for _, c := range s.Coalitions() {
		if c.Has(int(seat)) {
			mine = append(mine, fmt.Sprintf("%s %s", coalitionLabel(s, c), s.Amount(s.Values[c])))
		}
	}
	return fmt.Sprintf("names a coalition that contains you (%s) by giving each of its members, and nobody else, one share {seat: S, receives: {%q: amount}}; the amounts are whole numbers, 0 or more, adding up exactly to the coalition's value. Your coalitions: %s.",
		s.Players[seat], s.Unit, strings.Join(mine, "; "))
}

// allocationExample writes the shares of a legal allocation for seat, and what they mean: the
// most valuable coalition of seat with others (the smallest such, the first in order), its
// value split as evenly as possible, the units left over going to the first members. Written
// once per match (see newRules).
func allocationExample(s *Setup, seat games.Seat) (shares, meaning string) {
	var c solution.Coalition
	for _, d := range s.Coalitions() {
		if d.Has(int(seat)) && d.Size() > 1 && (c == 0 || s.Values[d] > s.Values[c]) {
			c = d
		}
	}
	v, k := s.Values[c], int64(c.Size())
	var parts, means []string
	for i, m := range c.Members() {
		x := v / k
		if int64(i) < v%k {
			x++
		}
		parts = append(parts, fmt.Sprintf("{seat: %d, receives: {%q: %d}}", m, s.Unit, x))
		means = append(means, fmt.Sprintf("%s %s", s.Players[m], s.Amount(x)))
	}
	return "[" + strings.Join(parts, ", ") + "]", fmt.Sprintf("splits %s (%s) as %s", s.Name(c), s.Amount(v), andList(means))
}

// waitingText says who the game is waiting for.
func (st *state) waitingText() string {
	switch {
	case st.phase == phaseOver:
		return "the game is over"
	case st.phase == phaseTalk && st.awaiting == solution.CoalitionOf(int(st.active())):
		return fmt.Sprintf("it is %s's turn to write to %s", st.name(st.active()), st.othersText(st.active()))
	case st.phase == phaseTalk:
		return fmt.Sprintf("waiting for %s to reply to %s", st.namesText(st.awaiting), st.name(st.active()))
	case st.pending == nil:
		return fmt.Sprintf("waiting for %s's proposal", st.name(st.proposer))
	default:
		return fmt.Sprintf("waiting for %s to vote on %s's proposal", st.namesText(st.awaiting), st.name(st.pending.proposer))
	}
}

// you names seat who as "you" to seat, else by name.
func (st *state) you(seat, who games.Seat) string {
	if seat == who {
		return "you"
	}
	return st.name(who)
}

// youWere writes "You were" to seat who, else "B was".
func (st *state) youWere(seat, who games.Seat) string {
	if seat == who {
		return "You were"
	}
	return st.name(who) + " was"
}

// othersText lists every seat but seat: "B and C".
func (st *state) othersText(seat games.Seat) string {
	return st.namesText(st.r.s.Grand() &^ solution.CoalitionOf(int(seat)))
}

// namesText lists a coalition's members: "A, B and C".
func (st *state) namesText(c solution.Coalition) string {
	names := make([]string, 0, c.Size())
	for _, m := range c.Members() {
		names = append(names, st.r.s.Players[m])
	}
	return andList(names)
}

func (st *state) seatsText(seats []games.Seat) string {
	names := make([]string, len(seats))
	for i, s := range seats {
		names[i] = st.name(s)
	}
	return andList(names)
}

func containsSeat(seats []games.Seat, seat games.Seat) bool {
	for _, s := range seats {
		if s == seat {
			return true
		}
	}
	return false
}

// andList joins words as "a", "a and b", "a, b and c".
func andList(words []string) string {
	switch len(words) {
	case 0:
		return "nobody"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
