package bargain

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// MaxNameLen is the longest name of a resource, an item or a currency, in characters.
const MaxNameLen = 32

// Gives reads a trade from a proposal's allocation: what each seat gives, by resource, with zero
// amounts left out (absent and 0 mean the same, as the Bound contract says). It checks what
// every trade shares: an allocation is present, it names only seats 0 and 1, at most once each,
// no amount is negative and nothing is received from a pool. Otherwise it returns a
// plain-language error naming the problem, which the game turns into a rejection that also
// says what a legal proposal looks like.
func Gives(alloc *gamev1.Allocation) ([2]map[string]int64, error) {
	var out [2]map[string]int64
	if alloc == nil {
		return out, errors.New("the proposal has no allocation")
	}
	var seen [2]bool
	for _, sh := range alloc.GetShares() {
		seat := sh.GetSeat()
		if seat != P1 && seat != P2 {
			return out, fmt.Errorf("the allocation names seat %d, but only seats 0 (P1) and 1 (P2) play", seat)
		}
		if seen[seat] {
			return out, fmt.Errorf("the allocation has two shares for seat %d (%s); give at most one per seat", seat, seatNames[seat])
		}
		seen[seat] = true
		gives, receives := SortedKeys(sh.GetGives()), SortedKeys(sh.GetReceives())
		for _, k := range gives {
			if v := sh.GetGives()[k]; v < 0 {
				return out, fmt.Errorf("amounts cannot be negative, but %s has %d %s", seatNames[seat], v, NameText(k))
			}
		}
		for _, k := range receives {
			if v := sh.GetReceives()[k]; v < 0 {
				return out, fmt.Errorf("amounts cannot be negative, but %s has %d %s", seatNames[seat], v, NameText(k))
			}
		}
		for _, k := range receives {
			if v := sh.GetReceives()[k]; v != 0 {
				return out, fmt.Errorf("%s cannot receive %d %s from a pool: in this game a proposal says only what each side gives the other", seatNames[seat], v, NameText(k))
			}
		}
		for _, k := range gives {
			if v := sh.GetGives()[k]; v != 0 {
				if out[seat] == nil {
					out[seat] = make(map[string]int64)
				}
				out[seat][k] = v
			}
		}
	}
	return out, nil
}

// SortedKeys returns m's keys in order, so that texts never depend on map order.
func SortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// CheckName insists that s, the value of parameter field of game, is one plain word: letters,
// digits, '_' or '-', starting with a letter, at most MaxNameLen characters. Names are map keys
// agents must type back, and they are spliced into briefings.
func CheckName(game, field, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s: %s must be valid UTF-8", game, field)
	}
	if s == "" {
		return fmt.Errorf("%s: %s must not be empty", game, field)
	}
	if n := utf8.RuneCountInString(s); n > MaxNameLen {
		return fmt.Errorf("%s: %s must be at most %d characters, got %d", game, field, MaxNameLen, n)
	}
	for i, r := range s {
		ok := unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || r == '_' || r == '-'))
		if !ok {
			return fmt.Errorf("%s: %s must be one word of letters, digits, '_' or '-' starting with a letter, got %q", game, field, s)
		}
	}
	return nil
}

// NameText writes a name bare when it is a plain word and quoted otherwise, so that an empty or
// odd name stays visible in a message.
func NameText(name string) string {
	if CheckName("", "", name) == nil {
		return name
	}
	return strconv.Quote(name)
}

// CheckFamily refuses params whose branch is another game's. It looks at the oneof
// reflectively, so that a branch added for a future family is named in the error instead of
// being mistaken for "all defaults".
func CheckFamily(gp *matchv1.GameParams, game string) error {
	if gp == nil {
		return nil
	}
	m := gp.ProtoReflect()
	if od := m.Descriptor().Oneofs().ByName("family"); od != nil {
		if fd := m.WhichOneof(od); fd != nil && string(fd.Name()) != game {
			return fmt.Errorf("%s: params are for the %q game, not %q", game, fd.Name(), game)
		}
	}
	return nil
}

// DefaultMaxProposals is the reference platform's proposal limit, max_turns/2 - 1, or 0 (no
// limit) when that is less than 1.
func DefaultMaxProposals(maxTurns int32) int32 { return max(0, maxTurns/2-1) }

// Bundle writes amounts of resources the way the spec writes a trade's side: "{X: 10, Y: 2}",
// sorted by resource, zero amounts left out; "nothing" when empty.
func Bundle(b map[string]int64) string {
	var parts []string
	for _, k := range SortedKeys(b) {
		if b[k] != 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", k, b[k]))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// NameTerms returns a function that writes a proposal's terms in rules' own words
// (Rules.Describe: "P1 gives 40 Dollars to P2 and keeps 60"), the words of the briefings and
// the players' histories, so that a transcript says the same; "" for terms the rules refuse
// (an unbinding offer in a message may be anything), which the caller writes its own way.
// For games.TermsNamer.
func NameTerms[T any](rules Rules[T]) func(*gamev1.Proposal) string {
	return func(p *gamev1.Proposal) string {
		alloc := p.GetAllocation()
		if alloc == nil {
			return ""
		}
		// Terms may check the mover's side more strictly; a proposal either seat could make
		// reads the same.
		for _, mover := range []games.Seat{P1, P2} {
			if t, err := rules.Terms(mover, alloc); err == nil {
				return rules.Describe(t)
			}
		}
		return ""
	}
}
