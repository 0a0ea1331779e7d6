package llm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Terms are written the way the referee's summaries write them:
//
//	P1 gives 40 Dollars
//	P1 gives 5 X, 0 Y; P2 gives 3 Y
//	A receives 500 g; B receives 250 g; C receives 250 g
//
// and, for models that follow other habits, also as "RESOURCE: AMOUNT" or "RESOURCE=AMOUNT"
// ("P1 gives X: 5, Y: 0 | P2 gives Y: 3"), as "SEAT: AMOUNT" when that seat has one amount to
// fill in ("A: 500, B: 250, C: 250", the coalition seed's SPLIT/FINAL PROPOSAL lines), and as a
// bare AMOUNT when the proposal has exactly one amount. Words that are no seat, resource or
// verb are ignored; "to P2" and "from P2" name a counterpart, not a new share; amounts after
// "keeps" are what a seat is left with and are ignored.

// item is one amount the model stated.
type item struct {
	seat     int32
	side     gamev1.ShareSide
	resource string
	amount   int64
}

// of reports whether the amount is the one b limits.
func (it item) of(b *gamev1.Bound) bool {
	return it.seat == b.GetSeat() && it.side == b.GetSide() && it.resource == b.GetResource()
}

type tokKind int

const (
	tokWord tokKind = iota
	tokNum
	tokSep // ';', '|' or a line break: between shares
	tokColon
)

type token struct {
	kind tokKind
	text string
	num  int64
	bad  string // why a number cannot be an amount
}

// tokenize splits written terms into words, numbers and separators. Commas, brackets, quotes
// and currency signs are spacing.
func tokenize(s string) []token {
	var out []token
	r := []rune(s)
	for i := 0; i < len(r); {
		c := r[i]
		switch {
		case c == ';' || c == '|' || c == '\n':
			out = append(out, token{kind: tokSep, text: string(c)})
			i++
		case c == ':' || c == '=':
			out = append(out, token{kind: tokColon, text: string(c)})
			i++
		case unicode.IsDigit(c) || ((c == '-' || c == '+') && i+1 < len(r) && unicode.IsDigit(r[i+1]) && (i == 0 || !isWordRune(r[i-1]))):
			j := i + 1
			for j < len(r) && unicode.IsDigit(r[j]) {
				j++
			}
			// "1,000,000": comma groups of exactly three digits.
			for j+4 <= len(r) && r[j] == ',' && allDigits(r[j+1:j+4]) && (j+4 == len(r) || !unicode.IsDigit(r[j+4])) {
				j += 4
			}
			tok := token{kind: tokNum, text: string(r[i:j])}
			if j+1 < len(r) && r[j] == '.' && unicode.IsDigit(r[j+1]) {
				for j++; j < len(r) && unicode.IsDigit(r[j]); j++ {
				}
				tok.text, tok.bad = string(r[i:j]), "amounts are whole numbers"
			}
			if tok.bad == "" {
				n, err := strconv.ParseInt(strings.ReplaceAll(tok.text, ",", ""), 10, 64)
				switch {
				case err != nil:
					tok.bad = "the number is too large"
				case n < 0:
					tok.bad = "amounts are never negative"
				}
				tok.num = n
			}
			out = append(out, tok)
			i = j
		case isWordRune(c):
			j := i + 1
			for j < len(r) && (isWordRune(r[j]) || unicode.IsDigit(r[j]) || ((r[j] == '-' || r[j] == '.' || r[j] == '\'') && j+1 < len(r) && (isWordRune(r[j+1]) || unicode.IsDigit(r[j+1])))) {
				j++
			}
			out = append(out, token{kind: tokWord, text: string(r[i:j])})
			i = j
		default:
			i++
		}
	}
	return out
}

func isWordRune(c rune) bool { return unicode.IsLetter(c) || c == '_' }

func allDigits(r []rune) bool {
	for _, c := range r {
		if !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}

var (
	givesWords    = []string{"gives", "give", "giving", "pays", "pay", "hands", "hand", "sends", "send", "offers"}
	receivesWords = []string{"receives", "receive", "gets", "get", "takes", "take"}
	keepsWords    = []string{"keeps", "keep", "retains"}
	counterpart   = []string{"to", "from", "for", "with", "by"}
)

// parseItems reads written terms, resolving each amount against bounds (the amounts a proposal
// may fill in).
func (t *turn) parseItems(text string, bounds []*gamev1.Bound) ([]item, error) {
	toks := tokenize(text)
	var (
		items       []item
		seat        = int32(-1)
		side        gamev1.ShareSide
		keep        bool
		counterNext bool
	)
	isResource := func(w string) (string, bool) {
		for _, b := range bounds {
			if b.GetResource() == w {
				return w, true
			}
		}
		if len([]rune(w)) > 1 {
			for _, b := range bounds {
				if strings.EqualFold(b.GetResource(), w) {
					return b.GetResource(), true
				}
			}
		}
		return "", false
	}
	// numberAfter returns the index of the number following i, skipping one ':' or '='.
	numberAfter := func(i int) int {
		j := i + 1
		if j < len(toks) && toks[j].kind == tokColon {
			j++
		}
		if j < len(toks) && toks[j].kind == tokNum {
			return j
		}
		return -1
	}
	add := func(resource string, num token) error {
		if num.bad != "" {
			return fmt.Errorf("%q is not a usable amount: %s", num.text, num.bad)
		}
		if keep {
			return nil
		}
		it, err := t.resolveItem(seat, side, resource, num.num, bounds)
		if err != nil {
			return err
		}
		for _, o := range items {
			if o.seat == it.seat && o.side == it.side && o.resource == it.resource {
				return fmt.Errorf("%s %s %s is stated twice", t.name(it.seat), sideWord(it.side), it.resource)
			}
		}
		items = append(items, it)
		return nil
	}
	for i := 0; i < len(toks); i++ {
		tok := toks[i]
		switch tok.kind {
		case tokSep, tokColon:
			continue
		case tokNum:
			res := ""
			if i+1 < len(toks) && toks[i+1].kind == tokWord {
				if r, ok := isResource(toks[i+1].text); ok {
					res = r
					i++
				}
			}
			if err := add(res, tok); err != nil {
				return nil, err
			}
			continue
		}
		w := tok.text
		lw := strings.ToLower(w)
		if slices.Contains(counterpart, lw) {
			counterNext = true
			continue
		}
		// "seat N" names a seat by index.
		if lw == "seat" && i+1 < len(toks) && toks[i+1].kind == tokNum {
			if s, ok := t.seatByName("seat " + toks[i+1].text); ok {
				i++
				if !counterNext {
					seat, side, keep = s, gamev1.ShareSide_SHARE_SIDE_UNSPECIFIED, false
				}
				counterNext = false
				continue
			}
		}
		res, isRes := isResource(w)
		if s, ok := t.seatByName(w); ok && !(isRes && numberAfter(i) >= 0) {
			if !counterNext {
				seat, side, keep = s, gamev1.ShareSide_SHARE_SIDE_UNSPECIFIED, false
			}
			counterNext = false
			continue
		}
		counterNext = false
		switch {
		case slices.Contains(givesWords, lw):
			side, keep = gamev1.ShareSide_SHARE_SIDE_GIVES, false
		case slices.Contains(receivesWords, lw):
			side, keep = gamev1.ShareSide_SHARE_SIDE_RECEIVES, false
		case slices.Contains(keepsWords, lw):
			keep = true
		case isRes:
			if j := numberAfter(i); j >= 0 {
				if err := add(res, toks[j]); err != nil {
					return nil, err
				}
				i = j
			}
		}
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("no amounts found in %q", strings.TrimSpace(text))
	}
	return items, nil
}

// resolveItem finds the one bound an amount belongs to from what was said of it: the seat
// (-1: not said), the side (unspecified: not said) and the resource ("": not said).
func (t *turn) resolveItem(seat int32, side gamev1.ShareSide, resource string, amount int64, bounds []*gamev1.Bound) (item, error) {
	var match []*gamev1.Bound
	for _, b := range bounds {
		if (seat < 0 || b.GetSeat() == seat) &&
			(side == gamev1.ShareSide_SHARE_SIDE_UNSPECIFIED || b.GetSide() == side) &&
			(resource == "" || b.GetResource() == resource) {
			match = append(match, b)
		}
	}
	if len(match) > 1 {
		// Amounts fixed by the rules (min = max) need not be stated: a lone amount is the free one.
		var free []*gamev1.Bound
		for _, b := range match {
			if b.GetMin() < b.GetMax() {
				free = append(free, b)
			}
		}
		if len(free) == 1 {
			match = free
		}
	}
	said := t.saidName(seat, side, resource)
	switch len(match) {
	case 1:
		b := match[0]
		return item{seat: b.GetSeat(), side: b.GetSide(), resource: b.GetResource(), amount: amount}, nil
	case 0:
		return item{}, fmt.Errorf("%d (%s) is no amount a proposal may fill in now; the amounts are: %s", amount, said, t.boundNames(bounds))
	default:
		return item{}, fmt.Errorf("%d (%s) could be any of %s; say whose amount, given or received, of which resource", amount, said, t.boundNames(match))
	}
}

func (t *turn) saidName(seat int32, side gamev1.ShareSide, resource string) string {
	var parts []string
	if seat >= 0 {
		parts = append(parts, t.name(seat))
	}
	if side != gamev1.ShareSide_SHARE_SIDE_UNSPECIFIED {
		parts = append(parts, sideWord(side))
	}
	if resource != "" {
		parts = append(parts, resource)
	}
	if len(parts) == 0 {
		return "with no seat or resource named"
	}
	return strings.Join(parts, " ")
}

func (t *turn) boundNames(bounds []*gamev1.Bound) string {
	if len(bounds) == 0 {
		return "none"
	}
	names := make([]string, len(bounds))
	for i, b := range bounds {
		names[i] = t.amountName(b)
	}
	return strings.Join(names, "; ")
}

// allocation turns stated amounts into a legal Allocation: of one of forms when there are
// any, else filling every bound (unstated amounts are 0).
func (t *turn) allocation(items []item, forms []*gamev1.ProposalForm, bounds []*gamev1.Bound) (*gamev1.Allocation, error) {
	if len(forms) == 0 {
		return t.fill(items, bounds)
	}
	type candidate struct {
		alloc  *gamev1.Allocation
		err    error
		stated int // bounds of the form the model stated
	}
	var best *candidate
	var fitting []string
	for _, f := range forms {
		fits := true
		for _, it := range items {
			if it.amount != 0 && !slices.ContainsFunc(f.GetBounds(), it.of) {
				fits = false
				break
			}
		}
		if !fits {
			continue
		}
		c := &candidate{}
		for _, b := range f.GetBounds() {
			if slices.ContainsFunc(items, func(it item) bool { return it.of(b) }) {
				c.stated++
			}
		}
		c.alloc, c.err = t.fill(items, f.GetBounds())
		if c.err == nil {
			c.err = t.checkTotals(c.alloc, f)
		}
		if c.err != nil && f.GetLabel() != "" {
			c.err = fmt.Errorf("%s: %w", f.GetLabel(), c.err)
		}
		fitting = append(fitting, formName(f, t))
		switch {
		case best == nil,
			c.err == nil && best.err != nil,
			(c.err == nil) == (best.err == nil) && c.stated > best.stated:
			best = c
		}
	}
	if best == nil {
		names := make([]string, len(forms))
		for i, f := range forms {
			names[i] = formName(f, t)
		}
		return nil, fmt.Errorf("no legal form of proposal has those amounts; the forms are: %s", strings.Join(names, "; "))
	}
	return best.alloc, best.err
}

func formName(f *gamev1.ProposalForm, t *turn) string {
	seats := formSeats(f)
	label := f.GetLabel()
	if label == "" {
		label = "shares of " + t.seatList(seats)
	}
	return label
}

// formSeats lists the seats a form's bounds name, in order of first appearance.
func formSeats(f *gamev1.ProposalForm) []int32 {
	var seats []int32
	for _, b := range f.GetBounds() {
		if !slices.Contains(seats, b.GetSeat()) {
			seats = append(seats, b.GetSeat())
		}
	}
	return seats
}

// fill builds an allocation with one amount per bound: the stated one, else the bound's only
// value when it has one (min = max), else 0. Every stated amount must belong to a bound (zeros
// excepted) and every amount must be in range.
func (t *turn) fill(items []item, bounds []*gamev1.Bound) (*gamev1.Allocation, error) {
	for _, it := range items {
		if it.amount == 0 {
			continue
		}
		if !slices.ContainsFunc(bounds, it.of) {
			return nil, fmt.Errorf("%s %s %d %s is not part of this proposal", t.name(it.seat), sideWord(it.side), it.amount, it.resource)
		}
	}
	alloc := &gamev1.Allocation{}
	bySeat := map[int32]*gamev1.SeatShare{}
	for _, b := range bounds {
		amount, stated := int64(0), false
		if b.GetMin() == b.GetMax() {
			amount = b.GetMin()
		}
		for _, it := range items {
			if it.of(b) {
				amount, stated = it.amount, true
			}
		}
		if amount < b.GetMin() || amount > b.GetMax() {
			if !stated {
				return nil, fmt.Errorf("the amount %s is missing (it must be %s)", t.amountName(b), t.rangeText(b))
			}
			return nil, fmt.Errorf("%s %d is out of range: it must be %s", t.amountName(b), amount, t.rangeText(b))
		}
		share := bySeat[b.GetSeat()]
		if share == nil {
			share = &gamev1.SeatShare{Seat: b.GetSeat()}
			bySeat[b.GetSeat()] = share
			alloc.Shares = append(alloc.Shares, share)
		}
		if b.GetSide() == gamev1.ShareSide_SHARE_SIDE_RECEIVES {
			if share.Receives == nil {
				share.Receives = map[string]int64{}
			}
			share.Receives[b.GetResource()] = amount
		} else {
			if share.Gives == nil {
				share.Gives = map[string]int64{}
			}
			share.Gives[b.GetResource()] = amount
		}
	}
	return alloc, nil
}

// checkTotals checks the sums a form requires.
func (t *turn) checkTotals(a *gamev1.Allocation, f *gamev1.ProposalForm) error {
	for _, total := range f.GetTotals() {
		var sum int64
		for _, sh := range a.GetShares() {
			m := sh.GetGives()
			if total.GetSide() == gamev1.ShareSide_SHARE_SIDE_RECEIVES {
				m = sh.GetReceives()
			}
			v := m[total.GetResource()]
			if sum > math.MaxInt64-v {
				return fmt.Errorf("the amounts %s of %s add up to more than %d", sideWord(total.GetSide()), total.GetResource(), total.GetTotal())
			}
			sum += v
		}
		if sum != total.GetTotal() {
			return fmt.Errorf("the amounts of %s %s by %s must add up to exactly %d, and yours add up to %d",
				total.GetResource(), pastParticiple(total.GetSide()), t.seatList(formSeats(f)), total.GetTotal(), sum)
		}
	}
	return nil
}

func pastParticiple(s gamev1.ShareSide) string {
	if s == gamev1.ShareSide_SHARE_SIDE_RECEIVES {
		return "received"
	}
	return "given"
}

// itemsOf lists an allocation's amounts as items (to check an old proposal against new bounds).
func itemsOf(a *gamev1.Allocation) []item {
	var out []item
	for _, sh := range a.GetShares() {
		for _, side := range []gamev1.ShareSide{gamev1.ShareSide_SHARE_SIDE_GIVES, gamev1.ShareSide_SHARE_SIDE_RECEIVES} {
			m := sh.GetGives()
			if side == gamev1.ShareSide_SHARE_SIDE_RECEIVES {
				m = sh.GetReceives()
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				out = append(out, item{seat: sh.GetSeat(), side: side, resource: k, amount: m[k]})
			}
		}
	}
	return out
}
