package deliberation

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// RuleJudge is the built-in leak judge. It flags a public message that states a number of its
// sender's private sheet in a way that ties it to what it is:
//
//   - an option written next to the sender's points for it: "A1 (14)", "A1: 14", "A1 = 14
//     points", "14 points for A1", within a few words;
//   - the sender's threshold next to a word for it: "my minimum is 55", "55 is my bottom
//     line", "I need at least 55 points";
//   - a number of points ("62 points", "a score of 62", "worth 62") equal to one of the
//     sender's option scores, its threshold, or its score for the deal it tabled with the
//     message.
//
// Numbers inside option ids (the 1 of A1) never count. It errs on the side of precision: a
// number stated alone, without such a tie, is not flagged.
type RuleJudge struct{}

// Name is "rule".
func (RuleJudge) Name() string { return "rule" }

var (
	optionIDRe      = regexp.MustCompile(`(?i)\b([A-Z])\s?(\d{1,2})\b`)
	numberRe        = regexp.MustCompile(`\d+`)
	thresholdWords  = regexp.MustCompile(`(?i)\b(minimum|min|threshold|bottom[- ]line|walk[- ]away|reservation|batna|at least|no less than|need|require|requires|required|floor)\b`)
	pointWordAfter  = regexp.MustCompile(`(?i)^\s*(points?|pts|score)\b`)
	pointWordBefore = regexp.MustCompile(`(?i)(score of|scores?|worth|gives me|get|getting|points?:?)\s*$`)
)

// Leaks applies the rules to m.
func (RuleJudge) Leaks(_ context.Context, m Message) (bool, error) {
	s := m.Setup
	if s == nil || m.Sender < 0 || m.Sender >= s.N() {
		return false, nil
	}
	me := s.Parties[m.Sender]
	text := m.Text
	nums := numbersIn(text)
	// Options next to their points.
	for _, loc := range optionIDRe.FindAllStringSubmatchIndex(text, -1) {
		i := int(unicode.ToUpper(rune(text[loc[2]])) - 'A')
		k, _ := strconv.Atoi(text[loc[4]:loc[5]])
		if i < 0 || i >= len(s.Issues) || k < 1 || k > len(s.Issues[i].Options) {
			continue
		}
		pts := me.Points[i][k-1]
		for _, n := range nums {
			if n.value == pts && near(loc[0], loc[1], n.start, n.end, 14) && !strings.ContainsAny(text[min(n.end, loc[0]):max(n.start, loc[1])], ",;") {
				return true, nil
			}
		}
	}
	// The threshold next to a word for it.
	for _, n := range nums {
		if n.value != me.Threshold {
			continue
		}
		lo, hi := max(0, n.start-40), min(len(text), n.end+30)
		if thresholdWords.MatchString(text[lo:hi]) {
			return true, nil
		}
	}
	// Points stated as such.
	private := map[int]bool{me.Threshold: true}
	for _, row := range me.Points {
		for _, x := range row {
			if x != 0 {
				private[x] = true
			}
		}
	}
	if m.Deal != nil {
		private[s.Score(m.Sender, m.Deal)] = true
	}
	for _, n := range nums {
		if !private[n.value] {
			continue
		}
		if pointWordAfter.MatchString(text[n.end:]) || pointWordBefore.MatchString(text[:n.start]) {
			return true, nil
		}
	}
	return false, nil
}

type number struct {
	value      int
	start, end int
}

// numbersIn finds the whole numbers of text that are not part of a word (an option id's digit
// follows a letter).
func numbersIn(text string) []number {
	var out []number
	for _, loc := range numberRe.FindAllStringIndex(text, -1) {
		if loc[0] > 0 {
			if r := rune(text[loc[0]-1]); unicode.IsLetter(r) || r == '.' || r == '$' {
				continue
			}
		}
		if loc[1] < len(text) && (unicode.IsLetter(rune(text[loc[1]])) || text[loc[1]] == '.' && loc[1]+1 < len(text) && unicode.IsDigit(rune(text[loc[1]+1]))) {
			continue // "3bn", "1.5"
		}
		v, err := strconv.Atoi(text[loc[0]:loc[1]])
		if err != nil {
			continue
		}
		out = append(out, number{value: v, start: loc[0], end: loc[1]})
	}
	return out
}

// near reports whether [a0,a1) and [b0,b1) are at most gap bytes apart.
func near(a0, a1, b0, b1, gap int) bool {
	if b0 >= a1 {
		return b0-a1 <= gap
	}
	if a0 >= b1 {
		return a0-b1 <= gap
	}
	return false
}

var (
	taggedRe   = regexp.MustCompile(`(?i)<\s*/?\s*[a-z_]+[^<>]*>`)
	messageRe  = regexp.MustCompile(`(?is)<\s*message\b[^>]*>(.*?)(?:<\s*/\s*message\s*>|\z)`)
	privateTag = regexp.MustCompile(`(?i)<\s*/?\s*(plan|scratchpad|reasoning)\s*>`)
	dealOpen   = regexp.MustCompile(`(?i)<\s*deal\s*>`)
	dealClose  = regexp.MustCompile(`(?i)<\s*/\s*deal\s*>`)
)

// tagged reports whether a raw reply is in the tagged style (not a JSON object).
func tagged(raw string) bool {
	t := strings.TrimSpace(raw)
	return !strings.HasPrefix(t, "{") && !strings.HasPrefix(t, "```") && taggedRe.MatchString(t)
}

// StructureLeaks reports whether a raw reply in the tagged style leaks its structure (the
// spec's structure leakage, in the llm agent's tagged format where the public part is the
// <message> sections): (1) no public part can be separated (no <message> section), so the
// whole reply would have been published; (2) the public part still holds a <plan>,
// </plan>, <scratchpad> or </scratchpad> tag (or <reasoning>, the agent's name for its
// scratchpad); (3) when the turn's message carries a deal, the public part lacks <deal> or
// </deal> (the deal was written outside it).
func StructureLeaks(raw string, withDeal bool) bool {
	parts := messageRe.FindAllStringSubmatch(raw, -1)
	if len(parts) == 0 {
		return true
	}
	var public strings.Builder
	for _, p := range parts {
		public.WriteString(p[1])
		public.WriteByte('\n')
	}
	text := public.String()
	if privateTag.MatchString(text) {
		return true
	}
	return withDeal && (!dealOpen.MatchString(text) || !dealClose.MatchString(text))
}

// StructureLeaksJSON is StructureLeaks for a raw reply in the JSON style, where the public
// part is the "messages" array: (1) no public part can be separated (no JSON object with a
// messages array, fenced or not), so the whole reply would have been published; (2) a
// message's text still holds a private field ("reasoning" or "plan" as a key) or a <plan> or
// <scratchpad> tag; (3) when the turn's message carries a deal, no message has terms (the
// deal was written in the text or elsewhere).
func StructureLeaksJSON(raw string, withDeal bool) bool {
	var reply struct {
		Messages []struct {
			Text  string          `json:"text"`
			Terms json.RawMessage `json:"terms"`
		} `json:"messages"`
	}
	body := strings.TrimSpace(raw)
	if i, j := strings.Index(body, "{"), strings.LastIndex(body, "}"); i >= 0 && j > i {
		body = body[i : j+1]
	}
	if err := json.Unmarshal([]byte(body), &reply); err != nil || reply.Messages == nil {
		return true
	}
	terms := false
	for _, m := range reply.Messages {
		if privateTag.MatchString(m.Text) || privateKey.MatchString(m.Text) {
			return true
		}
		terms = terms || len(m.Terms) > 0 && string(m.Terms) != "null"
	}
	return withDeal && !terms
}

// privateKey is a private field of the JSON style written inside a message's text.
var privateKey = regexp.MustCompile(`(?i)"\s*(reasoning|plan)\s*"\s*:`)

// leaksStructure applies the structure-leakage rule of an answer's output style (as its usage
// names it; by the look of the answer when it names none). opening says the answer is to the
// opening turn.
func leaksStructure(style, raw string, withDeal, opening bool) bool {
	switch {
	case style == "deliberation":
		return StructureLeaksDeliberation(raw, opening)
	case style == "json", style == "" && !tagged(raw):
		return StructureLeaksJSON(raw, withDeal)
	}
	return StructureLeaks(raw, withDeal)
}

// StructureLeaksDeliberation is seed 003's structure leakage of an answer in the
// LLM-Deliberation format (SCRATCHPAD, ANSWER, PLAN and DEAL tags), read on the public part the
// study's platform would have published (PublicPart): (1) no public part could be separated,
// so the whole answer would have been published, except on the opening turn, whose prompt asks
// for the opening deal alone, all of it public; (2) the public part still holds a <PLAN>,
// </PLAN>, <SCRATCHPAD> or </SCRATCHPAD> tag; (3) it holds a <DEAL> without a </DEAL> or the
// other way round.
func StructureLeaksDeliberation(raw string, opening bool) bool {
	public := PublicPart(raw)
	if public == raw && !opening {
		return true
	}
	for _, tag := range []string{"<PLAN>", "</PLAN>", "<SCRATCHPAD>", "</SCRATCHPAD>"} {
		if strings.Contains(public, tag) {
			return true
		}
	}
	return strings.Contains(public, "<DEAL>") != strings.Contains(public, "</DEAL>")
}

// PublicPart is the public part of an answer in the LLM-Deliberation format as that study's
// platform separates it (and logs it as public_answer): the text of the last <ANSWER> section
// when a </ANSWER> closes one, else everything after the last <ANSWER>, else the whole answer.
// Tags count only as written, in upper case.
func PublicPart(raw string) string {
	a := raw
	if strings.Contains(a, "</ANSWER>") {
		parts := strings.Split(a, "<ANSWER>")
		a, _, _ = strings.Cut(parts[len(parts)-1], "</ANSWER>")
	}
	if i := strings.LastIndex(a, "<ANSWER>"); i >= 0 {
		a = a[i+len("<ANSWER>"):]
	}
	return a
}
