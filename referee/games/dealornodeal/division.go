package dealornodeal

import (
	"fmt"
	"slices"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	dondv1 "github.com/parley-arena/parley/gen/go/parley/games/dealornodeal/v1"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// Allocation writes a division (what Alice receives; Bob the rest) as a proposal's allocation:
// one share per seat receiving every item type, zeros included.
func Allocation(items []string, counts []int, a solution.Alloc) *gamev1.Allocation {
	out := &gamev1.Allocation{}
	for _, seat := range []int{0, 1} {
		b := a.Bundle(seat, counts)
		sh := &gamev1.SeatShare{Seat: int32(seat), Receives: make(map[string]int64, len(items))}
		for i, it := range items {
			sh.Receives[it] = int64(b[i])
		}
		out.Shares = append(out.Shares, sh)
	}
	return out
}

// Proposal wraps Allocation in a proposal.
func Proposal(items []string, counts []int, a solution.Alloc) *gamev1.Proposal {
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: Allocation(items, counts, a)}}
}

// Division reads a legal proposal's allocation (as the rules accept it) back into what Alice
// receives.
func Division(items []string, counts []int, alloc *gamev1.Allocation) (solution.Alloc, error) {
	got := [2][]int{make([]int, len(counts)), make([]int, len(counts))}
	for _, sh := range alloc.GetShares() {
		seat := sh.GetSeat()
		if seat != 0 && seat != 1 {
			return nil, fmt.Errorf("dealornodeal: the allocation names seat %d", seat)
		}
		for k, v := range sh.GetReceives() {
			i := slices.Index(items, k)
			if i < 0 {
				if v != 0 {
					return nil, fmt.Errorf("dealornodeal: no item %q", k)
				}
				continue
			}
			got[seat][i] = int(v)
		}
	}
	for i, c := range counts {
		if got[0][i]+got[1][i] != c || got[0][i] < 0 || got[1][i] < 0 {
			return nil, fmt.Errorf("dealornodeal: the allocation does not divide the %d %s", c, items[i])
		}
	}
	return solution.Alloc(got[0]), nil
}

// ViewGame returns the pool and seat's own values from its view; the opponent's values are
// unknown (left nil).
func ViewGame(v *dondv1.View, seat int) solution.Game {
	g := solution.Game{Counts: ints(v.GetCounts())}
	g.Values[seat] = ints(v.GetValues())
	return g
}

// DivisionOf reads a view's Division into what Alice receives.
func DivisionOf(d *dondv1.Division) solution.Alloc {
	if d == nil {
		return nil
	}
	return solution.Alloc(ints(d.GetAlice()))
}
