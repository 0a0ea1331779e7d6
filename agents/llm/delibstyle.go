package llm

import (
	"regexp"
	"strings"

	"github.com/sashabaranov/go-openai"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// deliberationStyle reads replies in the format of the LLM-Deliberation study (seed 003):
//
//	<SCRATCHPAD>private thinking</SCRATCHPAD>
//	<ANSWER>the public answer; a deal goes in <DEAL>A2, B3, C1, D2, E4</DEAL></ANSWER>
//	<PLAN>a private note for the next turn</PLAN>
//
// The tag names are the study's; the wording of our prompts is ours. Real models bend the
// format, so the reading is lenient where that cannot leak anything private:
//
//   - tags in any case and spacing, or a section written as a heading line of its own
//     ("**ANSWER**", "Answer:"), open a section; a section left unclosed ends where the next
//     one opens;
//   - the public part is the last non-empty answer section (a model that answers twice meant
//     its second answer; the study's platform took the last one too); with no answer section,
//     it is whatever lies outside the scratchpad and plan sections; text inside a scratchpad
//     or plan is never public;
//   - the deal is the first complete deal between <DEAL> and </DEAL> in the public part (an
//     unclosed one ends at the next tag; one naming two options of an issue is none), else,
//     with no deal tags at all, the first run of option ids in the text that names every
//     issue once, unless an option of one of its issues comes just before it ("A1 or A2, B1,
//     C4" weighs options); options named after it are talk;
//   - the move follows from what is legal: a deal is a proposal where proposing is legal and
//     the message's terms on a turn of talk; with no deal, talk is the move when talk is legal,
//     else an accept or reject word opening the public part.
type deliberationStyle struct{}

// delibSection is a section of the study's format.
type delibSection int

const (
	delibOutside delibSection = iota
	delibScratchpad
	delibAnswer
	delibPlan
)

var (
	// delibTagRe matches a section tag, <ANSWER> or </ answer >.
	delibTagRe = regexp.MustCompile(`(?i)<\s*(/?)\s*(scratchpad|answer|plan)\s*>`)
	// delibHeadingRe matches a section written as a heading line: "**SCRATCHPAD**",
	// "### Answer:", "PLAN:".
	delibHeadingRe = regexp.MustCompile(`(?im)^[ \t]*(?:#{1,6}[ \t]*)?[*_]{0,3}[ \t]*(scratchpad|answer|final answer|plan)[ \t]*:?[ \t]*[*_]{0,3}[ \t]*:?[ \t]*$`)
	// delibDealRe matches a deal between deal tags; an unclosed one runs to the next tag.
	delibDealRe = regexp.MustCompile(`(?is)<\s*deal\s*>(.*?)(?:<\s*/\s*deal\s*>|<|$)`)
)

// delibMark is a section boundary found in a reply.
type delibMark struct {
	start, end int
	closing    bool
	heading    bool // a heading line, not a tag
	sec        delibSection
}

func delibSectionOf(word string) delibSection {
	switch w := strings.ToLower(word); {
	case w == "scratchpad":
		return delibScratchpad
	case strings.HasSuffix(w, "answer"):
		return delibAnswer
	case w == "plan":
		return delibPlan
	}
	return delibOutside
}

// delibMarks finds the section boundaries of a reply, in order.
func delibMarks(reply string) []delibMark {
	var marks []delibMark
	for _, m := range delibTagRe.FindAllStringSubmatchIndex(reply, -1) {
		marks = append(marks, delibMark{start: m[0], end: m[1], closing: m[3] > m[2], sec: delibSectionOf(reply[m[4]:m[5]])})
	}
	for _, m := range delibHeadingRe.FindAllStringSubmatchIndex(reply, -1) {
		marks = append(marks, delibMark{start: m[0], end: m[1], heading: true, sec: delibSectionOf(reply[m[2]:m[3]])})
	}
	// Order by position; a heading never overlaps a tag (a tag holds "<").
	for i := 1; i < len(marks); i++ {
		for j := i; j > 0 && marks[j].start < marks[j-1].start; j-- {
			marks[j], marks[j-1] = marks[j-1], marks[j]
		}
	}
	return marks
}

// delibParts splits a reply into its sections: the texts of each kind, in order. A heading
// line opens a section only outside a section opened by a tag, so that nothing a model wrote
// inside its scratchpad can become public.
func delibParts(reply string) map[delibSection][]string {
	parts := map[delibSection][]string{}
	marks := delibMarks(reply)
	cur, pos := delibOutside, 0
	byTag := false // cur was opened by a tag: only a tag ends it
	flush := func(end int) {
		if text := strings.TrimSpace(reply[pos:end]); text != "" || cur == delibAnswer {
			parts[cur] = append(parts[cur], text)
		}
	}
	for _, m := range marks {
		if m.heading && byTag {
			continue // "Answer:" inside a tagged scratchpad is the scratchpad's own text
		}
		flush(m.start)
		switch {
		case !m.closing:
			cur, byTag = m.sec, !m.heading
		case m.sec == cur:
			cur, byTag = delibOutside, false
		}
		// A stray closing tag of another section changes nothing but is no text either.
		pos = m.end
	}
	flush(len(reply))
	return parts
}

func (deliberationStyle) parse(reply string, t *turn) (*draft, *formatError) {
	parts := delibParts(reply)
	d := &draft{
		reasoning: strings.Join(parts[delibScratchpad], "\n\n"),
		plan:      strings.Join(parts[delibPlan], "\n\n"),
	}
	public := ""
	for _, a := range parts[delibAnswer] {
		if a != "" {
			public = a
		}
	}
	if public == "" {
		public = strings.Join(parts[delibOutside], "\n\n")
	}
	if public == "" {
		return nil, failf(FailUnparsable, "the answer has no public part; write it between <ANSWER> and </ANSWER>, after your scratchpad")
	}
	deal, hasDeal := delibDeal(public, t)
	switch {
	case hasDeal && t.isLegal(gamev1.MoveKind_MOVE_KIND_PROPOSE) && !t.isLegal(gamev1.MoveKind_MOVE_KIND_SAY):
		d.hasMove, d.kind, d.word, d.terms = true, gamev1.MoveKind_MOVE_KIND_PROPOSE, "<DEAL>"+deal+"</DEAL>", deal
		d.messages = []draftMessage{{text: public}}
	case t.isLegal(gamev1.MoveKind_MOVE_KIND_SAY):
		d.hasMove, d.kind, d.word = true, gamev1.MoveKind_MOVE_KIND_SAY, "say"
		d.messages = []draftMessage{{text: public, terms: deal, hasTerms: hasDeal}}
	default:
		d.messages = []draftMessage{{text: public}}
		if m := kindRe.FindStringSubmatch(public); m != nil {
			if k, ok := kindOf(m[1]); ok && k != gamev1.MoveKind_MOVE_KIND_PROPOSE {
				d.hasMove, d.kind, d.word = true, k, m[1]
			}
		}
		if !d.hasMove && t.isLegal(gamev1.MoveKind_MOVE_KIND_PROPOSE) {
			return nil, failf(FailNoMove, "the answer names no complete deal; put one option of every issue between <DEAL> and </DEAL> inside your answer")
		}
	}
	return d, nil
}

// delibDeal finds the deal of a public part: the first complete deal in deal tags, else the
// options the text names when they make exactly one complete deal. It returns the deal's
// text as written, for the proposal's terms.
func delibDeal(public string, t *turn) (string, bool) {
	form := dealForm(t.forms)
	if form == nil {
		form = dealForm(t.termForms)
	}
	tagged := delibDealRe.FindAllStringSubmatch(public, -1)
	if form == nil {
		// Terms that are no deal: the first tagged ones, as written.
		for _, m := range tagged {
			if s := strings.TrimSpace(m[1]); s != "" {
				return s, true
			}
		}
		return "", false
	}
	for _, m := range tagged {
		if _, err := t.parseDeal(m[1], form); err == nil {
			return strings.TrimSpace(m[1]), true
		}
	}
	if len(tagged) == 0 {
		return untaggedDeal(public, form)
	}
	return "", false
}

func hasIssue(issueOf map[string]int, id string) bool {
	_, ok := issueOf[id]
	return ok
}

// untaggedDeal finds a deal written without tags: the first run of option ids, one after the
// other in the text, that names every issue once ("A3, B2, C2, D3 and E2", or each option in
// its own sentence); options named afterwards ("or D2 if need be") are talk, not the deal.
func untaggedDeal(text string, form *gamev1.ProposalForm) (string, bool) {
	issues := form.GetIssues()
	issueOf := map[string]int{}
	for i, is := range issues {
		for _, o := range is.GetOptions() {
			issueOf[strings.ToUpper(o.GetId())] = i
		}
	}
	var ids []string
	for _, m := range optionTokRe.FindAllStringSubmatch(text, -1) {
		if id := strings.ToUpper(m[1]) + m[2]; hasIssue(issueOf, id) {
			ids = append(ids, id)
		}
	}
	n := len(issues)
	for start := 0; start+n <= len(ids); start++ {
		seen := make([]bool, n)
		whole := true
		for _, id := range ids[start : start+n] {
			whole = whole && !seen[issueOf[id]]
			seen[issueOf[id]] = true
		}
		if !whole {
			continue
		}
		if start > 0 && seen[issueOf[ids[start-1]]] {
			return "", false // "A1 or A2, B1, C4": weighing options, not tabling a deal
		}
		return strings.Join(ids[start:start+n], ", "), true
	}
	return "", false
}

func (deliberationStyle) moveExample(t *turn, k gamev1.MoveKind, bounds []*gamev1.Bound) string {
	switch k {
	case gamev1.MoveKind_MOVE_KIND_PROPOSE:
		if form := t.formOf(bounds, t.forms); form != nil {
			return "<ANSWER>a short public message with the deal <DEAL>" + dealPlaceholder(form) + "</DEAL></ANSWER>"
		}
		return "<ANSWER>a short public message with the terms <DEAL>" + writtenTerms(t, bounds) + "</DEAL></ANSWER>"
	case gamev1.MoveKind_MOVE_KIND_SAY:
		return "<ANSWER>a short public message</ANSWER>"
	}
	return "<ANSWER>" + games.KindWord(k) + ", then a short public message</ANSWER>"
}

func (deliberationStyle) messageExample(*turn, []int32) string {
	return "<ANSWER>TEXT</ANSWER>"
}

func (deliberationStyle) termsExample(t *turn, bounds []*gamev1.Bound) string {
	if form := t.formOf(bounds, t.termForms); form != nil {
		return "<DEAL>" + dealPlaceholder(form) + "</DEAL> inside the answer"
	}
	return "<DEAL>" + writtenTerms(t, bounds) + "</DEAL> inside the answer"
}

func (deliberationStyle) responseFormat(*turn, structured) *openai.ChatCompletionResponseFormat {
	return nil
}
