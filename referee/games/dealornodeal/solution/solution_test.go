package solution_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// example is the corpus README's dialogue: 1 book, 2 hats, 2 balls; Alice values them 2, 3,
// 1 and Bob 8, 1, 0.
var example = solution.Game{Counts: []int{1, 2, 2}, Values: [2][]int{{2, 3, 1}, {8, 1, 0}}}

func TestAllocationsOrder(t *testing.T) {
	got := solution.Allocations([]int{1, 1, 2})
	want := []solution.Alloc{{0, 0, 0}, {0, 0, 1}, {0, 0, 2}, {0, 1, 0}, {0, 1, 1}, {0, 1, 2}, {1, 0, 0}, {1, 0, 1}, {1, 0, 2}, {1, 1, 0}, {1, 1, 1}, {1, 1, 2}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Allocations = %v", got)
	}
}

// TestExample works the README's set-up by hand. Alice's bundle is worth 2b + 3h + l (book,
// hat, ball counts), Bob's 8(1-b) + (2-h). EF for Alice: her part >= 5; for Bob: his >= 5,
// which needs the book (without it he has at most 2). So b = 0 for Alice is forced, and Alice
// needs 3h + l >= 5: (h, l) in {(1,2), (2,0), (2,1), (2,2)}, Bob then has 8 + 2 - h >= 5:
// always. Totals: (0,1,2): 5 + 9 = 14; (0,2,0): 6 + 8 = 14; (0,2,1): 7 + 8 = 15;
// (0,2,2): 8 + 8 = 16. Best is (0,2,2): Alice 8, Bob 8, the dialogue's own deal.
func TestExample(t *testing.T) {
	var ef []solution.Alloc
	for _, a := range solution.Allocations(example.Counts) {
		if example.EnvyFree(a) {
			ef = append(ef, a)
		}
	}
	want := []solution.Alloc{{0, 1, 2}, {0, 2, 0}, {0, 2, 1}, {0, 2, 2}}
	if !slices.EqualFunc(ef, want, slices.Equal) {
		t.Errorf("EF allocations %v, want %v", ef, want)
	}
	if best := example.Best(); len(best) != 1 || !slices.Equal(best[0], solution.Alloc{0, 2, 2}) {
		t.Errorf("Best = %v, want [0 2 2]", best)
	}
	if p := example.Payoffs(solution.Alloc{0, 2, 2}); p != [2]int{8, 8} {
		t.Errorf("payoffs %v", p)
	}
	// (0,2,2) is PO: Alice would need the book (worth 2 to her, 8 to Bob) to gain.
	if !example.ParetoOptimal(solution.Alloc{0, 2, 2}) {
		t.Error("(0,2,2) is Pareto-optimal")
	}
	// (0,1,2): Alice 5, Bob 9; (0,2,2) is not better for Bob (8 < 9), but (0,1,2) gives a hat
	// worth 3 to Alice and 1 to Bob... moving it gives (0,2,2): 8 and 8, not dominating. The
	// ball Alice has is worth 0 to Bob: giving Alice nothing more is PO too. (1,0,0) (Alice
	// takes only the book) gives 2 and 4 and is dominated by (0,2,2).
	if example.ParetoOptimal(solution.Alloc{1, 0, 0}) {
		t.Error("(1,0,0) is dominated by (0,2,2)")
	}
	if example.Distance() != 6+2+1 || example.Difficulty() != -9 {
		t.Errorf("distance %d", example.Distance())
	}
}

// TestVectors: vectors under which 1 book, 2 hats, 2 balls are worth 10: b + 2h + 2l = 10,
// b even: b in 0,2,..,10 with h + l = (10-b)/2: 6 + 5 + 4 + 3 + 2 + 1 = 21 vectors.
func TestVectors(t *testing.T) {
	vs := solution.Vectors(example.Counts, 10)
	if len(vs) != 21 || !slices.Equal(vs[0], []int{0, 0, 5}) || !slices.Equal(vs[20], []int{10, 0, 0}) {
		t.Errorf("%d vectors, first %v, last %v", len(vs), vs[0], vs[len(vs)-1])
	}
	for _, v := range vs {
		if solution.Score(example.Counts, v) != 10 {
			t.Errorf("%v is worth %d", v, solution.Score(example.Counts, v))
		}
	}
}

// randomGame draws a pool and two value vectors worth the same total.
func randomGame(rng *rand.Rand) solution.Game {
	for {
		counts := []int{1 + rng.IntN(4), 1 + rng.IntN(4), 1 + rng.IntN(3)}
		total := 6 + rng.IntN(8)
		vs := solution.Vectors(counts, total)
		if len(vs) == 0 {
			continue
		}
		return solution.Game{Counts: counts, Values: [2][]int{vs[rng.IntN(len(vs))], vs[rng.IntN(len(vs))]}}
	}
}

// TestBruteForce: on random set-ups, PO allocations have no dominating allocation (checked
// pair by pair here), EF is "my bundle is worth at least half the pool to me", and Best is
// EF, PO, of the largest EF total, in enumeration order.
func TestBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	n := 200
	if testing.Short() {
		n = 40
	}
	for range n {
		g := randomGame(rng)
		if err := g.Check(); err != nil {
			t.Fatal(err)
		}
		all := solution.Allocations(g.Counts)
		bestTotal := -1
		for _, a := range all {
			p := g.Payoffs(a)
			dominated := false
			for _, b := range all {
				q := g.Payoffs(b)
				if q[0] >= p[0] && q[1] >= p[1] && q != p {
					dominated = true
				}
			}
			if g.ParetoOptimal(a) == dominated {
				t.Fatalf("%v in %+v: ParetoOptimal %v, brute force dominated %v", a, g, !dominated, dominated)
			}
			half := [2]bool{2*p[0] >= g.Total(), 2*p[1] >= g.Total()}
			if g.EnvyFree(a) != (half[0] && half[1]) {
				t.Fatalf("%v in %+v: EnvyFree %v, halves %v", a, g, g.EnvyFree(a), half)
			}
			if g.EnvyFree(a) && p[0]+p[1] > bestTotal {
				bestTotal = p[0] + p[1]
			}
		}
		best := g.Best()
		if (bestTotal < 0) != (len(best) == 0) || g.HasEF() != (len(best) > 0) {
			t.Fatalf("Best %v, brute force best total %d", best, bestTotal)
		}
		for _, a := range best {
			p := g.Payoffs(a)
			if !g.EnvyFree(a) || !g.ParetoOptimal(a) || p[0]+p[1] != bestTotal {
				t.Fatalf("Best allocation %v in %+v is not EF, PO and of total %d", a, g, bestTotal)
			}
		}
	}
}

// TestEstimation works the metrics by hand on the README's set-up, seen by Alice (seat 0),
// with Bob's true values 8, 1, 0.
func TestEstimation(t *testing.T) {
	// The support holds the truth and two others: precision 1, recall 1/3, reduction 1 - 3/21.
	e := solution.Estimation(example, 0, [][]int{{8, 1, 0}, {10, 0, 0}, {0, 5, 0}})
	if e.Precision != 1 || !near(e.Recall, 1.0/3) || !near(e.Reduction, 18.0/21) || e.PriorSize != 21 || e.SupportSize != 3 {
		t.Errorf("estimate %+v", e)
	}
	// Indistinguishable: Best under (10,0,0) is Bob with the book, Alice with everything else
	// ((0,2,2), the same as the truth's): inside. Under (0,5,0) Bob wants the hats: Best there
	// gives Bob hats, not (0,2,2): outside. So ind. precision 1, ind. recall 2/3.
	if e.IndPrecision != 1 || !near(e.IndRecall, 2.0/3) {
		t.Errorf("indistinguishable %+v", e)
	}
	// A support without the truth, of one vector whose Best differs: 0 everywhere.
	e = solution.Estimation(example, 0, [][]int{{0, 5, 0}})
	if e.Precision != 0 || e.Recall != 0 || e.IndPrecision != 0 || e.IndRecall != 0 {
		t.Errorf("estimate %+v", e)
	}
}

func TestSupportNote(t *testing.T) {
	note := "something\n" + solution.FormatSupport([][]int{{8, 1, 0}, {10, 0, 0}}) + "\nprior-size: 21"
	got, ok, err := solution.ParseSupport(note)
	if err != nil || !ok || !slices.EqualFunc(got, [][]int{{8, 1, 0}, {10, 0, 0}}, slices.Equal) {
		t.Errorf("ParseSupport = %v %v %v", got, ok, err)
	}
	if _, ok, _ := solution.ParseSupport("nothing here"); ok {
		t.Error("found a support in a note without one")
	}
	if _, _, err := solution.ParseSupport(solution.SupportPrefix + " 1,x"); err == nil {
		t.Error("a bad support parsed")
	}
}

func TestCheck(t *testing.T) {
	for name, g := range map[string]solution.Game{
		"no types":        {},
		"zero count":      {Counts: []int{0, 1}, Values: [2][]int{{1, 1}, {1, 1}}},
		"values mismatch": {Counts: []int{1, 1}, Values: [2][]int{{1}, {1, 1}}},
		"unequal totals":  {Counts: []int{1, 1}, Values: [2][]int{{1, 2}, {1, 1}}},
		"worthless":       {Counts: []int{1}, Values: [2][]int{{0}, {0}}},
		"negative":        {Counts: []int{1, 1}, Values: [2][]int{{-1, 3}, {1, 1}}},
	} {
		if err := g.Check(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := example.Check(); err != nil {
		t.Error(err)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
