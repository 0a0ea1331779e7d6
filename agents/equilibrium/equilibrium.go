// Package equilibrium is a built-in agent for the games given as data (the matrix and
// sequential games) that plays an exact equilibrium, computed from the game in its
// observation with package equilibria:
//
//   - In a matrix game of any number of players it plays its part of a pure Nash equilibrium
//     that no other pure equilibrium Pareto-dominates (the "Pareto-optimal equilibrium" of the
//     published tables). When several remain (battle of the sexes, wait-go, the volunteer's
//     dilemma), it picks the one with the largest total payoff, then the smallest difference
//     between the largest and smallest payoff, then the first in row-major order; agents like
//     it in every seat therefore pick the same profile. With no pure equilibrium in a
//     two-player game (rock-paper-scissors) it plays the first extreme mixed equilibrium
//     (fewest actions mixed first), drawing its action from the mix with a generator seeded
//     from the match, seat and turn. With no pure equilibrium among three or more players,
//     where no exact mixed equilibrium is computed, it plays its safest action: the one whose
//     worst payoff over the others' profiles is largest (the first on ties).
//   - In a game tree it plays the canonical subgame-perfect strategy (backward induction, the
//     first best move on ties) from the node reached.
//   - On a talk turn it announces the profile or path it will play and ends the talk.
//
// Its private reasoning says which equilibrium it picked among which, and why. It is
// deterministic and keeps no state between calls.
package equilibrium

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-arena/parley/agents/reply"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matrixv1 "github.com/parley-arena/parley/gen/go/parley/games/matrix/v1"
	sequentialv1 "github.com/parley-arena/parley/gen/go/parley/games/sequential/v1"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/matrix"
	"github.com/parley-arena/parley/referee/games/sequential"
)

// Agent plays equilibria.
type Agent struct{}

// New returns the agent.
func New() *Agent { return &Agent{} }

// Stateless: the agent's answers depend on its settings and each observation alone.
func (*Agent) Stateless() bool { return true }

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	return &gamev1.AgentInfo{
		Name:        "equilibrium",
		Version:     "1",
		Author:      "parley",
		Games:       []string{matrix.Name, sequential.Name},
		Description: "Plays its part of a Pareto-optimal pure Nash equilibrium (a mixed one when there is none, or its safest action among three or more players) in matrix games and the subgame-perfect path in game trees; announces it in talk.",
	}
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act decides one move.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	switch {
	case obs.GetMatrix() != nil:
		return a.matrixMove(obs, obs.GetMatrix())
	case obs.GetSequential() != nil:
		return a.treeMove(obs, obs.GetSequential())
	}
	return nil, fmt.Errorf("equilibrium: plays the matrix and sequential games, not %q", obs.GetGame())
}

// MatrixPlan is the profile the agent plays in a matrix game and why.
type MatrixPlan struct {
	// Profile is the pure equilibrium picked; else Mixed is set (two players), else Safest
	// (each player's safest action).
	Profile equilibria.Profile
	Mixed   *equilibria.Mixed
	Safest  []int
	// Why explains the pick.
	Why string
}

// PlanMatrix picks the equilibrium the agent plays in m (see the package doc). labels[p][i]
// is player p's action i, for the explanation.
func PlanMatrix(m *equilibria.Matrix, labels [][]string) (MatrixPlan, error) {
	name := func(p equilibria.Profile) string {
		ids := make([]string, len(p))
		for player, a := range p {
			ids[player] = labels[player][a]
		}
		return fmt.Sprintf("(%s) paying %s", strings.Join(ids, ", "), m.Payoffs(p))
	}
	names := func(ps []equilibria.Profile) string {
		var out []string
		for _, p := range ps {
			out = append(out, name(p))
		}
		return strings.Join(out, "; ")
	}
	pure := equilibria.PureNash(m)
	if len(pure) == 0 && m.Players() > 2 {
		safest := make([]int, m.Players())
		var parts []string
		for p := range safest {
			safest[p] = safestAction(m, p)
			parts = append(parts, labels[p][safest[p]])
		}
		return MatrixPlan{Safest: safest, Why: fmt.Sprintf("no pure equilibrium, and mixed equilibria of games of more than two players are not computed exactly; playing the safest action (best worst case) of each player: %s",
			strings.Join(parts, ", "))}, nil
	}
	if len(pure) == 0 {
		e, err := equilibria.ExtremeEquilibria(m)
		if err != nil {
			return MatrixPlan{}, fmt.Errorf("equilibrium: no pure equilibrium, and %w", err)
		}
		x := e.Mixed(0) // every game has an equilibrium; with no pure one, the first is mixed
		return MatrixPlan{Mixed: &x, Why: fmt.Sprintf("no pure equilibrium; playing the mixed equilibrium %s (row) / %s (column), expected payoffs %s",
			mixText(x.RowMix, labels[0]), mixText(x.ColMix, labels[1]), x.Payoffs)}, nil
	}
	cands := equilibria.Undominated(m, pure)
	best := cands[0]
	for _, p := range cands[1:] {
		if better(m, p, best) {
			best = p
		}
	}
	why := fmt.Sprintf("pure equilibria: %s", names(pure))
	if len(cands) < len(pure) {
		why += fmt.Sprintf("; not Pareto-dominated by another equilibrium: %s", names(cands))
	}
	switch {
	case len(cands) == 1 && len(pure) == 1:
		why += "; it is the only one"
	case len(cands) == 1:
		why += "; it dominates the others"
	default:
		why += "; several remain, so I pick the largest total payoff, then the most even split, then the first in order — the same rule an equilibrium player in another seat uses"
	}
	why += "; playing " + name(best)
	return MatrixPlan{Profile: best, Why: why}, nil
}

// safestAction is player's action whose worst payoff over the others' profiles is largest.
func safestAction(m *equilibria.Matrix, player int) int {
	worst := make([]*big.Rat, m.Actions(player))
	for k := range m.Len() {
		pr := m.ProfileAt(k)
		x := m.Payoffs(pr)[player]
		if a := pr[player]; worst[a] == nil || x.Cmp(worst[a]) < 0 {
			worst[a] = x
		}
	}
	best := 0
	for a, w := range worst {
		if w.Cmp(worst[best]) > 0 {
			best = a
		}
	}
	return best
}

// better orders undominated equilibria: larger total, then smaller spread between the largest
// and smallest payoff; ties keep the earlier one.
func better(m *equilibria.Matrix, p, q equilibria.Profile) bool {
	tp, tq := total(m.Payoffs(p)), total(m.Payoffs(q))
	if c := tp.Cmp(tq); c != 0 {
		return c > 0
	}
	return spread(m.Payoffs(p)).Cmp(spread(m.Payoffs(q))) < 0
}

func total(x equilibria.Payoffs) *big.Rat {
	t := new(big.Rat)
	for _, v := range x {
		t.Add(t, v)
	}
	return t
}

func spread(x equilibria.Payoffs) *big.Rat {
	lo, hi := x[0], x[0]
	for _, v := range x {
		if v.Cmp(lo) < 0 {
			lo = v
		}
		if v.Cmp(hi) > 0 {
			hi = v
		}
	}
	return new(big.Rat).Sub(hi, lo)
}

func mixText(mix []*big.Rat, labels []string) string {
	var parts []string
	for i, p := range mix {
		if p.Sign() > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", labels[i], p.RatString()))
		}
	}
	return strings.Join(parts, ", ")
}

func tableLabels(t *matrixv1.Table) [][]string {
	var out [][]string
	for _, acts := range gamefile.TableActions(t) {
		var ids []string
		for _, a := range acts {
			ids = append(ids, a.GetId())
		}
		out = append(out, ids)
	}
	return out
}

func (a *Agent) matrixMove(obs *agentv1.Observation, v *matrixv1.View) (*agentv1.Action, error) {
	// The view's payoffs are already scaled.
	m, err := gamefile.MatrixOf(v.GetTable(), big.NewRat(1, 1))
	if err != nil {
		return nil, fmt.Errorf("equilibrium: %w", err)
	}
	labels := tableLabels(v.GetTable())
	plan, err := PlanMatrix(m, labels)
	if err != nil {
		return nil, err
	}
	me := int(obs.GetSeat())
	if me < 0 || me >= m.Players() {
		return nil, fmt.Errorf("equilibrium: seat %d does not play", me)
	}
	legal := obs.GetLegalMoves()
	var choice int
	switch {
	case plan.Profile != nil:
		choice = plan.Profile[me]
	case plan.Mixed != nil:
		mix := plan.Mixed.RowMix
		if me == equilibria.Col {
			mix = plan.Mixed.ColMix
		}
		choice = draw(mix, obs)
	default:
		choice = plan.Safest[me]
	}
	mine := labels[me][choice]
	switch {
	case slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PASS):
		text := fmt.Sprintf("I will play %s.", mine)
		if plan.Profile != nil {
			var theirs []string
			for p, a := range plan.Profile {
				if p != me {
					theirs = append(theirs, labels[p][a])
				}
			}
			if len(theirs) == 1 {
				text = fmt.Sprintf("I will play %s, and I suggest you play %s: neither of us gains by changing alone.", mine, theirs[0])
			} else {
				text = fmt.Sprintf("I will play %s, and I suggest the rest of you play %s, in seat order: none of us gains by changing alone.", mine, strings.Join(theirs, ", "))
			}
		}
		return reply.Pass(text, plan.Why+"; announcing it and ending the talk"), nil
	case slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_CHOOSE):
		return reply.Choose(mine, plan.Why), nil
	}
	return nil, fmt.Errorf("equilibrium: no move it knows is legal (%v)", legal)
}

// draw picks an action from mix with a generator seeded from the match, seat and turn.
func draw(mix []*big.Rat, obs *agentv1.Observation) int {
	h := fnv.New64a()
	for _, part := range []string{obs.GetMatchId(), strconv.Itoa(int(obs.GetSeat())), strconv.Itoa(int(obs.GetTurn()))} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	u := rand.New(rand.NewPCG(h.Sum64(), 0x6571)).Float64()
	acc := 0.0
	last := 0
	for i, p := range mix {
		if p.Sign() == 0 {
			continue
		}
		f, _ := p.Float64()
		acc += f
		last = i
		if u < acc {
			return i
		}
	}
	return last
}

func (a *Agent) treeMove(obs *agentv1.Observation, v *sequentialv1.View) (*agentv1.Action, error) {
	t, err := gamefile.TreeOf(v.GetTree(), big.NewRat(1, 1))
	if err != nil {
		return nil, fmt.Errorf("equilibrium: %w", err)
	}
	spe := equilibria.BackwardInduction(t)
	node := int(v.GetNode())
	if node < 0 || node >= t.Len() || t.Node(node).Leaf() {
		return nil, fmt.Errorf("equilibrium: node %d is not a decision node", node)
	}
	nodes := v.GetTree().GetNodes()
	id := func(n, b int) string { return nodes[n].GetBranches()[b].GetId() }
	// The subgame-perfect continuation from here.
	var path []string
	for n := node; !t.Node(n).Leaf(); n = t.Node(n).Children[spe.Choice[n]] {
		path = append(path, id(n, spe.Choice[n]))
	}
	value := spe.Value[node]
	why := fmt.Sprintf("backward induction from here: %s, ending at %s", strings.Join(path, ", "), value)
	for _, tie := range spe.Ties {
		if tie.Node == node {
			var ids []string
			for _, b := range tie.Branches {
				ids = append(ids, id(node, b))
			}
			why += fmt.Sprintf("; %s are equally good for the mover here, so I take the first", strings.Join(ids, " and "))
		}
	}
	if !spe.Unique() {
		why += fmt.Sprintf("; the tree has ties at %d nodes, so several subgame-perfect equilibria exist", len(spe.Ties))
	}
	legal := obs.GetLegalMoves()
	switch {
	case slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PASS):
		return reply.Pass(
			fmt.Sprintf("Rational play from here is %s; that is what I will do.", strings.Join(path, ", ")),
			why+"; announcing it and ending the talk",
		), nil
	case slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_CHOOSE):
		return reply.Choose(id(node, spe.Choice[node]), why), nil
	}
	return nil, fmt.Errorf("equilibrium: no move it knows is legal (%v)", legal)
}
