package equilibria_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parley-arena/parley/referee/games/equilibria"
)

// BenchmarkExtremeEquilibria solves random n x n games: "generic" with payoffs from 0..999
// (nondegenerate in practice), "degenerate" with payoffs from 0..2 (ties everywhere). Each
// iteration solves one of 16 fixed games, in turn.
func BenchmarkExtremeEquilibria(b *testing.B) {
	for _, kind := range []struct {
		name string
		span int
	}{{"generic", 1000}, {"degenerate", 3}} {
		for _, n := range []int{2, 3, 4, 6, 8, 10} {
			b.Run(fmt.Sprintf("%s/%dx%d", kind.name, n, n), func(b *testing.B) {
				rng := rand.New(rand.NewPCG(uint64(n), 9))
				var games []*equilibria.Matrix
				for range 16 {
					a, p := randomBimatrix(rng, n, n, kind.span)
					games = append(games, bimatrix(b, a, p))
				}
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					if _, err := equilibria.ExtremeEquilibria(games[i%len(games)]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// fullTree is a complete tree of the given depth and branching, players moving in turn, with
// payoffs from 0..span-1.
func fullTree(rng *rand.Rand, players, depth, branching, span int) *equilibria.Tree {
	return growTree(rng, players, span,
		func(d int) bool { return d == depth },
		func(d int) int { return d % players },
		func(int) int { return branching })
}

// BenchmarkTree solves complete binary trees by players and depth (up to 2^11 leaves, 4095
// nodes, the largest a game file may hold): backward induction with every tie-break, and the
// Nash outcomes of the normal form (which, listed, would have 2^1365 strategies for a player
// at depth 11 with 2 players).
func BenchmarkTree(b *testing.B) {
	for _, players := range []int{2, 3, 5} {
		for _, depth := range []int{4, 8, 11} {
			for _, span := range []int{3, 1000} {
				tr := fullTree(rand.New(rand.NewPCG(uint64(depth), uint64(players))), players, depth, 2, span)
				b.Run(fmt.Sprintf("players=%d/depth=%d/span=%d/spe", players, depth, span), func(b *testing.B) {
					for b.Loop() {
						equilibria.BackwardInduction(tr)
					}
				})
				b.Run(fmt.Sprintf("players=%d/depth=%d/span=%d/nash", players, depth, span), func(b *testing.B) {
					for b.Loop() {
						equilibria.NashOutcomes(tr)
					}
				})
			}
		}
	}
}

// BenchmarkPureNash finds the pure equilibria of random games by players (2 actions each) and
// of two-player games by size.
func BenchmarkPureNash(b *testing.B) {
	for _, sizes := range [][]int{{8, 8}, {64, 64}, {2, 2, 2}, {4, 4, 4}, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}} {
		rng := rand.New(rand.NewPCG(1, uint64(len(sizes))))
		cells := 1
		for _, s := range sizes {
			cells *= s
		}
		pay := make([]equilibria.Payoffs, cells)
		for k := range pay {
			for range sizes {
				pay[k] = append(pay[k], r(int64(rng.IntN(5)), 1))
			}
		}
		m, err := equilibria.NewGame(sizes, pay)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprint(sizes), func(b *testing.B) {
			for b.Loop() {
				equilibria.PureNash(m)
				equilibria.Dominated(m)
			}
		})
	}
}
