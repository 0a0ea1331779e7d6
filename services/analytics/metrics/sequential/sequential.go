// Package sequential computes the sequential game's metrics (specs/matrix-and-sequential.md)
// from a match record, for any number of players: whether the path played is the
// subgame-perfect path, the path distribution and each seat's action frequencies. Subgame-perfect paths are computed from
// the tree in the record by backward induction (package equilibria), never looked up.
//
// Values (rates are 0 or 1 per match, so their mean over matches is the rate):
//
//   - equilibrium: 1 when the path is the path of a subgame-perfect equilibrium (the published
//     tables' "Nash equilibrium" block, for trees; with ties, any of them);
//   - po_equilibrium: the same, when no other subgame-perfect outcome Pareto-dominates it;
//   - nash_outcome: 1 when the path is the outcome of some pure Nash equilibrium of the tree's
//     normal form, subgame-perfect or not (e.g. monopoly's "stay out");
//   - path:ID,ID,...: 1 for the path played (the tree's own move ids);
//   - action:ID, per seat: share of the seat's moves that were ID;
//   - rounds: 1 when the game reached a leaf.
//
// The common values of every game (payoff per seat, turns, ...) are metrics.NewRow's.
package sequential

import (
	"fmt"
	"slices"
	"strings"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	sequentialv1 "github.com/parley-arena/parley/gen/go/parley/games/sequential/v1"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/sequential"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// New returns the family.
func New() Family { return Family{} }

// Family computes the sequential game's metrics.
type Family struct{}

var _ metrics.Family = Family{}

// Games lists the sequential game.
func (Family) Games() []string { return []string{sequential.Name} }

// Match computes one match's metrics.
func (Family) Match(events []*eventsv1.MatchEvent) ([]metrics.Value, error) {
	started, _, err := metrics.Finished(events)
	if err != nil {
		return nil, err
	}
	s, err := sequential.NewSetup(started.GetParams())
	if err != nil {
		return nil, fmt.Errorf("metrics/sequential: %w", err)
	}
	orig := started.GetParams().GetSequential().GetTree().GetNodes()
	shown := s.Shown.GetNodes()
	t := s.Tree
	var path []int
	var ids []string
	node := 0
	counts := make([]map[string]int, t.Players())
	for p := range counts {
		counts[p] = map[string]int{}
	}
	moves := make([]int, t.Players())
	for _, ev := range events {
		ch := ev.GetActionTaken().GetAction().GetMove().GetChoose()
		if ch == nil {
			continue
		}
		if t.Node(node).Leaf() {
			return nil, fmt.Errorf("metrics/sequential: turn %d: a move after the end", ev.GetTurn())
		}
		b := slices.IndexFunc(shown[node].GetBranches(), func(br *sequentialv1.Branch) bool { return br.GetId() == ch.GetOption() })
		if b < 0 {
			return nil, fmt.Errorf("metrics/sequential: turn %d: %q is not a move at node %d", ev.GetTurn(), ch.GetOption(), node)
		}
		id := orig[node].GetBranches()[b].GetId()
		p := t.Node(node).Player
		counts[p][id]++
		moves[p]++
		path, ids = append(path, b), append(ids, id)
		node = t.Node(node).Children[b]
	}
	spe := equilibria.BackwardInduction(t)
	bool01 := func(b bool) float64 {
		if b {
			return 1
		}
		return 0
	}
	done := t.Node(node).Leaf()
	onSPE := done && spe.OnPath(path)
	var speOutcomes []equilibria.Payoffs
	for _, o := range spe.Outcomes {
		speOutcomes = append(speOutcomes, o.Payoffs)
	}
	poSPE := onSPE
	if onSPE {
		for _, q := range speOutcomes {
			if q.Dominates(t.Node(node).Payoffs) {
				poSPE = false
			}
		}
	}
	nash := false
	if done {
		nash = slices.ContainsFunc(equilibria.NashOutcomes(t), func(o equilibria.Outcome) bool { return slices.Equal(o.Path, path) })
	}
	out := []metrics.Value{
		{Name: "rounds", Seat: metrics.WholeMatch, Value: bool01(done)},
		{Name: "equilibrium", Seat: metrics.WholeMatch, Value: bool01(onSPE)},
		{Name: "po_equilibrium", Seat: metrics.WholeMatch, Value: bool01(poSPE)},
		{Name: "nash_outcome", Seat: metrics.WholeMatch, Value: bool01(nash)},
		{Name: "path:" + strings.Join(ids, ","), Seat: metrics.WholeMatch, Value: 1},
	}
	for seat := range t.Players() {
		keys := make([]string, 0, len(counts[seat]))
		for k := range counts[seat] {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			out = append(out, metrics.Value{Name: "action:" + k, Seat: int32(seat), Value: float64(counts[seat][k]) / float64(moves[seat])})
		}
	}
	return out, nil
}
