package gamefile_test

import (
	"math/big"
	"slices"
	"strings"
	"testing"

	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
)

// profile names a profile by the table's action ids.
func profile(t *matrixv1.Table, p equilibria.Profile) string {
	var ids []string
	for player, acts := range gamefile.TableActions(t) {
		ids = append(ids, acts[p[player]].GetId())
	}
	return strings.Join(ids, "/")
}

func names(t *matrixv1.Table, ps []equilibria.Profile) []string {
	var out []string
	for _, p := range ps {
		out = append(out, profile(t, p))
	}
	return out
}

// TestShippedMatrixGames checks every shipped matrix game against its equilibria, worked out
// by hand here (not copied from solver output), and the facts the spec lists.
func TestShippedMatrixGames(t *testing.T) {
	cases := []struct {
		game string
		// pure: pure equilibria in row-major order, by hand: no player gains by deviating alone.
		pure []string
		// po: the pure equilibria that are Pareto-optimal against every profile.
		po []string
		// undominated: the pure equilibria no other pure equilibrium dominates (the published
		// "Pareto-optimal Nash equilibrium" block).
		undominated []string
		// mixed: the row player's probability of its first action in the one extreme
		// equilibrium that is not pure (completely mixed in these 2x2 games), or "" when every
		// extreme equilibrium is pure.
		mixed string
	}{
		// PD: defect pays more against either (5 > 3, 1 > 0): DD only; CC (3,3) dominates it.
		// Mixed: none, since defect is strictly dominant.
		{"prisoners_dilemma", []string{"defect/defect"}, nil, []string{"defect/defect"}, ""},
		// Perturbations keep D strictly dominant: 301 > 300, 1 > 0; 5 > 3, -299 > -300.
		{"prisoners_dilemma_1", []string{"defect/defect"}, nil, []string{"defect/defect"}, ""},
		{"prisoners_dilemma_2", []string{"defect/defect"}, nil, []string{"defect/defect"}, ""},
		// Stag hunt: SS (3 > 1) and HH (1 > 0) are stable; SH and HS are not. SS dominates HH.
		// Bob indifferent when 3p = 1: p = 1/3 (the spec's 1/3, 1/300, 1/103).
		{"stag_hunt", []string{"stag/stag", "hare/hare"}, []string{"stag/stag"}, []string{"stag/stag"}, "1/3"},
		// 300p = 1.
		{"stag_hunt_1", []string{"stag/stag", "hare/hare"}, []string{"stag/stag"}, []string{"stag/stag"}, "1/300"},
		// 3p - 100(1-p) = -99: 103p = 1.
		{"stag_hunt_2", []string{"stag/stag", "hare/hare"}, []string{"stag/stag"}, []string{"stag/stag"}, "1/103"},
		// BoS: OO and FF; both Pareto-optimal (2,1) vs (1,2). Bob indifferent when
		// 1p = 2(1-p): p = 2/3.
		{"battle_of_the_sexes", []string{"opera/opera", "football/football"}, []string{"opera/opera", "football/football"}, []string{"opera/opera", "football/football"}, "2/3"},
		// Wait-go: one waits, one goes. Bob indifferent when 0 = 2p - 4(1-p)... Bob's go pays
		// 2 against wait and -4 against go: 2p - 4(1-p) = 0 -> p = 2/3 (Alice waits 2/3).
		{"wait_go", []string{"wait/go", "go/wait"}, []string{"wait/go", "go/wait"}, []string{"wait/go", "go/wait"}, "2/3"},
		// Golden balls: steal weakly dominates, so split/steal, steal/split, steal/steal are
		// stable (each deviator stays at or below); only the first two are Pareto-optimal.
		// Mixed: against steal both actions pay 0, so (any mix, steal) and (steal, any mix) are
		// equilibria: two segments whose ends are the three pure equilibria.
		{"golden_balls", []string{"split/steal", "steal/split", "steal/steal"}, []string{"split/steal", "steal/split"}, []string{"split/steal", "steal/split"}, ""},
		// Rock-paper-scissors: every pure profile has a player who gains; uniform mixing is the
		// one equilibrium (checked below), rock with 1/3.
		{"rock_paper_scissors", nil, nil, nil, "1/3"},
		// Duopoly: (3,3) paying 6 each: against q3, payoffs of the row are 0, 5, 6, 3, -4, -5,
		// so q3 is the best reply; symmetric for the column. (2,2) pays 7 each, dominating it.
		{"duopoly", []string{"q3/q3"}, nil, []string{"q3/q3"}, ""},
		// Volunteer's dilemma: with nobody else volunteering, volunteering pays 1 > 0; with
		// somebody else volunteering, waiting pays 2 > 1. So exactly one volunteers. Each of
		// those pays 1 to one and 2 to the others: none dominates another or is dominated by
		// any profile (only the volunteer could gain, and only if another volunteers, which
		// costs that one). Mixed equilibria of three players are not computed.
		{"volunteer_dilemma", []string{"volunteer/wait/wait", "wait/volunteer/wait", "wait/wait/volunteer"},
			[]string{"volunteer/wait/wait", "wait/volunteer/wait", "wait/wait/volunteer"},
			[]string{"volunteer/wait/wait", "wait/volunteer/wait", "wait/wait/volunteer"}, ""},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.game, func(t *testing.T) {
			seen[tc.game] = true
			f, err := gamefile.Shipped(tc.game)
			if err != nil {
				t.Fatal(err)
			}
			scale, err := gamefile.Scale(nil, f.Table.GetScaleDefault())
			if err != nil {
				t.Fatal(err)
			}
			m, err := gamefile.MatrixOf(f.Table, scale)
			if err != nil {
				t.Fatal(err)
			}
			pure := equilibria.PureNash(m)
			if got := names(f.Table, pure); !slices.Equal(got, tc.pure) {
				t.Errorf("pure equilibria %v, want %v", got, tc.pure)
			}
			var po []equilibria.Profile
			for _, p := range pure {
				if equilibria.ParetoOptimal(m, p) {
					po = append(po, p)
				}
			}
			if got := names(f.Table, po); !slices.Equal(got, tc.po) {
				t.Errorf("Pareto-optimal equilibria %v, want %v", got, tc.po)
			}
			if got := names(f.Table, equilibria.Undominated(m, pure)); !slices.Equal(got, tc.undominated) {
				t.Errorf("undominated equilibria %v, want %v", got, tc.undominated)
			}
			if m.Players() > 2 {
				return
			}
			e, err := equilibria.ExtremeEquilibria(m)
			if err != nil {
				t.Fatal(err)
			}
			var mixed []string
			for k := range e.Equilibria {
				if x := e.Mixed(k); !x.Pure() {
					mixed = append(mixed, x.RowMix[0].RatString())
				}
			}
			want := []string{tc.mixed}
			if tc.mixed == "" {
				want = nil
			}
			if !slices.Equal(mixed, want) {
				t.Errorf("non-pure extreme equilibria, row's first action: %v, want %v", mixed, want)
			}
		})
	}
	// Duopoly: the profiles that improve on (3,3) for both are exactly (2,2); (1,4), (2,3),
	// (3,2), (4,1) and (2,2) are Pareto-optimal, as the spec notes.
	f, _ := gamefile.Shipped("duopoly")
	m, _ := gamefile.MatrixOf(f.Table, big.NewRat(1, 1))
	if got := names(f.Table, equilibria.ParetoDominators(m, equilibria.Profile{2, 2})); !slices.Equal(got, []string{"q2/q2"}) {
		t.Errorf("duopoly: profiles dominating (3,3): %v, want q2/q2", got)
	}
	for _, p := range []equilibria.Profile{{0, 3}, {1, 2}, {2, 1}, {3, 0}, {1, 1}} {
		if !equilibria.ParetoOptimal(m, p) {
			t.Errorf("duopoly: %s is Pareto-optimal", profile(f.Table, p))
		}
	}
	// RPS: uniform mixing is the only equilibrium.
	f, _ = gamefile.Shipped("rock_paper_scissors")
	m, _ = gamefile.MatrixOf(f.Table, big.NewRat(1, 1))
	e, err := equilibria.ExtremeEquilibria(m)
	if err != nil || !e.Unique() {
		t.Fatalf("RPS: %+v %v", e, err)
	}
	for _, p := range append(e.Mixed(0).RowMix, e.Mixed(0).ColMix...) {
		if p.Cmp(big.NewRat(1, 3)) != 0 {
			t.Errorf("RPS: mix %v, want 1/3 each", e.Mixed(0))
		}
	}
	// The perturbations keep the pure-equilibrium sets.
	for _, pair := range [][2]string{{"prisoners_dilemma", "prisoners_dilemma_1"}, {"prisoners_dilemma", "prisoners_dilemma_2"}, {"stag_hunt", "stag_hunt_1"}, {"stag_hunt", "stag_hunt_2"}} {
		a, _ := gamefile.Shipped(pair[0])
		b, _ := gamefile.Shipped(pair[1])
		ma, _ := gamefile.MatrixOf(a.Table, big.NewRat(1, 1))
		mb, _ := gamefile.MatrixOf(b.Table, big.NewRat(1, 1))
		if !equilibria.ComparePureNash(ma, mb, nil).Same {
			t.Errorf("%s and %s have different pure-equilibrium sets", pair[0], pair[1])
		}
	}
	for _, name := range gamefile.Library(gamefile.KindMatrix) {
		if !seen[name] {
			t.Errorf("shipped matrix game %s has no hand-worked case", name)
		}
	}
}

// TestShippedTrees checks every shipped tree's subgame-perfect path (worked out by hand here
// by backward induction) and its Nash outcomes.
func TestShippedTrees(t *testing.T) {
	cases := []struct {
		game string
		// spe: the path as move ids; pay its payoffs. By hand, leaves first.
		spe []string
		pay []int64
		// nash: paths of pure Nash equilibria of the normal form, as move ids, sorted.
		nash []string
	}{
		// Escalation: at the last node Alice prefers -1 (escalate) to -2; then Bob compares
		// back down (-2) with escalate (-1): escalates; then Alice compares back down (0) with
		// escalate (-1): backs down.
		{"escalation", []string{"a1"}, []int64{0, 0}, []string{"a1"}},
		// Monopoly: Bob accommodates (1 > -1); Alice enters (2 > 0). Staying out is a Nash
		// outcome held up by Bob's threat to fight.
		{"monopoly", []string{"a2", "b1"}, []int64{2, 1}, []string{"a1", "a2,b1"}},
		// Hot-cold: after a1 Bob takes b2 (3 > 2) -> (2,3); after a2 Bob takes b1 (4 > 1) ->
		// (1,4); Alice prefers 2 to 1: a1.
		{"hot_cold", []string{"a1", "b2"}, []int64{2, 3}, []string{"a1,b2"}},
		// Draco: after a1,b2 Alice picks a2 (3 > 2) -> (3,4), so Bob after a1 picks b1 (5 > 4)
		// -> (5,5); after a2,b2 Alice picks a1 (5 > 2) -> (5,3), so Bob after a2 picks b1
		// (5 > 3) -> (4,5); Alice prefers 5 to 4: a1. (4,5) is a Nash outcome too.
		{"draco", []string{"a1", "b1"}, []int64{5, 5}, []string{"a1,b1", "a2,b1"}},
		// Trigame: third-stage Alice picks a1 (20,3), a2 (3,4), a2 (4,10), a2 (3,2); Bob after
		// a1 picks b2 (4 > 3) -> (3,4), after a2 picks b1 (10 > 2) -> (4,10); Alice 4 > 3: a2.
		{"trigame", []string{"a2", "b1", "a2"}, []int64{4, 10}, []string{"a1,b2,a2", "a2,b1,a2"}},
	}
	// Trust chain (three players, ties): Cat is indifferent (2 = 2); if she shares, Ben is
	// indifferent (forward 2 = grab 2). Canonical play takes first branches: Cat shares, Ben
	// grabs, so Ann keeps (1 > 0). If Ben forwards, Ann invests (2 > 1). Subgame-perfect
	// outcomes: keep, and invest-forward-share. Nash outcomes: the same two (investing and
	// being grabbed gives Ann 0 < 1 from keeping).
	cases = append(cases, struct {
		game string
		spe  []string
		pay  []int64
		nash []string
	}{"trust_chain", []string{"keep"}, []int64{1, 1, 1}, []string{"invest,forward,share", "keep"}})
	speOutcomes := map[string][]string{"trust_chain": {"invest,forward,share", "keep"}}
	seen := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.game, func(t *testing.T) {
			seen[tc.game] = true
			f, err := gamefile.Shipped(tc.game)
			if err != nil {
				t.Fatal(err)
			}
			tr, err := gamefile.TreeOf(f.Tree, big.NewRat(1, 1))
			if err != nil {
				t.Fatal(err)
			}
			ids := func(path []int) string {
				var out []string
				n := 0
				for _, b := range path {
					out = append(out, f.Tree.GetNodes()[n].GetBranches()[b].GetId())
					n = tr.Node(n).Children[b]
				}
				return strings.Join(out, ",")
			}
			s := equilibria.BackwardInduction(tr)
			var outcomes []string
			for _, o := range s.Outcomes {
				outcomes = append(outcomes, ids(o.Path))
			}
			slices.Sort(outcomes)
			want := speOutcomes[tc.game]
			if want == nil {
				want = []string{strings.Join(tc.spe, ",")}
			}
			if got := ids(s.Path.Path); got != strings.Join(tc.spe, ",") || !slices.Equal(outcomes, want) || s.Unique() != (len(want) == 1) {
				t.Errorf("SPE path %s (ties %v, outcomes %v), want %v and outcomes %v", got, s.Ties, outcomes, tc.spe, want)
			}
			for p, x := range tc.pay {
				if s.Path.Payoffs[p].Cmp(big.NewRat(x, 1)) != 0 {
					t.Errorf("SPE payoffs %v, want %v", s.Path.Payoffs, tc.pay)
				}
			}
			nash := equilibria.NashOutcomes(tr)
			var got []string
			for _, o := range nash {
				got = append(got, ids(o.Path))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.nash) {
				t.Errorf("Nash outcomes %v, want %v", got, tc.nash)
			}
		})
	}
	for _, name := range gamefile.Library(gamefile.KindTree) {
		if !seen[name] {
			t.Errorf("shipped tree %s has no hand-worked case", name)
		}
	}
}
