// Package ratings rates agents from match results with the Bradley–Terry model, fitted by
// Hunter's MM algorithm, with confidence intervals from a bootstrap over matches.
//
// Model: agent i has a strength p_i > 0 and beats agent j with probability p_i / (p_i + p_j).
// Agents are assumed not to change between matches (built-in bots, fixed model versions), the
// case where Bradley–Terry suits better than a sequential rating such as Elo.
//
// What counts as a result:
//
//   - A two-player match is one comparison: the seat with the larger payoff wins; equal payoffs
//     (a tie) count half a win to each side.
//   - A match of more than two players counts as one comparison for each pair of its seats, by
//     payoff order (the larger payoff wins, equal payoffs tie). A match of n players is thus
//     n(n-1)/2 comparisons, which are not independent; the bootstrap resamples whole matches,
//     so the intervals account for that.
//   - Pairs of seats held by the same agent (self-play) are not comparisons.
//   - Void matches are left out (the caller passes only matches that count; see Match.Void).
//
// Fit: the MM iteration p_i <- W_i / sum_j n_ij / (p_i + p_j) (D. R. Hunter, "MM algorithms
// for generalized Bradley–Terry models", Ann. Statist. 32, 2004), where W_i is i's wins (ties
// as halves) and n_ij the comparisons of i and j. The maximum-likelihood estimate exists only
// when every agent has both won and lost against a path of others; with Options.Prior > 0 each
// agent also plays that many virtual games against a reference agent of strength 1, tying
// them (half won, half lost), which keeps every estimate finite and anchors the scale (the
// reference is rated 1500). With Prior 0 the fit is the plain MLE, scaled so that the
// geometric mean of the strengths is 1; two agents with w and l wins then have the
// closed-form ratio p_1/p_2 = w/l.
//
// Ratings are reported on the Elo scale: 1500 + 400 log10(p_i), so a 400-point gap means
// 10-to-1 odds. Intervals are percentile intervals of the ratings refitted on bootstrap samples
// of the matches (drawn with replacement, from a seeded generator, so the same matches and
// seed give the same intervals).
package ratings

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults of Options.
const (
	DefaultPrior     = 1.0
	DefaultBootstrap = 200
	DefaultLevel     = 0.95
	// maxIterations and tolerance bound the MM fit: it stops when no log-strength moves by more
	// than tolerance.
	maxIterations = 10000
	tolerance     = 1e-10
	// BaseRating is the rating of strength 1.
	BaseRating = 1500.0
)

// ErrNoResults is returned when no match gives a comparison of two different agents.
var ErrNoResults = errors.New("ratings: no comparisons between different agents")

// Match is one counted match: the agent in each seat and the seat's payoff.
type Match struct {
	// Agents by seat.
	Agents []string
	// Payoffs by seat, same length as Agents.
	Payoffs []float64
}

// Options tune Rate.
type Options struct {
	// Prior is the number of virtual tied games each agent plays against a reference agent of
	// strength 1 (rating 1500). 0 fits the plain maximum-likelihood estimate, which diverges
	// for an agent that never won or never lost.
	Prior float64
	// Bootstrap is the number of bootstrap samples for the intervals; 0 computes none.
	Bootstrap int
	// Level is the confidence level of the intervals, e.g. 0.95.
	Level float64
	// Seed seeds the bootstrap's generator.
	Seed uint64
}

// DefaultOptions are the options of leaderboards: prior 1, 200 bootstrap samples, 95%
// intervals, seed 1.
func DefaultOptions() Options {
	return Options{Prior: DefaultPrior, Bootstrap: DefaultBootstrap, Level: DefaultLevel, Seed: 1}
}

// Rating is one agent's rating.
type Rating struct {
	// Agent as named in the matches.
	Agent string
	// Strength is the Bradley–Terry strength p_i.
	Strength float64
	// Rating on the Elo scale, 1500 + 400 log10(Strength).
	Rating float64
	// Low and High bound the bootstrap interval of Rating (equal to Rating without bootstrap).
	Low, High float64
	// Matches the agent played that counted; Wins, Losses and Ties count its comparisons
	// (pairwise, so a 3-player match gives each of its agents two).
	Matches            int
	Wins, Losses, Ties int
	// Score is the agent's share of its comparisons won, ties counted half.
	Score float64
}

// Rate fits the ratings of the agents in matches, highest first (ties in rating by name).
func Rate(matches []Match, opts Options) ([]Rating, error) {
	if opts.Prior < 0 || math.IsNaN(opts.Prior) {
		return nil, fmt.Errorf("ratings: prior must be 0 or more, got %v", opts.Prior)
	}
	if opts.Bootstrap < 0 {
		return nil, fmt.Errorf("ratings: bootstrap samples must be 0 or more, got %d", opts.Bootstrap)
	}
	if opts.Bootstrap > 0 && !(opts.Level > 0 && opts.Level < 1) {
		return nil, fmt.Errorf("ratings: level must be between 0 and 1, got %v", opts.Level)
	}
	idx := make(map[string]int)
	var names []string
	comps := make([][]comparison, len(matches))
	for k, m := range matches {
		if len(m.Payoffs) != len(m.Agents) {
			return nil, fmt.Errorf("ratings: match %d has %d agents and %d payoffs", k, len(m.Agents), len(m.Payoffs))
		}
		for _, a := range m.Agents {
			if _, ok := idx[a]; !ok {
				idx[a] = len(names)
				names = append(names, a)
			}
		}
		comps[k] = compare(m, idx)
	}
	full := tally(len(names), comps, nil)
	if full.total == 0 {
		return nil, ErrNoResults
	}
	p, err := fit(full, opts.Prior)
	if err != nil {
		return nil, err
	}
	out := make([]Rating, len(names))
	for i, name := range names {
		r := elo(p[i])
		out[i] = Rating{Agent: name, Strength: p[i], Rating: r, Low: r, High: r,
			Wins: full.wins[i], Losses: full.losses[i], Ties: full.ties[i], Matches: full.matches[i]}
		if n := full.wins[i] + full.losses[i] + full.ties[i]; n > 0 {
			out[i].Score = (float64(full.wins[i]) + float64(full.ties[i])/2) / float64(n)
		}
	}
	if opts.Bootstrap > 0 {
		bootstrap(out, comps, opts)
	}
	slices.SortFunc(out, func(a, b Rating) int {
		if c := cmp.Compare(b.Rating, a.Rating); c != 0 {
			return c
		}
		return cmp.Compare(a.Agent, b.Agent)
	})
	return out, nil
}

// comparison is one pairwise result: a beat b, or they tied.
type comparison struct {
	a, b int
	tie  bool
}

// compare turns a match into its pairwise comparisons, winner first.
func compare(m Match, idx map[string]int) []comparison {
	var out []comparison
	for i := range m.Agents {
		for j := i + 1; j < len(m.Agents); j++ {
			a, b := idx[m.Agents[i]], idx[m.Agents[j]]
			if a == b {
				continue
			}
			switch {
			case m.Payoffs[i] > m.Payoffs[j]:
				out = append(out, comparison{a: a, b: b})
			case m.Payoffs[i] < m.Payoffs[j]:
				out = append(out, comparison{a: b, b: a})
			default:
				out = append(out, comparison{a: a, b: b, tie: true})
			}
		}
	}
	return out
}

// counts are the sufficient statistics of a fit.
type counts struct {
	n                           int
	w                           []float64   // wins, ties as halves
	games                       [][]float64 // comparisons of each pair
	wins, losses, ties, matches []int
	total                       int
}

// tally counts the comparisons of the matches picked (nil: all, once each; else pick[k] times
// match k).
func tally(n int, comps [][]comparison, pick []int) counts {
	c := counts{n: n, w: make([]float64, n), games: make([][]float64, n),
		wins: make([]int, n), losses: make([]int, n), ties: make([]int, n), matches: make([]int, n)}
	for i := range c.games {
		c.games[i] = make([]float64, n)
	}
	for k, cs := range comps {
		times := 1
		if pick != nil {
			times = pick[k]
		}
		if times == 0 {
			continue
		}
		played := make(map[int]bool)
		for _, x := range cs {
			f := float64(times)
			c.games[x.a][x.b] += f
			c.games[x.b][x.a] += f
			c.total += times
			played[x.a], played[x.b] = true, true
			if x.tie {
				c.w[x.a] += f / 2
				c.w[x.b] += f / 2
				c.ties[x.a] += times
				c.ties[x.b] += times
			} else {
				c.w[x.a] += f
				c.wins[x.a] += times
				c.losses[x.b] += times
			}
		}
		for i := range played {
			c.matches[i] += times
		}
	}
	return c
}

// fit runs the MM iteration to convergence and returns the strengths.
func fit(c counts, prior float64) ([]float64, error) {
	p := make([]float64, c.n)
	for i := range p {
		p[i] = 1
	}
	next := make([]float64, c.n)
	for range maxIterations {
		moved := 0.0
		for i := range c.n {
			w := c.w[i] + prior/2
			denom := 0.0
			if prior > 0 {
				denom += prior / (p[i] + 1)
			}
			for j := range c.n {
				if g := c.games[i][j]; g > 0 {
					denom += g / (p[i] + p[j])
				}
			}
			switch {
			case denom == 0: // an agent with no comparisons: leave it at 1
				next[i] = p[i]
			case w == 0: // never won, no prior: the MLE is at 0
				next[i] = p[i] / 2
			default:
				next[i] = w / denom
			}
		}
		if prior == 0 {
			normalize(next)
		}
		for i := range p {
			if d := math.Abs(math.Log(next[i]) - math.Log(p[i])); d > moved {
				moved = d
			}
			p[i] = next[i]
		}
		if moved < tolerance {
			return p, nil
		}
		for i := range p {
			if p[i] < 1e-300 || math.IsInf(p[i], 0) || math.IsNaN(p[i]) {
				return nil, fmt.Errorf("ratings: the estimate diverges (an agent never won or never lost); use a prior")
			}
		}
	}
	if prior > 0 {
		return p, nil // converging slowly but finite
	}
	return nil, fmt.Errorf("ratings: no convergence in %d iterations (an agent never won or never lost?); use a prior", maxIterations)
}

// normalize scales p so that its geometric mean is 1.
func normalize(p []float64) {
	s := 0.0
	for _, v := range p {
		s += math.Log(v)
	}
	g := math.Exp(s / float64(len(p)))
	for i := range p {
		p[i] /= g
	}
}

func elo(p float64) float64 { return BaseRating + 400*math.Log10(p) }

// bootstrap sets each rating's interval from fits on samples of the matches.
func bootstrap(out []Rating, comps [][]comparison, opts Options) {
	rng := rand.New(rand.NewPCG(opts.Seed, 0x626f6f74)) // "boot"
	n := len(out)
	samples := make([][]float64, n)
	pick := make([]int, len(comps))
	for range opts.Bootstrap {
		clear(pick)
		for range comps {
			pick[rng.IntN(len(comps))]++
		}
		c := tally(n, comps, pick)
		if c.total == 0 {
			continue
		}
		p, err := fit(c, opts.Prior)
		if err != nil {
			continue // a sample where the MLE does not exist tells nothing
		}
		for i := range n {
			if c.matches[i] > 0 {
				samples[i] = append(samples[i], elo(p[i]))
			}
		}
	}
	alpha := (1 - opts.Level) / 2
	for i := range out {
		s := samples[i]
		if len(s) == 0 {
			continue
		}
		slices.Sort(s)
		out[i].Low = quantile(s, alpha)
		out[i].High = quantile(s, 1-alpha)
	}
}

// quantile is the q-quantile of sorted s, interpolating linearly between order statistics.
func quantile(s []float64, q float64) float64 {
	if len(s) == 1 {
		return s[0]
	}
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}
