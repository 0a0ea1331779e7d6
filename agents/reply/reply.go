// Package reply builds the actions the built-in agents answer with: a move, the message that
// goes with it and the private reasoning behind it, so that a strategy says what it does, not
// how a move is spelled. An empty text sends no message; an empty why gives no reasoning.
package reply

import (
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Accept accepts the proposal on the table.
func Accept(text, why string) *agentv1.Action {
	return With(&gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}, text, why)
}

// Reject rejects the proposal on the table.
func Reject(text, why string) *agentv1.Action {
	return With(&gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, text, why)
}

// Pass passes (in talk, ends the agent's part of it).
func Pass(text, why string) *agentv1.Action {
	return With(&gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}, text, why)
}

// Propose proposes p.
func Propose(p *gamev1.Proposal, text, why string) *agentv1.Action {
	return With(&gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: p}}}, text, why)
}

// Choose chooses option (matrix and sequential games).
func Choose(option, why string) *agentv1.Action {
	return With(&gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: option}}}, "", why)
}

// Allocation is a proposal of the shares given.
func Allocation(shares ...*gamev1.SeatShare) *gamev1.Proposal {
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: shares}}}
}

// With is the action of move with text as its public message and why as its reasoning.
func With(move *gamev1.Move, text, why string) *agentv1.Action {
	a := &agentv1.Action{Move: move, PrivateReasoning: why}
	if text != "" {
		a.Messages = []*gamev1.Message{{Text: text}}
	}
	return a
}
