package ultimatum

import (
	"fmt"

	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
)

// Plan is what subgame-perfect play has the mover do on a turn when it does not accept.
type Plan int

const (
	// PlanReject ends the game. Played only on the last turn, where no proposal is allowed: a
	// proposal earlier is never worth less than the 0 a rejection gives.
	PlanReject Plan = iota
	// PlanOffer proposes Step.Offer, which the responder will accept.
	PlanOffer
	// PlanStall proposes Step.Offer, which the responder will decline: waiting for the
	// responder's counter-proposal pays the mover more than any offer the responder would take.
	PlanStall
)

// String returns the plan's name.
func (p Plan) String() string {
	switch p {
	case PlanReject:
		return "reject"
	case PlanOffer:
		return "offer"
	case PlanStall:
		return "stall"
	}
	return fmt.Sprintf("Plan(%d)", int(p))
}

// Step is subgame-perfect play on one turn.
type Step struct {
	// Turn is the turn, 1-based.
	Turn int32
	// Mover is the seat that moves on Turn.
	Mover games.Seat
	// Value is what each seat (indexed by seat) ends with when the mover does not accept the
	// standing proposal and both then play subgame-perfectly. The mover accepts a standing
	// proposal only when it gives the mover more than Value[Mover] (or as much, when the
	// responder convention accepts indifferent offers).
	Value [2]int64
	// Plan is what the mover does when it does not accept.
	Plan Plan
	// Offer is x, the amount P1 gives P2, of the proposal to make under PlanOffer and PlanStall.
	// A stalling proposal gives the responder nothing. Zero under PlanReject.
	Offer int64
}

// Equilibrium is subgame-perfect play of a multi-turn ultimatum, found by backward induction in
// whole units. It is the game-theory benchmark of the spec: the player who makes the last
// possible proposal takes all but one unit (all of it when indifferent responders accept).
//
// Conventions, which the spec leaves open and which decide the exact numbers:
//   - a responder accepts an offer strictly better than playing on, or, with
//     AcceptIndifferent, at least as good;
//   - a mover who does equally well by an accepted offer and by a stalling one makes the
//     accepted offer (a deal now rather than later);
//   - before the last turn a mover proposes rather than rejects, since a proposal is worth at
//     least the 0 that a rejection gives.
type Equilibrium struct {
	// Total is the amount split.
	Total int64
	// MaxTurns is the game's last turn.
	MaxTurns int32
	// AcceptIndifferent is the responder convention (see Solve).
	AcceptIndifferent bool

	steps []Step // steps[t-1] is turn t
}

// Solve computes subgame-perfect play for a game splitting total over maxTurns turns, in
// O(maxTurns) time and space. With acceptIndifferent false a responder accepts only offers
// strictly better than playing on (so the last proposer keeps all but one unit); with true it
// also accepts offers exactly as good (so the last proposer keeps everything).
//
// total may be any non-negative int64 (amounts never overflow); maxTurns runs from 1 to
// bargain.MaxMaxTurns, the limit of the engine the game plays on.
func Solve(total int64, maxTurns int32, acceptIndifferent bool) (*Equilibrium, error) {
	switch {
	case total < 0:
		return nil, fmt.Errorf("ultimatum: total must not be negative, got %d", total)
	case maxTurns < 1 || maxTurns > bargain.MaxMaxTurns:
		return nil, fmt.Errorf("ultimatum: max_turns must be from 1 to %d, got %d", bargain.MaxMaxTurns, maxTurns)
	}
	e := &Equilibrium{Total: total, MaxTurns: maxTurns, AcceptIndifferent: acceptIndifferent, steps: make([]Step, maxTurns)}
	// The last turn allows no proposal: not accepting means rejecting, and both get 0.
	e.steps[maxTurns-1] = Step{Turn: maxTurns, Mover: moverOf(maxTurns), Plan: PlanReject}
	for t := maxTurns - 1; t >= 1; t-- {
		next := e.steps[t] // turn t+1, where the responder decides
		mover, responder := moverOf(t), moverOf(t+1)
		playOn := next.Value[responder] // what the responder gets by not accepting
		// need is the least share the responder accepts; with a strict responder that is one
		// unit more than playing on, which may be more than there is.
		need, canBuy := playOn, true
		if !acceptIndifferent {
			need, canBuy = playOn+1, playOn < total
		}
		step := Step{Turn: t, Mover: mover}
		if canBuy && total-need >= next.Value[mover] {
			step.Plan = PlanOffer
			step.Offer = offerGiving(responder, need, total)
			step.Value[mover], step.Value[responder] = total-need, need
		} else {
			// need >= 1 here (a zero need would always be worth buying), so an offer giving
			// the responder nothing is surely declined.
			step.Plan = PlanStall
			step.Offer = offerGiving(responder, 0, total)
			step.Value = next.Value
		}
		e.steps[t-1] = step
	}
	return e, nil
}

// moverOf returns the seat that moves on turn t: P1 on odd turns, P2 on even ones.
func moverOf(t int32) games.Seat { return (t + 1) % 2 }

// offerGiving returns x, the amount P1 gives P2, such that seat gets amount.
func offerGiving(seat games.Seat, amount, total int64) int64 {
	if seat == P2 {
		return amount
	}
	return total - amount
}

// Step returns subgame-perfect play on turn, and false when turn is not a turn of the game.
func (e *Equilibrium) Step(turn int32) (Step, bool) {
	if turn < 1 || turn > e.MaxTurns {
		return Step{}, false
	}
	return e.steps[turn-1], true
}

// Steps returns every turn's step, turn 1 first. The slice is a copy.
func (e *Equilibrium) Steps() []Step {
	return append([]Step(nil), e.steps...)
}

// Payoffs returns what each seat (indexed by seat) gets when both play subgame-perfectly from
// the start.
func (e *Equilibrium) Payoffs() [2]int64 { return e.steps[0].Value }

// ShouldAccept reports whether the mover of turn should accept a standing proposal in which P1
// gives x to P2. It is false on turn 1 (nothing can stand), outside the game's turns, and for
// x outside [0, Total].
func (e *Equilibrium) ShouldAccept(turn int32, x int64) bool {
	if turn < 2 || turn > e.MaxTurns || x < 0 || x > e.Total {
		return false
	}
	step := e.steps[turn-1]
	get, playOn := share(step.Mover, x, e.Total), step.Value[step.Mover]
	if e.AcceptIndifferent {
		return get >= playOn
	}
	return get > playOn
}
