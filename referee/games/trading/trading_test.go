package trading_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/trading"
	"google.golang.org/protobuf/proto"
)

func params(p *tradingv1.Params) *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Trading{Trading: p}}
}

// goals15 is the default holdings with both goals "at least 15 X and 15 Y".
func goals15() *matchv1.GameParams {
	return params(&tradingv1.Params{P1Goal: map[string]int64{"X": 15, "Y": 15}, P2Goal: map[string]int64{"X": 15, "Y": 15}})
}

// trade proposes that P1 give p1 and P2 give p2.
func trade(p1, p2 map[string]int64) *agentv1.Action {
	return proposeShares(&gamev1.SeatShare{Seat: 0, Gives: p1}, &gamev1.SeatShare{Seat: 1, Gives: p2})
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

type bundle = map[string]int64

// play starts a match and applies moves, alternating P1, P2, ...; it fails on refusal.
func play(t testing.TB, p *matchv1.GameParams, moves ...*agentv1.Action) games.State {
	t.Helper()
	st, err := games.Start(trading.New(), p, 0)
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

// TestConformance runs the shared suite, which also checks that neither seat's holdings nor
// goal (private, as trading.proto declares them) ever reach the other seat.
func TestConformance(t *testing.T) {
	gametest.Run(t, trading.New(),
		nil,
		goals15(),
		params(&tradingv1.Params{P2Holdings: bundle{"X": 5, "Y": 25, "Z": 10, "W": 7}}),
		params(&tradingv1.Params{MaxTurns: proto.Int32(1)}),
		params(&tradingv1.Params{MaxTurns: proto.Int32(3), MaxProposals: proto.Int32(0), P1Holdings: bundle{"Gold": 0}}),
		params(&tradingv1.Params{MaxTurns: proto.Int32(14), MaxProposals: proto.Int32(1), P1Goal: bundle{"X": 0}}),
	)
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
			name: "giving more than one holds", seat: 0, action: trade(bundle{"X": 26}, nil),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS,
			msg:  []string{"you (P1) hold only 25 X and cannot give 26", "seat 0 (P1) gives {resource: amount, ...}", "resources among X and Y"},
		},
		{
			name: "asking the opponent for more than it holds", seat: 0, action: trade(nil, bundle{"X": 6}),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"P2 does not hold 6 X to give", "you cannot see what P2 holds"},
		},
		{
			name: "giving what one does not have", params: params(&tradingv1.Params{P2Holdings: bundle{"X": 5, "Z": 3}}), seat: 0,
			action: trade(bundle{"Z": 1}, nil),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"you (P1) have no Z to give"},
		},
		{
			name: "asking for what the opponent does not have", params: params(&tradingv1.Params{P1Holdings: bundle{"X": 5, "Z": 3}}), seat: 0,
			action: trade(nil, bundle{"Z": 1}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"P2 does not hold 1 Z to give"},
		},
		{
			name: "negative amount", seat: 0, action: trade(bundle{"X": -3}, nil),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"amounts cannot be negative, but P1 has -3 X"},
		},
		{
			name: "wrong resource name", seat: 0, action: trade(bundle{"x": 1}, nil),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{`no resource "x"`, "the resources are X and Y"},
		},
		{
			name: "receives from a pool", seat: 0, action: proposeShares(&gamev1.SeatShare{Seat: 1, Receives: bundle{"X": 3}}),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"P2 cannot receive 3 X from a pool"},
		},
		{
			name: "a seat that does not play", seat: 0, action: proposeShares(&gamev1.SeatShare{Seat: 2, Gives: bundle{"X": 3}}),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"names seat 2"},
		},
		{
			name: "two shares for a seat", seat: 0, action: proposeShares(&gamev1.SeatShare{Seat: 0}, &gamev1.SeatShare{Seat: 0}),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"two shares for seat 0"},
		},
		{
			name: "proposals past the limit", moves: []*agentv1.Action{trade(bundle{"X": 1}, nil), pass(), trade(bundle{"X": 2}, nil), pass(), trade(bundle{"X": 3}, nil), pass()},
			seat: 0, action: trade(bundle{"X": 4}, nil),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"P1 has made all 3 of its proposals", "legal now: pass"},
		},
		{
			name: "accept with no standing proposal", seat: 0, action: accept(0),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"no proposal to accept on turn 1", "legal now: propose or pass"},
		},
		{
			name: "accept after a pass", moves: []*agentv1.Action{trade(bundle{"X": 1}, nil), pass()}, seat: 0, action: accept(0),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"no proposal to accept on turn 3"},
		},
		{
			name: "accept a proposal older than the last turn", moves: []*agentv1.Action{trade(bundle{"X": 1}, nil), trade(nil, bundle{"Y": 1}), pass()}, seat: 1, action: accept(0),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"no proposal to accept on turn 4"},
		},
		{
			name: "accept a stale proposal_turn", moves: []*agentv1.Action{trade(bundle{"X": 1}, nil), trade(nil, bundle{"Y": 1})}, seat: 0, action: accept(1),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"proposal of turn 1", "P2's of turn 2 (P1 gives nothing; P2 gives {Y: 1})", "proposal_turn to 2 or 0"},
		},
		{
			name: "reject does not exist", seat: 0, action: reject(),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"the resource-exchange game has no reject move", "legal now: propose or pass"},
		},
		{
			name: "out of turn", seat: 1, action: pass(),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"it is P1's turn (turn 1 of 8), not P2"},
		},
		{
			name: "after the end", moves: []*agentv1.Action{trade(nil, nil), accept(0)}, seat: 0, action: pass(),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"game is over"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := play(t, tc.params, tc.moves...)
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
		name     string
		params   *matchv1.GameParams
		moves    []*agentv1.Action
		cause    matchv1.EndCause
		payoffs  []float64
		holdings [2]bundle
		summary  string
	}{
		{
			name: "a trade accepted", moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 8}), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{-2, 2},
			holdings: [2]bundle{{"X": 15, "Y": 13}, {"X": 15, "Y": 17}},
			summary:  "P2 accepted P1's offer: P1 gives {X: 10}; P2 gives {Y: 8}.",
		},
		{
			name: "both sides give the same resource", moves: []*agentv1.Action{trade(bundle{"X": 3}, bundle{"X": 5, "Y": 1}), accept(1)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{3, -3},
			holdings: [2]bundle{{"X": 27, "Y": 6}, {"X": 3, "Y": 24}},
		},
		{
			name: "goals met by both", params: goals15(), moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 10}), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{1, 1},
			holdings: [2]bundle{{"X": 15, "Y": 15}, {"X": 15, "Y": 15}},
		},
		{
			name: "a goal missed by one", params: goals15(), moves: []*agentv1.Action{trade(bundle{"X": 10}, bundle{"Y": 9}), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{0, 1},
		},
		{
			name: "a goal met without trading", params: params(&tradingv1.Params{P1Goal: bundle{"X": 20}}),
			moves: []*agentv1.Action{pass(), pass(), pass(), pass(), pass(), pass(), pass(), pass()},
			cause: matchv1.EndCause_END_CAUSE_TURN_LIMIT, payoffs: []float64{1, 0},
			summary: "No proposal was accepted in the 8 turns of the game, so nothing changes hands.",
		},
		{
			name: "the turn limit after a last proposal", params: params(&tradingv1.Params{MaxTurns: proto.Int32(2)}),
			moves: []*agentv1.Action{trade(bundle{"X": 1}, nil), trade(nil, bundle{"Y": 1})},
			cause: matchv1.EndCause_END_CAUSE_TURN_LIMIT, payoffs: []float64{0, 0},
			holdings: [2]bundle{{"X": 25, "Y": 5}, {"X": 5, "Y": 25}},
		},
		{
			name: "an empty trade accepted", moves: []*agentv1.Action{trade(nil, nil), accept(1)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{0, 0},
			summary: "P2 accepted P1's offer: P1 gives nothing; P2 gives nothing.",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := play(t, tc.params, tc.moves...)
			if len(st.ToMove()) != 0 {
				t.Fatalf("ToMove() = %v, want the game over", st.ToMove())
			}
			out := st.Outcome()
			if out.GetCause() != tc.cause || fmt.Sprint(out.GetPayoffs()) != fmt.Sprint(tc.payoffs) {
				t.Errorf("outcome %v, want cause %v payoffs %v", out, tc.cause, tc.payoffs)
			}
			if tc.summary != "" && out.GetSummary() != tc.summary {
				t.Errorf("summary = %q, want %q", out.GetSummary(), tc.summary)
			}
			for s := range games.Seat(2) {
				v := st.Observe(s).GetTrading()
				if tc.holdings[s] != nil && fmt.Sprint(v.GetHoldings()) != fmt.Sprint(tc.holdings[s]) {
					t.Errorf("seat %d holds %v, want %v", s, v.GetHoldings(), tc.holdings[s])
				}
			}
		})
	}
}

func TestObservation(t *testing.T) {
	var (
		pr = gamev1.MoveKind_MOVE_KIND_PROPOSE
		ac = gamev1.MoveKind_MOVE_KIND_ACCEPT
		ps = gamev1.MoveKind_MOVE_KIND_PASS
	)
	p := params(&tradingv1.Params{P1Goal: bundle{"Y": 15}, P2Holdings: bundle{"X": 5, "Y": 25, "Z": 10}})
	st := play(t, p)
	obs := st.Observe(0)
	if fmt.Sprint(obs.GetLegalMoves()) != fmt.Sprint([]gamev1.MoveKind{pr, ps}) {
		t.Errorf("turn 1 legal moves %v", obs.GetLegalMoves())
	}
	v := obs.GetTrading()
	if fmt.Sprint(v.GetResources()) != "[X Y Z]" || fmt.Sprint(v.GetHoldings()) != "map[X:25 Y:5]" || fmt.Sprint(v.GetGoal()) != "map[Y:15]" ||
		v.GetProposalsLeft() != 3 || v.GetTurnsLeft() != 7 {
		t.Errorf("P1's view %v", v)
	}
	// Own side up to what P1 holds; P2's side with no known upper limit, as P1 cannot see
	// P2's holdings.
	if got, want := boundsText(obs), "[0:X:0-25 0:Y:0-5 0:Z:0-0 1:X:0-? 1:Y:0-? 1:Z:0-?]"; got != want {
		t.Errorf("bounds %v, want %s", got, want)
	}
	if w := st.Observe(1).GetTrading(); w.GetGoal() != nil || fmt.Sprint(w.GetHoldings()) != "map[X:5 Y:25 Z:10]" {
		t.Errorf("P2's view %v", w)
	}

	st = play(t, p, trade(bundle{"X": 10}, bundle{"Y": 10}))
	obs = st.Observe(1)
	if fmt.Sprint(obs.GetLegalMoves()) != fmt.Sprint([]gamev1.MoveKind{pr, ac, ps}) {
		t.Errorf("turn 2 legal moves %v", obs.GetLegalMoves())
	}
	want := &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: bundle{"X": 10}}, {Seat: 1, Gives: bundle{"Y": 10}}}}
	if !proto.Equal(obs.GetTrading().GetStandingProposal(), want) {
		t.Errorf("standing proposal %v, want %v", obs.GetTrading().GetStandingProposal(), want)
	}
	if w := st.Observe(0).GetTrading(); !proto.Equal(w.GetOwnProposal(), want) || w.GetStandingProposal() != nil {
		t.Errorf("P1's view of its own proposal: %v", w)
	}

	// The bound on P2's side is the rules' own: P1 may ask for all P2 holds (25 Y, 10 Z), which
	// it cannot see, and is refused one unit more, without learning what P2 holds.
	st = play(t, p)
	if _, err := st.Apply(0, trade(bundle{"X": 1}, bundle{"Y": 25, "Z": 10})); err != nil {
		t.Errorf("asking for all P2 holds was refused: %v", err)
	}
	st = play(t, p)
	_, err := st.Apply(0, trade(bundle{"X": 1}, bundle{"Y": 26}))
	if rej, ok := games.AsRejection(err); !ok || strings.Contains(rej.Message, "25") {
		t.Errorf("asking for 26 Y of P2's 25: %v", err)
	}

	// After a pass, nothing stands.
	st = play(t, p, trade(bundle{"X": 10}, bundle{"Y": 10}), pass())
	if v := st.Observe(0).GetTrading(); v.GetStandingProposal() != nil || len(st.Observe(0).GetLegalMoves()) != 2 {
		t.Errorf("after a pass: %v, legal %v", v, st.Observe(0).GetLegalMoves())
	}
}

func TestResolve(t *testing.T) {
	defaults := &tradingv1.Params{MaxTurns: proto.Int32(8), MaxProposals: proto.Int32(3), P1Holdings: bundle{"X": 25, "Y": 5}, P2Holdings: bundle{"X": 5, "Y": 25}}
	tests := []struct {
		name    string
		in      *matchv1.GameParams
		want    *tradingv1.Params
		wantErr string
	}{
		{name: "nil", in: nil, want: defaults},
		{name: "empty maps take the defaults", in: params(&tradingv1.Params{P1Holdings: bundle{}}), want: defaults},
		{name: "goals and more resources", in: params(&tradingv1.Params{MaxTurns: proto.Int32(12), P2Holdings: bundle{"X": 5, "Y": 25, "Z": 10, "W": 7}, P1Goal: bundle{"W": 1}}),
			want: &tradingv1.Params{MaxTurns: proto.Int32(12), MaxProposals: proto.Int32(5), P1Holdings: bundle{"X": 25, "Y": 5}, P2Holdings: bundle{"X": 5, "Y": 25, "Z": 10, "W": 7}, P1Goal: bundle{"W": 1}}},
		{name: "goal outside play", in: params(&tradingv1.Params{P2Goal: bundle{"Gold": 1}}), wantErr: "p2_goal names Gold, which is not in play (the resources are those the holdings name: X, Y)"},
		{name: "negative holding", in: params(&tradingv1.Params{P1Holdings: bundle{"X": -1}}), wantErr: "trading: p1_holdings X must be at least 0, got -1"},
		{name: "negative goal", in: params(&tradingv1.Params{P1Goal: bundle{"X": -1}}), wantErr: "trading: p1_goal X must be at least 0, got -1"},
		{name: "odd resource name", in: params(&tradingv1.Params{P1Holdings: bundle{"two words": 1}}), wantErr: "trading: p1_holdings key must be one word"},
		{name: "amounts too large together", in: params(&tradingv1.Params{P1Holdings: bundle{"X": 1 << 52}, P2Holdings: bundle{"X": 1 << 52, "Y": 1}}), wantErr: "add up to at most"},
		{name: "zero turns", in: params(&tradingv1.Params{MaxTurns: proto.Int32(0)}), wantErr: "max_turns must be from 1"},
		{name: "negative proposals", in: params(&tradingv1.Params{MaxProposals: proto.Int32(-2)}), wantErr: "trading: max_proposals must be at least 0, got -2"},
		{name: "another game's params", in: &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{}}, wantErr: `params are for the "buysell" game`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := trading.New().Resolve(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve error = %v, want %q", err, tc.wantErr)
				}
				if _, err := trading.New().NewState(tc.in, 0); err == nil {
					t.Errorf("NewState accepts what Resolve refuses")
				}
				return
			}
			if err != nil || !proto.Equal(got, params(tc.want)) {
				t.Fatalf("Resolve = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

// TestParseParams checks the map parameters from the command line.
func TestParseParams(t *testing.T) {
	gp, err := games.ParseParams("trading", []string{"p1_holdings=X:25,Y:5", "p2_holdings=X:5,Y:25,Z:10,W:7", "p1_goal=X:15,Y:15"})
	if err != nil {
		t.Fatal(err)
	}
	resolved, err := trading.New().Resolve(gp)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(games.FormatParams(resolved), " "); got != "max_turns=8 max_proposals=3 p1_holdings=X:25,Y:5 p2_holdings=W:7,X:5,Y:25,Z:10 p1_goal=X:15,Y:15" {
		t.Errorf("resolved params %s", got)
	}
}

// boundsText writes an observation's bounds as "seat:resource:min-max", max "?" when unknown.
func boundsText(obs *agentv1.Observation) string {
	var out []string
	for _, b := range obs.GetProposalBounds() {
		hi := strconv.FormatInt(b.GetMax(), 10)
		if b.GetMaxUnknown() {
			hi = "?"
		}
		out = append(out, fmt.Sprintf("%d:%s:%d-%s", b.GetSeat(), b.GetResource(), b.GetMin(), hi))
	}
	return fmt.Sprint(out)
}
