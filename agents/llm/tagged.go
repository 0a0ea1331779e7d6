package llm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/sashabaranov/go-openai"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// taggedStyle reads replies written in sections between tags:
//
//	<reasoning>private thinking</reasoning>
//	<message to="P2">text for P2</message>       (any number; no "to": everyone)
//	<move>propose: P1 gives 40 Dollars</move>     (exactly one)
//	<plan>a private note for the next turn</plan>
//
// Tag names are case-insensitive and have aliases (scratchpad, thinking, reason for reasoning;
// answer, action for move; notes for plan). A section left unclosed ends where the next one
// begins. Outside the sections, a line "FINAL PROPOSAL: A: 500, B: 250, C: 250" is a proposal
// (the coalition seed's format) when there is no move section, and inside a message a line
// "TERMS: ..." or "SPLIT PROPOSAL: ..." (or a <terms> section) gives the message's non-binding
// terms. A message holding another section's tag is refused, so that nothing private can leak
// into public text.
type taggedStyle struct{}

type section int

const (
	secNone section = iota
	secReasoning
	secMessage
	secMove
	secPlan
	secTerms
)

var sectionOf = map[string]section{
	"reasoning": secReasoning, "reason": secReasoning, "thinking": secReasoning, "think": secReasoning,
	"thoughts": secReasoning, "scratchpad": secReasoning, "analysis": secReasoning,
	"message": secMessage, "msg": secMessage, "public_message": secMessage,
	"move": secMove, "answer": secMove, "action": secMove, "decision": secMove,
	"plan": secPlan, "notes": secPlan, "note": secPlan,
	"terms": secTerms, "deal": secTerms,
}

var (
	tagRe      = regexp.MustCompile(`<\s*(/?)\s*([A-Za-z_]+)((?:\s+[^<>]*)?)>`)
	toAttrRe   = regexp.MustCompile(`(?i)\bto\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))`)
	finalRe    = regexp.MustCompile(`(?im)^[\s*_#>-]*final\s+proposal\s*[*_]*\s*[:\-]\s*(.+)$`)
	termLineRe = regexp.MustCompile(`(?im)^[\s*_#>-]*(?:split\s+proposal|terms)\s*[*_]*\s*[:\-]\s*(.+)$`)
	kindRe     = regexp.MustCompile(`^\s*[*_` + "`" + `"']*\s*([A-Za-z-]+)[\s*_` + "`" + `"':.,;-]*`)
	termsTagRe = regexp.MustCompile(`(?is)<\s*(?:terms|deal)\s*>(.*?)(?:<\s*/\s*(?:terms|deal)\s*>|$)`)
	proposalRe = regexp.MustCompile(`(?i)^\s*(?:final|split)\s+proposal\s*[:\-]?\s*`)
)

type tagMatch struct {
	start, end int
	closing    bool
	sec        section
	attrs      string
}

func findTags(s string) []tagMatch {
	var out []tagMatch
	for _, m := range tagRe.FindAllStringSubmatchIndex(s, -1) {
		sec, ok := sectionOf[strings.ToLower(s[m[4]:m[5]])]
		if !ok {
			continue
		}
		out = append(out, tagMatch{start: m[0], end: m[1], closing: m[3] > m[2], sec: sec, attrs: s[m[6]:m[7]]})
	}
	return out
}

func (taggedStyle) parse(reply string, t *turn) (*draft, *formatError) {
	d := &draft{}
	tags := findTags(reply)
	var outside strings.Builder
	pos, found := 0, false
	for i := 0; i < len(tags); i++ {
		open := tags[i]
		if open.closing || open.start < pos {
			continue
		}
		outside.WriteString(reply[pos:open.start])
		// The section ends at its closing tag, or, unclosed, where the next section opens.
		closed := -1
		for j := i + 1; j < len(tags); j++ {
			if tags[j].closing && tags[j].sec == open.sec {
				closed = j
				break
			}
		}
		end, next := len(reply), len(reply)
		if closed >= 0 {
			end, next = tags[closed].start, tags[closed].end
		}
		for j := i + 1; j < len(tags) && tags[j].start < end; j++ {
			inner := tags[j]
			if inner.sec == open.sec || inner.sec == secTerms {
				continue
			}
			if open.sec == secMessage {
				// Another section inside public text: a leak, or sections run together.
				if closed >= 0 || inner.closing {
					return nil, failf(FailBadMessage, "a message holds a <%s> tag; keep every section outside the others, each with its own closing tag", secName(inner.sec))
				}
			}
			if closed < 0 && !inner.closing {
				end, next = inner.start, inner.start
				break
			}
		}
		content := reply[open.end:end]
		pos = next
		found = true
		switch open.sec {
		case secReasoning:
			d.reasoning = joinText(d.reasoning, content)
		case secPlan:
			d.plan = joinText(d.plan, content)
		case secMessage:
			d.messages = append(d.messages, parseTaggedMessage(content, open.attrs))
		case secMove:
			if d.hasMove {
				return nil, failf(FailUnparsable, "the answer has more than one <move> section; write exactly one")
			}
			readMove(d, content, t)
		case secTerms:
			// Terms outside a message: they belong to the only message, if there is one.
			if len(d.messages) == 1 && !d.messages[0].hasTerms {
				d.messages[0].terms, d.messages[0].hasTerms = strings.TrimSpace(content), true
			}
		}
	}
	outside.WriteString(reply[min(pos, len(reply)):])
	rest := outside.String()
	if !d.hasMove {
		if m := finalRe.FindStringSubmatch(rest); m != nil {
			found = true
			d.hasMove, d.kind, d.word, d.terms = true, gamev1.MoveKind_MOVE_KIND_PROPOSE, "FINAL PROPOSAL", m[1]
		}
	}
	if m := termLineRe.FindStringSubmatch(rest); m != nil {
		if len(d.messages) == 1 && !d.messages[0].hasTerms {
			d.messages[0].terms, d.messages[0].hasTerms = strings.TrimSpace(m[1]), true
		}
	}
	if !found {
		return nil, failf(FailUnparsable, "the answer has none of the required sections; write your move between <move> and </move>")
	}
	if !d.hasMove && len(d.messages) > 0 && t.isLegal(gamev1.MoveKind_MOVE_KIND_SAY) && len(t.legal) == 1 {
		// Talk is the only move: the messages are the turn.
		d.hasMove, d.kind, d.word = true, gamev1.MoveKind_MOVE_KIND_SAY, "say"
	}
	return d, nil
}

func secName(s section) string {
	switch s {
	case secReasoning:
		return "reasoning"
	case secMessage:
		return "message"
	case secMove:
		return "move"
	case secPlan:
		return "plan"
	case secTerms:
		return "terms"
	}
	return "?"
}

func joinText(a, b string) string {
	b = strings.TrimSpace(b)
	if a == "" {
		return b
	}
	return a + "\n\n" + b
}

func parseTaggedMessage(content, attrs string) draftMessage {
	dm := draftMessage{}
	if m := toAttrRe.FindStringSubmatch(attrs); m != nil {
		if to := strings.TrimSpace(m[1] + m[2] + m[3]); to != "" {
			dm.to = []string{to} // split into names when resolved
		}
	}
	// Terms: a <terms> section, or a TERMS: / SPLIT PROPOSAL: line.
	if loc := termsTagRe.FindStringSubmatchIndex(content); loc != nil {
		dm.terms, dm.hasTerms = strings.TrimSpace(content[loc[2]:loc[3]]), true
		content = content[:loc[0]] + content[loc[1]:]
	}
	if !dm.hasTerms {
		if loc := termLineRe.FindStringSubmatchIndex(content); loc != nil {
			dm.terms, dm.hasTerms = strings.TrimSpace(content[loc[2]:loc[3]]), true
			content = content[:loc[0]] + content[loc[1]:]
		}
	}
	dm.text = strings.TrimSpace(content)
	return dm
}

// readMove reads a move section: a kind word, then terms or an option.
func readMove(d *draft, content string, t *turn) {
	text := strings.TrimSpace(content)
	d.hasMove, d.word = true, text
	if _, ok := t.findOption(text); ok && t.isLegal(gamev1.MoveKind_MOVE_KIND_CHOOSE) {
		d.kind, d.option = gamev1.MoveKind_MOVE_KIND_CHOOSE, text
		return
	}
	if loc := proposalRe.FindStringIndex(text); loc != nil {
		d.kind, d.terms = gamev1.MoveKind_MOVE_KIND_PROPOSE, text[loc[1]:]
		return
	}
	if m := kindRe.FindStringSubmatchIndex(text); m != nil {
		if k, ok := kindOf(text[m[2]:m[3]]); ok {
			d.kind = k
			rest := strings.TrimSpace(text[m[1]:])
			switch k {
			case gamev1.MoveKind_MOVE_KIND_PROPOSE:
				d.terms = rest
			case gamev1.MoveKind_MOVE_KIND_CHOOSE:
				d.option = rest
			}
			return
		}
	}
	// No kind word: terms by themselves.
	if form := dealForm(t.forms); form != nil && t.isLegal(gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		if _, err := t.parseDeal(text, form); err == nil {
			d.kind, d.terms = gamev1.MoveKind_MOVE_KIND_PROPOSE, text
		}
		return
	}
	if t.isLegal(gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		if _, err := t.parseItems(text, t.bounds); err == nil {
			d.kind, d.terms = gamev1.MoveKind_MOVE_KIND_PROPOSE, text
		}
	}
}

// writtenTerms writes the amounts of bounds with a placeholder, as a proposal is written:
// "P1 gives AMOUNT X, AMOUNT Y; P2 gives AMOUNT X".
func writtenTerms(t *turn, bounds []*gamev1.Bound) string {
	type group struct {
		seat int32
		side gamev1.ShareSide
		res  []string
	}
	var groups []*group
	for _, b := range bounds {
		var g *group
		for _, o := range groups {
			if o.seat == b.GetSeat() && o.side == b.GetSide() {
				g = o
			}
		}
		if g == nil {
			g = &group{seat: b.GetSeat(), side: b.GetSide()}
			groups = append(groups, g)
		}
		amount := "AMOUNT"
		if b.GetMin() == b.GetMax() {
			amount = strconv.FormatInt(b.GetMin(), 10) // fixed by the rules
		}
		g.res = append(g.res, amount+" "+b.GetResource())
	}
	parts := make([]string, len(groups))
	for i, g := range groups {
		parts[i] = fmt.Sprintf("%s %s %s", t.name(g.seat), sideWord(g.side), strings.Join(g.res, ", "))
	}
	return strings.Join(parts, "; ")
}

func (taggedStyle) moveExample(t *turn, k gamev1.MoveKind, bounds []*gamev1.Bound) string {
	switch k {
	case gamev1.MoveKind_MOVE_KIND_PROPOSE:
		if form := t.formOf(bounds, t.forms); form != nil {
			return "<move>propose: " + dealPlaceholder(form) + "</move>"
		}
		return "<move>propose: " + writtenTerms(t, bounds) + "</move>"
	case gamev1.MoveKind_MOVE_KIND_CHOOSE:
		return "<move>choose OPTION</move>"
	}
	return "<move>" + games.KindWord(k) + "</move>"
}

func (taggedStyle) messageExample(t *turn, to []int32) string {
	if len(to) == 0 {
		return "<message>TEXT</message>"
	}
	return fmt.Sprintf("<message to=%q>TEXT</message>", t.seatList(to))
}

func (taggedStyle) termsExample(t *turn, bounds []*gamev1.Bound) string {
	if form := t.formOf(bounds, t.termForms); form != nil {
		return "<deal>" + dealPlaceholder(form) + "</deal> inside the message"
	}
	return "TERMS: " + writtenTerms(t, bounds)
}

func (taggedStyle) responseFormat(*turn, structured) *openai.ChatCompletionResponseFormat {
	return nil
}
