// Package matrix computes the matrix game's metrics (specs/matrix-and-sequential.md) from a
// match record: per round, whether the profile played is a pure Nash equilibrium, a
// Pareto-optimal one, the profile distribution and each seat's action frequencies.
// Equilibria are computed from the game in the record (package equilibria), never looked up.
// The sequential game's metrics are in package metrics/sequential.
//
// Values (rates are per match, so their mean over matches is the rate; repeated play averages
// over the match's rounds):
//
//   - equilibrium: share of rounds whose profile is a pure Nash equilibrium (the published
//     tables' "Nash equilibrium" block);
//   - po_equilibrium: the same, for equilibria no other equilibrium Pareto-dominates (the
//     published "Pareto optimal Nash equilibrium" block: the only equilibrium counts as it is,
//     so this differs from equilibrium only where one equilibrium dominates another, e.g. the
//     stag hunt);
//   - pareto_optimal: share of rounds whose profile no profile Pareto-dominates;
//   - profile:ROW,COL (one id per seat): share of rounds with that profile (every profile of
//     the matrix is listed, 0 when not played);
//   - action:ID, per seat: share of the seat's choices that were ID (the table's own ids,
//     whatever labels the players saw);
//   - rounds: rounds played.
//
// The common values of every game (payoff per seat, turns, ...) are metrics.NewRow's.
package matrix

import (
	"fmt"
	"slices"
	"strings"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/matrix"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// New returns the family.
func New() Family { return Family{} }

// Family computes the matrix game's metrics.
type Family struct{}

var _ metrics.Family = Family{}

// Games lists the matrix game.
func (Family) Games() []string { return []string{matrix.Name} }

// Match computes one match's metrics.
func (Family) Match(events []*eventsv1.MatchEvent) ([]metrics.Value, error) {
	started, _, err := metrics.Finished(events)
	if err != nil {
		return nil, err
	}
	s, err := matrix.NewSetup(started.GetParams())
	if err != nil {
		return nil, fmt.Errorf("metrics/matrix: %w", err)
	}
	table := started.GetParams().GetMatrix().GetTable()
	ids := actionIDs(gamefile.TableActions(table))
	shown := actionIDs(gamefile.TableActions(s.Shown))
	n := len(ids)
	// Choices in record order: each round's choices share a turn.
	var rounds []equilibria.Profile
	pending := map[int32]equilibria.Profile{}
	for _, ev := range events {
		a := ev.GetActionTaken()
		ch := a.GetAction().GetMove().GetChoose()
		if ch == nil {
			continue
		}
		seat := a.GetSeat()
		if seat < 0 || int(seat) >= n {
			return nil, fmt.Errorf("metrics/matrix: a choice by seat %d", seat)
		}
		idx := slices.Index(shown[seat], ch.GetOption())
		if idx < 0 {
			return nil, fmt.Errorf("metrics/matrix: turn %d: seat %d chose %q, not an option", ev.GetTurn(), seat, ch.GetOption())
		}
		p, ok := pending[ev.GetTurn()]
		if !ok {
			p = make(equilibria.Profile, n)
			for i := range p {
				p[i] = -1
			}
			pending[ev.GetTurn()] = p
		}
		p[seat] = idx
		if !slices.Contains(p, -1) {
			rounds = append(rounds, p)
			delete(pending, ev.GetTurn())
		}
	}
	m := s.Matrix
	pure := equilibria.PureNash(m)
	po := equilibria.Undominated(m, pure)
	played := float64(len(rounds))
	share := func(count int) float64 {
		if played == 0 {
			return 0
		}
		return float64(count) / played
	}
	var eq, poEq, pareto int
	profiles := make([]int, m.Len())
	actions := make([][]int, n)
	for seat := range actions {
		actions[seat] = make([]int, len(ids[seat]))
	}
	for _, pr := range rounds {
		if equilibria.ContainsProfile(pure, pr) {
			eq++
		}
		if equilibria.ContainsProfile(po, pr) {
			poEq++
		}
		if equilibria.ParetoOptimal(m, pr) {
			pareto++
		}
		profiles[m.Index(pr)]++
		for seat, a := range pr {
			actions[seat][a]++
		}
	}
	out := []metrics.Value{
		{Name: "rounds", Seat: metrics.WholeMatch, Value: played},
		{Name: "equilibrium", Seat: metrics.WholeMatch, Value: share(eq)},
		{Name: "po_equilibrium", Seat: metrics.WholeMatch, Value: share(poEq)},
		{Name: "pareto_optimal", Seat: metrics.WholeMatch, Value: share(pareto)},
	}
	for k, pr := range m.Profiles() {
		names := make([]string, n)
		for seat, a := range pr {
			names[seat] = ids[seat][a]
		}
		out = append(out, metrics.Value{Name: "profile:" + strings.Join(names, ","), Seat: metrics.WholeMatch, Value: share(profiles[k])})
	}
	for seat := range n {
		for i, id := range ids[seat] {
			out = append(out, metrics.Value{Name: "action:" + id, Seat: int32(seat), Value: share(actions[seat][i])})
		}
	}
	return out, nil
}

func actionIDs(acts [][]*matrixv1.Action) [][]string {
	out := make([][]string, len(acts))
	for p, list := range acts {
		for _, a := range list {
			out[p] = append(out[p], a.GetId())
		}
	}
	return out
}
