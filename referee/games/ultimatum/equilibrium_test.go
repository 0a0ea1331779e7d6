package ultimatum

import (
	"fmt"
	"math"
	"testing"

	"github.com/parley-arena/parley/referee/games/bargain"
)

// TestSolveSpecFacts checks the benchmark numbers the spec states, worked out by hand.
func TestSolveSpecFacts(t *testing.T) {
	tests := []struct {
		name        string
		total       int64
		maxTurns    int32
		indifferent bool
		want        [2]int64 // payoffs of P1, P2 under equilibrium play
		// Turn on which the accepted offer is made, and that offer.
		dealTurn  int32
		dealOffer int64
	}{
		// max_turns even: P1 makes the last possible proposal (turn 7) and keeps all but one.
		{name: "defaults", total: 100, maxTurns: 8, want: [2]int64{99, 1}, dealTurn: 7, dealOffer: 1},
		{name: "defaults, indifferent responder", total: 100, maxTurns: 8, indifferent: true, want: [2]int64{100, 0}, dealTurn: 1, dealOffer: 0},
		// The classic one-shot ultimatum: P1 offers 1, P2 accepts anything positive.
		{name: "two turns", total: 100, maxTurns: 2, want: [2]int64{99, 1}, dealTurn: 1, dealOffer: 1},
		{name: "two turns of 10", total: 10, maxTurns: 2, want: [2]int64{9, 1}, dealTurn: 1, dealOffer: 1},
		// P2 makes the last proposal (turn 2) and asks for 9 of 10; P1 accepts on turn 3.
		{name: "three turns of 10", total: 10, maxTurns: 3, want: [2]int64{1, 9}, dealTurn: 2, dealOffer: 9},
		{name: "three turns of 10, indifferent", total: 10, maxTurns: 3, indifferent: true, want: [2]int64{0, 10}, dealTurn: 1, dealOffer: 10},
		// One turn: P1 can only reject.
		{name: "one turn", total: 100, maxTurns: 1, want: [2]int64{0, 0}},
		// Amounts far beyond 32 bits.
		{name: "ten to the twelfth", total: 1_000_000_000_000, maxTurns: 8, want: [2]int64{999_999_999_999, 1}, dealTurn: 7, dealOffer: 1},
		{name: "ten to the twelfth, odd", total: 1_000_000_000_000, maxTurns: 9, want: [2]int64{1, 999_999_999_999}, dealTurn: 8, dealOffer: 999_999_999_999},
		{name: "largest int64", total: math.MaxInt64, maxTurns: 4, want: [2]int64{math.MaxInt64 - 1, 1}, dealTurn: 3, dealOffer: 1},
		{name: "largest int64, indifferent", total: math.MaxInt64, maxTurns: 5, indifferent: true, want: [2]int64{0, math.MaxInt64}, dealTurn: 1, dealOffer: math.MaxInt64},
		{name: "longest game", total: 100, maxTurns: bargain.MaxMaxTurns, want: [2]int64{99, 1}, dealTurn: bargain.MaxMaxTurns - 1, dealOffer: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Solve(tc.total, tc.maxTurns, tc.indifferent)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.Payoffs(); got != tc.want {
				t.Errorf("Payoffs() = %v, want %v", got, tc.want)
			}
			// Follow equilibrium play: stall until the first accepted offer.
			var turn int32 = 1
			for ; turn <= tc.maxTurns; turn++ {
				if st, _ := e.Step(turn); st.Plan != PlanStall {
					break
				}
			}
			st, _ := e.Step(turn)
			if tc.dealTurn == 0 {
				if st.Plan != PlanReject || turn != tc.maxTurns {
					t.Errorf("play reaches %v on turn %d, want reject on the last turn", st.Plan, turn)
				}
				return
			}
			if st.Plan != PlanOffer || turn != tc.dealTurn || st.Offer != tc.dealOffer {
				t.Errorf("first non-stalling move is %v %d on turn %d, want offer %d on turn %d", st.Plan, st.Offer, turn, tc.dealOffer, tc.dealTurn)
			}
			if !e.ShouldAccept(turn+1, st.Offer) {
				t.Errorf("ShouldAccept(%d, %d) = false for the equilibrium offer", turn+1, st.Offer)
			}
		})
	}
}

func TestShouldAcceptSpecFacts(t *testing.T) {
	tests := []struct {
		name        string
		total       int64
		maxTurns    int32
		indifferent bool
		turn        int32
		x           int64
		want        bool
	}{
		{"one-shot: P2 accepts 1", 100, 2, false, 2, 1, true},
		{"one-shot: P2 accepts anything positive", 100, 2, false, 2, 37, true},
		{"one-shot: strict P2 refuses 0", 100, 2, false, 2, 0, false},
		{"one-shot: indifferent P2 accepts 0", 100, 2, true, 2, 0, true},
		{"three turns: P1 accepts giving 9 of 10", 10, 3, false, 3, 9, true},
		{"three turns: P1 refuses giving all 10", 10, 3, false, 3, 10, false},
		{"three turns: P2 on turn 2 refuses 1, it can ask for 9", 10, 3, false, 2, 1, false},
		{"three turns: P2 on turn 2 takes 10", 10, 3, false, 2, 10, true},
		{"defaults: P2 on turn 8 accepts 1", 100, 8, false, 8, 1, true},
		{"defaults: P1 on turn 7 refuses keeping 1, it can keep 99", 100, 8, false, 7, 99, false},
		{"turn 1 has nothing to accept", 100, 8, false, 1, 0, false},
		{"beyond the last turn", 100, 8, false, 9, 50, false},
		{"negative offer", 100, 8, false, 2, -1, false},
		{"offer above the total", 100, 8, false, 2, 101, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Solve(tc.total, tc.maxTurns, tc.indifferent)
			if err != nil {
				t.Fatal(err)
			}
			if got := e.ShouldAccept(tc.turn, tc.x); got != tc.want {
				t.Errorf("ShouldAccept(%d, %d) = %v, want %v", tc.turn, tc.x, got, tc.want)
			}
		})
	}
}

func TestSolveRefusesBadInput(t *testing.T) {
	tests := []struct {
		name     string
		total    int64
		maxTurns int32
	}{
		{"negative total", -1, 8},
		{"zero turns", 100, 0},
		{"too many turns", 100, bargain.MaxMaxTurns + 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if e, err := Solve(tc.total, tc.maxTurns, false); err == nil {
				t.Errorf("Solve(%d, %d) = %v, want an error", tc.total, tc.maxTurns, e)
			}
		})
	}
}

// bruteResult is the outcome of subgame-perfect play from one node of the full game tree.
type bruteResult struct {
	pay      [2]int64
	accepted bool // the mover at this node accepted the standing proposal
	// Without accepting: the move chosen and, for a proposal, its x.
	kind Plan
	x    int64
}

// brute solves the game by exhaustive search of the tree, sharing no code with Solve: at each
// node every proposal x in 0..total is tried, and the responder's accept-or-not is settled by
// comparing the two subtrees. standing < 0 means no proposal stands. Ties follow the
// conventions documented on Equilibrium: the mover prefers an accepted offer, then a declined
// proposal, then rejecting.
func brute(total int64, maxTurns, turn int32, standing int64, indifferent bool) bruteResult {
	mover := int((turn + 1) % 2)
	best := bruteResult{kind: PlanReject} // rejecting: both 0
	rank := func(p Plan) int {
		return map[Plan]int{PlanReject: 0, PlanStall: 1, PlanOffer: 2}[p]
	}
	if turn < maxTurns {
		for x := int64(0); x <= total; x++ {
			r := brute(total, maxTurns, turn+1, x, indifferent)
			cand := bruteResult{pay: r.pay, kind: PlanStall, x: x}
			if r.accepted {
				cand.kind = PlanOffer
			}
			if cand.pay[mover] > best.pay[mover] || (cand.pay[mover] == best.pay[mover] && rank(cand.kind) > rank(best.kind)) {
				best = cand
			}
		}
	}
	if standing >= 0 {
		acc := [2]int64{total - standing, standing}
		if acc[mover] > best.pay[mover] || (indifferent && acc[mover] == best.pay[mover]) {
			return bruteResult{pay: acc, accepted: true}
		}
	}
	return best
}

// TestSolveMatchesBruteForce compares Solve with an exhaustive search on every small game.
func TestSolveMatchesBruteForce(t *testing.T) {
	for total := int64(0); total <= 6; total++ {
		for maxTurns := int32(1); maxTurns <= 5; maxTurns++ {
			for _, indifferent := range []bool{false, true} {
				t.Run(fmt.Sprintf("total=%d,turns=%d,indifferent=%v", total, maxTurns, indifferent), func(t *testing.T) {
					e, err := Solve(total, maxTurns, indifferent)
					if err != nil {
						t.Fatal(err)
					}
					for turn := int32(1); turn <= maxTurns; turn++ {
						st, _ := e.Step(turn)
						// No standing proposal: the value of playing on, and the plan.
						b := brute(total, maxTurns, turn, -1, indifferent)
						if st.Value != b.pay || st.Plan != b.kind {
							t.Errorf("turn %d: Solve gives %v %v, brute force %v %v", turn, st.Plan, st.Value, b.kind, b.pay)
						}
						switch st.Plan {
						case PlanOffer:
							if st.Offer != b.x {
								t.Errorf("turn %d: Solve offers %d, brute force %d", turn, st.Offer, b.x)
							}
						case PlanStall:
							// Any declined proposal does; check Solve's is one.
							if r := brute(total, maxTurns, turn+1, st.Offer, indifferent); r.accepted || r.pay != st.Value {
								t.Errorf("turn %d: stalling offer %d is accepted (%v) or pays %v, not %v", turn, st.Offer, r.accepted, r.pay, st.Value)
							}
						}
						if turn == 1 {
							continue
						}
						for x := int64(0); x <= total; x++ {
							b := brute(total, maxTurns, turn, x, indifferent)
							if got := e.ShouldAccept(turn, x); got != b.accepted {
								t.Errorf("ShouldAccept(%d, %d) = %v, brute force %v", turn, x, got, b.accepted)
							}
						}
					}
					if got, want := e.Payoffs(), brute(total, maxTurns, 1, -1, indifferent).pay; got != want {
						t.Errorf("Payoffs() = %v, brute force %v", got, want)
					}
				})
			}
		}
	}
}

// TestSolveLastProposerTakesAllButOne checks the spec's rule over many totals and lengths: the
// player who makes the last possible proposal (on turn max_turns-1) takes all but one unit.
func TestSolveLastProposerTakesAllButOne(t *testing.T) {
	for _, total := range []int64{2, 3, 10, 100, 12345, 1e10, 1e12} {
		for maxTurns := int32(2); maxTurns <= 12; maxTurns++ {
			t.Run(fmt.Sprintf("total=%d,turns=%d", total, maxTurns), func(t *testing.T) {
				e, err := Solve(total, maxTurns, false)
				if err != nil {
					t.Fatal(err)
				}
				lastProposer := moverOf(maxTurns - 1)
				want := [2]int64{1, 1}
				want[lastProposer] = total - 1
				if got := e.Payoffs(); got != want {
					t.Errorf("Payoffs() = %v, want %v (last proposer %s)", got, want, seatNames[lastProposer])
				}
			})
		}
	}
}
