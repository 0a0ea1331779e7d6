package llm

import (
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// ReadReply reads reply as the agent reads a live answer in the named output style: the action
// it makes, checked against the legal moves and forms of obs, or why it cannot be used (a
// *ReplyError). It is the parser the agent uses, for readers of answers written elsewhere.
func ReadReply(style string, obs *agentv1.Observation, reply string) (*agentv1.Action, error) {
	st, err := styleByName(style)
	if err != nil {
		return nil, err
	}
	t := newTurn(obs)
	d, ferr := st.parse(reply, t)
	if ferr == nil {
		var action *agentv1.Action
		if action, _, ferr = t.resolve(d); ferr == nil {
			return action, nil
		}
	}
	return nil, &ReplyError{Kind: ferr.kind, Problem: ferr.msg}
}

// ReplyError says why a reply cannot be used.
type ReplyError struct {
	Kind    FailureKind
	Problem string
}

func (e *ReplyError) Error() string { return string(e.Kind) + ": " + e.Problem }
