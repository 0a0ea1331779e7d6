// Package corpus reads the public Deal-or-No-Deal corpus (Lewis et al., 2017; see
// ../shared/data/dealornodeal/README.md) in its three line formats — the tagged split files
// (test.txt, val.txt, the seed's sampled_50_deal_no_deal.txt: format A), the collectors' raw
// data.txt (format B) and the self-play set-ups (selfplay.txt: format C) — and turns it into
// datapoints: a pool, Alice's values and Bob's, and the human outcome.
//
// # Pairing and de-duplication
//
// Most dialogues appear twice, once from each side; some only once, and the mirror line is not
// always next to its line. Parse pairs the two sides as the corpus README says:
//
//  1. each line is keyed by (counts, its own values, the partner's values, the dialogue's text
//     up to and including the "<selection>" token, words as written, separated by one space);
//  2. its mirror has the key (counts, partner's values, own values, the same text with every
//     "YOU:" and "THEM:" swapped); going through the file in order, a line is matched with the
//     earliest earlier line still unmatched whose key is its mirror key, if any;
//  3. a matched pair is one dialogue, kept as its first line in file order; an unmatched line
//     is a dialogue of its own (seen from one side only). Dialogues are numbered 1, 2, ... in
//     the file order of their kept lines.
//
// A datapoint taken from a dialogue gives Alice the kept line's own values (<input>) and Bob
// the partner's (<partner_input>); the human outcome is the kept line's. Format C has no
// dialogue: its lines 1-2, 3-4, ... are the two players of one set-up, Alice the first.
//
// The package is pure: it reads bytes and writes to an io.Writer.
package corpus

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// Format is a line format of the corpus.
type Format int

// The formats.
const (
	FormatTagged   Format = iota + 1 // A: test.txt, val.txt, sampled_50_deal_no_deal.txt
	FormatRaw                        // B: data.txt
	FormatContexts                   // C: selfplay.txt
)

// String names the format.
func (f Format) String() string {
	switch f {
	case FormatTagged:
		return "tagged (format A)"
	case FormatRaw:
		return "raw (format B)"
	case FormatContexts:
		return "contexts only (format C)"
	}
	return "unknown"
}

// Outcome is how a dialogue ended.
type Outcome int

// The outcomes (format A's output field; format B mapped to it as the README says).
const (
	OutcomeNone        Outcome = iota // format C: no dialogue
	OutcomeDeal                       // both entered splits that fit together
	OutcomeDisagree                   // the entries did not fit together
	OutcomeNoAgreement                // both declared that there was no deal
	OutcomeDisconnect                 // a participant left
)

// String names the outcome.
func (o Outcome) String() string {
	return [...]string{"none", "deal", "disagree", "no agreement", "disconnect"}[o]
}

// Types is the number of item types in the corpus: book, hat, ball.
const Types = 3

// Items are the corpus's item types, in order.
var Items = [Types]string{"book", "hat", "ball"}

// Line is one line of a corpus file: one side of a dialogue (formats A and B) or one player's
// context (format C).
type Line struct {
	// Number is the line's 1-based number in the file.
	Number int
	// Text is the line as written, without its newline.
	Text string
	// Counts of each item type; Own and Partner the values of this line's player (YOU) and of
	// the other (THEM). Partner is nil in format C.
	Counts, Own, Partner []int
	// Dialogue is the text up to and including "<selection>", words separated by one space;
	// Messages the number of messages in it (each ends with "<eos>").
	Dialogue string
	Messages int
	// Outcome of the dialogue; with a deal, Deal[0] is what YOU got and Deal[1] what THEM got.
	Outcome Outcome
	Deal    [2][]int
}

// Dialogue is one dialogue after pairing: its kept line and, when seen from both sides, the
// mirror line.
type Dialogue struct {
	// Index is the 1-based position of the dialogue in file order.
	Index  int
	Line   *Line
	Mirror *Line
}

// Corpus is a parsed corpus file.
type Corpus struct {
	// Name is a label for sources, e.g. the file's base name.
	Name      string
	Format    Format
	Lines     []*Line
	Dialogues []*Dialogue
}

// Stats are what a corpus file holds, after pairing.
type Stats struct {
	Lines, Dialogues, BothSides, OneSide    int
	Deal, Disagree, NoAgreement, Disconnect int
}

// Stats counts lines, dialogues and outcomes (by each dialogue's kept line).
func (c *Corpus) Stats() Stats {
	s := Stats{Lines: len(c.Lines), Dialogues: len(c.Dialogues)}
	for _, d := range c.Dialogues {
		if d.Mirror != nil {
			s.BothSides++
		} else {
			s.OneSide++
		}
		switch d.Line.Outcome {
		case OutcomeDeal:
			s.Deal++
		case OutcomeDisagree:
			s.Disagree++
		case OutcomeNoAgreement:
			s.NoAgreement++
		case OutcomeDisconnect:
			s.Disconnect++
		}
	}
	return s
}

// ErrFormat is wrapped by every error about a file that is not in a corpus format.
var ErrFormat = errors.New("corpus: bad line")

// Parse reads a corpus file in any of the three formats (told apart by the first line) and
// pairs its dialogues. name labels the datapoints' sources.
func Parse(name string, data []byte) (*Corpus, error) {
	c := &Corpus{Name: name}
	raw := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
	for i, text := range raw {
		if strings.TrimSpace(text) == "" {
			continue
		}
		if c.Format == 0 {
			c.Format = detect(text)
		}
		var l *Line
		var err error
		switch c.Format {
		case FormatTagged:
			l, err = parseTagged(text)
		case FormatRaw:
			l, err = parseRaw(text)
		default:
			l, err = parseContext(text)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %s line %d: %v", ErrFormat, name, i+1, err)
		}
		l.Number, l.Text = i+1, text
		c.Lines = append(c.Lines, l)
	}
	if len(c.Lines) == 0 {
		return nil, fmt.Errorf("%w: %s holds no lines", ErrFormat, name)
	}
	if c.Format == FormatContexts {
		if len(c.Lines)%2 != 0 {
			return nil, fmt.Errorf("%w: %s has %d lines; set-ups come in pairs of lines", ErrFormat, name, len(c.Lines))
		}
		for k := 0; k < len(c.Lines); k += 2 {
			a, b := c.Lines[k], c.Lines[k+1]
			if !slices.Equal(a.Counts, b.Counts) {
				return nil, fmt.Errorf("%w: %s lines %d and %d have different counts", ErrFormat, name, a.Number, b.Number)
			}
			a.Partner, b.Partner = b.Own, a.Own
			c.Dialogues = append(c.Dialogues, &Dialogue{Index: len(c.Dialogues) + 1, Line: a, Mirror: b})
		}
		return c, nil
	}
	c.pair()
	return c, nil
}

func detect(first string) Format {
	t := strings.Fields(first)
	switch {
	case len(t) > 0 && t[0] == "<input>":
		return FormatTagged
	case len(t) == 2*Types:
		return FormatContexts
	}
	return FormatRaw
}

// pair matches each line with the earliest earlier unmatched line whose key is its mirror key.
func (c *Corpus) pair() {
	unmatched := map[string][]*Line{}
	mirrorOf := map[*Line]*Line{}
	for _, l := range c.Lines {
		mk := key(l.Counts, l.Partner, l.Own, swapSpeakers(l.Dialogue))
		if q := unmatched[mk]; len(q) > 0 {
			mirrorOf[q[0]] = l
			unmatched[mk] = q[1:]
			continue
		}
		k := key(l.Counts, l.Own, l.Partner, l.Dialogue)
		unmatched[k] = append(unmatched[k], l)
		mirrorOf[l] = nil
	}
	for _, l := range c.Lines {
		if m, kept := mirrorOf[l]; kept {
			c.Dialogues = append(c.Dialogues, &Dialogue{Index: len(c.Dialogues) + 1, Line: l, Mirror: m})
		}
	}
}

func key(counts, own, partner []int, text string) string {
	return solution.Ints(counts) + "|" + solution.Ints(own) + "|" + solution.Ints(partner) + "|" + text
}

// swapSpeakers swaps every "YOU:" and "THEM:" token.
func swapSpeakers(text string) string {
	words := strings.Split(text, " ")
	for i, w := range words {
		switch w {
		case "YOU:":
			words[i] = "THEM:"
		case "THEM:":
			words[i] = "YOU:"
		}
	}
	return strings.Join(words, " ")
}

// context reads six numbers "c0 v0 c1 v1 c2 v2" and checks them as the README states them:
// counts 1 to 10 (1 to 4 in the corpus), values from 0.
func context(words []string) (counts, values []int, err error) {
	if len(words) != 2*Types {
		return nil, nil, fmt.Errorf("a context has %d numbers, want %d", len(words), 2*Types)
	}
	for k, w := range words {
		n, err := strconv.Atoi(w)
		if err != nil || n < 0 {
			return nil, nil, fmt.Errorf("%q in a context is not a whole number from 0", w)
		}
		if k%2 == 0 {
			if n < 1 || n > solution.MaxCount {
				return nil, nil, fmt.Errorf("count %d is not from 1 to %d", n, solution.MaxCount)
			}
			counts = append(counts, n)
		} else {
			values = append(values, n)
		}
	}
	return counts, values, nil
}

// between returns the words after open and before close.
func between(words []string, open, close string) ([]string, error) {
	i := slices.Index(words, open)
	j := slices.Index(words, close)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %s ... %s", open, close)
	}
	return words[i+1 : j], nil
}

// dialogue reads the words of a dialogue up to and including "<selection>".
func dialogue(words []string) (text string, messages int, err error) {
	sel := slices.Index(words, "<selection>")
	if sel < 1 || (words[sel-1] != "YOU:" && words[sel-1] != "THEM:") {
		return "", 0, errors.New(`the dialogue does not end with "YOU: <selection>" or "THEM: <selection>"`)
	}
	for _, w := range words[:sel] {
		if w == "<eos>" {
			messages++
		}
	}
	return strings.Join(words[:sel+1], " "), messages, nil
}

func parseTagged(text string) (*Line, error) {
	words := strings.Fields(text)
	in, err := between(words, "<input>", "</input>")
	if err != nil {
		return nil, err
	}
	l := &Line{}
	if l.Counts, l.Own, err = context(in); err != nil {
		return nil, err
	}
	pin, err := between(words, "<partner_input>", "</partner_input>")
	if err != nil {
		return nil, err
	}
	var pc []int
	if pc, l.Partner, err = context(pin); err != nil {
		return nil, err
	}
	if !slices.Equal(pc, l.Counts) {
		return nil, errors.New("the partner's counts differ from the player's")
	}
	dia, err := between(words, "<dialogue>", "</dialogue>")
	if err != nil {
		return nil, err
	}
	if l.Dialogue, l.Messages, err = dialogue(dia); err != nil {
		return nil, err
	}
	out, err := between(words, "<output>", "</output>")
	if err != nil {
		return nil, err
	}
	if len(out) != 2*Types {
		return nil, fmt.Errorf("the output has %d words, want %d", len(out), 2*Types)
	}
	switch out[0] {
	case "<disagree>":
		l.Outcome = OutcomeDisagree
	case "<no_agreement>":
		l.Outcome = OutcomeNoAgreement
	case "<disconnect>":
		l.Outcome = OutcomeDisconnect
	default:
		l.Outcome = OutcomeDeal
		for side := range 2 {
			share, err := items(out[side*Types : (side+1)*Types])
			if err != nil {
				return nil, err
			}
			l.Deal[side] = share
		}
		for i, c := range l.Counts {
			if l.Deal[0][i]+l.Deal[1][i] != c {
				return nil, fmt.Errorf("the deal's shares of item %d add up to %d, not the count %d", i, l.Deal[0][i]+l.Deal[1][i], c)
			}
		}
		return l, nil
	}
	for _, w := range out {
		if w != out[0] {
			return nil, fmt.Errorf("the output mixes %s and %s", out[0], w)
		}
	}
	return l, nil
}

// items reads "item0=a item1=b item2=c".
func items(words []string) ([]int, error) {
	out := make([]int, Types)
	for i, w := range words {
		v, ok := strings.CutPrefix(w, fmt.Sprintf("item%d=", i))
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not item%d=N", w, i)
		}
		out[i] = n
	}
	return out, nil
}

func parseRaw(text string) (*Line, error) {
	words := strings.Fields(text)
	if len(words) < 2*(2*Types)+4 {
		return nil, fmt.Errorf("a raw line has at least %d words, this one %d", 4*Types+4, len(words))
	}
	l := &Line{}
	var err error
	if l.Counts, l.Own, err = context(words[:2*Types]); err != nil {
		return nil, err
	}
	var pc []int
	if pc, l.Partner, err = context(words[len(words)-2*Types:]); err != nil {
		return nil, err
	}
	if !slices.Equal(pc, l.Counts) {
		return nil, errors.New("the partner's counts differ from the player's")
	}
	flag := words[len(words)-2*Types-1]
	if flag != "agree" && flag != "disagree" {
		return nil, fmt.Errorf("the flag before the partner's context is %q, want agree or disagree", flag)
	}
	body := words[2*Types : len(words)-2*Types-1]
	if l.Dialogue, l.Messages, err = dialogue(body); err != nil {
		return nil, err
	}
	sel := slices.Index(body, "<selection>")
	eos := slices.Index(body[sel:], "<eos>")
	if eos < 0 {
		return nil, errors.New("no <eos> after the entry")
	}
	entry := body[sel+1 : sel+eos]
	switch {
	case len(entry) == 1 && entry[0] == "disconnect":
		l.Outcome = OutcomeDisconnect
	case flag == "disagree":
		l.Outcome = OutcomeDisagree
	case len(entry) == 2 && entry[0] == "no" && entry[1] == "agreement":
		l.Outcome = OutcomeNoAgreement
	case len(entry) == Types:
		own, err := items(entry)
		if err != nil {
			return nil, err
		}
		l.Outcome = OutcomeDeal
		l.Deal[0] = own
		l.Deal[1] = make([]int, Types)
		for i, c := range l.Counts {
			if own[i] > c {
				return nil, fmt.Errorf("the entry takes %d of item %d, of which there are %d", own[i], i, c)
			}
			l.Deal[1][i] = c - own[i]
		}
	default:
		return nil, fmt.Errorf("the entry %q is neither item counts, \"no agreement\" nor \"disconnect\"", strings.Join(entry, " "))
	}
	return l, nil
}

func parseContext(text string) (*Line, error) {
	l := &Line{}
	var err error
	l.Counts, l.Own, err = context(strings.Fields(text))
	return l, err
}

// Tagged writes l in format A: the line as written when it was read from format A, else the
// equivalent format-A line.
func (l *Line) Tagged() string {
	if strings.HasPrefix(strings.TrimSpace(l.Text), "<input>") {
		return l.Text
	}
	ctx := func(values []int) string {
		var b strings.Builder
		for i, c := range l.Counts {
			if i > 0 {
				b.WriteByte(' ')
			}
			fmt.Fprintf(&b, "%d %d", c, values[i])
		}
		return b.String()
	}
	var out string
	switch l.Outcome {
	case OutcomeDeal:
		var parts []string
		for side := range 2 {
			for i, x := range l.Deal[side] {
				parts = append(parts, fmt.Sprintf("item%d=%d", i, x))
			}
		}
		out = strings.Join(parts, " ")
	case OutcomeDisagree:
		out = strings.TrimSpace(strings.Repeat("<disagree> ", 2*Types))
	case OutcomeNoAgreement:
		out = strings.TrimSpace(strings.Repeat("<no_agreement> ", 2*Types))
	default:
		out = strings.TrimSpace(strings.Repeat("<disconnect> ", 2*Types))
	}
	partner := l.Partner
	if partner == nil {
		partner = l.Own
	}
	return fmt.Sprintf("<input> %s </input> <dialogue> %s </dialogue> <output> %s </output> <partner_input> %s </partner_input>",
		ctx(l.Own), l.Dialogue, out, ctx(partner))
}

// Lines returns the format-A text of lines, one per line, for writing a selection back.
func Lines(ls []*Line) []byte {
	var b bytes.Buffer
	for _, l := range ls {
		b.WriteString(l.Tagged())
		b.WriteByte('\n')
	}
	return b.Bytes()
}
