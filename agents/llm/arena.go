package llm

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/sashabaranov/go-openai"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// ArenaStyle is the name of the NegotiationArena reply style (style=negotiationarena).
const ArenaStyle = "negotiationarena"

// arenaStyle reads replies written as NegotiationArena's models wrote theirs: sections between
// tags, among them
//
//	<reason> private reasoning </reason>
//	<player answer> ACCEPT, REJECT, PROPOSAL or NONE </player answer>
//	<message> words for the other player </message>
//	<newly proposed trade> Player RED Gives X: 10 | Player BLUE Gives Y: 10 </newly proposed trade>
//
// (tag names and the trade's layout are the format's; the prompt's words are ours). The two
// players are Player RED (seat 0, P1) and Player BLUE (seat 1, P2); the seats' own names are
// read too. ReadArena is the reading, shared by the language-model agent (which then checks the
// move against what is legal, and asks again when it is not) and by the importer of the
// study's published runs (research/imports/negotiationarena), which reads the answers the
// study's models gave.
type arenaStyle struct{}

// ArenaReply is one answer in NegotiationArena's format, as read.
type ArenaReply struct {
	// Kind is the move the answer makes: accept or reject when its answer says so, propose when
	// it holds a trade, pass (the format's "wait") otherwise.
	Kind gamev1.MoveKind
	// Answer is the <player answer> as written.
	Answer string
	// Gives is the trade, when there is one: what each seat hands over, by seat (0: RED, 1:
	// BLUE), zero amounts left out.
	Gives [2]map[string]int64
	// Message is the public message, Reason the private reasoning.
	Message, Reason string
}

// Errors of ReadArena.
var (
	// ErrArenaNoAnswer: the reply has neither a <player answer> nor a trade.
	ErrArenaNoAnswer = errors.New("the answer has no <player answer> and no <newly proposed trade>")
)

var (
	// arenaTagRe finds tags: an opening or closing tag whose name is words (the closing '>' may be
	// missing at the end of a line, as in the platform's own example "</message").
	arenaTagRe = regexp.MustCompile(`<\s*(/?)\s*([A-Za-z][A-Za-z _-]{0,40}?)\s*(?:>|$|\n)`)
	// arenaSections are the format's tag names that delimit sections, spaces and case folded.
	arenaSections = map[string]string{
		"player answer": "answer", "player_answer": "answer", "answer": "answer",
		"newly proposed trade": "trade", "proposed trade": "trade", "trade": "trade",
		"message": "message", "reason": "reason", "reasoning": "reason",
		"my name": "other", "my resources": "other", "my goals": "other", "move": "other",
		"proposal count": "other", "proposals count": "other", "my valuation": "other", "my goal": "other",
		"other player message": "other", "other player answer": "other", "other player proposed trade": "other",
	}
	// placeholderRe matches the format's own placeholders, which some models copy before answering.
	placeholderRe = regexp.MustCompile(`(?i)^\s*\[?\s*(add here|add reasoning|add message|add here \(inclusive of current\)|your message here|amount|item1: amount.*)\s*\]?\s*$`)
)

type arenaSection struct {
	name, content string
}

// arenaSectionsOf splits a reply into its sections, in order. A section ends at its closing
// tag or, left open, where the next section opens.
func arenaSectionsOf(reply string) []arenaSection {
	type tag struct {
		start, end int
		closing    bool
		name       string
	}
	var tags []tag
	for _, m := range arenaTagRe.FindAllStringSubmatchIndex(reply, -1) {
		raw := strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(reply[m[4]:m[5]], "_", " ")), " "))
		name, ok := arenaSections[raw]
		if !ok {
			continue
		}
		if raw == "other player message" || raw == "other player answer" || raw == "other player proposed trade" {
			name = "other"
		}
		end := m[1]
		if end > 0 && reply[end-1] == '\n' {
			end-- // a closing tag cut short at the line's end keeps its line break
		}
		tags = append(tags, tag{start: m[0], end: end, closing: m[3] > m[2], name: name})
	}
	var out []arenaSection
	for i := 0; i < len(tags); i++ {
		open := tags[i]
		if open.closing {
			continue
		}
		end := len(reply)
		next := i + 1
		for j := i + 1; j < len(tags); j++ {
			if tags[j].closing && tags[j].name == open.name {
				end, next = tags[j].start, j+1
				break
			}
			if !tags[j].closing {
				end, next = tags[j].start, j
				break
			}
		}
		out = append(out, arenaSection{name: open.name, content: strings.TrimSpace(reply[open.end:end])})
		i = next - 1
	}
	return out
}

// ReadArena reads a reply in NegotiationArena's format; resources are the game's (empty: any
// word before ':' or after an amount is one). When the reply holds a section twice
// (a model that answers twice), the first one filled in counts, as on the platform; a section
// that only repeats the format's placeholder ("[add here]") does not count.
func ReadArena(reply string, resources []string) (ArenaReply, error) {
	var r ArenaReply
	var answer, trade, message, reason *string
	for _, s := range arenaSectionsOf(reply) {
		content := s.content
		if placeholderRe.MatchString(content) {
			continue
		}
		c := content
		switch s.name {
		case "answer":
			if answer == nil {
				answer = &c
			}
		case "trade":
			if trade == nil {
				trade = &c
			}
		case "message":
			if message == nil {
				message = &c
			}
		case "reason":
			if reason == nil {
				reason = &c
			}
		}
	}
	if answer == nil && trade == nil {
		return r, ErrArenaNoAnswer
	}
	if message != nil {
		r.Message = *message
	}
	if reason != nil {
		r.Reason = *reason
	}
	word := ""
	if answer != nil {
		r.Answer = *answer
		word = arenaWord(*answer)
	}
	switch word {
	case "accept":
		r.Kind = gamev1.MoveKind_MOVE_KIND_ACCEPT
		return r, nil
	case "reject":
		r.Kind = gamev1.MoveKind_MOVE_KIND_REJECT
		return r, nil
	}
	if trade != nil {
		gives, ok, err := readArenaTrade(*trade, resources)
		if err != nil {
			return r, err
		}
		if ok {
			r.Kind, r.Gives = gamev1.MoveKind_MOVE_KIND_PROPOSE, gives
			return r, nil
		}
	}
	if word == "propose" && trade == nil {
		return r, fmt.Errorf("the answer says %q but has no <newly proposed trade>", strings.TrimSpace(r.Answer))
	}
	r.Kind = gamev1.MoveKind_MOVE_KIND_PASS
	return r, nil
}

// arenaWord reads what a <player answer> says: "accept", "reject", "propose" or "" (none).
// Models write more than the word: "Player BLUE ACCEPT", "Accept", "ACCEPTED", "COUNTER
// PROPOSAL", "Propose a trade with"; the platform took only "ACCEPT" and "REJECT" exactly.
func arenaWord(answer string) string {
	s := strings.ToUpper(answer)
	s = strings.Map(func(r rune) rune {
		if r >= 'A' && r <= 'Z' {
			return r
		}
		return ' '
	}, s)
	words := strings.Fields(s)
	// Leading names: "PLAYER BLUE ACCEPT", "RED ACCEPT".
	for len(words) > 0 && slices.Contains([]string{"PLAYER", "RED", "BLUE", "I", "WE"}, words[0]) {
		words = words[1:]
	}
	if len(words) == 0 {
		return ""
	}
	switch w := words[0]; {
	case w == "NONE" || w == "NO" || w == "WAIT" || w == "PASS" || w == "N":
		return ""
	case strings.HasPrefix(w, "ACCEPT") || w == "AGREE" || w == "AGREED" || w == "DEAL":
		return "accept"
	case strings.HasPrefix(w, "REJECT") || w == "DECLINE" || w == "DECLINED" || w == "REFUSE":
		return "reject"
	case strings.HasPrefix(w, "PROPOS") || strings.HasPrefix(w, "COUNTER") || w == "OFFER" || w == "NEW" || w == "TRADE":
		return "propose"
	}
	return ""
}

var (
	// arenaSeatRe finds who gives in a trade: "Player RED Gives", "RED gives", "P2 gives".
	arenaSeatRe = regexp.MustCompile(`(?i)\b(?:player\s*)?(red|blue|p\s*1|p\s*2|player\s*1|player\s*2)\b\s*(?:gives|give|pays|offers|hands)?\s*:?`)
	// arenaTokenRe splits a side of a trade into words, amounts (1,000,000 too) and ':' or '='.
	arenaTokenRe = regexp.MustCompile(`[A-Za-z][A-Za-z0-9_-]*|-?\d[\d,_]*(?:\.\d+)?|[:=,;]`)
)

// arenaNone says a trade section proposes nothing.
func arenaNone(s string) bool {
	s = strings.ToUpper(strings.Trim(strings.TrimSpace(s), ".*`'\"[]()"))
	return s == "" || s == "NONE" || s == "N/A" || s == "NA" || s == "NO TRADE" || s == "NOTHING"
}

// readArenaTrade reads a trade: each side, by seat, the resources it hands over. ok is false for
// NONE. An amount is read as "X: 10" (the format's way), "X = 10", "X 10" or "10 X"; with the
// game's resources known, only those count (so "of 10" in prose is no amount), in any case.
func readArenaTrade(text string, resources []string) (gives [2]map[string]int64, ok bool, err error) {
	if arenaNone(text) {
		return gives, false, nil
	}
	seats := arenaSeatRe.FindAllStringSubmatchIndex(text, -1)
	if len(seats) == 0 {
		return gives, false, fmt.Errorf("the trade %q names neither Player RED nor Player BLUE", clip(text, 120))
	}
	for i, m := range seats {
		seat := arenaSeat(text[m[2]:m[3]])
		end := len(text)
		if i+1 < len(seats) {
			end = seats[i+1][0]
		}
		amounts, err := arenaAmounts(text[m[1]:end], resources)
		if err != nil {
			return gives, false, fmt.Errorf("in the trade %q: %w", clip(text, 120), err)
		}
		for _, a := range amounts {
			if gives[seat] == nil {
				gives[seat] = map[string]int64{}
			}
			if _, twice := gives[seat][a.res]; twice {
				return gives, false, fmt.Errorf("the trade %q gives %s twice on one side", clip(text, 120), a.res)
			}
			gives[seat][a.res] = a.n
		}
	}
	for s := range gives {
		for res, n := range gives[s] {
			if n == 0 {
				delete(gives[s], res)
			}
		}
	}
	return gives, true, nil
}

type arenaItem struct {
	res string
	n   int64
}

// arenaAmounts reads the amounts of one side of a trade.
func arenaAmounts(part string, resources []string) ([]arenaItem, error) {
	toks := arenaTokenRe.FindAllString(part, -1)
	isNum := func(i int) bool {
		return i >= 0 && i < len(toks) && (toks[i][0] == '-' || toks[i][0] >= '0' && toks[i][0] <= '9')
	}
	isSep := func(i int) bool { return i >= 0 && i < len(toks) && (toks[i] == ":" || toks[i] == "=") }
	isWord := func(i int) bool {
		return i >= 0 && i < len(toks) && !isNum(i) && !isSep(i) && toks[i] != "," && toks[i] != ";"
	}
	// resource reads token i as a resource: with strict, only one the game names (any word
	// when it names none); otherwise any word but a few of prose.
	resource := func(i int, strict bool) (string, bool) {
		if !isWord(i) {
			return "", false
		}
		w := toks[i]
		for _, r := range resources {
			if strings.EqualFold(r, w) {
				return r, true
			}
		}
		if strict && len(resources) > 0 {
			return "", false
		}
		if arenaStopWord(w) {
			return "", false
		}
		return w, true
	}
	var out []arenaItem
	used := make([]bool, len(toks))
	for i := range toks {
		if !isNum(i) {
			continue
		}
		res, at := "", -1
		if i >= 2 && isSep(i-1) && !used[i-2] {
			if r, ok := resource(i-2, false); ok { // X: 10, whatever X is: the rules judge it
				res, at = r, i-2
				if !slices.ContainsFunc(resources, func(k string) bool { return strings.EqualFold(k, r) }) {
					// A name of several words ("Any Resource: 3") is read whole.
					for j := i - 3; isWord(j) && !used[j] && !arenaStopWord(toks[j]); j-- {
						res = toks[j] + " " + res
					}
				}
			}
		}
		if at < 0 && i >= 1 && !used[i-1] && len(resources) > 0 {
			if r, ok := resource(i-1, true); ok { // X 10, when the game names X
				res, at = r, i-1
			}
		}
		if at < 0 && i+1 < len(toks) && !used[i+1] {
			if r, ok := resource(i+1, true); ok { // 10 X
				res, at = r, i+1
			}
		}
		if at < 0 {
			continue
		}
		used[at] = true
		n, err := arenaAmount(toks[i])
		if err != nil {
			return nil, err
		}
		out = append(out, arenaItem{res: res, n: n})
	}
	return out, nil
}

func arenaSeat(name string) int32 {
	n := strings.ToUpper(strings.Join(strings.Fields(name), ""))
	if n == "RED" || n == "P1" || n == "PLAYER1" {
		return 0
	}
	return 1
}

func arenaAmount(s string) (int64, error) {
	if strings.Contains(s, ".") {
		return 0, fmt.Errorf("%s is not a whole number", s)
	}
	clean := strings.NewReplacer(",", "", "_", "").Replace(s)
	n, err := strconv.ParseInt(clean, 10, 64)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%s is not a usable amount", s)
	case n < 0:
		return 0, fmt.Errorf("%s is negative", s)
	}
	return n, nil
}

// ArenaAction reads a reply in NegotiationArena's format into the action it makes, as the seat
// whose observation obs is: its move (a trade as an Allocation between seats 0 and 1, resource
// names matched to the game's without regard to case), its public message, and its reasoning as
// private reasoning. It does not check the move against the rules.
func ArenaAction(obs *agentv1.Observation, reply string) (*agentv1.Action, error) {
	known := resourcesOf(obs)
	r, err := ReadArena(reply, known)
	if err != nil {
		return nil, err
	}
	action := &agentv1.Action{PrivateReasoning: clip(r.Reason, maxArenaText)}
	if msg := strings.TrimSpace(r.Message); msg != "" {
		action.Messages = []*gamev1.Message{{Text: clip(msg, maxArenaText)}}
	}
	switch r.Kind {
	case gamev1.MoveKind_MOVE_KIND_ACCEPT:
		action.Move = &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}
	case gamev1.MoveKind_MOVE_KIND_REJECT:
		action.Move = &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}
	case gamev1.MoveKind_MOVE_KIND_PASS:
		action.Move = &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}
	default:
		alloc := &gamev1.Allocation{}
		for seat, g := range r.Gives {
			share := &gamev1.SeatShare{Seat: int32(seat)}
			for res, n := range g {
				if share.Gives == nil {
					share.Gives = map[string]int64{}
				}
				share.Gives[canonical(res, known)] += n
			}
			alloc.Shares = append(alloc.Shares, share)
		}
		action.Move = &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
			Terms: &gamev1.Proposal_Allocation{Allocation: alloc},
		}}}}
	}
	return action, nil
}

// maxArenaText bounds the texts ArenaAction keeps, within what an action may carry.
const maxArenaText = 8 << 10

// resourcesOf lists the resources an observation's proposals may name.
func resourcesOf(obs *agentv1.Observation) []string {
	var out []string
	add := func(r string) {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	for _, b := range obs.GetProposalBounds() {
		add(b.GetResource())
	}
	for _, f := range obs.GetProposalForms() {
		for _, b := range f.GetBounds() {
			add(b.GetResource())
		}
	}
	return out
}

// canonical writes a resource as the game names it when it names it in another case.
func canonical(res string, known []string) string {
	if slices.Contains(known, res) {
		return res
	}
	for _, k := range known {
		if strings.EqualFold(k, res) {
			return k
		}
	}
	return res
}

// arenaName is a seat's name in the format: Player RED and Player BLUE for P1 and P2.
func arenaName(t *turn, seat int32) string {
	switch seat {
	case 0:
		return "RED"
	case 1:
		return "BLUE"
	}
	return t.name(seat)
}

func (arenaStyle) parse(reply string, t *turn) (*draft, *formatError) {
	r, err := ReadArena(reply, resourcesOf(t.obs))
	if err != nil {
		if errors.Is(err, ErrArenaNoAnswer) {
			return nil, failf(FailUnparsable, "%v; write your answer between <player answer> and </player answer>, and a trade or NONE between <newly proposed trade> and </newly proposed trade>", err)
		}
		return nil, failf(FailBadTerms, "%v", err)
	}
	d := &draft{hasMove: true, kind: r.Kind, word: strings.TrimSpace(r.Answer), reasoning: r.Reason}
	if d.word == "" {
		d.word = games.KindWord(r.Kind)
	}
	if m := strings.TrimSpace(r.Message); m != "" {
		d.messages = []draftMessage{{text: m}}
	}
	if r.Kind == gamev1.MoveKind_MOVE_KIND_PROPOSE {
		// The trade in the terms the agent's own reader takes: "P1 gives X: 10; P2 gives Y: 10".
		var parts []string
		for seat, g := range r.Gives {
			var items []string
			for _, res := range slices.Sorted(maps.Keys(g)) {
				items = append(items, fmt.Sprintf("%s: %d", res, g[res]))
			}
			if len(items) > 0 {
				parts = append(parts, t.name(int32(seat))+" gives "+strings.Join(items, ", "))
			}
		}
		d.terms = strings.Join(parts, "; ")
		if d.terms == "" {
			d.terms = "0"
		}
	}
	return d, nil
}

func (arenaStyle) moveExample(t *turn, k gamev1.MoveKind, bounds []*gamev1.Bound) string {
	answer := func(word, trade string) string {
		return fmt.Sprintf("<player answer> %s </player answer> with <newly proposed trade> %s </newly proposed trade>", word, trade)
	}
	switch k {
	case gamev1.MoveKind_MOVE_KIND_PROPOSE:
		return answer("PROPOSAL", arenaTradeExample(t, bounds))
	case gamev1.MoveKind_MOVE_KIND_ACCEPT:
		return answer("ACCEPT", "NONE")
	case gamev1.MoveKind_MOVE_KIND_REJECT:
		return answer("REJECT", "NONE")
	case gamev1.MoveKind_MOVE_KIND_PASS:
		return answer("NONE", "NONE")
	}
	return "(" + games.KindWord(k) + " cannot be written in this format)"
}

// arenaTradeExample writes the trade of bounds with placeholders: "Player RED Gives X: AMOUNT,
// Y: AMOUNT | Player BLUE Gives X: AMOUNT".
func arenaTradeExample(t *turn, bounds []*gamev1.Bound) string {
	var seats []int32
	items := map[int32][]string{}
	for _, b := range bounds {
		if b.GetSide() != gamev1.ShareSide_SHARE_SIDE_GIVES {
			continue
		}
		if !slices.Contains(seats, b.GetSeat()) {
			seats = append(seats, b.GetSeat())
		}
		amount := "AMOUNT"
		if b.GetMin() == b.GetMax() {
			amount = strconv.FormatInt(b.GetMin(), 10)
		}
		items[b.GetSeat()] = append(items[b.GetSeat()], b.GetResource()+": "+amount)
	}
	parts := make([]string, len(seats))
	for i, s := range seats {
		parts[i] = "Player " + arenaName(t, s) + " Gives " + strings.Join(items[s], ", ")
	}
	return strings.Join(parts, " | ")
}

func (arenaStyle) messageExample(*turn, []int32) string { return "<message> TEXT </message>" }

func (arenaStyle) termsExample(*turn, []*gamev1.Bound) string {
	return "(this format carries no terms in messages)"
}

func (arenaStyle) responseFormat(*turn, structured) *openai.ChatCompletionResponseFormat {
	return nil
}

// arenaStopWord: words of prose that are never a resource.
func arenaStopWord(w string) bool {
	switch strings.ToLower(w) {
	case "player", "gives", "give", "and", "of", "for", "the", "a", "to", "total", "amount", "red", "blue":
		return true
	}
	return false
}
