package corpus

import (
	"fmt"
	"slices"

	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// Datapoint is a negotiation set-up with its human outcome: Alice is the line's YOU, Bob its
// THEM.
type Datapoint struct {
	// Game holds the counts, Alice's values (Values[0]) and Bob's (Values[1]).
	Game solution.Game
	// Source names where it came from, e.g. "test.txt dialogue 12 (line 23)".
	Source string
	// Line is the line it was taken from.
	Line *Line
	// Outcome is the human dialogue's; Deal is Alice's share with a deal.
	Outcome Outcome
	Deal    solution.Alloc
	// Messages is the number of messages of the human dialogue.
	Messages int
}

// datapoint makes a datapoint of l.
func (c *Corpus) datapoint(l *Line, source string) Datapoint {
	d := Datapoint{
		Game:     solution.Game{Counts: slices.Clone(l.Counts), Values: [2][]int{slices.Clone(l.Own), slices.Clone(l.Partner)}},
		Source:   source,
		Line:     l,
		Outcome:  l.Outcome,
		Messages: l.Messages,
	}
	if l.Outcome == OutcomeDeal {
		d.Deal = slices.Clone(l.Deal[0])
	}
	return d
}

// Datapoints returns one datapoint per dialogue, in dialogue order.
func (c *Corpus) Datapoints() []Datapoint {
	out := make([]Datapoint, len(c.Dialogues))
	for i, d := range c.Dialogues {
		out[i] = c.datapoint(d.Line, fmt.Sprintf("%s dialogue %d (line %d)", c.Name, d.Index, d.Line.Number))
	}
	return out
}

// OddLines returns a datapoint from every other line (lines 1, 3, 5, ... of the file's
// non-empty lines), as seed 004 took them from test.txt. It keeps some dialogues twice and
// misses others (see the package doc for the pairing that does not); it is here to reproduce
// the seed's selection.
func (c *Corpus) OddLines() []Datapoint {
	var out []Datapoint
	for k := 0; k < len(c.Lines); k += 2 {
		l := c.Lines[k]
		out = append(out, c.datapoint(l, fmt.Sprintf("%s line %d", c.Name, l.Number)))
	}
	return out
}

// Easy reports whether a set-up is one seed 004 left out as easy: Alice's and Bob's most
// valuable type (by value of one item, the first on ties) is the same type and, for each of
// them, the other types together are worth at least one item of that type.
func Easy(g solution.Game) bool {
	top := func(v []int) int {
		best := 0
		for i, x := range v {
			if x > v[best] {
				best = i
			}
		}
		return best
	}
	t := top(g.Values[0])
	if top(g.Values[1]) != t {
		return false
	}
	for _, v := range g.Values {
		rest := 0
		for i, c := range g.Counts {
			if i != t {
				rest += c * v[i]
			}
		}
		if rest < v[t] {
			return false
		}
	}
	return true
}

// Candidates are the datapoints seed 004 chose its hardest among: it drops a datapoint whose
// set-up (counts, Alice's values, Bob's values) came earlier, one whose counts are all even,
// and an Easy one. Taken from OddLines, they are also the datapoints the study's Table 9
// counts by difficulty.
func Candidates(points []Datapoint) []Datapoint {
	seen := map[string]bool{}
	var rest []Datapoint
	for _, p := range points {
		key := solution.Ints(p.Game.Counts) + "|" + solution.Ints(p.Game.Values[0]) + "|" + solution.Ints(p.Game.Values[1])
		if seen[key] {
			continue
		}
		seen[key] = true
		allEven := true
		for _, c := range p.Game.Counts {
			allEven = allEven && c%2 == 0
		}
		if allEven || Easy(p.Game) {
			continue
		}
		rest = append(rest, p)
	}
	return rest
}

// Hardest selects up to n datapoints the way seed 004 chose its 50 hardest: among the
// Candidates, it finds the smallest distance k (minus the difficulty) such that at least n of
// them are within k, and returns the first n of those in order. Fewer come back when fewer
// than n remain. It also returns k and how many candidates there were.
func Hardest(points []Datapoint, n int) (selected []Datapoint, k, remaining int) {
	rest := Candidates(points)
	if len(rest) == 0 || n <= 0 {
		return nil, 0, len(rest)
	}
	dists := make([]int, len(rest))
	for i, p := range rest {
		dists[i] = p.Game.Distance()
	}
	sorted := slices.Clone(dists)
	slices.Sort(sorted)
	k = sorted[min(n, len(sorted))-1]
	for i, p := range rest {
		if dists[i] <= k && len(selected) < n {
			selected = append(selected, p)
		}
	}
	return selected, k, len(rest)
}
