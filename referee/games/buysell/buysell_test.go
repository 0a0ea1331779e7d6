package buysell_test

import (
	"fmt"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/referee/games/gametest"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// params wraps buysell Params in GameParams.
// resolved is p resolved, as the rules and Values take params.
func resolved(t *testing.T, p *buysellv1.Params) *matchv1.GameParams {
	t.Helper()
	r, err := buysell.New().Resolve(params(p))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func params(p *buysellv1.Params) *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: p}}
}

// Moves used by the tests.
func propose(price int64) *agentv1.Action {
	return proposeShares(
		&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 1}},
		&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"ZUP": price}})
}

func proposeShares(shares ...*gamev1.SeatShare) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: shares}},
	}}}}}
}

func accept(turn int32) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{ProposalTurn: turn}}}}
}

func reject() *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}
}

func pass() *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}
}

// play starts a match and applies moves, alternating seller, buyer, ...; it fails on refusal.
func play(t testing.TB, p *matchv1.GameParams, seed uint64, moves ...*agentv1.Action) games.State {
	t.Helper()
	st, err := games.Start(buysell.New(), p, seed)
	if err != nil {
		t.Fatalf("NewState: %v", err)
	}
	for i, a := range moves {
		if _, err := st.Apply(games.Seat(i%2), a); err != nil {
			t.Fatalf("move %d (%v): %v", i+1, a, err)
		}
	}
	return st
}

// Private values no price can equal, since each exceeds the budget.
var (
	secretFixed = &buysellv1.Params{Cost: proto.Int64(4321), Willingness: proto.Int64(8765), Budget: proto.Int64(1000)}
	secretDrawn = &buysellv1.Params{Draw: proto.Bool(true), Budget: proto.Int64(1000),
		CostMin: proto.Int64(4000), CostMax: proto.Int64(4999), WillingnessMin: proto.Int64(8000), WillingnessMax: proto.Int64(8999)}
)

func TestConformance(t *testing.T) {
	gametest.Run(t, buysell.New(),
		nil,
		params(&buysellv1.Params{Draw: proto.Bool(true)}),
		params(&buysellv1.Params{Scale: proto.Int64(1000)}),
		params(&buysellv1.Params{Willingness: proto.Int64(400), SelfInterestedBuyer: proto.Bool(true)}),
		params(&buysellv1.Params{Cost: proto.Int64(60), Willingness: proto.Int64(40)}),
		params(&buysellv1.Params{MaxTurns: proto.Int32(1)}),
		params(&buysellv1.Params{MaxTurns: proto.Int32(3), MaxProposals: proto.Int32(0), Item: proto.String("Widget"), Currency: proto.String("Euro")}),
		params(&buysellv1.Params{MaxTurns: proto.Int32(40), MaxProposals: proto.Int32(1), Budget: proto.Int64(0)}),
	)
}

// TestPrivacy runs the suite where its checks of values drawn from the seed apply: they look
// for the drawn numbers in the other seat's observations, so they need four digits and a
// budget no price can reach them under. (Cost and willingness given as parameters are checked
// in every variant, from the proto's declaration.)
func TestPrivacy(t *testing.T) {
	gametest.Run(t, buysell.New(), params(secretDrawn), params(secretFixed))
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name   string
		params *matchv1.GameParams
		moves  []*agentv1.Action
		seat   games.Seat
		action *agentv1.Action
		code   gamev1.RejectionCode
		msg    []string
	}{
		{
			name: "price above the budget", seat: 0, action: propose(101),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS,
			msg:  []string{"the buyer (P2) holds only 100 ZUP and cannot give 101", `0 <= p <= 100: seat 0 (the seller) gives {"X": 1} and seat 1 (the buyer) gives {"ZUP": p}`},
		},
		{
			name: "negative price", seat: 0, action: propose(-5),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"cannot be negative", "P2 has -5 ZUP"},
		},
		{
			name: "seller gives two items", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 2}}, &gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"ZUP": 50}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"holds only 1 X and cannot give 2"},
		},
		{
			name: "seller keeps the item", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"ZUP": 50}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"must give its 1 X"},
		},
		{
			name: "seller gives money it does not have", moves: []*agentv1.Action{propose(70)}, seat: 1,
			action: proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 1, "ZUP": 5}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"the seller (P1) holds no ZUP"},
		},
		{
			name: "buyer gives an item it does not have", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 1}}, &gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"X": 1}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"the buyer (P2) holds no X"},
		},
		{
			name: "wrong resource name", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 1}}, &gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"Dollars": 5}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{`no resource "Dollars"`, "the resources are X and ZUP"},
		},
		{
			name: "renamed currency", params: params(&buysellv1.Params{Currency: proto.String("Euro")}), seat: 0, action: propose(5),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{`no resource "ZUP"`, "the resources are X and Euro"},
		},
		{
			name: "scaled budget", params: params(&buysellv1.Params{Scale: proto.Int64(1000)}), seat: 0, action: propose(100_001),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"holds only 100000 ZUP"},
		},
		{
			name: "receives from a pool", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 1}, Receives: map[string]int64{"ZUP": 50}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"P1 cannot receive 50 ZUP from a pool"},
		},
		{
			name: "no allocation", seat: 0, action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{}}}},
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"no allocation"},
		},
		{
			name: "accept with no standing proposal", seat: 0, action: accept(0),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"no proposal to accept on turn 1", "legal now: propose or reject"},
		},
		{
			name: "accept a stale proposal", moves: []*agentv1.Action{propose(90), propose(10)}, seat: 0, action: accept(1),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"proposal of turn 1", "P2's of turn 2", "P1 sells 1 X to P2 for 10 ZUP", "proposal_turn to 2 or 0"},
		},
		{
			name: "accept naming one's own proposal", moves: []*agentv1.Action{propose(90), propose(10), propose(80)}, seat: 1, action: accept(2),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"P1's of turn 3"},
		},
		{
			name: "pass does not exist", seat: 0, action: pass(),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"the buyer/seller game has no pass move", "legal now: propose or reject"},
		},
		{
			name: "proposal past the limit", params: params(&buysellv1.Params{MaxTurns: proto.Int32(6)}),
			moves: []*agentv1.Action{propose(90), propose(10), propose(80), propose(20)}, seat: 0, action: propose(70),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"P1 has made all 2 of its proposals", "legal now: accept or reject"},
		},
		{
			name: "out of turn", seat: 1, action: reject(),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"it is P1's turn (turn 1 of 10), not P2"},
		},
		{
			name: "after the end", moves: []*agentv1.Action{reject()}, seat: 1, action: reject(),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"game is over"},
		},
		{
			name: "message with terms", seat: 0,
			action: &agentv1.Action{Move: reject().Move, Messages: []*gamev1.Message{{Text: "hi", Proposal: propose(5).Move.GetPropose().Proposal}}},
			code:   gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := play(t, tc.params, 0, tc.moves...)
			before := []*agentv1.Observation{st.Observe(0), st.Observe(1)}
			_, err := st.Apply(tc.seat, tc.action)
			rej, ok := games.AsRejection(err)
			if !ok {
				t.Fatalf("Apply = %v, want a *games.Rejection", err)
			}
			if rej.Code != tc.code {
				t.Errorf("code = %v, want %v (%s)", rej.Code, tc.code, rej.Message)
			}
			for _, m := range tc.msg {
				if !strings.Contains(rej.Message, m) {
					t.Errorf("message %q does not contain %q", rej.Message, m)
				}
			}
			for s, b := range before {
				if !proto.Equal(st.Observe(games.Seat(s)), b) {
					t.Errorf("seat %d's observation changed after a refusal", s)
				}
			}
		})
	}
}

func TestEndings(t *testing.T) {
	tests := []struct {
		name    string
		params  *matchv1.GameParams
		moves   []*agentv1.Action
		cause   matchv1.EndCause
		payoffs []float64
		summary string
	}{
		{
			name: "buyer accepts the opening", moves: []*agentv1.Action{propose(55), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{15, 5},
			summary: "P2 accepted P1's offer: P1 sells 1 X to P2 for 55 ZUP.",
		},
		{
			name: "seller accepts the counter, naming its turn", moves: []*agentv1.Action{propose(90), propose(45), accept(2)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{5, 15},
		},
		{
			name: "a loss for the seller", moves: []*agentv1.Action{propose(30), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{-10, 30},
		},
		{
			name: "contrasting values: any sale loses someone", params: params(&buysellv1.Params{Cost: proto.Int64(60), Willingness: proto.Int64(40)}),
			moves: []*agentv1.Action{propose(50), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{-10, -10},
		},
		{
			name: "scaled", params: params(&buysellv1.Params{Scale: proto.Int64(1000)}),
			moves: []*agentv1.Action{propose(52_000), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{12_000, 8_000},
		},
		{
			name: "seller rejects at once", moves: []*agentv1.Action{reject()},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, payoffs: []float64{0, 0},
			summary: "P1 rejected on turn 1, so there is no sale and both get 0.",
		},
		{
			name: "buyer rejects a price", moves: []*agentv1.Action{propose(99), reject()},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, payoffs: []float64{0, 0},
			summary: "P2 rejected P1's offer (P1 sells 1 X to P2 for 99 ZUP) on turn 2, so there is no sale and both get 0.",
		},
		{
			name: "turn limit", params: params(&buysellv1.Params{MaxTurns: proto.Int32(4), MaxProposals: proto.Int32(0)}),
			moves: []*agentv1.Action{propose(90), propose(10), propose(80), propose(20)},
			cause: matchv1.EndCause_END_CAUSE_TURN_LIMIT, payoffs: []float64{0, 0},
			summary: "No proposal was accepted in the 4 turns of the game, so there is no sale and both get 0.",
		},
		{
			name: "accept on the last turn", params: params(&buysellv1.Params{MaxTurns: proto.Int32(2)}),
			moves: []*agentv1.Action{propose(50), accept(1)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{10, 10},
		},
		{
			name: "the default move rejects", moves: []*agentv1.Action{propose(50), play(t, nil, 0).Default(1)},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, payoffs: []float64{0, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := play(t, tc.params, 0, tc.moves...)
			if len(st.ToMove()) != 0 {
				t.Fatalf("ToMove() = %v, want the game over", st.ToMove())
			}
			out := st.Outcome()
			if out.GetCause() != tc.cause || fmt.Sprint(out.GetPayoffs()) != fmt.Sprint(tc.payoffs) {
				t.Errorf("outcome %v, want cause %v payoffs %v", out, tc.cause, tc.payoffs)
			}
			if out.GetAgreement() != (tc.cause == matchv1.EndCause_END_CAUSE_AGREEMENT) {
				t.Errorf("agreement = %v with cause %v", out.GetAgreement(), out.GetCause())
			}
			if tc.summary != "" && out.GetSummary() != tc.summary {
				t.Errorf("summary = %q, want %q", out.GetSummary(), tc.summary)
			}
			for s := range games.Seat(2) {
				obs := st.Observe(s)
				if obs.GetPhase() != "" || len(obs.GetLegalMoves()) != 0 || obs.GetBuysell().GetTurnsLeft() != 0 {
					t.Errorf("seat %d after the end: %v", s, obs)
				}
			}
		})
	}
}

// TestHoldingsAfterSale checks that the sale moves the item and the money in the views.
func TestHoldingsAfterSale(t *testing.T) {
	st := play(t, nil, 0, propose(55), accept(0))
	seller, buyer := st.Observe(0).GetBuysell().GetHoldings(), st.Observe(1).GetBuysell().GetHoldings()
	if seller["X"] != 0 || seller["ZUP"] != 55 || buyer["X"] != 1 || buyer["ZUP"] != 45 {
		t.Errorf("after a sale at 55: seller holds %v, buyer %v", seller, buyer)
	}
}

func TestObservation(t *testing.T) {
	var (
		pr = gamev1.MoveKind_MOVE_KIND_PROPOSE
		ac = gamev1.MoveKind_MOVE_KIND_ACCEPT
		rj = gamev1.MoveKind_MOVE_KIND_REJECT
	)
	six := params(&buysellv1.Params{MaxTurns: proto.Int32(6)}) // 2 proposals each
	tests := []struct {
		name     string
		params   *matchv1.GameParams
		moves    []*agentv1.Action
		mover    games.Seat
		legal    []gamev1.MoveKind
		standing int64 // -1: none
		own      int64 // -1: none
		left     int32 // proposals left
	}{
		{name: "turn 1", mover: 0, legal: []gamev1.MoveKind{pr, rj}, standing: -1, own: -1, left: 4},
		{name: "turn 2", moves: []*agentv1.Action{propose(80)}, mover: 1, legal: []gamev1.MoveKind{pr, ac, rj}, standing: 80, own: -1, left: 4},
		{name: "turn 3", moves: []*agentv1.Action{propose(80), propose(30)}, mover: 0, legal: []gamev1.MoveKind{pr, ac, rj}, standing: 30, own: 80, left: 3},
		{name: "limit reached", params: six, moves: []*agentv1.Action{propose(90), propose(10), propose(80), propose(20)}, mover: 0, legal: []gamev1.MoveKind{ac, rj}, standing: 20, own: 80, left: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := play(t, tc.params, 0, tc.moves...)
			obs, other := st.Observe(tc.mover), st.Observe(1-tc.mover)
			if fmt.Sprint(obs.GetLegalMoves()) != fmt.Sprint(tc.legal) {
				t.Errorf("legal moves %v, want %v", obs.GetLegalMoves(), tc.legal)
			}
			if len(other.GetLegalMoves()) != 0 || len(other.GetProposalBounds()) != 0 {
				t.Errorf("the waiting seat has legal moves %v and bounds %v", other.GetLegalMoves(), other.GetProposalBounds())
			}
			if tc.legal[0] == pr {
				want := []*gamev1.Bound{
					{Seat: 0, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: "X", Min: 1, Max: 1},
					{Seat: 1, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: "ZUP", Min: 0, Max: 100},
				}
				if b := obs.GetProposalBounds(); len(b) != 2 || !proto.Equal(b[0], want[0]) || !proto.Equal(b[1], want[1]) {
					t.Errorf("bounds %v, want %v", b, want)
				}
			} else if len(obs.GetProposalBounds()) != 0 {
				t.Errorf("bounds %v with no proposal allowed", obs.GetProposalBounds())
			}
			v := obs.GetBuysell()
			if (tc.standing < 0) != (v.StandingPrice == nil) || (tc.standing >= 0 && v.GetStandingPrice() != tc.standing) {
				t.Errorf("standing price %v, want %d", v.StandingPrice, tc.standing)
			}
			if (tc.own < 0) != (v.OwnPrice == nil) || (tc.own >= 0 && v.GetOwnPrice() != tc.own) {
				t.Errorf("own price %v, want %d", v.OwnPrice, tc.own)
			}
			if other.GetBuysell().StandingPrice != nil {
				t.Errorf("the waiting seat sees a standing price it cannot accept")
			}
			if v.GetProposalsLeft() != tc.left {
				t.Errorf("proposals left %d, want %d", v.GetProposalsLeft(), tc.left)
			}
			if !strings.Contains(obs.GetBriefing(), fmt.Sprintf("It is turn %d of", len(tc.moves)+1)) {
				t.Errorf("briefing does not restate the turn:\n%s", obs.GetBriefing())
			}
		})
	}
}

// TestViewsHoldOnlyOwnValue checks each view's private value and role.
func TestViewsHoldOnlyOwnValue(t *testing.T) {
	st := play(t, params(secretFixed), 0, propose(500))
	seller, buyer := st.Observe(0), st.Observe(1)
	if v := seller.GetBuysell(); v.GetRole() != "seller" || v.GetPrivateValue() != 4321 || v.GetHoldings()["X"] != 1 {
		t.Errorf("seller's view %v", v)
	}
	if v := buyer.GetBuysell(); v.GetRole() != "buyer" || v.GetPrivateValue() != 8765 || v.GetHoldings()["ZUP"] != 1000 {
		t.Errorf("buyer's view %v", v)
	}
	if strings.Contains(seller.String(), "8765") || strings.Contains(buyer.String(), "4321") {
		t.Error("a seat sees the other's private value")
	}
}

func TestValues(t *testing.T) {
	// Fixed values are scaled.
	if c, w, err := buysell.Values(resolved(t, &buysellv1.Params{Scale: proto.Int64(3)}), 9); err != nil || c != 120 || w != 180 {
		t.Errorf("Values with scale 3 = %d, %d, %v; want 120, 180", c, w, err)
	}
	// Drawn values fall in the scaled ranges, depend on the seed only, and cover the range.
	drawn := resolved(t, &buysellv1.Params{Draw: proto.Bool(true), Scale: proto.Int64(2)})
	seenCost, seenW := map[int64]bool{}, map[int64]bool{}
	for seed := range uint64(2000) {
		c, w, err := buysell.Values(drawn, seed)
		if err != nil {
			t.Fatal(err)
		}
		if c < 40 || c > 80 || w < 120 || w > 160 {
			t.Fatalf("seed %d: cost %d, willingness %d outside [40,80] and [120,160]", seed, c, w)
		}
		if c2, w2, _ := buysell.Values(drawn, seed); c2 != c || w2 != w {
			t.Fatalf("seed %d: two draws differ", seed)
		}
		seenCost[c], seenW[w] = true, true
		obs := play(t, drawn, seed).Observe(0)
		if obs.GetBuysell().GetPrivateValue() != c {
			t.Fatalf("seed %d: the seller's view says %d, Values %d", seed, obs.GetBuysell().GetPrivateValue(), c)
		}
	}
	if len(seenCost) != 41 || len(seenW) != 41 {
		t.Errorf("drew %d costs and %d willingnesses, want all 41 of each range", len(seenCost), len(seenW))
	}
}

func TestResolve(t *testing.T) {
	full := func(mod func(p *buysellv1.Params)) *matchv1.GameParams {
		p := &buysellv1.Params{
			Cost: proto.Int64(40), Willingness: proto.Int64(60), Budget: proto.Int64(100), MaxTurns: proto.Int32(10),
			MaxProposals: proto.Int32(4), Scale: proto.Int64(1), Draw: proto.Bool(false), CostMin: proto.Int64(20), CostMax: proto.Int64(40),
			WillingnessMin: proto.Int64(60), WillingnessMax: proto.Int64(80), Item: proto.String("X"), Currency: proto.String("ZUP"),
			SelfInterestedBuyer: proto.Bool(false),
		}
		if mod != nil {
			mod(p)
		}
		return params(p)
	}
	tests := []struct {
		name    string
		in      *matchv1.GameParams
		want    *matchv1.GameParams
		wantErr string
	}{
		{name: "nil", in: nil, want: full(nil)},
		{name: "empty", in: params(&buysellv1.Params{}), want: full(nil)},
		{name: "max_proposals follows max_turns", in: params(&buysellv1.Params{MaxTurns: proto.Int32(8)}),
			want: full(func(p *buysellv1.Params) { p.MaxTurns, p.MaxProposals = proto.Int32(8), proto.Int32(3) })},
		{name: "short games have no proposal limit", in: params(&buysellv1.Params{MaxTurns: proto.Int32(3)}),
			want: full(func(p *buysellv1.Params) { p.MaxTurns, p.MaxProposals = proto.Int32(3), proto.Int32(0) })},
		{name: "draw leaves the values unset", in: params(&buysellv1.Params{Draw: proto.Bool(true)}),
			want: full(func(p *buysellv1.Params) { p.Draw, p.Cost, p.Willingness = proto.Bool(true), nil, nil })},
		{name: "draw with a cost", in: params(&buysellv1.Params{Draw: proto.Bool(true), Cost: proto.Int64(3)}), wantErr: "cost and willingness are drawn when draw=true"},
		{name: "zero scale", in: params(&buysellv1.Params{Scale: proto.Int64(0)}), wantErr: "scale must be at least 1"},
		{name: "negative cost", in: params(&buysellv1.Params{Cost: proto.Int64(-1)}), wantErr: "buysell: cost must be at least 0, got -1"},
		{name: "overflowing scale", in: params(&buysellv1.Params{Scale: proto.Int64(1 << 50)}), wantErr: "cost times scale must be at most 9007199254740992 (2^53)"},
		{name: "empty range", in: params(&buysellv1.Params{CostMin: proto.Int64(50)}), wantErr: "cost_min (50) must not exceed cost_max (40)"},
		{name: "zero turns", in: params(&buysellv1.Params{MaxTurns: proto.Int32(0)}), wantErr: "max_turns must be from 1"},
		{name: "negative proposals", in: params(&buysellv1.Params{MaxProposals: proto.Int32(-1)}), wantErr: "buysell: max_proposals must be at least 0, got -1"},
		{name: "item is currency", in: params(&buysellv1.Params{Item: proto.String("ZUP")}), wantErr: "item and currency must differ"},
		{name: "two-word item", in: params(&buysellv1.Params{Item: proto.String("a hat")}), wantErr: "buysell: item must be one word"},
		{name: "another game's params", in: &matchv1.GameParams{Family: &matchv1.GameParams_Trading{}}, wantErr: `params are for the "trading" game`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := buysell.New().Resolve(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve error = %v, want %q", err, tc.wantErr)
				}
				if _, err := buysell.New().NewState(tc.in, 0); err == nil {
					t.Errorf("NewState accepts what Resolve refuses")
				}
				return
			}
			if err != nil || !proto.Equal(got, tc.want) {
				t.Fatalf("Resolve = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestInfo(t *testing.T) {
	info := buysell.New().Info()
	if info.GetName() != "buysell" || fmt.Sprint(info.GetSeatRoles()) != "[seller buyer]" {
		t.Errorf("Info() = %v", info)
	}
	// Every field of Params is listed, with its default as Resolve fills it in.
	fields := (&buysellv1.Params{}).ProtoReflect().Descriptor().Fields()
	if len(info.GetParams()) != fields.Len() {
		t.Errorf("%d params listed, Params has %d fields", len(info.GetParams()), fields.Len())
	}
	resolved, err := buysell.New().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	formatted := strings.Join(games.FormatParams(resolved), " ")
	for _, p := range info.GetParams() {
		if fields.ByName(protoreflect.Name(p.GetName())) == nil || p.GetDescription() == "" || p.GetKind() == 0 {
			t.Errorf("param %v: no such field, or no kind or description", p)
		}
		if !strings.Contains(" "+formatted+" ", " "+p.GetName()+"="+p.GetDefaultValue()+" ") {
			t.Errorf("param %s: default %q is not what Resolve gives (%s)", p.GetName(), p.GetDefaultValue(), formatted)
		}
	}
}
