package deliberation

// Score returns seat's score for d: the sum of its points for the chosen options.
func (s *Setup) Score(seat int, d Deal) int {
	total := 0
	for i, k := range d {
		total += s.Parties[seat].Points[i][k]
	}
	return total
}

// Scores returns every party's score for d, in seat order.
func (s *Setup) Scores(d Deal) []int {
	out := make([]int, s.N())
	for seat := range out {
		out[seat] = s.Score(seat, d)
	}
	return out
}

// Vote is the computed vote on one deal.
type Vote struct {
	// Scores are the parties' deal scores (without the bonus).
	Scores []int
	// Yes[seat] says whether the party says yes.
	Yes []bool
	// YesCount counts the yes-votes.
	YesCount int
	// ByBonus is true when p1 says yes only because of its unanimity bonus.
	ByBonus bool
	// Passed: at least Quorum yes-votes, every veto holder among them.
	Passed bool
	// Unanimous: every party says yes.
	Unanimous bool
}

// Vote computes every party's vote on d, as the rules do: a party says yes when its score
// reaches its threshold; p1 also says yes when every other party does and its score plus the
// bonus reaches its threshold. The deal passes with at least Quorum yes-votes including every
// veto holder's. The same test answers "would this deal pass" for any deal at any turn.
func (s *Setup) Vote(d Deal) Vote {
	v := Vote{Scores: s.Scores(d), Yes: make([]bool, s.N())}
	others := true
	for seat, x := range v.Scores {
		v.Yes[seat] = x >= s.Parties[seat].Threshold
		if seat != 0 && !v.Yes[seat] {
			others = false
		}
	}
	if !v.Yes[0] && others && v.Scores[0]+s.Bonus >= s.Parties[0].Threshold {
		v.Yes[0], v.ByBonus = true, true
	}
	for _, y := range v.Yes {
		if y {
			v.YesCount++
		}
	}
	v.Unanimous = v.YesCount == s.N()
	v.Passed = v.YesCount >= s.Quorum
	for _, seat := range s.Vetoes {
		v.Passed = v.Passed && v.Yes[seat]
	}
	return v
}

// Passes reports whether d would pass.
func (s *Setup) Passes(d Deal) bool { return s.Vote(d).Passed }

// Payoffs returns what every party gets if p1 tables d as its final deal: its deal score when
// d passes (p1 plus the bonus when every party says yes), else its threshold.
func (v Vote) Payoffs(s *Setup) []int {
	out := make([]int, s.N())
	for seat := range out {
		switch {
		case !v.Passed:
			out[seat] = s.Parties[seat].Threshold
		default:
			out[seat] = v.Scores[seat]
		}
	}
	if v.Passed && v.Unanimous {
		out[0] += s.Bonus
	}
	return out
}

// Thresholds returns every party's threshold, in seat order: the payoffs when no deal passes.
func (s *Setup) Thresholds() []int {
	out := make([]int, s.N())
	for seat, p := range s.Parties {
		out[seat] = p.Threshold
	}
	return out
}

// BonusRule says when the unanimity bonus enters a deal's score vector in the deal-space
// analysis.
type BonusRule int

const (
	// BonusGE: when every party says yes (the rules' test, >=).
	BonusGE BonusRule = iota
	// BonusGT: when every party other than p1 is strictly above its threshold (the reproduction
	// paper's table).
	BonusGT
)

// ScoreVector returns d's score vector for the deal-space analysis: the parties' scores, p1
// plus the bonus when the rule grants it, when d passes; every party's threshold when it does
// not.
func (s *Setup) ScoreVector(d Deal, rule BonusRule) []int {
	v := s.Vote(d)
	if !v.Passed {
		return s.Thresholds()
	}
	out := v.Scores
	bonus := v.Unanimous
	if rule == BonusGT {
		bonus = true
		for seat := 1; seat < s.N(); seat++ {
			bonus = bonus && v.Scores[seat] > s.Parties[seat].Threshold
		}
	}
	if bonus {
		out[0] += s.Bonus
	}
	return out
}

// FinalScores returns the parties' scores for d as the Gini metric uses them: deal scores,
// p1 plus the bonus when every party says yes, whether or not d passes.
func (s *Setup) FinalScores(d Deal) []int {
	v := s.Vote(d)
	out := v.Scores
	if v.Unanimous {
		out[0] += s.Bonus
	}
	return out
}

// Gini returns the Gini coefficient of xs, sum_i sum_j |x_i - x_j| / (2 n^2 mean): 0 when all
// are equal. It is 0 for an empty list or a zero mean.
func Gini(xs []int) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	sum := 0
	for _, x := range xs {
		sum += x
	}
	if sum == 0 {
		return 0
	}
	diff := 0
	for _, x := range xs {
		for _, y := range xs {
			if x > y {
				diff += x - y
			} else {
				diff += y - x
			}
		}
	}
	mean := float64(sum) / float64(n)
	return float64(diff) / (2 * float64(n) * float64(n) * mean)
}

// Mean returns the mean of xs (0 for none).
func Mean(xs []int) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0
	for _, x := range xs {
		sum += x
	}
	return float64(sum) / float64(len(xs))
}
