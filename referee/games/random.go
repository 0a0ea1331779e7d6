package games

import (
	"math"
	"math/rand/v2"
	"slices"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// RandomAction returns a uniformly random action among those obs says are legal, or nil when
// obs lists no legal move. It reads only the fields every game fills (legal_moves,
// proposal_bounds, proposal_forms, choices, required_messages, message_term_forms), never a
// family's view, so it plays any game, including ones written after it:
//
//   - the kind of move is drawn uniformly from obs.LegalMoves;
//   - a proposal is an Allocation. With obs.ProposalForms set, one form is drawn uniformly and
//     filled in (see below); otherwise each of obs.ProposalBounds gets an amount drawn
//     uniformly from [Min, Max] on that bound's seat and side (for a bound whose maximum is
//     unknown, from [Min, Min+1]: a modest ask, which the referee refuses only when the other
//     seat holds none). Bounds of one seat share one
//     SeatShare, and shares appear in the order their seat first appears in the bounds. A form
//     that lists issues (a deal) gives a Deal instead: on each issue, in order, one of its
//     options drawn uniformly;
//   - a choice is drawn uniformly from obs.Choices;
//   - accept, reject, pass and say carry no payload (accept takes whatever proposal stands);
//   - whatever the move, the action carries one message per obs.RequiredMessages slot,
//     addressed as the slot says, with the text "(random message)"; when
//     obs.MessageTermForms is set, each such message carries, with probability 1/2, terms of a
//     form drawn uniformly from them.
//
// A form is filled in bound by bound. Amounts under one of the form's totals are drawn one at
// a time, in a random order, each uniformly from the range that keeps the total reachable
// with the amounts still to draw, and so add up to the total whenever the bounds allow it;
// the other amounts are drawn uniformly from their bounds.
//
// The same observation and rng state give the same action. Without required messages the
// action carries no messages; it never carries reasoning or notes.
func RandomAction(obs *agentv1.Observation, rng *rand.Rand) *agentv1.Action {
	legal := obs.GetLegalMoves()
	if len(legal) == 0 {
		return nil
	}
	move := &gamev1.Move{}
	switch legal[rng.IntN(len(legal))] {
	case gamev1.MoveKind_MOVE_KIND_PROPOSE:
		var p *gamev1.Proposal
		if forms := obs.GetProposalForms(); len(forms) > 0 {
			p = randomTerms(forms[rng.IntN(len(forms))], rng)
		} else {
			p = &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: randomAllocation(guessUnknown(obs.GetProposalBounds()), nil, rng)}}
		}
		move.Kind = &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: p}}
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
	case gamev1.MoveKind_MOVE_KIND_SAY:
		move.Kind = &gamev1.Move_Say{Say: &gamev1.Say{}}
	default:
		// An unknown kind (a newer contract than this code) is left empty; the referee will
		// refuse it with a reason, which is what a random player deserves.
	}
	action := &agentv1.Action{Move: move}
	termForms := obs.GetMessageTermForms()
	for _, slot := range obs.GetRequiredMessages() {
		m := &gamev1.Message{To: slices.Clone(slot.GetTo()), Text: RandomMessageText}
		if len(termForms) > 0 && rng.IntN(2) == 0 {
			m.Proposal = randomTerms(termForms[rng.IntN(len(termForms))], rng)
		}
		action.Messages = append(action.Messages, m)
	}
	return action
}

// RandomMessageText is the text of the messages RandomAction writes.
const RandomMessageText = "(random message)"

// randomTerms fills in one form: a Deal when the form lists issues, else an Allocation.
func randomTerms(form *gamev1.ProposalForm, rng *rand.Rand) *gamev1.Proposal {
	if issues := form.GetIssues(); len(issues) > 0 {
		return &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: randomDeal(issues, rng)}}
	}
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: randomForm(form, rng)}}
}

// randomDeal chooses, on each issue in order, one of its options uniformly (none when an issue
// lists no option, which the referee refuses).
func randomDeal(issues []*gamev1.Issue, rng *rand.Rand) *gamev1.Deal {
	d := &gamev1.Deal{}
	for _, is := range issues {
		c := &gamev1.IssueChoice{Issue: is.GetId()}
		if opts := is.GetOptions(); len(opts) > 0 {
			c.Option = opts[rng.IntN(len(opts))].GetId()
		}
		d.Choices = append(d.Choices, c)
	}
	return d
}

// randomForm fills in one proposal form: amounts under a total first, so that they add up to
// it, then the others.
func randomForm(form *gamev1.ProposalForm, rng *rand.Rand) *gamev1.Allocation {
	bounds := guessUnknown(form.GetBounds())
	fixed := make(map[int]int64)
	for _, total := range form.GetTotals() {
		var idx []int
		for i, b := range bounds {
			if b.GetSide() == total.GetSide() && b.GetResource() == total.GetResource() {
				if _, done := fixed[i]; !done {
					idx = append(idx, i)
				}
			}
		}
		rng.Shuffle(len(idx), func(i, j int) { idx[i], idx[j] = idx[j], idx[i] })
		left := total.GetTotal()
		for k, i := range idx {
			var restMin, restMax int64
			for _, j := range idx[k+1:] {
				restMin = satAdd(restMin, bounds[j].GetMin())
				restMax = satAdd(restMax, bounds[j].GetMax())
			}
			lo, hi := bounds[i].GetMin(), bounds[i].GetMax()
			if k == len(idx)-1 {
				lo, hi = max(lo, min(hi, left)), min(hi, max(lo, left))
			} else {
				lo, hi = max(lo, min(hi, satSub(left, restMax))), min(hi, max(lo, satSub(left, restMin)))
			}
			fixed[i] = uniformInt64(rng, lo, hi)
			left = satSub(left, fixed[i])
		}
	}
	return randomAllocation(bounds, fixed, rng)
}

// guessUnknown returns bounds with each unknown maximum (Bound.max_unknown) replaced by a
// modest guess, the bound's minimum plus one: legal whenever the other seat holds some of the
// resource. Bounds are copied only when one changes.
func guessUnknown(bounds []*gamev1.Bound) []*gamev1.Bound {
	if !slices.ContainsFunc(bounds, (*gamev1.Bound).GetMaxUnknown) {
		return bounds
	}
	out := make([]*gamev1.Bound, len(bounds))
	for i, b := range bounds {
		out[i] = b
		if b.GetMaxUnknown() {
			out[i] = &gamev1.Bound{Seat: b.GetSeat(), Side: b.GetSide(), Resource: b.GetResource(), Min: b.GetMin(), Max: satAdd(b.GetMin(), 1)}
		}
	}
	return out
}

// satAdd and satSub add and subtract, saturating at the ends of the int64 range.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

func satSub(a, b int64) int64 {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return satAdd(a, -b)
}

// randomAllocation fills one amount per bound, taking fixed[i] for bound i when it is set and
// drawing the others. Shares are built in the order their seats first appear so that the
// result does not depend on map iteration.
func randomAllocation(bounds []*gamev1.Bound, fixed map[int]int64, rng *rand.Rand) *gamev1.Allocation {
	alloc := &gamev1.Allocation{}
	bySeat := make(map[int32]*gamev1.SeatShare, len(bounds))
	for i, b := range bounds {
		share, ok := bySeat[b.GetSeat()]
		if !ok {
			share = &gamev1.SeatShare{Seat: b.GetSeat()}
			bySeat[b.GetSeat()] = share
			alloc.Shares = append(alloc.Shares, share)
		}
		amount, ok := fixed[i]
		if !ok {
			amount = uniformInt64(rng, b.GetMin(), b.GetMax())
		}
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
