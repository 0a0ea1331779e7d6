package llmtest

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Autoplay is a Responder that plays any game legally by reading the move list that the llm
// agent's shipped templates write ("Your moves now", the amounts, forms, options and required
// messages), as a model would. It is coupled to those templates on purpose: it is how tests
// play whole matches of every game without a model. Its replies are a pure function of the
// prompt, so a cached match replays.
//
// It prefers, in order: accept, say, propose, choose, pass, reject (or the order in Prefer).
// Proposals take each amount's minimum plus Step (1 by default: an opponent's hidden holdings
// may be smaller than its bounds say), or share a form's total evenly; a deal takes each
// issue's first option. Reasoning
// and messages carry markers (Secret, Public) tests can look for.
type Autoplay struct {
	// Style is "tagged", "json" or "deliberation"; empty: JSON when the request asks for a
	// JSON response format or the system prompt asks for a JSON object, deliberation when it
	// asks for an <ANSWER> section, else tagged.
	Style string
	// Prefer overrides the order of preference of move kinds.
	Prefer []string
	// Secret is written in the private reasoning and the plan, followed by the seat's name.
	Secret string
	// Public is written in every message, followed by the seat's name.
	Public string
	// Step is what a proposal adds to each amount's minimum (default 1).
	Step int64
	// Ask is what a proposal asks for an amount with no known upper limit (another seat's
	// hidden holdings), above its minimum (default Step).
	Ask int64
}

var (
	youAreRe = regexp.MustCompile(`(?m)^You are (\S+?)[ ,(]`)
	moveRe   = regexp.MustCompile(`^- (\w+): (.*?)(?: \((?:or any|OPTION|talk only)[^)]*\))?$`)
	amountRe = regexp.MustCompile(`^- (.+): from (-?\d+) to (-?\d+)$`)
	// openRe is an amount with no known upper limit: "- P2 gives Y: 0 or more, with no ...".
	openRe  = regexp.MustCompile(`^- (.+): (-?\d+) or more\b`)
	formRe  = regexp.MustCompile(`^- (.+?): (.*)$`)
	rangeRe = regexp.MustCompile(`from (-?\d+) to (-?\d+)`)
	totalRe = regexp.MustCompile(`add up to exactly (-?\d+)`)
	// resTotalRe reads one total of a form: "the amounts of book received add up to exactly 1".
	resTotalRe = regexp.MustCompile(`the amounts of (\S+) \w+ add up to exactly (-?\d+)`)
	namedRe    = regexp.MustCompile(`^(.+) from (-?\d+) to (-?\d+)$`)
	// The resource next to each placeholder: "AMOUNT book" (tagged), "... book": AMOUNT (JSON).
	taggedResRe = regexp.MustCompile(`AMOUNT ([^\s,;]+)`)
	jsonResRe   = regexp.MustCompile(`(\S+)": AMOUNT`)
	slotRe      = regexp.MustCompile(`^- one (to .+?): (.*)$`)
	optionRe    = regexp.MustCompile(`^- (\S+?)(?::|$| \()`)
	amountTok   = "AMOUNT"
	// dealTokRe is one issue's placeholder in a deal: "ONE OF A1-A3" becomes the first option.
	dealTokRe = regexp.MustCompile(`ONE OF ([A-Z]+\d+)-[A-Z]+\d+`)
	// dealTagRe is the deal of a move written in the deliberation style.
	dealTagRe = regexp.MustCompile(`<DEAL>(.*?)</DEAL>`)
)

// Responder returns the autoplayer as a Responder.
func (p Autoplay) Responder() Responder {
	return func(r Request) Reply { return Text(p.Reply(r)) }
}

// Reply is the autoplayer's answer to a request.
func (p Autoplay) Reply(r Request) string {
	prompt := ""
	for _, m := range r.Messages {
		if m.Role == "user" && strings.Contains(m.Content, "Your moves now") {
			prompt = m.Content
		}
	}
	me := "?"
	if m := youAreRe.FindStringSubmatch(r.System()); m != nil {
		me = m[1]
	}
	sections := splitSections(prompt)
	moves := map[string]string{}
	var order []string
	for _, l := range sections["Your moves now"] {
		if m := moveRe.FindStringSubmatch(l); m != nil {
			moves[m[1]] = m[2]
			order = append(order, m[1])
		}
	}
	prefer := p.Prefer
	if len(prefer) == 0 {
		prefer = []string{"accept", "say", "propose", "choose", "pass", "reject"}
	}
	kind := ""
	for _, k := range prefer {
		if _, ok := moves[k]; ok {
			kind = k
			break
		}
	}
	if kind == "" && len(order) > 0 {
		kind = order[0]
	}
	move := moves[kind]
	switch kind {
	case "propose":
		move = p.fillProposal(move, sections)
	case "choose":
		for _, l := range sections["Options for choose"] {
			if m := optionRe.FindStringSubmatch(l); m != nil {
				move = strings.Replace(move, "OPTION", m[1], 1)
				break
			}
		}
	}
	var msgs []string
	for _, l := range sections["With your move you must send"] {
		if m := slotRe.FindStringSubmatch(l); m != nil {
			msgs = append(msgs, strings.Replace(m[2], "TEXT", fmt.Sprintf("%s %s (%s)", p.Public, me, m[1]), 1))
		}
	}
	secret := fmt.Sprintf("%s %s", p.Secret, me)
	if p.Style == "json" || (p.Style == "" && (r.ResponseFormat != "" || strings.Contains(r.System(), "one JSON object"))) {
		if len(msgs) == 0 && kind != "say" {
			msgs = append(msgs, fmt.Sprintf(`{"to": [], "text": %q, "terms": null}`, p.Public+" "+me))
		}
		return fmt.Sprintf(`{"reasoning": %q, "messages": [%s], %s, "plan": %q}`, secret, strings.Join(msgs, ", "), move, secret+" plan")
	}
	if p.Style == "deliberation" || (p.Style == "" && strings.Contains(r.System(), "</ANSWER>")) {
		return p.deliberationReply(kind, move, me, secret)
	}
	if len(msgs) == 0 {
		msgs = append(msgs, fmt.Sprintf("<message>%s %s</message>", p.Public, me))
	}
	return fmt.Sprintf("<reasoning>%s</reasoning>\n%s\n%s\n<plan>%s plan</plan>", secret, strings.Join(msgs, "\n"), move, secret)
}

// deliberationReply answers in the LLM-Deliberation study's format: the public answer, with
// the move's deal between deal tags, between a private scratchpad and plan.
func (p Autoplay) deliberationReply(kind, move, me, secret string) string {
	answer := fmt.Sprintf("%s %s", p.Public, me)
	if kind != "say" && kind != "propose" {
		answer = kind + ", " + answer
	}
	if m := dealTagRe.FindStringSubmatch(move); m != nil {
		answer += " <DEAL>" + m[1] + "</DEAL>"
	}
	return fmt.Sprintf("<SCRATCHPAD>%s</SCRATCHPAD>\n<ANSWER>%s</ANSWER>\n<PLAN>%s plan</PLAN>", secret, answer, secret)
}

func (p Autoplay) step() int64 {
	if p.Step > 0 {
		return p.Step
	}
	return 1
}

func (p Autoplay) ask() int64 {
	if p.Ask > 0 {
		return p.Ask
	}
	return p.step()
}

// fillProposal replaces the AMOUNT placeholders of a proposal example: each amount's minimum
// plus Step (at most its maximum), or, for a form with a total, the total shared evenly.
func (p Autoplay) fillProposal(example string, sections map[string][]string) string {
	var lo, hi []int64
	total := int64(-1)
	if forms := sections["A proposal must take one of these forms"]; len(forms) > 0 {
		// The form with the largest total, else the first.
		best := -1
		for i, l := range forms {
			m := formRe.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			tot := int64(-1)
			if t := totalRe.FindStringSubmatch(m[2]); t != nil {
				tot, _ = strconv.ParseInt(t[1], 10, 64)
			}
			if best < 0 || tot > total {
				best, total = i, tot
			}
		}
		if best >= 0 {
			m := formRe.FindStringSubmatch(forms[best])
			if totals := resTotalRe.FindAllStringSubmatch(m[2], -1); len(totals) > 1 {
				return p.fillTotals(m[2], totals)
			}
			example, _, _ = strings.Cut(m[2], " (")
			for _, r := range rangeRe.FindAllStringSubmatch(m[2], -1) {
				a, _ := strconv.ParseInt(r[1], 10, 64)
				b, _ := strconv.ParseInt(r[2], 10, 64)
				lo, hi = append(lo, a), append(hi, b)
			}
		}
	} else {
		for _, l := range sections["Amounts a proposal fills in"] {
			if m := amountRe.FindStringSubmatch(l); m != nil {
				a, _ := strconv.ParseInt(m[2], 10, 64)
				b, _ := strconv.ParseInt(m[3], 10, 64)
				lo, hi = append(lo, a), append(hi, b)
			} else if m := openRe.FindStringSubmatch(l); m != nil {
				// No known upper limit: ask for Ask more than the minimum (Step is no cap).
				a, _ := strconv.ParseInt(m[2], 10, 64)
				lo, hi = append(lo, a+p.ask()-min(p.ask(), p.step())), append(hi, a+p.ask())
			}
		}
	}
	// Amounts fixed by the rules (from X to X) are written out, not placeholders.
	var freeLo, freeHi []int64
	for i := range lo {
		if lo[i] < hi[i] || len(lo) == 1 {
			freeLo, freeHi = append(freeLo, lo[i]), append(freeHi, hi[i])
		}
	}
	lo, hi = freeLo, freeHi
	n := strings.Count(example, amountTok)
	for len(lo) > 0 && len(lo) < n {
		// "each amount from X to Y"
		lo, hi = append(lo, lo[0]), append(hi, hi[0])
	}
	amounts := make([]int64, n)
	for i := range amounts {
		if i < len(lo) {
			amounts[i] = lo[i] + min(hi[i]-lo[i], p.step())
		}
	}
	if total >= 0 && n > 0 {
		left := total
		for i := range amounts {
			share := left / int64(n-i)
			if i < len(lo) {
				share = min(max(share, lo[i]), hi[i])
			}
			amounts[i] = share
			left -= share
		}
	}
	for _, a := range amounts {
		example = strings.Replace(example, amountTok, strconv.FormatInt(a, 10), 1)
	}
	return dealTokRe.ReplaceAllString(example, "$1")
}

// fillTotals fills a form whose amounts add up to one total per resource (e.g. a division of
// a pool: each item's amounts add up to its count): each resource's total goes to its first
// amounts in order, each up to its maximum, the rest 0.
func (p Autoplay) fillTotals(form string, totals [][]string) string {
	example, rest, _ := strings.Cut(form, " (")
	n := strings.Count(example, amountTok)
	res := make([]string, n)
	hi := make([]int64, n)
	for i := range hi {
		hi[i] = 1 << 62
	}
	ranges, _, _ := strings.Cut(rest, ";")
	named := strings.Split(strings.TrimSuffix(ranges, ")"), ", ")
	if len(named) == n {
		for i, r := range named {
			if m := namedRe.FindStringSubmatch(r); m != nil {
				words := strings.Fields(m[1])
				res[i] = words[len(words)-1]
				hi[i], _ = strconv.ParseInt(m[3], 10, 64)
			}
		}
	}
	if res[0] == "" {
		re := taggedResRe
		if strings.Contains(example, `": AMOUNT`) {
			re = jsonResRe
		}
		for i, m := range re.FindAllStringSubmatch(example, -1) {
			if i < n {
				res[i] = strings.Trim(m[1], `"`)
			}
		}
		if m := rangeRe.FindStringSubmatch(ranges); m != nil && strings.HasPrefix(ranges, "each amount") {
			for i := range hi {
				hi[i], _ = strconv.ParseInt(m[2], 10, 64)
			}
		}
	}
	left := map[string]int64{}
	for _, t := range totals {
		left[t[1]], _ = strconv.ParseInt(t[2], 10, 64)
	}
	for i := range n {
		a := min(max(left[res[i]], 0), hi[i])
		left[res[i]] -= a
		example = strings.Replace(example, amountTok, strconv.FormatInt(a, 10), 1)
	}
	return example
}

// splitSections groups a prompt's "- " lines under the line that introduces them.
func splitSections(prompt string) map[string][]string {
	out := map[string][]string{}
	heading := ""
	for _, l := range strings.Split(prompt, "\n") {
		if strings.HasPrefix(l, "- ") {
			out[heading] = append(out[heading], l)
			continue
		}
		if l == "" || strings.HasPrefix(l, " ") {
			continue
		}
		heading = l
		for _, known := range []string{"Your moves now", "Amounts a proposal fills in", "A proposal must take one of these forms",
			"Options for choose", "With your move you must send", "A message may carry"} {
			if strings.HasPrefix(l, known) {
				heading = known
			}
		}
	}
	return out
}

// Contains reports whether any request so far contained s anywhere (handy for leak checks).
func (s *Server) Contains(text string) bool {
	return slices.ContainsFunc(s.Requests(), func(r Request) bool { return strings.Contains(r.Text(), text) })
}
