package solution

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// SupportPrefix starts the line in which a belief-tracking agent writes its belief support in
// its private notes (the `bayes` agent does, on every action), so that the estimation metrics
// can be computed from the match record: "belief-support: 0,2,3;1,1,1" (one value vector per
// item-type order, ';' between vectors).
const SupportPrefix = "belief-support:"

// FormatSupport writes the support line.
func FormatSupport(vs [][]int) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = Ints(v)
	}
	return SupportPrefix + " " + strings.Join(parts, ";")
}

// ParseSupport finds the support line in text (the last one, when there are several) and
// reads it; false when text has none.
func ParseSupport(text string) ([][]int, bool, error) {
	var line string
	found := false
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(l), SupportPrefix); ok {
			line, found = strings.TrimSpace(rest), true
		}
	}
	if !found {
		return nil, false, nil
	}
	var out [][]int
	if line == "" {
		return out, true, nil
	}
	for _, part := range strings.Split(line, ";") {
		var v []int
		for _, x := range strings.Split(part, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil {
				return nil, true, fmt.Errorf("solution: belief support %q: %q is not a whole number", line, x)
			}
			v = append(v, n)
		}
		out = append(out, v)
	}
	return out, true, nil
}

// Estimate is how well a final belief support V estimated the opponent's true values
// (specs/deal-or-no-deal.md).
type Estimate struct {
	// Precision is 1 when the true vector is in V; Recall is 1/|V| then, else 0.
	Precision, Recall float64
	// Reduction is 1 - |V| / (prior support size).
	Reduction float64
	// IndPrecision is 1 when V meets the indistinguishable set of the true vector; IndRecall is
	// the share of V inside it.
	IndPrecision, IndRecall float64
	// SupportSize and PriorSize are |V| and the prior's size.
	SupportSize, PriorSize int
}

// Estimation computes the estimation metrics of the support V held by the player in seat,
// whose own values are g.Values[seat], against the opponent's true values g.Values[1-seat].
//
// The indistinguishable set of the true vector t is every prior vector v' whose Best
// allocations (under the player's own values and v') are a subset of the Best allocations
// under t. A vector with no envy-free allocation at all has an empty Best set, so it is
// counted as inside (the definition taken literally; such vectors cannot change what the
// player should propose under Best).
func Estimation(g Game, seat int, support [][]int) Estimate {
	truth := g.Values[1-seat]
	prior := Vectors(g.Counts, Score(g.Counts, g.Values[seat]))
	e := Estimate{SupportSize: len(support), PriorSize: len(prior)}
	if len(prior) > 0 {
		e.Reduction = 1 - float64(len(support))/float64(len(prior))
	}
	if slices.ContainsFunc(support, func(v []int) bool { return slices.Equal(v, truth) }) {
		e.Precision, e.Recall = 1, 1/float64(len(support))
	}
	bestUnder := func(v []int) []Alloc {
		h := Game{Counts: g.Counts}
		h.Values[seat], h.Values[1-seat] = g.Values[seat], v
		return h.Best()
	}
	trueBest := bestUnder(truth)
	inside := 0
	for _, v := range support {
		sub := true
		for _, a := range bestUnder(v) {
			if Index(trueBest, a) < 0 {
				sub = false
				break
			}
		}
		if sub {
			inside++
		}
	}
	if inside > 0 {
		e.IndPrecision = 1
	}
	if len(support) > 0 {
		e.IndRecall = float64(inside) / float64(len(support))
	}
	return e
}
