package coalition

import (
	"math"
)

// Nearest returns the point of the convex hull of points nearest to x (Euclidean), and its
// distance from x. points must be non-empty and all of x's dimension.
//
// It is Wolfe's min-norm-point algorithm (P. Wolfe, "Finding the nearest point in a
// polytope", Math. Programming 11, 1976) applied to the points translated by -x: an active set
// of affinely independent points (a "corral") whose affine min-norm point is kept inside their
// hull. It ends after finitely many steps with the exact answer up to floating-point rounding;
// tol scales with the points' magnitude.
func Nearest(points [][]float64, x []float64) ([]float64, float64) {
	n := len(x)
	p := make([][]float64, len(points))
	scale := 1.0
	for k, pt := range points {
		p[k] = make([]float64, n)
		for i := range n {
			p[k][i] = pt[i] - x[i]
			scale = math.Max(scale, math.Abs(p[k][i]))
		}
	}
	tol := 1e-12 * scale * scale

	// Start from the point nearest to x.
	first := 0
	for k := range p {
		if dot(p[k], p[k]) < dot(p[first], p[first]) {
			first = k
		}
	}
	set := []int{first}
	lambda := []float64{1}
	w := append([]float64(nil), p[first]...)

	for iter := 0; iter < 100*len(p)+100; iter++ {
		// Major cycle: the point most in the direction of -w.
		j, best := -1, dot(w, w)-tol
		for k := range p {
			if d := dot(w, p[k]); d < best && !contains(set, k) {
				j, best = k, d
			}
		}
		if j < 0 {
			break // w is the min-norm point of the hull
		}
		set = append(set, j)
		lambda = append(lambda, 0)
		// Minor cycles: move to the affine min-norm point of the set, dropping points until it
		// lies inside their hull.
		for {
			alpha, ok := affineMinNorm(p, set)
			if !ok {
				// Affinely dependent set (rounding): drop the newest point and stop here.
				set, lambda = set[:len(set)-1], lambda[:len(lambda)-1]
				break
			}
			inside := true
			for _, a := range alpha {
				if a <= 1e-14 {
					inside = false
					break
				}
			}
			if inside {
				lambda = alpha
				break
			}
			theta := 1.0
			for i, a := range alpha {
				if a <= 1e-14 && lambda[i]-a > 0 {
					theta = math.Min(theta, lambda[i]/(lambda[i]-a))
				}
			}
			keepSet, keepLambda := set[:0], lambda[:0]
			for i := range set {
				l := (1-theta)*lambda[i] + theta*alpha[i]
				if l > 1e-14 {
					keepSet, keepLambda = append(keepSet, set[i]), append(keepLambda, l)
				}
			}
			set, lambda = keepSet, keepLambda
			if len(set) == 0 { // cannot happen with theta as chosen; guard against rounding
				set, lambda = []int{j}, []float64{1}
				break
			}
		}
		next := make([]float64, n)
		for i, k := range set {
			for d := range n {
				next[d] += lambda[i] * p[k][d]
			}
		}
		if dot(next, next) >= dot(w, w)-tol {
			w = next
			break // no progress: rounding has the last word
		}
		w = next
	}
	y := make([]float64, n)
	for i := range n {
		y[i] = w[i] + x[i]
	}
	return y, math.Sqrt(dot(w, w))
}

// affineMinNorm returns the weights alpha (summing to 1) of the point of least norm in the
// affine hull of the points p[set], by solving [G 1; 1' 0][alpha; mu] = [0; 1] with G the Gram
// matrix. ok is false when the system is singular.
func affineMinNorm(p [][]float64, set []int) (alpha []float64, ok bool) {
	m := len(set)
	a := make([][]float64, m+1)
	for i := range m + 1 {
		a[i] = make([]float64, m+2)
	}
	for i := range m {
		for j := range m {
			a[i][j] = dot(p[set[i]], p[set[j]])
		}
		a[i][m], a[m][i] = 1, 1
	}
	a[m][m+1] = 1
	sol, ok := solve(a)
	if !ok {
		return nil, false
	}
	return sol[:m], true
}

// solve solves the linear system in the augmented matrix a (k rows, k+1 columns) by Gaussian
// elimination with partial pivoting; ok is false when it is singular.
func solve(a [][]float64) ([]float64, bool) {
	k := len(a)
	norm := 0.0
	for _, row := range a {
		for _, v := range row[:k] {
			norm = math.Max(norm, math.Abs(v))
		}
	}
	for col := range k {
		piv := col
		for r := col + 1; r < k; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) <= 1e-12*norm {
			return nil, false
		}
		a[col], a[piv] = a[piv], a[col]
		for r := range k {
			if r == col {
				continue
			}
			f := a[r][col] / a[col][col]
			for c := col; c <= k; c++ {
				a[r][c] -= f * a[col][c]
			}
		}
	}
	out := make([]float64, k)
	for i := range k {
		out[i] = a[i][k] / a[i][i]
	}
	return out, true
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func contains(s []int, k int) bool {
	for _, v := range s {
		if v == k {
			return true
		}
	}
	return false
}
