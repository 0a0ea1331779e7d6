package games

import (
	"math/rand/v2"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// RandomAction returns a uniformly random action among those obs says are legal, or nil when
// obs lists no legal move. It reads only the fields every game fills (legal_moves,
// proposal_bounds, choices), never a family's view, so it plays any game, including ones
// written after it:
//
//   - the kind of move is drawn uniformly from obs.LegalMoves;
//   - a proposal is an Allocation with, for each of obs.ProposalBounds, an amount drawn
//     uniformly from [Min, Max] on that bound's seat and side; bounds of one seat share one
//     SeatShare, and shares appear in the order their seat first appears in the bounds;
//   - a choice is drawn uniformly from obs.Choices;
//   - accept, reject and pass carry no payload (accept takes whatever proposal stands).
//
// The same observation and rng state give the same action. The action carries no messages,
// reasoning or notes.
func RandomAction(obs *agentv1.Observation, rng *rand.Rand) *agentv1.Action {
	legal := obs.GetLegalMoves()
	if len(legal) == 0 {
		return nil
	}
	move := &gamev1.Move{}
	switch legal[rng.IntN(len(legal))] {
	case gamev1.MoveKind_MOVE_KIND_PROPOSE:
		move.Kind = &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
			Terms: &gamev1.Proposal_Allocation{Allocation: randomAllocation(obs.GetProposalBounds(), rng)},
		}}}
	case gamev1.MoveKind_MOVE_KIND_ACCEPT:
		move.Kind = &gamev1.Move_Accept{Accept: &gamev1.Accept{}}
	case gamev1.MoveKind_MOVE_KIND_REJECT:
		move.Kind = &gamev1.Move_Reject{Reject: &gamev1.Reject{}}
	case gamev1.MoveKind_MOVE_KIND_PASS:
		move.Kind = &gamev1.Move_Pass{Pass: &gamev1.Pass{}}
	case gamev1.MoveKind_MOVE_KIND_CHOOSE:
		choose := &gamev1.Choose{}
		if choices := obs.GetChoices(); len(choices) > 0 {
			choose.Option = choices[rng.IntN(len(choices))].GetId()
		}
		move.Kind = &gamev1.Move_Choose{Choose: choose}
	default:
		// An unknown kind (a newer contract than this code) is left empty; the referee will
		// refuse it with a reason, which is what a random player deserves.
	}
	return &agentv1.Action{Move: move}
}

// randomAllocation fills one amount per bound. Shares are built in the order their seats first
// appear so that the result does not depend on map iteration.
func randomAllocation(bounds []*gamev1.Bound, rng *rand.Rand) *gamev1.Allocation {
	alloc := &gamev1.Allocation{}
	bySeat := make(map[int32]*gamev1.SeatShare, len(bounds))
	for _, b := range bounds {
		share, ok := bySeat[b.GetSeat()]
		if !ok {
			share = &gamev1.SeatShare{Seat: b.GetSeat()}
			bySeat[b.GetSeat()] = share
			alloc.Shares = append(alloc.Shares, share)
		}
		amount := uniformInt64(rng, b.GetMin(), b.GetMax())
		switch b.GetSide() {
		case gamev1.ShareSide_SHARE_SIDE_RECEIVES:
			if share.Receives == nil {
				share.Receives = make(map[string]int64)
			}
			share.Receives[b.GetResource()] = amount
		default:
			// GIVES, and UNSPECIFIED read as the trade side: the referee refuses a bad bound
			// either way, and the amount is still in range.
			if share.Gives == nil {
				share.Gives = make(map[string]int64)
			}
			share.Gives[b.GetResource()] = amount
		}
	}
	return alloc
}

// uniformInt64 draws uniformly from [lo, hi]; an empty range (hi < lo) gives lo. It works over
// the whole int64 range, where hi-lo+1 overflows.
func uniformInt64(rng *rand.Rand, lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	span := uint64(hi) - uint64(lo) + 1 // wraps to 0 only for the full int64 range
	if span == 0 {
		return int64(rng.Uint64())
	}
	return lo + int64(rng.Uint64N(span))
}
