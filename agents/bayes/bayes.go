// Package bayes is the built-in Deal-or-No-Deal agent that follows the Bayesian workflow of
// specs/deal-or-no-deal.md exactly, in exact rational arithmetic:
//
//  1. Its belief starts uniform over every value vector the opponent could have (whole values
//     per type, the pool worth the same total as to itself).
//  2. Candidates are the allocations envy-free (EF) for itself and EF for the opponent under
//     at least one vector of the belief's support, leaving out every allocation the opponent
//     has rejected. It proposes the candidate with the highest own score; ties go to the larger
//     belief mass of being EF for the opponent, then the larger expected opponent score, then
//     its own enumeration order (its own counts ascending, the first type slowest).
//  3. When the opponent rejects its proposal L — answers it with a proposal of its own instead
//     of accepting (a pass lets L lapse and says nothing) — every vector v of the support is
//     weighed: likelihood 1 if under v L was not EF for the opponent; gamma (default 1) if it
//     was, but some allocation EF for the agent gives the opponent more under v; 0 otherwise.
//     The new belief is (1 - lambda) old + lambda posterior (lambda default 1), zero vectors
//     dropped, renormalised. If every vector gets likelihood 0, it restarts from the uniform
//     belief and applies this rejection alone.
//  4. When the opponent proposes an allocation, the vectors under which it would not be EF for
//     the opponent are dropped, unless that would empty the support. On a turn that brings both,
//     3 comes before 4.
//  5. It accepts the opponent's standing proposal when that is EF for itself and either worth
//     at least as much to it as the proposal it would make next, or it has no candidate left.
//     Otherwise it proposes its next candidate; with none left, the best allocation EF for
//     itself and not yet rejected, ignoring the belief (if all were rejected, the best EF one).
//
// The "or it has no candidate left" of step 5 is read as part of the acceptance condition
// (an EF proposal is accepted once the belief leaves nothing to ask for), since the spec's own
// fallback proposal for that case would otherwise never be reached.
//
// The agent keeps no state between calls: it replays the match history in each observation,
// so every step is a pure function of what it saw. Its private notes carry its belief support
// on a line solution.FormatSupport writes (metrics read it back from the record to compute
// the estimation metrics); its private reasoning says the support size, the rejections and why
// it proposes or accepts, and ends with the same support line.
package bayes

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/parley-arena/parley/agents/reply"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// Config holds the workflow's two settings.
type Config struct {
	// Gamma is the likelihood of rejecting a proposal that was EF for the opponent when a
	// better one for it existed; from 0 to 1 (default 1).
	Gamma *big.Rat
	// Lambda mixes the posterior into the old belief; above 0, at most 1 (default 1). Below 1
	// no vector ever reaches probability 0 through rejections.
	Lambda *big.Rat
}

// DefaultConfig returns gamma = lambda = 1.
func DefaultConfig() Config { return Config{Gamma: big.NewRat(1, 1), Lambda: big.NewRat(1, 1)} }

// Validate checks the settings' ranges.
func (c Config) Validate() error {
	zero, one := new(big.Rat), big.NewRat(1, 1)
	switch {
	case c.Gamma == nil || c.Gamma.Cmp(zero) < 0 || c.Gamma.Cmp(one) > 0:
		return fmt.Errorf("bayes: gamma must be from 0 to 1")
	case c.Lambda == nil || c.Lambda.Cmp(zero) <= 0 || c.Lambda.Cmp(one) > 0:
		return fmt.Errorf("bayes: lambda must be above 0 and at most 1")
	}
	return nil
}

// Agent is the Bayesian workflow agent.
type Agent struct{ cfg Config }

// New returns an agent with cfg.
func New(cfg Config) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Agent{cfg: cfg}, nil
}

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	return &gamev1.AgentInfo{
		Name:    "bayes",
		Version: "1",
		Author:  "parley",
		Games:   []string{dealornodeal.Name},
		Description: fmt.Sprintf("Deal or No Deal: the Bayesian workflow (belief over the opponent's values, EF candidates, updates on rejections and proposals; gamma %s, lambda %s).",
			a.cfg.Gamma.RatString(), a.cfg.Lambda.RatString()),
	}
}

// State is what the agent concludes from a history: its belief, the allocations the opponent
// rejected, and how often the belief restarted.
type State struct {
	Belief   Belief
	Rejected []solution.Alloc
	Restarts int
}

// Replay runs steps 3 and 4 over the visible history of the agent in seat me.
func (a *Agent) Replay(g solution.Game, items []string, me int, history []*agentv1.HistoryEntry) (*State, error) {
	if err := checkSize(g, me); err != nil {
		return nil, err
	}
	m := newModel(g, me, a.cfg.Gamma, a.cfg.Lambda)
	return m.replay(items, history)
}

func (m *model) replay(items []string, history []*agentv1.HistoryEntry) (*State, error) {
	st := &State{Belief: uniform(m.prior)}
	var own solution.Alloc
	ownTurn := int32(-1)
	for _, e := range history {
		if e.GetFromReferee() {
			continue
		}
		p := e.GetMove().GetPropose()
		if p == nil {
			continue
		}
		alloc, err := dealornodeal.Division(items, m.g.Counts, p.GetProposal().GetAllocation())
		if err != nil {
			return nil, fmt.Errorf("bayes: turn %d: %w", e.GetTurn(), err)
		}
		if int(e.GetSeat()) == m.me {
			own, ownTurn = alloc, e.GetTurn()
			continue
		}
		if own != nil && ownTurn == e.GetTurn()-1 {
			var restarted bool
			st.Belief, restarted = m.rejected(st.Belief, own)
			if restarted {
				st.Restarts++
			}
			if solution.Index(st.Rejected, own) < 0 {
				st.Rejected = append(st.Rejected, own)
			}
		}
		st.Belief = m.proposed(st.Belief, alloc)
	}
	return st, nil
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act decides one move. It stops when ctx ends, and refuses set-ups too large to weigh in
// one move.
func (a *Agent) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	v := obs.GetDealornodeal()
	if v == nil {
		return nil, fmt.Errorf("bayes: plays Deal or No Deal only, not %q", obs.GetGame())
	}
	me := int(obs.GetSeat())
	g := dealornodeal.ViewGame(v, me)
	items := v.GetItems()
	if err := checkSize(g, me); err != nil {
		return nil, err
	}
	m := newModel(g, me, a.cfg.Gamma, a.cfg.Lambda)
	m.ctx = ctx
	st, err := m.replay(items, obs.GetHistory())
	if err != nil {
		return nil, err
	}
	cands := m.candidates(st.Belief, st.Rejected)
	if m.err != nil {
		return nil, fmt.Errorf("bayes: %w", m.err)
	}
	var next solution.Alloc
	why := ""
	if len(cands) > 0 {
		next = cands[0].a
		why = fmt.Sprintf("best candidate of %d: %s worth %d to me, EF for you with probability %s", len(cands), m.text(items, next), m.own(next), cands[0].efMass.RatString())
	} else {
		next = m.fallback(st.Rejected)
		why = fmt.Sprintf("no candidate left; the best allocation EF for me not yet rejected: %s worth %d to me", m.text(items, next), m.own(next))
	}
	support := st.Belief.Support()
	notes := supportNote(support, len(m.prior))
	reasoning := fmt.Sprintf("belief support %d of %d vectors; %d of my proposals rejected", len(support), len(m.prior), len(st.Rejected))
	if st.Restarts > 0 {
		reasoning += fmt.Sprintf("; belief restarted %d times (the opponent rejected what a rational one would accept)", st.Restarts)
	}

	legal := obs.GetLegalMoves()
	if s := dealornodeal.DivisionOf(v.GetStanding()); s != nil && slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_ACCEPT) {
		if m.efSelf2(s) && (len(cands) == 0 || m.own(s) >= m.own(next)) {
			return noted(reply.Accept("Deal.", fmt.Sprintf("%s; accepting %s: EF for me and worth %d, at least what I would propose next (%s)\n%s", reasoning, m.text(items, s), m.own(s), why, notes)), notes), nil
		}
	}
	if !slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE) {
		return noted(reply.Pass("", reasoning+"; no proposal is legal\n"+notes), notes), nil
	}
	return noted(reply.Propose(dealornodeal.Proposal(items, g.Counts, next), fmt.Sprintf("I propose %s.", m.text(items, next)), reasoning+"; proposing the "+why+"\n"+notes), notes), nil
}

// noted gives a the belief support line as its private notes (the metrics read it there).
func noted(a *agentv1.Action, notes string) *agentv1.Action {
	a.PrivateNotes = notes
	return a
}

// supportNote writes the belief support, or only its size when the list would not fit the
// action's note.
func supportNote(support [][]int, prior int) string {
	note := solution.FormatSupport(support)
	if len(note) > games.MaxTextBytes/2 { // the reasoning repeats it: both must fit
		note = fmt.Sprintf("belief-support-size: %d", len(support))
	}
	return note + fmt.Sprintf("\nprior-size: %d", prior)
}

// text writes an allocation from the agent's side: "I get 1 book, you get 2 hats, 2 balls".
func (m *model) text(items []string, a solution.Alloc) string {
	bundle := func(b []int) string {
		var parts []string
		for i, x := range b {
			if x > 0 {
				name := items[i]
				if x != 1 {
					name += "s"
				}
				parts = append(parts, fmt.Sprintf("%d %s", x, name))
			}
		}
		if len(parts) == 0 {
			return "nothing"
		}
		return strings.Join(parts, ", ")
	}
	return fmt.Sprintf("I get %s, you get %s", bundle(a.Bundle(m.me, m.g.Counts)), bundle(a.Bundle(m.opp(), m.g.Counts)))
}
