package ratings_test

import (
	"errors"
	"math"
	"testing"

	"github.com/parley-arena/parley/services/analytics/ratings"
)

// games returns n two-player matches in which a beats b (payoffs 1 and 0), or ties when tie.
func games(n int, a, b string, tie bool) []ratings.Match {
	out := make([]ratings.Match, n)
	for i := range out {
		pay := []float64{1, 0}
		if tie {
			pay = []float64{5, 5}
		}
		// Alternate seats so that seat order plays no part.
		if i%2 == 1 {
			out[i] = ratings.Match{Agents: []string{b, a}, Payoffs: []float64{pay[1], pay[0]}}
		} else {
			out[i] = ratings.Match{Agents: []string{a, b}, Payoffs: pay}
		}
	}
	return out
}

func byAgent(rs []ratings.Rating) map[string]ratings.Rating {
	m := make(map[string]ratings.Rating)
	for _, r := range rs {
		m[r.Agent] = r
	}
	return m
}

func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-6 {
		t.Errorf("%s = %.9f, want %.9f", what, got, want)
	}
}

func TestTwoAgentsClosedForm(t *testing.T) {
	// A beats B 3 times, B beats A once: the MLE has p_A / p_B = 3, and with the geometric mean
	// at 1, p_A = sqrt 3: ratings 1500 +- 200 log10 3.
	ms := append(games(3, "A", "B", false), games(1, "B", "A", false)...)
	rs, err := ratings.Rate(ms, ratings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := byAgent(rs)
	near(t, "p_A/p_B", r["A"].Strength/r["B"].Strength, 3)
	near(t, "rating A", r["A"].Rating, 1500+200*math.Log10(3))
	near(t, "rating B", r["B"].Rating, 1500-200*math.Log10(3))
	if rs[0].Agent != "A" || r["A"].Wins != 3 || r["A"].Losses != 1 || r["A"].Matches != 4 || r["A"].Score != 0.75 {
		t.Errorf("ratings %+v", rs)
	}

	// Ties count half: 2 wins, 1 tie, 1 loss is 2.5 to 1.5.
	ms = append(append(games(2, "A", "B", false), games(1, "A", "B", true)...), games(1, "B", "A", false)...)
	rs, err = ratings.Rate(ms, ratings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r = byAgent(rs)
	near(t, "p_A/p_B with a tie", r["A"].Strength/r["B"].Strength, 5.0/3)
	if r["A"].Ties != 1 || r["B"].Ties != 1 {
		t.Errorf("ties: %+v", rs)
	}
}

func TestThreeAgentsTransitive(t *testing.T) {
	// Counts that strengths (4, 2, 1) fit exactly: A-B 2:1 (4/6 = 2/3), B-C 2:1 (2/3), A-C 4:1
	// (4/5). The likelihood equations W_i = sum_j n_ij p_i/(p_i+p_j) hold: A 6 = 3(2/3) + 5(4/5),
	// B 3 = 3(1/3) + 3(2/3), C 2 = 3(1/3) + 5(1/5). Geometric mean 2: (2, 1, 1/2).
	var ms []ratings.Match
	ms = append(ms, games(2, "A", "B", false)...)
	ms = append(ms, games(1, "B", "A", false)...)
	ms = append(ms, games(2, "B", "C", false)...)
	ms = append(ms, games(1, "C", "B", false)...)
	ms = append(ms, games(4, "A", "C", false)...)
	ms = append(ms, games(1, "C", "A", false)...)
	rs, err := ratings.Rate(ms, ratings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := byAgent(rs)
	near(t, "p_A", r["A"].Strength, 2)
	near(t, "p_B", r["B"].Strength, 1)
	near(t, "p_C", r["C"].Strength, 0.5)
	near(t, "rating A", r["A"].Rating, 1500+400*math.Log10(2))
	if rs[0].Agent != "A" || rs[1].Agent != "B" || rs[2].Agent != "C" {
		t.Errorf("order: %+v", rs)
	}
}

func TestMultiPlayerIsPairwise(t *testing.T) {
	// A three-player match with payoffs A > B > C is the comparisons A>B, A>C, B>C; B and C tie
	// in the second.
	multi := []ratings.Match{
		{Agents: []string{"A", "B", "C"}, Payoffs: []float64{500, 250, 0}},
		{Agents: []string{"C", "A", "B"}, Payoffs: []float64{300, 0, 300}},
		{Agents: []string{"B", "C", "A"}, Payoffs: []float64{100, 0, 900}},
	}
	pairs := []ratings.Match{
		{Agents: []string{"A", "B"}, Payoffs: []float64{1, 0}},
		{Agents: []string{"A", "C"}, Payoffs: []float64{1, 0}},
		{Agents: []string{"B", "C"}, Payoffs: []float64{1, 0}},
		{Agents: []string{"C", "A"}, Payoffs: []float64{1, 0}},
		{Agents: []string{"B", "A"}, Payoffs: []float64{1, 0}},
		{Agents: []string{"C", "B"}, Payoffs: []float64{3, 3}},
		{Agents: []string{"B", "C"}, Payoffs: []float64{1, 0}},
		{Agents: []string{"A", "B"}, Payoffs: []float64{1, 0}},
		{Agents: []string{"A", "C"}, Payoffs: []float64{1, 0}},
	}
	a, err := ratings.Rate(multi, ratings.Options{Prior: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := ratings.Rate(pairs, ratings.Options{Prior: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i].Agent != b[i].Agent || math.Abs(a[i].Rating-b[i].Rating) > 1e-9 || a[i].Wins != b[i].Wins || a[i].Ties != b[i].Ties {
			t.Errorf("multi-player %+v, pairwise %+v", a[i], b[i])
		}
	}
	if byAgent(a)["A"].Matches != 3 || byAgent(b)["A"].Matches != 6 {
		t.Errorf("matches counted: %+v / %+v", a, b)
	}
}

func TestPrior(t *testing.T) {
	// One win and no loss has no MLE; with one virtual tie against the reference (strength 1)
	// each, the problem maps to itself under swapping A, B and p -> 1/p, so p_B = 1/p_A, and
	// A's likelihood equation 1 + 1/2 = p_A/(p_A + p_B) + p_A/(p_A + 1) holds.
	ms := games(1, "A", "B", false)
	if _, err := ratings.Rate(ms, ratings.Options{}); err == nil {
		t.Error("an undefeated agent without a prior was rated")
	}
	rs, err := ratings.Rate(ms, ratings.Options{Prior: 1})
	if err != nil {
		t.Fatal(err)
	}
	r := byAgent(rs)
	pa, pb := r["A"].Strength, r["B"].Strength
	near(t, "p_A p_B", pa*pb, 1)
	near(t, "A's equation", pa/(pa+pb)+pa/(pa+1), 1.5)
	near(t, "ratings symmetric about 1500", r["A"].Rating+r["B"].Rating, 3000)
}

func TestBootstrap(t *testing.T) {
	var ms []ratings.Match
	ms = append(ms, games(14, "A", "B", false)...)
	ms = append(ms, games(6, "B", "A", false)...)
	ms = append(ms, games(12, "B", "C", false)...)
	ms = append(ms, games(8, "C", "B", false)...)
	ms = append(ms, games(3, "C", "C", false)...) // self-play: no comparison
	opts := ratings.DefaultOptions()
	one, err := ratings.Rate(ms, opts)
	if err != nil {
		t.Fatal(err)
	}
	two, err := ratings.Rate(ms, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range one {
		if one[i] != two[i] {
			t.Errorf("same seed, different results: %+v vs %+v", one[i], two[i])
		}
		if !(one[i].Low < one[i].Rating && one[i].Rating < one[i].High) {
			t.Errorf("%s: rating %.1f outside its interval [%.1f, %.1f]", one[i].Agent, one[i].Rating, one[i].Low, one[i].High)
		}
	}
	if byAgent(one)["C"].Matches != 20 {
		t.Errorf("self-play counted: %+v", byAgent(one)["C"])
	}
	opts.Seed = 2
	three, err := ratings.Rate(ms, opts)
	if err != nil {
		t.Fatal(err)
	}
	if three[0].Low == one[0].Low && three[0].High == one[0].High {
		t.Error("another seed gave the same interval")
	}
}

func TestErrors(t *testing.T) {
	if _, err := ratings.Rate(games(2, "A", "A", false), ratings.DefaultOptions()); !errors.Is(err, ratings.ErrNoResults) {
		t.Errorf("self-play only: %v", err)
	}
	if _, err := ratings.Rate(nil, ratings.DefaultOptions()); !errors.Is(err, ratings.ErrNoResults) {
		t.Errorf("no matches: %v", err)
	}
	if _, err := ratings.Rate([]ratings.Match{{Agents: []string{"A", "B"}, Payoffs: []float64{1}}}, ratings.DefaultOptions()); err == nil {
		t.Error("a match with a missing payoff was accepted")
	}
	if _, err := ratings.Rate(games(2, "A", "B", false), ratings.Options{Prior: -1}); err == nil {
		t.Error("a negative prior was accepted")
	}
}
