package llm

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// FailureKind names one way a model's reply, or a call to the model, can be unusable. The agent
// counts each kind (Agent.Stats); Usage.format_failures sums the reply kinds of one action.
type FailureKind string

// Reply failures: the model answered, but the answer is no legal action.
const (
	// FailUnparsable: no structure found (prose only, broken JSON, a message holding our tags).
	FailUnparsable FailureKind = "unparsable"
	// FailNoMove: structure, but no move in it.
	FailNoMove FailureKind = "no_move"
	// FailUnknownMove: a move the format does not know.
	FailUnknownMove FailureKind = "unknown_move"
	// FailIllegalMove: a kind of move that is not legal now.
	FailIllegalMove FailureKind = "illegal_move"
	// FailBadTerms: a proposal's amounts missing, out of range or of no legal form.
	FailBadTerms FailureKind = "bad_terms"
	// FailBadChoice: a choice that is not among the options.
	FailBadChoice FailureKind = "bad_choice"
	// FailBadMessage: messages to unknown seats, missing required messages, text too long.
	FailBadMessage FailureKind = "bad_message"
)

// Call failures: no usable reply came back.
const (
	// FailRateLimited: HTTP 429.
	FailRateLimited FailureKind = "http_429"
	// FailServerError: HTTP 5xx.
	FailServerError FailureKind = "http_5xx"
	// FailHTTP: any other HTTP error status (400, 401, 404, ...); not retried.
	FailHTTP FailureKind = "http_error"
	// FailTimeout: one call took longer than the request timeout.
	FailTimeout FailureKind = "timeout"
	// FailNetwork: the connection failed.
	FailNetwork FailureKind = "network"
	// FailBadResponse: a reply that is not a chat completion (undecodable, no choices).
	FailBadResponse FailureKind = "bad_response"
	// FailDeadline: the move's time ran out before a usable reply.
	FailDeadline FailureKind = "deadline"
	// FailFallback: the agent returned its fallback action.
	FailFallback FailureKind = "fallback"
)

// formatError says why a reply is no usable action, in words fit to send back to the model.
type formatError struct {
	kind FailureKind
	msg  string
}

func (e *formatError) Error() string { return e.msg }

func failf(kind FailureKind, format string, args ...any) *formatError {
	return &formatError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// draft is a reply read by an output style, before it is checked against the observation.
type draft struct {
	reasoning string
	plan      string
	messages  []draftMessage
	hasMove   bool
	kind      gamev1.MoveKind
	word      string // the move as written, for error messages
	terms     string // a proposal's terms, written
	option    string // a choice, as written
}

type draftMessage struct {
	to       []string // recipients as written; empty: everyone
	text     string
	terms    string
	hasTerms bool
}

// resolve checks a draft against the observation and builds the action. The move is checked
// first; move is returned when it is legal even if the messages are not (the fallback keeps it).
func (t *turn) resolve(d *draft) (action *agentv1.Action, move *gamev1.Move, err *formatError) {
	move, err = t.resolveMove(d)
	if err != nil {
		return nil, nil, err
	}
	msgs, err := t.resolveMessages(d.messages)
	if err != nil {
		return nil, move, err
	}
	return &agentv1.Action{
		Move:             move,
		Messages:         msgs,
		PrivateReasoning: clip(d.reasoning, games.MaxTextBytes),
		PrivateNotes:     clip(d.plan, games.MaxTextBytes),
	}, move, nil
}

func (t *turn) resolveMove(d *draft) (*gamev1.Move, *formatError) {
	if !d.hasMove {
		return nil, failf(FailNoMove, "the answer has no move; the legal moves now are: %s", t.legalWords())
	}
	if d.kind == gamev1.MoveKind_MOVE_KIND_UNSPECIFIED {
		return nil, failf(FailUnknownMove, "%q is not a move; write one of: %s", clip(d.word, 80), t.legalWords())
	}
	if !t.isLegal(d.kind) {
		return nil, failf(FailIllegalMove, "%s is not legal now; the legal moves are: %s", games.KindWord(d.kind), t.legalWords())
	}
	switch d.kind {
	case gamev1.MoveKind_MOVE_KIND_PROPOSE:
		if form := dealForm(t.forms); form != nil {
			deal, err := t.parseDeal(d.terms, form)
			if err != nil {
				return nil, failf(FailBadTerms, "the proposal is not a legal deal: %v", err)
			}
			return &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
				Terms: &gamev1.Proposal_Deal{Deal: deal},
			}}}}, nil
		}
		if strings.TrimSpace(d.terms) == "" {
			return nil, failf(FailBadTerms, "the proposal has no terms; state the amounts (%s)", t.boundNames(t.bounds))
		}
		items, err := t.parseItems(d.terms, t.bounds)
		if err != nil {
			return nil, failf(FailBadTerms, "the proposal cannot be read: %v", err)
		}
		alloc, err := t.allocation(items, t.forms, t.bounds)
		if err != nil {
			return nil, failf(FailBadTerms, "the proposal is not legal: %v", err)
		}
		return &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
			Terms: &gamev1.Proposal_Allocation{Allocation: alloc},
		}}}}, nil
	case gamev1.MoveKind_MOVE_KIND_ACCEPT:
		return &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}, nil
	case gamev1.MoveKind_MOVE_KIND_REJECT:
		return &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, nil
	case gamev1.MoveKind_MOVE_KIND_PASS:
		return &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}, nil
	case gamev1.MoveKind_MOVE_KIND_SAY:
		return &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, nil
	case gamev1.MoveKind_MOVE_KIND_CHOOSE:
		id, ok := t.findOption(d.option)
		if !ok {
			return nil, failf(FailBadChoice, "%q is not one of the options; choose one of: %s", clip(d.option, 80), t.optionList())
		}
		return &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: id}}}, nil
	}
	return nil, failf(FailUnknownMove, "%s is a kind of move this agent cannot write", games.KindWord(d.kind))
}

func (t *turn) optionList() string {
	ids := make([]string, len(t.choices))
	for i, o := range t.choices {
		ids[i] = o.GetId()
		if o.GetLabel() != "" && o.GetLabel() != o.GetId() {
			ids[i] += " (" + o.GetLabel() + ")"
		}
	}
	return strings.Join(ids, ", ")
}

// recipientSep separates names in a message's recipients: "B, C", "B and C", "B & C".
var recipientSep = regexp.MustCompile(`\s*(?:,|;|&|\band\b)\s*`)

// publicWords address a message to everyone.
var publicWords = []string{"", "all", "everyone", "everybody", "public", "*"}

// resolveMessages checks recipients, required messages, lengths and attached terms.
func (t *turn) resolveMessages(drafts []draftMessage) ([]*gamev1.Message, *formatError) {
	var msgs []*gamev1.Message
	for _, dm := range drafts {
		text := strings.TrimSpace(dm.text)
		m := &gamev1.Message{}
		for _, name := range dm.to {
			for _, part := range recipientSep.Split(name, -1) {
				part = strings.TrimSpace(part)
				if slices.Contains(publicWords, strings.ToLower(part)) {
					continue
				}
				seat, ok := t.seatByName(part)
				switch {
				case !ok:
					return nil, failf(FailBadMessage, "a message is addressed to %q, but there is no such seat; the others are: %s", part, t.seatList(t.others()))
				case seat == t.self:
					return nil, failf(FailBadMessage, "a message is addressed to yourself (%s); address it to the others: %s", part, t.seatList(t.others()))
				}
				if !slices.Contains(m.To, seat) {
					m.To = append(m.To, seat)
				}
			}
		}
		if dm.hasTerms {
			if form := dealForm(t.termForms); form != nil {
				deal, err := t.parseDeal(dm.terms, form)
				if err != nil {
					return nil, failf(FailBadTerms, "the deal in a message is not legal: %v", err)
				}
				m.Proposal = &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: deal}}
			} else if len(t.termForms) == 0 {
				// Terms are not allowed in messages now: keep what was written as text.
				text = strings.TrimSpace(text + "\n" + dm.terms)
			} else {
				items, err := t.parseItems(dm.terms, t.termBnds)
				if err != nil {
					return nil, failf(FailBadTerms, "the terms in a message cannot be read: %v", err)
				}
				alloc, err := t.allocation(items, t.termForms, t.termBnds)
				if err != nil {
					return nil, failf(FailBadTerms, "the terms in a message are not legal: %v", err)
				}
				m.Proposal = &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: alloc}}
			}
		}
		if text == "" && m.Proposal == nil {
			continue
		}
		if len(text) > games.MaxTextBytes {
			return nil, failf(FailBadMessage, "a message is %d bytes long; keep each under %d", len(text), games.MaxTextBytes)
		}
		if !utf8.ValidString(text) {
			return nil, failf(FailBadMessage, "a message is not valid UTF-8")
		}
		m.Text = text
		msgs = append(msgs, m)
	}
	if len(msgs) > games.MaxMessages {
		return nil, failf(FailBadMessage, "%d messages; send at most %d", len(msgs), games.MaxMessages)
	}
	if len(t.slots) == 0 {
		return msgs, nil
	}
	return t.fitSlots(msgs)
}

// fitSlots matches messages to the required ones, one each. A message sent to everyone takes
// the last private slot left when that is the only way the messages can fit.
func (t *turn) fitSlots(msgs []*gamev1.Message) ([]*gamev1.Message, *formatError) {
	used := make([]bool, len(t.slots))
	var unplaced []*gamev1.Message
	for _, m := range msgs {
		i := slices.IndexFunc(t.slots, func(s *gamev1.MessageSlot) bool { return sameSeats(s.GetTo(), m.GetTo()) })
		for i >= 0 && used[i] {
			j := slices.IndexFunc(t.slots[i+1:], func(s *gamev1.MessageSlot) bool { return sameSeats(s.GetTo(), m.GetTo()) })
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i < 0 {
			unplaced = append(unplaced, m)
			continue
		}
		used[i] = true
	}
	var free []int
	for i, u := range used {
		if !u {
			free = append(free, i)
		}
	}
	if len(unplaced) == 1 && len(free) == 1 && len(unplaced[0].GetTo()) == 0 {
		unplaced[0].To = append([]int32(nil), t.slots[free[0]].GetTo()...)
		unplaced, free = nil, nil
	}
	switch {
	case len(unplaced) > 0:
		return nil, failf(FailBadMessage, "this turn takes exactly these messages: %s; yours include one %s", t.slotList(), t.addressed(unplaced[0].GetTo()))
	case len(free) > 0:
		return nil, failf(FailBadMessage, "this turn takes exactly these messages: %s; yours lack the one %s", t.slotList(), t.addressed(t.slots[free[0]].GetTo()))
	}
	// Keep the order of the slots.
	out := make([]*gamev1.Message, 0, len(msgs))
	for _, s := range t.slots {
		for _, m := range msgs {
			if sameSeats(s.GetTo(), m.GetTo()) && !slices.Contains(out, m) {
				out = append(out, m)
				break
			}
		}
	}
	return out, nil
}

func sameSeats(a, b []int32) bool {
	if len(a) != len(b) {
		return false
	}
	for _, s := range a {
		if !slices.Contains(b, s) {
			return false
		}
	}
	return true
}

func (t *turn) addressed(to []int32) string {
	if len(to) == 0 {
		return "to everyone"
	}
	return "to " + t.seatList(to)
}

func (t *turn) slotList() string {
	parts := make([]string, len(t.slots))
	for i, s := range t.slots {
		parts[i] = "one " + t.addressed(s.GetTo())
	}
	return strings.Join(parts, ", ")
}

// clip shortens s to at most n bytes, at a rune boundary, marking the cut.
func clip(s string, n int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= n {
		return s
	}
	const mark = " …[cut]"
	cut := max(n-len(mark), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
