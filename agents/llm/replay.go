package llm

import (
	"fmt"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Reading is how the agent read one reply: whether it could be used, and if not, why.
type Reading struct {
	// Usable is true when the reply gave a legal action as it stood.
	Usable bool
	// Kind and Problem say why it could not be used (Kind empty when it could).
	Kind    FailureKind
	Problem string
}

// Replay returns the action the agent would have returned for obs had its model answered
// with reply: the reply read by the agent's output style and checked against what is legal
// (the very parser a live answer goes through), else, when it cannot be used, the agent's own
// fallback move, marked as one. No model is asked; the reply is kept as the action's raw
// output, within the agent's MaxRawBytes. This is how published transcripts of real models
// are read into matches.
func (a *Agent) Replay(obs *agentv1.Observation, reply string) (*agentv1.Action, Reading) {
	t := newTurn(obs)
	mv := &moveState{model: a.cfg.Model, raw: []string{reply}}
	log := a.logger.With("match_id", obs.GetMatchId(), "game", obs.GetGame(), "seat", obs.GetSeat(), "turn", obs.GetTurn())
	var kept *gamev1.Move
	reasoning := ""
	d, ferr := a.style.parse(reply, t)
	if ferr == nil {
		var action *agentv1.Action
		if action, kept, ferr = t.resolve(d); ferr == nil {
			return a.finish(t, mv, action, nil, "", log), Reading{Usable: true}
		}
		reasoning = d.reasoning
	}
	mv.formatFailures++
	mv.failures = append(mv.failures, fmt.Sprintf("reply 1 unusable (%s): %s", ferr.kind, ferr.msg))
	a.count(ferr.kind)
	return a.finish(t, mv, nil, kept, reasoning, log), Reading{Kind: ferr.kind, Problem: ferr.msg}
}
