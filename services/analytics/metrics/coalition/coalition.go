// Package coalition computes the per-match metrics of the n-player coalition game
// (specs/coalition.md). Every value is a pure function of the match record; the game's
// solution concepts come from referee/games/coalition/solution, exactly.
//
// Values (besides the common ones of metrics.NewRow, among them payoff per seat):
//
//   - proposals_made (whole match): binding proposals put to a vote.
//   - proposals_needed (whole match): the number of the proposal that passed (1 = the first);
//     only with an agreement.
//   - winning_coalition (whole match): the coalition that passed a proposal, as a bit set of
//     seats (bit i = seat i: A+B of A, B, C is 3, A+B+C is 7); 0 when none did. Reports map it
//     to names with the seats of the row.
//   - winning_coalition_size (whole match): its number of members; only with an agreement.
//   - coalition_member (per seat): 1 when the seat is in the winning coalition, else 0 (all 0
//     without an agreement). Its mean per agent is how often the agent ends in the coalition.
//   - efficiency (whole match): the units handed out (the sum of the payoffs) over the grand
//     coalition's value; absent when the grand coalition is worth 0.
//   - shapley (per seat): the seat's Shapley value.
//   - shapley_l1, shapley_l2 (whole match): the L1 and L2 (Euclidean) distances of the payoff
//     vector (the split, with 0 for every non-member, all 0 without an agreement) from the
//     Shapley value.
//   - in_core (whole match): 1 when the payoff vector is in the core (it hands out exactly the
//     grand coalition's value and every coalition gets at least its value), else 0.
//   - core_empty (whole match): 1 when the game's core is empty, else 0.
//   - core_distance (whole match): the Euclidean distance of the payoff vector from the core,
//     that is from its nearest point: 0 when in the core. The core is the convex hull of its
//     vertices (solution.Core, exact), and the nearest point of that hull is found with
//     Wolfe's min-norm-point algorithm in float64 (see Nearest). Absent when the core is
//     empty, and for games of more than solution.MaxCorePlayers players, whose core vertices
//     are not computed (in_core is still given).
package coalition

import (
	"fmt"
	"math"
	"math/big"
	"sync"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	coalitiongame "github.com/parley-arena/parley/referee/games/coalition"
	"github.com/parley-arena/parley/referee/games/coalition/solution"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Names of the values this family adds.
const (
	ValueProposalsMade        = "proposals_made"
	ValueProposalsNeeded      = "proposals_needed"
	ValueWinningCoalition     = "winning_coalition"
	ValueWinningCoalitionSize = "winning_coalition_size"
	ValueCoalitionMember      = "coalition_member"
	ValueEfficiency           = "efficiency"
	ValueShapley              = "shapley"
	ValueShapleyL1            = "shapley_l1"
	ValueShapleyL2            = "shapley_l2"
	ValueInCore               = "in_core"
	ValueCoreEmpty            = "core_empty"
	ValueCoreDistance         = "core_distance"
)

// maxCached bounds the solved games a Family keeps: a tournament plays one game many times.
const maxCached = 64

// Family is the coalition game's metrics. It keeps the solution of the last games it saw (the
// Shapley value and the core depend only on the values), so it is cheap to call per match. Safe
// for concurrent use; use New.
type Family struct {
	mu    sync.Mutex
	cache map[string]*solved
}

// solved is what a game's values determine.
type solved struct {
	game    *solution.Game
	shapley []float64
	// core holds the core's vertices; nil when not computed (too many players).
	core      [][]float64
	coreKnown bool
}

// New returns the family.
func New() *Family { return &Family{cache: make(map[string]*solved)} }

var _ metrics.Family = (*Family)(nil)

// Games lists the games whose records it reads.
func (*Family) Games() []string { return []string{coalitiongame.Name} }

// Match computes the family's values of one finished match.
func (f *Family) Match(events []*eventsv1.MatchEvent) ([]metrics.Value, error) {
	started, ended, err := metrics.Finished(events)
	if err != nil {
		return nil, err
	}
	setup, err := coalitiongame.NewSetup(started.GetParams())
	if err != nil {
		return nil, fmt.Errorf("coalition metrics: params: %w", err)
	}
	n := setup.N()
	sol, err := f.solve(setup)
	if err != nil {
		return nil, err
	}

	made, needed := 0, 0
	var winner solution.Coalition
	for _, ev := range events {
		pr := ev.GetProposalResolved()
		if pr == nil {
			continue
		}
		made++
		if pr.GetAccepted() && winner == 0 {
			needed = made
			for _, sh := range pr.GetProposal().GetAllocation().GetShares() {
				if s := sh.GetSeat(); s >= 0 && int(s) < n {
					winner |= solution.CoalitionOf(int(s))
				}
			}
		}
	}
	agreement := ended.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_AGREEMENT
	if !agreement {
		winner, needed = 0, 0
	}

	x := make([]float64, n)
	for i, p := range ended.GetOutcome().GetPayoffs() {
		if i < n {
			x[i] = p
		}
	}

	var out []metrics.Value
	whole := func(name string, v float64) {
		out = append(out, metrics.Value{Name: name, Seat: metrics.WholeMatch, Value: v})
	}
	whole(ValueProposalsMade, float64(made))
	if needed > 0 {
		whole(ValueProposalsNeeded, float64(needed))
		whole(ValueWinningCoalitionSize, float64(winner.Size()))
	}
	whole(ValueWinningCoalition, float64(winner))
	for i := range n {
		out = append(out, metrics.Value{Name: ValueCoalitionMember, Seat: int32(i), Value: b2f(winner.Has(i))})
	}
	grand := setup.Values[setup.Grand()]
	if grand != 0 {
		total := 0.0
		for _, v := range x {
			total += v
		}
		whole(ValueEfficiency, total/float64(grand))
	}
	l1, l2 := 0.0, 0.0
	for i := range n {
		out = append(out, metrics.Value{Name: ValueShapley, Seat: int32(i), Value: sol.shapley[i]})
		d := x[i] - sol.shapley[i]
		l1 += math.Abs(d)
		l2 += d * d
	}
	whole(ValueShapleyL1, l1)
	whole(ValueShapleyL2, math.Sqrt(l2))

	in := sol.game.InCore(rats(x))
	whole(ValueInCore, b2f(in))
	if sol.coreKnown {
		whole(ValueCoreEmpty, b2f(len(sol.core) == 0))
		switch {
		case in:
			whole(ValueCoreDistance, 0)
		case len(sol.core) > 0:
			_, d := Nearest(sol.core, x)
			whole(ValueCoreDistance, d)
		}
	}
	return out, nil
}

// solve returns the solution concepts of setup's game, from the cache when it has them.
func (f *Family) solve(setup *coalitiongame.Setup) (*solved, error) {
	key := fmt.Sprint(setup.Values)
	f.mu.Lock()
	s, ok := f.cache[key]
	f.mu.Unlock()
	if ok {
		return s, nil
	}
	g := setup.Game()
	s = &solved{game: g, shapley: solution.Float(g.Shapley())}
	if setup.N() <= solution.MaxCorePlayers {
		core, err := g.Core()
		if err != nil {
			return nil, fmt.Errorf("coalition metrics: core: %w", err)
		}
		s.coreKnown = true
		for _, v := range core.Vertices {
			s.core = append(s.core, solution.Float(v))
		}
	}
	f.mu.Lock()
	if len(f.cache) >= maxCached {
		clear(f.cache)
	}
	f.cache[key] = s
	f.mu.Unlock()
	return s, nil
}

// rats converts payoffs to exact rationals for InCore; payoffs are whole units in a real
// record, and any float64 converts exactly.
func rats(x []float64) []*big.Rat {
	out := make([]*big.Rat, len(x))
	for i, v := range x {
		out[i] = new(big.Rat)
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[i].SetFloat64(v)
		}
	}
	return out
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
