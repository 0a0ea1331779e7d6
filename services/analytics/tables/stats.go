package tables

import (
	"math"
	"sort"
)

// Mean is a running mean. The zero value is an empty mean; rates are means of 0/1 values.
type Mean struct {
	Sum float64
	N   int
}

// Add adds one observation.
func (m *Mean) Add(x float64) { m.Sum += x; m.N++ }

// Value returns the mean, and false when there are no observations.
func (m Mean) Value() (float64, bool) {
	if m.N == 0 {
		return 0, false
	}
	return m.Sum / float64(m.N), true
}

// Correlation is a correlation coefficient over N pairs. R is NaN when it is undefined (fewer
// than two pairs, or a constant variable).
type Correlation struct {
	R float64
	N int
}

// Defined reports whether R is a number.
func (c Correlation) Defined() bool { return !math.IsNaN(c.R) }

// Pearson returns the Pearson correlation of x and y (same length). It is NaN with fewer than
// two pairs or when either variable is constant.
func Pearson(x, y []float64) float64 {
	n := len(x)
	if n != len(y) || n < 2 {
		return math.NaN()
	}
	var mx, my float64
	for i := range x {
		mx += x[i]
		my += y[i]
	}
	mx /= float64(n)
	my /= float64(n)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// Ranks returns the rank of each value of x, 1 for the smallest; tied values share the mean
// of the ranks they span (so 10, 20, 20, 30 rank 1, 2.5, 2.5, 4).
func Ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	ranks := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		avg := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			ranks[idx[k]] = avg
		}
		i = j + 1
	}
	return ranks
}

// Spearman returns Spearman's rank correlation of x and y: the Pearson correlation of their
// ranks, ties given average ranks. NaN as for Pearson.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) {
		return math.NaN()
	}
	return Pearson(Ranks(x), Ranks(y))
}

// BinomialTail returns P(X >= k) for X ~ Binomial(n, p): the p-value of the one-sided test of
// H0 "the probability is p" against "it is larger", having seen k successes in n trials.
func BinomialTail(k, n int, p float64) float64 {
	switch {
	case k <= 0:
		return 1
	case k > n:
		return 0
	case p <= 0:
		return 0
	case p >= 1:
		return 1
	}
	lgN, _ := math.Lgamma(float64(n + 1))
	var sum float64
	for i := k; i <= n; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgNI, _ := math.Lgamma(float64(n - i + 1))
		sum += math.Exp(lgN - lgI - lgNI + float64(i)*math.Log(p) + float64(n-i)*math.Log1p(-p))
	}
	return math.Min(1, sum)
}
