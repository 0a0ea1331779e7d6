package games

import (
	"fmt"
	"sort"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// DescribeMove writes a move in plain words, e.g. "proposes: P1 gives 40 Dollars", naming
// seats by seatNames. One wording for every game, so transcripts read alike.
func DescribeMove(move *gamev1.Move, seatNames []string) string {
	switch k := move.GetKind().(type) {
	case *gamev1.Move_Propose:
		return "proposes: " + DescribeProposal(k.Propose.GetProposal(), seatNames)
	case *gamev1.Move_Accept:
		return "accepts"
	case *gamev1.Move_Reject:
		return "rejects"
	case *gamev1.Move_Pass:
		return "passes"
	case *gamev1.Move_Choose:
		return fmt.Sprintf("chooses %s", k.Choose.GetOption())
	case *gamev1.Move_Say:
		return "speaks"
	default:
		return "makes no move"
	}
}

// KindOf is the kind of a move, UNSPECIFIED for none: the kind listed in legal moves that the
// move's oneof branch stands for.
func KindOf(move *gamev1.Move) gamev1.MoveKind {
	switch move.GetKind().(type) {
	case *gamev1.Move_Propose:
		return gamev1.MoveKind_MOVE_KIND_PROPOSE
	case *gamev1.Move_Accept:
		return gamev1.MoveKind_MOVE_KIND_ACCEPT
	case *gamev1.Move_Reject:
		return gamev1.MoveKind_MOVE_KIND_REJECT
	case *gamev1.Move_Pass:
		return gamev1.MoveKind_MOVE_KIND_PASS
	case *gamev1.Move_Choose:
		return gamev1.MoveKind_MOVE_KIND_CHOOSE
	case *gamev1.Move_Say:
		return gamev1.MoveKind_MOVE_KIND_SAY
	default:
		return gamev1.MoveKind_MOVE_KIND_UNSPECIFIED
	}
}

// DescribeProposal writes a proposal's terms in plain words.
func DescribeProposal(p *gamev1.Proposal, seatNames []string) string {
	switch t := p.GetTerms().(type) {
	case *gamev1.Proposal_Allocation:
		return DescribeAllocation(t.Allocation, seatNames)
	case *gamev1.Proposal_Deal:
		return "deal " + DescribeDeal(t.Deal)
	default:
		return "no terms"
	}
}

// DescribeAllocation writes an allocation as "P1 gives 40 Dollars; P2 receives 3 hats". A
// division of a pool, where shares only receive (no share has a gives entry), is written as
// each share's seat and amounts, "A 500 g; B 0 g", zeros included: there a share names a
// member.
func DescribeAllocation(a *gamev1.Allocation, seatNames []string) string {
	if isDivision(a) {
		parts := make([]string, len(a.GetShares()))
		for i, sh := range a.GetShares() {
			b := DescribeBundle(sh.GetReceives())
			if b == "" {
				b = describeZeros(sh.GetReceives())
			}
			parts[i] = SeatName(sh.GetSeat(), seatNames) + " " + b
		}
		return strings.Join(parts, "; ")
	}
	var parts []string
	for _, sh := range a.GetShares() {
		name := SeatName(sh.GetSeat(), seatNames)
		if b := DescribeBundle(sh.GetGives()); b != "" {
			parts = append(parts, name+" gives "+b)
		}
		if b := DescribeBundle(sh.GetReceives()); b != "" {
			parts = append(parts, name+" receives "+b)
		}
	}
	if len(parts) == 0 {
		return "nothing changes hands"
	}
	return strings.Join(parts, "; ")
}

// isDivision reports whether a has shares, some receiving, none with a gives entry.
func isDivision(a *gamev1.Allocation) bool {
	receives := false
	for _, sh := range a.GetShares() {
		if len(sh.GetGives()) > 0 {
			return false
		}
		receives = receives || len(sh.GetReceives()) > 0
	}
	return receives
}

// describeZeros writes a bundle of zero amounts as "0 g, 0 kg", or "nothing" when empty.
func describeZeros(b map[string]int64) string {
	if len(b) == 0 {
		return "nothing"
	}
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", b[k], k)
	}
	return strings.Join(parts, ", ")
}

// DescribeBundle writes amounts of resources as "40 Dollars, 2 hats", sorted by resource
// name, leaving out zero amounts.
func DescribeBundle(b map[string]int64) string {
	keys := make([]string, 0, len(b))
	for k, v := range b {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%d %s", b[k], k)
	}
	return strings.Join(parts, ", ")
}

// SeatName returns the display name of seat, or "seat N" when it has none.
func SeatName(seat Seat, seatNames []string) string {
	if seat >= 0 && int(seat) < len(seatNames) && seatNames[seat] != "" {
		return seatNames[seat]
	}
	return fmt.Sprintf("seat %d", seat)
}

// DescribeDeal writes a deal as its options joined by commas, e.g. "A1,B1,C4,D1,E5" (the
// options as the deal names them, in its order), or "no options" when it has none.
func DescribeDeal(d *gamev1.Deal) string {
	parts := make([]string, 0, len(d.GetChoices()))
	for _, c := range d.GetChoices() {
		if c.GetOption() != "" {
			parts = append(parts, c.GetOption())
		} else {
			parts = append(parts, c.GetIssue()+"?")
		}
	}
	if len(parts) == 0 {
		return "no options"
	}
	return strings.Join(parts, ",")
}

// TermsNamer is implemented by games whose proposals read better with names only their
// parameters know, such as the options of a deal. Transcripts use it when they know the game.
type TermsNamer interface {
	// NameTerms returns a function that writes a proposal of a match with the given resolved
	// params in words, or nil when the game has nothing to add to DescribeProposal.
	NameTerms(params *matchv1.GameParams) func(p *gamev1.Proposal) string
}
