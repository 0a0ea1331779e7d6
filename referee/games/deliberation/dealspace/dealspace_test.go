package dealspace_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/referee/games/deliberation/dealspace"
	"google.golang.org/protobuf/proto"
)

// randomSetup is a small random game: 3 to 5 parties, 1 to 3 issues of 1 to 4 options, points
// from 0 to 30, thresholds, quorum, vetoes and bonus drawn too.
func randomSetup(t *testing.T, rng *rand.Rand) *deliberation.Setup {
	t.Helper()
	n, issues := 3+rng.IntN(3), 1+rng.IntN(3)
	sc := &deliberationv1.Scenario{Title: "random"}
	var opening []string
	for i := range issues {
		id := deliberation.IssueID(i)
		is := &gamev1.Issue{Id: id, Label: id}
		for k := range 1 + rng.IntN(4) {
			is.Options = append(is.Options, &gamev1.Option{Id: fmt.Sprintf("%s%d", id, k+1), Label: "o"})
		}
		sc.Issues = append(sc.Issues, is)
		opening = append(opening, id+"1")
	}
	sc.OpeningDeal = fmt.Sprint(joinComma(opening))
	for p := range n {
		role := deliberationv1.PartyRole_PARTY_ROLE_PLAYER
		if p < 2 {
			role = []deliberationv1.PartyRole{deliberationv1.PartyRole_PARTY_ROLE_P1, deliberationv1.PartyRole_PARTY_ROLE_P2}[p]
		}
		party := &deliberationv1.Party{Id: fmt.Sprintf("p%dx", p), Name: fmt.Sprintf("Party %d", p), Role: role, Threshold: int32(rng.IntN(20 * issues))}
		for _, is := range sc.Issues {
			ip := &deliberationv1.IssuePoints{}
			for range is.GetOptions() {
				ip.Points = append(ip.Points, int32(rng.IntN(31)))
			}
			party.Points = append(party.Points, ip)
		}
		sc.Parties = append(sc.Parties, party)
	}
	p := &deliberationv1.Params{Scenario: sc, Quorum: proto.Int32(int32(1 + rng.IntN(n))), P1Bonus: proto.Int32(int32(rng.IntN(15)))}
	switch rng.IntN(3) {
	case 0:
		p.Vetoes = []string{"none"}
	case 1:
		p.Vetoes = []string{"p2"}
	}
	s, err := deliberation.NewSetup(&matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: p}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func joinComma(xs []string) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += ","
		}
		out += x
	}
	return out
}

// passes recomputes the vote rule from the scores by hand.
func passes(s *deliberation.Setup, d deliberation.Deal) (passed, unanimous bool) {
	n := s.N()
	yes := make([]bool, n)
	score := make([]int, n)
	for seat := range n {
		for i, k := range d {
			score[seat] += s.Parties[seat].Points[i][k]
		}
		yes[seat] = score[seat] >= s.Parties[seat].Threshold
	}
	others := true
	for seat := 1; seat < n; seat++ {
		others = others && yes[seat]
	}
	if others && score[0]+s.Bonus >= s.Parties[0].Threshold {
		yes[0] = true
	}
	count := 0
	for _, y := range yes {
		if y {
			count++
		}
	}
	passed = count >= s.Quorum
	for _, v := range s.Vetoes {
		passed = passed && yes[v]
	}
	return passed, count == n
}

// TestPropertiesByBruteForce checks the analysis of many small random games against brute
// force: every acceptable deal passes the vote rule and every other fails it; the counts are
// right; no member of either front is dominated, and every deal off a front is dominated by a
// member; the statistics are those of the acceptable deals.
func TestPropertiesByBruteForce(t *testing.T) {
	games := 300
	if testing.Short() {
		games = 60
	}
	for g := range games {
		rng := rand.New(rand.NewPCG(uint64(g), 7))
		s := randomSetup(t, rng)
		rule := deliberation.BonusRule(g % 2)
		a, err := dealspace.Analyze(s, rule)
		if err != nil {
			t.Fatal(err)
		}
		var acceptable, raw [][]int
		var acc, unan int
		var means, ginis []float64
		s.Deals(func(d deliberation.Deal) bool {
			p, u := passes(s, d)
			if p != s.Vote(d).Passed {
				t.Fatalf("game %d: %s: Vote says passed=%v, by hand %v", g, s.DealString(d), !p, p)
			}
			raw = append(raw, s.Scores(d))
			if p {
				acc++
				if u {
					unan++
				}
				v := s.ScoreVector(d, rule)
				acceptable = append(acceptable, v)
				means = append(means, deliberation.Mean(v))
				ginis = append(ginis, deliberation.Gini(v))
			}
			return true
		})
		if a.Deals != s.DealCount() || a.Acceptable != acc || a.Unanimous != unan {
			t.Fatalf("game %d: counts %d/%d/%d, want %d/%d/%d", g, a.Deals, a.Acceptable, a.Unanimous, s.DealCount(), acc, unan)
		}
		for _, p := range a.Front {
			if ok, _ := passes(s, p.Deal); !ok {
				t.Fatalf("game %d: front deal %s does not pass", g, s.DealString(p.Deal))
			}
		}
		checkFront(t, g, "acceptable", acceptable, vectorsOf(a.Front))
		checkFront(t, g, "raw", raw, vectorsOf(a.RawFront))
		if acc > 0 {
			if !close(a.MeanScore.Min, slices.Min(means)) || !close(a.MeanScore.Max, slices.Max(means)) || !close(a.MeanScore.Mean, avg(means)) ||
				!close(a.Gini.Min, slices.Min(ginis)) || !close(a.Gini.Max, slices.Max(ginis)) || !close(a.Gini.Mean, avg(ginis)) {
				t.Fatalf("game %d: stats %+v %+v", g, a.MeanScore, a.Gini)
			}
		}
	}
}

// checkFront: no member is dominated by any vector, every vector off the front is dominated by
// some member (brute force over all pairs), and the front holds as many vectors as that.
func checkFront(t *testing.T, g int, what string, all, front [][]int) {
	t.Helper()
	for _, f := range front {
		for _, v := range all {
			if dealspace.Dominates(v, f) {
				t.Fatalf("game %d: %s front member %v is dominated by %v", g, what, f, v)
			}
		}
	}
	want := 0
	for i, v := range all {
		dominated := false
		for j, w := range all {
			if i != j && dealspace.Dominates(w, v) {
				dominated = true
				break
			}
		}
		if !dominated {
			want++
		}
	}
	if len(front) != want {
		t.Fatalf("game %d: %s front has %d members, brute force finds %d undominated", g, what, len(front), want)
	}
}

func vectorsOf(ps []dealspace.Point) [][]int {
	out := make([][]int, len(ps))
	for i, p := range ps {
		out[i] = p.Scores
	}
	return out
}

func avg(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func close(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestGini checks the coefficient on hand-worked cases.
func TestGini(t *testing.T) {
	tests := []struct {
		xs   []int
		want float64
	}{
		{[]int{50, 50, 50, 50}, 0},
		{[]int{7}, 0},
		{[]int{0, 0, 0, 100}, 0.75}, // sum |xi-xj| = 600, 2 n^2 mean = 2*16*25 = 800
		{[]int{10, 20}, 1.0 / 6},    // 20 / (2*4*15)
		{nil, 0},
	}
	for _, tc := range tests {
		if got := deliberation.Gini(tc.xs); !close(got, tc.want) {
			t.Errorf("Gini(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
	for x := range 50 {
		if g := deliberation.Gini([]int{x, x, x, x, x, x}); g != 0 {
			t.Fatalf("Gini of equal scores %d = %v", x, g)
		}
	}
}

// TestShippedGames pins the analysis of the shipped games, and checks the spec's claim that in
// them every failing deal is dominated, so the front among acceptable deals is the front of all.
func TestShippedGames(t *testing.T) {
	for _, name := range deliberation.ShippedNames() {
		for _, rule := range []deliberation.BonusRule{deliberation.BonusGE, deliberation.BonusGT} {
			s := shipped(t, name)
			a, err := dealspace.Analyze(s, rule)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s rule %d: %d deals, %d acceptable, %d unanimous, front %d (all %d), raw front %d, mean %.2f/%.2f/%.2f, gini %.3f/%.3f/%.3f",
				name, rule, a.Deals, a.Acceptable, a.Unanimous, len(a.Front), a.FrontAll, len(a.RawFront),
				a.MeanScore.Min, a.MeanScore.Mean, a.MeanScore.Max, a.Gini.Min, a.Gini.Mean, a.Gini.Max)
			if !a.FrontAllAcceptable || a.Deals != 720 || a.Acceptable == 0 {
				t.Errorf("%s: the front of all deals (%d) is not the front among acceptable deals (%d)", name, a.FrontAll, len(a.Front))
			}
		}
	}
}

func shipped(t *testing.T, name string) *deliberation.Setup {
	t.Helper()
	g := deliberation.New()
	resolved, err := g.Resolve(&matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{Game: proto.String(name)}}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := deliberation.NewSetup(resolved)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
