package coalition

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bruteNearest is the distance from x to the hull of points by brute force: the least distance
// to the affine hull of any subset of at most dim+1 points whose nearest point lies inside it.
func bruteNearest(points [][]float64, x []float64) float64 {
	n := len(x)
	p := make([][]float64, len(points))
	for k := range points {
		p[k] = make([]float64, n)
		for i := range n {
			p[k][i] = points[k][i] - x[i]
		}
	}
	best := math.Inf(1)
	var rec func(start int, set []int)
	rec = func(start int, set []int) {
		if len(set) > 0 {
			if alpha, ok := affineMinNorm(p, set); ok {
				inside := true
				for _, a := range alpha {
					if a < -1e-12 {
						inside = false
					}
				}
				if inside {
					w := make([]float64, n)
					for i, k := range set {
						for d := range n {
							w[d] += alpha[i] * p[k][d]
						}
					}
					best = math.Min(best, math.Sqrt(dot(w, w)))
				}
			}
		}
		if len(set) == n+1 {
			return
		}
		for k := start; k < len(p); k++ {
			rec(k+1, append(set, k))
		}
	}
	rec(0, nil)
	return best
}

func TestNearestAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		dim := 2 + trial%3
		count := 1 + rng.IntN(9)
		points := make([][]float64, count)
		for k := range points {
			points[k] = make([]float64, dim)
			for i := range points[k] {
				points[k][i] = math.Round(rng.Float64()*200 - 100)
			}
		}
		x := make([]float64, dim)
		for i := range x {
			x[i] = math.Round(rng.Float64()*400 - 200)
		}
		y, d := Nearest(points, x)
		want := bruteNearest(points, x)
		if math.Abs(d-want) > 1e-6*math.Max(1, want) {
			t.Fatalf("trial %d: distance %v, brute force %v (points %v, x %v, nearest %v)", trial, d, want, points, x, y)
		}
		got := 0.0
		for i := range x {
			got += (y[i] - x[i]) * (y[i] - x[i])
		}
		if math.Abs(math.Sqrt(got)-d) > 1e-6*math.Max(1, d) {
			t.Fatalf("trial %d: nearest point %v is %v away, not %v", trial, y, math.Sqrt(got), d)
		}
	}
}
