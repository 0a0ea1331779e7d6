// Package coalition is a built-in agent for the coalition game that bargains for the split a
// cooperative solution concept gives. From the values in its view it computes its basis for
// the grand coalition: the Shapley value (basis=shapley) or the centroid of the core's vertices
// (basis=core, the default; the Shapley value when the core is empty or the game has more
// players than solution.MaxCorePlayers), rounded to whole units that add up exactly to the
// grand coalition's value (largest remainders, ties to the lower seat, negative shares raised
// to 0). In phase 1 it attaches that split, as a non-binding offer with a sentence explaining
// it, to every message it must write, and tells the active player whether its offer would be
// accepted; as proposer in phase 2 it proposes exactly that split; as a voter it accepts a
// proposal when its own amount is at least threshold times its basis share (threshold=1 by
// default) and rejects it otherwise. It is deterministic and keeps no state between calls.
package coalition

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/parley-arena/parley/agents/reply"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games/coalition"
	"github.com/parley-arena/parley/referee/games/coalition/solution"
)

// Basis names the solution concept the agent bargains for.
type Basis string

// The bases.
const (
	BasisCore    Basis = "core"
	BasisShapley Basis = "shapley"
)

// Config sets the agent's basis and acceptance threshold.
type Config struct {
	// Basis is the split the agent offers and proposes (default core).
	Basis Basis
	// Threshold is the least share the agent accepts, as a fraction of its basis share
	// (default 1).
	Threshold float64
}

// DefaultConfig returns the default settings.
func DefaultConfig() Config { return Config{Basis: BasisCore, Threshold: 1} }

// Validate checks the basis is known and the threshold a number from 0 to 10.
func (c Config) Validate() error {
	if c.Basis != BasisCore && c.Basis != BasisShapley {
		return fmt.Errorf("coalition agent: basis must be core or shapley, got %q", c.Basis)
	}
	// Written as "not in range" so that NaN fails.
	if !(c.Threshold >= 0 && c.Threshold <= 10) {
		return fmt.Errorf("coalition agent: threshold must be from 0 to 10, got %g", c.Threshold)
	}
	return nil
}

// Agent is the solution-concept coalition agent.
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
		Name:    "coalition",
		Version: "1",
		Author:  "parley",
		Games:   []string{coalition.Name},
		Description: fmt.Sprintf("Offers and proposes the %s split of the grand coalition (whole units); accepts proposals giving it at least %g times its share of that split.",
			a.cfg.Basis, a.cfg.Threshold),
	}
}

// plan is the agent's reading of a match: its basis split and what it means.
type plan struct {
	setup   *coalition.Setup
	split   []int64 // the basis, rounded, by seat
	basis   Basis   // the basis actually used (core falls back to shapley)
	why     string  // one sentence on the split, for messages
	exact   string  // the unrounded basis, for private reasoning
	minimum int64   // the least amount the agent accepts
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act decides one move of the coalition game.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	view := obs.GetCoalition()
	if view == nil {
		return nil, fmt.Errorf("coalition agent: plays only the coalition game, not %q", obs.GetGame())
	}
	setup, err := coalition.SetupFromView(view)
	if err != nil {
		return nil, fmt.Errorf("coalition agent: %w", err)
	}
	p, err := a.plan(setup, obs.GetSeat())
	if err != nil {
		return nil, err
	}
	me := obs.GetSeat()
	legal := obs.GetLegalMoves()
	switch {
	case slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_SAY):
		return p.talk(obs), nil
	case slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE):
		return reply.Propose(p.proposal(), "This is my binding proposal. "+p.why, p.reasoning(me)), nil
	case slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_ACCEPT):
		mine := amountFor(view.GetPending(), me, setup.Unit)
		reasoning := fmt.Sprintf("%s; the proposal gives me %d", p.reasoning(me), mine)
		if mine >= p.minimum {
			return reply.Accept(fmt.Sprintf("I accept: %s for me is enough.", setup.Amount(mine)), reasoning), nil
		}
		return reply.Reject(
			fmt.Sprintf("I reject: %s for me is less than the %s I ask for. %s", setup.Amount(mine), setup.Amount(p.minimum), p.why),
			reasoning,
		), nil
	}
	return nil, fmt.Errorf("coalition agent: no move it knows is legal (legal: %v)", legal)
}

// plan computes the basis split for seat me.
func (a *Agent) plan(s *coalition.Setup, me int32) (*plan, error) {
	g := s.Game()
	grand := s.Grand()
	total := s.Values[grand]
	shapley := g.Shapley()
	x, basis := shapley, BasisShapley
	shares := fmt.Sprintf("shares %s's %s as", s.Name(grand), s.Amount(total))
	why := "The Shapley value (each player's average contribution) " + shares
	if a.cfg.Basis == BasisCore {
		core, err := g.Core()
		switch {
		case err != nil:
			why = "This game is too large for me to compute its core, so I go by the Shapley value (each player's average contribution): it " + shares
		case core.Empty():
			why = "No split is stable (the core is empty), so I go by the Shapley value (each player's average contribution): it " + shares
		case len(core.Vertices) == 1:
			x, basis = core.Vertices[0], BasisCore
			why = "The core (the only split no coalition can beat) " + shares
		default:
			x, basis = core.Centroid(), BasisCore
			why = "The middle of the core (the splits no coalition can beat) " + shares
		}
	}
	split, err := solution.Round(x, total)
	if err != nil {
		return nil, fmt.Errorf("coalition agent: %w", err)
	}
	parts := make([]string, len(split))
	exact := make([]string, len(split))
	for i, v := range split {
		parts[i] = fmt.Sprintf("%s %s", s.Players[i], s.Amount(v))
		exact[i] = fmt.Sprintf("%s %s", s.Players[i], x[i].FloatString(2))
	}
	return &plan{
		setup:   s,
		split:   split,
		basis:   basis,
		why:     fmt.Sprintf("%s %s.", why, strings.Join(parts, ", ")),
		exact:   strings.Join(exact, ", "),
		minimum: int64(math.Ceil(a.cfg.Threshold*float64(split[me]) - 1e-9)),
	}, nil
}

func (p *plan) reasoning(me int32) string {
	return fmt.Sprintf("basis %s (exact: %s), rounded share %d; I accept %d or more", p.basis, p.exact, p.split[me], p.minimum)
}

// proposal is the basis split as an allocation: every player is a member.
func (p *plan) proposal() *gamev1.Proposal {
	alloc := &gamev1.Allocation{}
	for i, v := range p.split {
		alloc.Shares = append(alloc.Shares, &gamev1.SeatShare{Seat: int32(i), Receives: map[string]int64{p.setup.Unit: v}})
	}
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: alloc}}
}

// talk writes the messages a phase-1 turn requires, each carrying the basis split; a reply
// says whether the active player's offer to the agent would be accepted.
func (p *plan) talk(obs *agentv1.Observation) *agentv1.Action {
	me := obs.GetSeat()
	a := &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, PrivateReasoning: p.reasoning(me)}
	active := obs.GetCoalition().GetActive()
	for _, slot := range obs.GetRequiredMessages() {
		text := "I suggest we share by the numbers. " + p.why
		if me != active {
			if offered, ok := lastOffer(obs, active, me, p.setup.Unit); ok {
				verdict := fmt.Sprintf("Your offer gives me %s, less than the %s I would accept.", p.setup.Amount(offered), p.setup.Amount(p.minimum))
				if offered >= p.minimum {
					verdict = fmt.Sprintf("Your offer gives me %s, which I would accept.", p.setup.Amount(offered))
				}
				text = verdict + " " + p.why
			}
		}
		a.Messages = append(a.Messages, &gamev1.Message{To: slot.GetTo(), Text: text, Proposal: p.proposal()})
	}
	return a
}

// lastOffer returns what the latest offer from seat from to seat me gives me.
func lastOffer(obs *agentv1.Observation, from, me int32, unit string) (int64, bool) {
	hist := obs.GetHistory()
	for i := len(hist) - 1; i >= 0; i-- {
		e := hist[i]
		if e.GetFromReferee() || e.GetSeat() != from {
			continue
		}
		for _, m := range e.GetMessages() {
			if m.GetProposal() != nil && slices.Contains(m.GetTo(), me) {
				return amountFor(m.GetProposal().GetAllocation(), me, unit), true
			}
		}
	}
	return 0, false
}

// amountFor is what an allocation gives seat (0 when seat has no share).
func amountFor(alloc *gamev1.Allocation, seat int32, unit string) int64 {
	for _, sh := range alloc.GetShares() {
		if sh.GetSeat() == seat {
			return sh.GetReceives()[unit]
		}
	}
	return 0
}
