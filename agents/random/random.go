// Package random is the built-in agent that plays a uniformly random legal action in any game.
// It is seeded: the same seed, match, seat, turn and attempt always give the same action, so
// matches against it are reproducible without the agent keeping any state.
package random

import (
	"context"
	"hash/fnv"
	"math/rand/v2"
	"strconv"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Agent plays random legal actions.
type Agent struct {
	seed uint64
}

// New returns a random agent with the given seed.
func New(seed uint64) *Agent { return &Agent{seed: seed} }

// Describe says who the agent is.
func (a *Agent) Describe() *gamev1.AgentInfo {
	return &gamev1.AgentInfo{
		Name:        "random",
		Version:     "1",
		Author:      "parley",
		Description: "Plays a uniformly random legal action, drawn from the observation's legal moves and bounds.",
	}
}

// SkipsBriefing: the agent acts on the observation's typed fields alone, never on its text.
func (*Agent) SkipsBriefing() bool { return true }

// Act returns a random legal action for obs.
func (a *Agent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	h := fnv.New64a()
	for _, part := range []string{obs.GetMatchId(), strconv.Itoa(int(obs.GetSeat())), strconv.Itoa(int(obs.GetTurn())), strconv.Itoa(int(obs.GetAttempt()))} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	rng := rand.New(rand.NewPCG(a.seed, h.Sum64()))
	return games.RandomAction(obs, rng), nil
}
