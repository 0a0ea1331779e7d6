// Package fair is a built-in ultimatum agent that bargains toward an even split. It opens by
// asking for a share a little above half and concedes linearly toward half by its last
// proposal; it accepts any offer that gives it at least what it would ask for next, and on the
// last turn, where it can only accept or reject, anything at or above its floor.
//
// The agent is deterministic and keeps no state between calls.
package fair

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/parley-arena/parley/agents/concession"
	"github.com/parley-arena/parley/agents/reply"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Config sets the agent's shares, as fractions of the total.
type Config struct {
	// Open is the share asked for on the first proposal (default 0.6).
	Open float64
	// Target is the share asked for on the last proposal (default 0.5).
	Target float64
	// Floor is the least share accepted when the only choices are accept or reject (default 0.2).
	Floor float64
}

// DefaultConfig returns the default shares.
func DefaultConfig() Config { return Config{Open: 0.6, Target: 0.5, Floor: 0.2} }

// Validate checks the shares are fractions with Floor <= Target <= Open.
func (c Config) Validate() error {
	// Written as "not in order" so that NaN, which compares false with everything, fails.
	if !(0 <= c.Floor && c.Floor <= c.Target && c.Target <= c.Open && c.Open <= 1) {
		return fmt.Errorf("fair: shares must satisfy 0 <= floor <= target <= open <= 1, got floor=%g target=%g open=%g", c.Floor, c.Target, c.Open)
	}
	return nil
}

// Agent is the fair-split ultimatum agent.
type Agent struct{ cfg Config }

// New returns an agent with cfg.
func New(cfg Config) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Agent{cfg: cfg}, nil
}

// Stateless: the agent's answers depend on its settings and each observation alone.
func (*Agent) Stateless() bool { return true }

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	return &gamev1.AgentInfo{
		Name:        "fair",
		Version:     "1",
		Author:      "parley",
		Games:       []string{"ultimatum"},
		Description: fmt.Sprintf("Asks for %.0f%% and concedes to %.0f%% by its last proposal; accepts offers at its current ask, or at least %.0f%% on the last turn.", a.cfg.Open*100, a.cfg.Target*100, a.cfg.Floor*100),
	}
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act decides on one ultimatum move.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	view := obs.GetUltimatum()
	if view == nil {
		return nil, fmt.Errorf("fair: plays only the ultimatum game, not %q", obs.GetGame())
	}
	total := view.GetParams().GetTotal()
	currency := view.GetParams().GetCurrency()
	me := obs.GetSeat()
	legal := obs.GetLegalMoves()
	canPropose := slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_PROPOSE)
	ask := a.ask(obs.GetTurn(), obs.GetMaxTurns(), total)

	if view.StandingOffer != nil && slices.Contains(legal, gamev1.MoveKind_MOVE_KIND_ACCEPT) {
		mine := shareOf(me, view.GetStandingOffer(), total)
		threshold := ask
		if !canPropose {
			threshold = int64(math.Ceil(a.cfg.Floor * float64(total)))
		}
		if mine >= threshold {
			return reply.Accept(
				fmt.Sprintf("Deal: %d %s for me is acceptable.", mine, currency),
				fmt.Sprintf("offer gives me %d, my threshold now is %d", mine, threshold),
			), nil
		}
	}
	if canPropose {
		x := ask // dollars to P2 when P2 asks
		if me == 0 {
			x = total - ask
		}
		return reply.Propose(
			reply.Allocation(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{currency: x}}),
			fmt.Sprintf("I propose %d %s for me and %d for you; close to an even split.", ask, currency, total-ask),
			fmt.Sprintf("turn %d of %d: asking for %d of %d", obs.GetTurn(), obs.GetMaxTurns(), ask, total),
		), nil
	}
	return reply.Reject("That offer is too low; no deal.", ""), nil
}

// ask is the share the agent wants on turn, conceding linearly from Open on the first turn to
// Target on the last turn that allows a proposal.
func (a *Agent) ask(turn, maxTurns int32, total int64) int64 {
	share := a.cfg.Target
	if lastProposal := maxTurns - 1; lastProposal > 1 {
		progress := concession.Linear.At(int(turn-1), int(lastProposal))
		share = a.cfg.Open + (a.cfg.Target-a.cfg.Open)*progress
	}
	return int64(math.Round(share * float64(total)))
}

// shareOf returns what an offer of x dollars to P2 gives seat.
func shareOf(seat int32, x, total int64) int64 {
	if seat == 0 {
		return total - x
	}
	return x
}
