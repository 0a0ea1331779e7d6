// Package concession is how the built-in bargainers give ground: from an opening demand to
// their target over the proposals they may make, along a curve. The conceding buyer/seller
// agent and the fair-split ultimatum agent share it.
package concession

import (
	"fmt"
	"math"
)

// Curve names how concessions are spread over the proposals.
type Curve string

// The curves.
const (
	// Linear gives the same ground at every proposal.
	Linear Curve = "linear"
	// Boulware stays firm for most of the game and gives ground mostly at the end.
	Boulware Curve = "boulware"
)

// boulwareExponent shapes the boulware curve: f(x) = x^3.
const boulwareExponent = 3

// Validate checks the curve is one of the known ones.
func (c Curve) Validate() error {
	if c != Linear && c != Boulware {
		return fmt.Errorf("curve must be %s or %s, got %q", Linear, Boulware, string(c))
	}
	return nil
}

// At is how far from the opening toward the target the k-th proposal (from 0) of n goes: 0
// for the first, 1 from the last on; 0 when there is only one.
func (c Curve) At(k, n int) float64 {
	if n <= 1 {
		return 0
	}
	x := min(1, float64(k)/float64(n-1))
	if c == Boulware {
		x = math.Pow(x, boulwareExponent)
	}
	return x
}
