// Package dealspace analyses the deal space of a deliberation game without agents (the "deal
// space" section of specs/deliberation.md): it enumerates every complete deal, applies the vote
// rule, and reports the acceptable and unanimous deals, the Pareto fronts, and the spread of the
// parties' mean score and of inequality (Gini) over the acceptable deals.
package dealspace

import (
	"fmt"
	"math"
	"slices"

	"github.com/parley-arena/parley/referee/games/deliberation"
)

// MaxDeals bounds the deals an analysis enumerates (the Pareto front is found in time that
// grows with the deals times the front's size).
const MaxDeals = 2_000_000

// Point is one deal with its score vector.
type Point struct {
	Deal deliberation.Deal
	// Scores is the deal's vector: the parties' scores (p1 with the bonus when the rule grants
	// it) for an acceptable deal, their thresholds for one that fails; raw scores on the raw
	// front.
	Scores []int
	// Passed and Unanimous describe the deal's vote.
	Passed, Unanimous bool
	// Mean and Gini are the mean and the Gini coefficient of Scores.
	Mean, Gini float64
}

// Stats are the minimum, mean and maximum of a quantity.
type Stats struct {
	Min, Mean, Max float64
}

// Analysis is the deal space of one game under one bonus rule.
type Analysis struct {
	Setup *deliberation.Setup
	Rule  deliberation.BonusRule
	// Deals counts the complete deals; Acceptable those that pass; Unanimous those every
	// party says yes to.
	Deals, Acceptable, Unanimous int
	// Front is the Pareto front among the acceptable deals (score vectors with the threshold
	// rule and the bonus), in lexical deal order.
	Front []Point
	// FrontAll is the size of the Pareto front over all deals with the same vectors (a deal that
	// fails scores every party at its threshold); FrontAllAcceptable says whether that front
	// holds acceptable deals only and equals Front.
	FrontAll           int
	FrontAllAcceptable bool
	// RawFront is the Pareto front over all deals on raw scores (no threshold rule, no bonus).
	RawFront []Point
	// MeanScore and Gini spread over the acceptable deals: the mean party score, and the Gini
	// coefficient, of each deal's score vector. Zero when no deal is acceptable.
	MeanScore, Gini Stats
}

// Analyze enumerates s's deals under rule.
func Analyze(s *deliberation.Setup, rule deliberation.BonusRule) (*Analysis, error) {
	if n := s.DealCount(); n > MaxDeals {
		return nil, fmt.Errorf("dealspace: the game has %d complete deals; at most %d can be analysed", n, MaxDeals)
	}
	a := &Analysis{Setup: s, Rule: rule, MeanScore: Stats{Min: math.Inf(1), Max: math.Inf(-1)}, Gini: Stats{Min: math.Inf(1), Max: math.Inf(-1)}}
	var all, raw []Point
	s.Deals(func(d deliberation.Deal) bool {
		v := s.Vote(d)
		p := Point{Deal: d.Clone(), Scores: s.ScoreVector(d, rule), Passed: v.Passed, Unanimous: v.Unanimous}
		p.Mean, p.Gini = deliberation.Mean(p.Scores), deliberation.Gini(p.Scores)
		all = append(all, p)
		r := Point{Deal: p.Deal, Scores: v.Scores, Passed: v.Passed, Unanimous: v.Unanimous}
		r.Mean, r.Gini = deliberation.Mean(r.Scores), deliberation.Gini(r.Scores)
		raw = append(raw, r)
		a.Deals++
		if v.Passed {
			a.Acceptable++
			if v.Unanimous {
				a.Unanimous++
			}
			a.MeanScore.add(p.Mean)
			a.Gini.add(p.Gini)
		}
		return true
	})
	if a.Acceptable > 0 {
		a.MeanScore.Mean /= float64(a.Acceptable)
		a.Gini.Mean /= float64(a.Acceptable)
	} else {
		a.MeanScore, a.Gini = Stats{}, Stats{}
	}
	var acceptable []Point
	for _, p := range all {
		if p.Passed {
			acceptable = append(acceptable, p)
		}
	}
	a.Front = pick(acceptable, Front(vectors(acceptable)))
	frontAll := pick(all, Front(vectors(all)))
	a.FrontAll = len(frontAll)
	a.FrontAllAcceptable = len(frontAll) == len(a.Front)
	for i := range frontAll {
		a.FrontAllAcceptable = a.FrontAllAcceptable && frontAll[i].Passed && frontAll[i].Deal.Equal(a.Front[i].Deal)
	}
	a.RawFront = pick(raw, Front(vectors(raw)))
	return a, nil
}

func (st *Stats) add(x float64) {
	st.Min = min(st.Min, x)
	st.Max = max(st.Max, x)
	st.Mean += x
}

func vectors(ps []Point) [][]int {
	out := make([][]int, len(ps))
	for i, p := range ps {
		out[i] = p.Scores
	}
	return out
}

// pick returns ps at idx, in index order.
func pick(ps []Point, idx []int) []Point {
	out := make([]Point, len(idx))
	for i, j := range idx {
		out[i] = ps[j]
	}
	return out
}

// Dominates reports whether a dominates b: at least as good for every party and strictly better
// for one.
func Dominates(a, b []int) bool {
	better := false
	for i := range a {
		switch {
		case a[i] < b[i]:
			return false
		case a[i] > b[i]:
			better = true
		}
	}
	return better
}

// Front returns the indexes, ascending, of the vectors no other vector dominates. Vectors are
// taken in order of decreasing sum, since a vector that dominates another has a larger sum; a
// vector is on the front when no front member found so far dominates it.
func Front(vs [][]int) []int {
	order := make([]int, len(vs))
	sums := make([]int, len(vs))
	for i, v := range vs {
		order[i] = i
		for _, x := range v {
			sums[i] += x
		}
	}
	slices.SortStableFunc(order, func(i, j int) int { return sums[j] - sums[i] })
	var front []int
	for _, i := range order {
		dominated := false
		for _, j := range front {
			if Dominates(vs[j], vs[i]) {
				dominated = true
				break
			}
		}
		if !dominated {
			front = append(front, i)
		}
	}
	slices.Sort(front)
	return front
}

// OnFront reports whether d is on the Pareto front among acceptable deals (a deal that fails
// never is).
func (a *Analysis) OnFront(d deliberation.Deal) bool {
	return slices.ContainsFunc(a.Front, func(p Point) bool { return p.Deal.Equal(d) })
}
