package ultimatum_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"google.golang.org/protobuf/proto"
)

// params builds ultimatum GameParams; zero values leave a field unset.
func params(total int64, maxTurns int32, currency string) *matchv1.GameParams {
	p := &ultimatumv1.Params{}
	if total != 0 {
		p.Total = proto.Int64(total)
	}
	if maxTurns != 0 {
		p.MaxTurns = proto.Int32(maxTurns)
	}
	if currency != "" {
		p.Currency = proto.String(currency)
	}
	return &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: p}}
}

func TestConformance(t *testing.T) {
	gametest.Run(t, ultimatum.New(),
		nil,
		params(10, 2, ""),
		params(10, 3, ""),
		params(10_000_000_000, 0, ""),
		params(0, 1, ""),
		params(0, 9, "Euros"),
		params(1, 4, ""),
	)
}

// Moves used by the tests. x is what P1 gives P2.
func propose(x int64) *agentv1.Action {
	return proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"Dollars": x}})
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

func choose() *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: "a"}}}}
}

// play starts a match with p and applies moves, alternating P1, P2, ...; it fails on refusal.
func play(t testing.TB, p *matchv1.GameParams, moves ...*agentv1.Action) games.State {
	t.Helper()
	st, err := games.Start(ultimatum.New(), p, 1)
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

func TestRefusals(t *testing.T) {
	tests := []struct {
		name   string
		params *matchv1.GameParams
		moves  []*agentv1.Action // played first, alternating from P1
		seat   games.Seat        // seat attempting action
		action *agentv1.Action
		code   gamev1.RejectionCode
		msg    []string // substrings the message must hold
	}{
		{
			name: "P2 offering money", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"Dollars": 5}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS,
			msg:    []string{"P2 holds no Dollars; a proposal moves x Dollars from P1 to P2 with 0 <= x <= 100"},
		},
		{
			name: "P2 offering money, as P2", moves: []*agentv1.Action{propose(10)}, seat: 1,
			action: proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"Dollars": 50}}, &gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"Dollars": 1}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"P2 holds no Dollars"},
		},
		{
			name: "unknown resource", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"Gold": 5}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{`no resource "Gold"`, "the only one is Dollars"},
		},
		{
			name: "wrong currency name", params: params(0, 0, "Euros"), seat: 0,
			action: propose(5),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{`no resource "Dollars"`, "x Euros from P1 to P2"},
		},
		{
			name: "negative amount", seat: 0, action: propose(-1),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"cannot be negative", "0 <= x <= 100"},
		},
		{
			name: "negative amount of an unknown resource", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 1, Receives: map[string]int64{"": -3}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"cannot be negative", `-3 ""`},
		},
		{
			name: "more than the total", seat: 0, action: propose(101),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"P1 holds only 100 Dollars and cannot give 101"},
		},
		{
			name: "receives entries", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 1, Receives: map[string]int64{"Dollars": 40}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"P2 cannot receive 40 Dollars from a pool"},
		},
		{
			name: "seat that does not play", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 2, Gives: map[string]int64{"Dollars": 1}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"names seat 2"},
		},
		{
			name: "negative seat", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: -1}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"names seat -1"},
		},
		{
			name: "duplicate seat", seat: 0,
			action: proposeShares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"Dollars": 1}}, &gamev1.SeatShare{Seat: 0}),
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"two shares for seat 0 (P1)"},
		},
		{
			name: "proposal without allocation", seat: 0,
			action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{}}}},
			code:   gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: []string{"no allocation"},
		},
		{
			name: "accept with nothing standing", seat: 0, action: accept(0),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"no proposal to accept on turn 1", "legal now: propose or reject"},
		},
		{
			name: "propose on the last turn", params: params(0, 2, ""), moves: []*agentv1.Action{propose(10)}, seat: 1, action: propose(50),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"turn 2 is the last turn", "legal now: accept or reject"},
		},
		{
			name: "propose with a single turn", params: params(0, 1, ""), seat: 0, action: propose(50),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"legal now: reject"},
		},
		{
			name: "pass", seat: 0, action: pass(),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"no pass move", "legal now: propose or reject"},
		},
		{
			name: "choose", moves: []*agentv1.Action{propose(10)}, seat: 1, action: choose(),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: []string{"no choose move", "legal now: propose, accept or reject"},
		},
		{
			name: "accept naming a stale proposal", moves: []*agentv1.Action{propose(10), propose(80)}, seat: 0, action: accept(1),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"turn 1", "P2's of turn 2", "proposal_turn to 2 or 0"},
		},
		{
			name: "accept naming a future turn", moves: []*agentv1.Action{propose(10)}, seat: 1, action: accept(7),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"proposal of turn 7"},
		},
		{
			name: "out of turn", seat: 1, action: reject(),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"it is P1's turn (turn 1 of 8), not P2"},
		},
		{
			name: "seat that does not exist", seat: 5, action: reject(),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"not seat 5"},
		},
		{
			name: "after the end", moves: []*agentv1.Action{reject()}, seat: 1, action: reject(),
			code: gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: []string{"game is over"},
		},
		{
			name: "no move", seat: 0, action: &agentv1.Action{},
			code: gamev1.RejectionCode_REJECTION_CODE_MISSING_MOVE,
		},
		{
			name: "message to oneself", seat: 0,
			action: &agentv1.Action{Move: reject().Move, Messages: []*gamev1.Message{{To: []int32{0}, Text: "hi"}}},
			code:   gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE,
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
				if got := st.Observe(games.Seat(s)); !proto.Equal(got, b) {
					t.Errorf("seat %d's observation changed after a refusal", s)
				}
			}
		})
	}
}

// TestEndings covers every way a match ends. There is no END_CAUSE_TURN_LIMIT case: the last
// turn allows only accept or reject, so a match always ends by one of them.
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
			name: "P2 accepts P1's offer", moves: []*agentv1.Action{propose(40), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{60, 40},
			summary: "P2 accepted P1's offer: P1 gets 60 Dollars, P2 gets 40 Dollars.",
		},
		{
			name: "P1 accepts P2's counter, naming its turn", moves: []*agentv1.Action{propose(10), propose(70), accept(2)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{30, 70},
			summary: "P1 accepted P2's offer: P1 gets 30 Dollars, P2 gets 70 Dollars.",
		},
		{
			name: "zero offer accepted", moves: []*agentv1.Action{propose(0), accept(1)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{100, 0},
		},
		{
			name: "everything offered and accepted", moves: []*agentv1.Action{propose(100), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{0, 100},
		},
		{
			name: "empty allocation is an offer of 0", moves: []*agentv1.Action{proposeShares(), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{100, 0},
		},
		{
			name: "zero entries anywhere are no offer", moves: []*agentv1.Action{
				proposeShares(&gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"Dollars": 0, "Gold": 0}, Receives: map[string]int64{"X": 0}},
					&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"Dollars": 25}}),
				accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{75, 25},
		},
		{
			name: "P1 rejects at once", moves: []*agentv1.Action{reject()},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, payoffs: []float64{0, 0},
			summary: "P1 rejected on turn 1, so there is no deal and both get 0 Dollars.",
		},
		{
			name: "P2 rejects an offer", moves: []*agentv1.Action{propose(1), reject()},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, payoffs: []float64{0, 0},
			summary: "P2 rejected P1's offer (P1 gives 1 Dollars to P2 and keeps 99) on turn 2, so there is no deal and both get 0 Dollars.",
		},
		{
			name: "last-turn rejection after all turns", params: params(0, 4, ""),
			moves: []*agentv1.Action{propose(1), propose(99), propose(2), reject()},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, payoffs: []float64{0, 0},
		},
		{
			name: "acceptance on the last turn", params: params(0, 4, ""),
			moves: []*agentv1.Action{propose(1), propose(99), propose(2), accept(3)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{98, 2},
		},
		{
			name: "ten billion", params: params(10_000_000_000, 0, ""),
			moves: []*agentv1.Action{propose(9_999_999_999), accept(0)},
			cause: matchv1.EndCause_END_CAUSE_AGREEMENT, payoffs: []float64{1, 9_999_999_999},
		},
		{
			name: "the default move rejects", moves: []*agentv1.Action{propose(50), defaultMove(t, 1)},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, payoffs: []float64{0, 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := play(t, tc.params, tc.moves...)
			if len(st.ToMove()) != 0 {
				t.Fatalf("ToMove() = %v, want the game over", st.ToMove())
			}
			out := st.Outcome()
			if out.GetCause() != tc.cause || !equalFloats(out.GetPayoffs(), tc.payoffs) {
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
				v := obs.GetUltimatum()
				if obs.GetPhase() != "" || len(obs.GetLegalMoves()) != 0 || v.GetTurnsLeft() != 0 {
					t.Errorf("seat %d after the end: phase %q, legal %v, turns left %d", s, obs.GetPhase(), obs.GetLegalMoves(), v.GetTurnsLeft())
				}
				if float64(v.GetHeld()) != tc.payoffs[s] || float64(v.GetOpponentHeld()) != tc.payoffs[1-s] {
					t.Errorf("seat %d holds %d, opponent %d; want the payoffs %v", s, v.GetHeld(), v.GetOpponentHeld(), tc.payoffs)
				}
			}
		})
	}
}

// defaultMove returns the game's default move for seat.
func defaultMove(t *testing.T, seat games.Seat) *agentv1.Action {
	t.Helper()
	st, err := games.Start(ultimatum.New(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st.Default(seat)
}

func equalFloats(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestObservation checks the legal moves, bounds and view along one match.
func TestObservation(t *testing.T) {
	var (
		pr = gamev1.MoveKind_MOVE_KIND_PROPOSE
		ac = gamev1.MoveKind_MOVE_KIND_ACCEPT
		rj = gamev1.MoveKind_MOVE_KIND_REJECT
	)
	tests := []struct {
		name     string
		params   *matchv1.GameParams
		moves    []*agentv1.Action
		mover    games.Seat
		legal    []gamev1.MoveKind
		standing int64 // -1: none shown
		proposer games.Seat
		left     int32
	}{
		{name: "turn 1", mover: 0, legal: []gamev1.MoveKind{pr, rj}, standing: -1, left: 7},
		{name: "turn 2", moves: []*agentv1.Action{propose(30)}, mover: 1, legal: []gamev1.MoveKind{pr, ac, rj}, standing: 30, proposer: 0, left: 6},
		{name: "P2's proposal replaces P1's", moves: []*agentv1.Action{propose(30), propose(90)}, mover: 0, legal: []gamev1.MoveKind{pr, ac, rj}, standing: 90, proposer: 1, left: 5},
		{name: "P1's new proposal replaces its own", moves: []*agentv1.Action{propose(30), propose(90), propose(35)}, mover: 1, legal: []gamev1.MoveKind{pr, ac, rj}, standing: 35, proposer: 0, left: 4},
		{name: "last turn", params: params(0, 2, ""), moves: []*agentv1.Action{propose(30)}, mover: 1, legal: []gamev1.MoveKind{ac, rj}, standing: 30, proposer: 0, left: 0},
		{name: "single turn", params: params(0, 1, ""), mover: 0, legal: []gamev1.MoveKind{rj}, standing: -1, left: 0},
		{name: "odd last turn is P1's", params: params(0, 3, ""), moves: []*agentv1.Action{propose(30), propose(60)}, mover: 0, legal: []gamev1.MoveKind{ac, rj}, standing: 60, proposer: 1, left: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := play(t, tc.params, tc.moves...)
			if got := st.ToMove(); len(got) != 1 || got[0] != tc.mover {
				t.Fatalf("ToMove() = %v, want [%d]", got, tc.mover)
			}
			obs, other := st.Observe(tc.mover), st.Observe(1-tc.mover)
			if !slicesEqual(obs.GetLegalMoves(), tc.legal) {
				t.Errorf("legal moves %v, want %v", obs.GetLegalMoves(), tc.legal)
			}
			if len(other.GetLegalMoves()) != 0 || len(other.GetProposalBounds()) != 0 {
				t.Errorf("the waiting seat has legal moves %v and bounds %v", other.GetLegalMoves(), other.GetProposalBounds())
			}
			wantBounds := 0
			if len(tc.legal) > 0 && tc.legal[0] == pr {
				wantBounds = 1
			}
			if b := obs.GetProposalBounds(); len(b) != wantBounds || (wantBounds == 1 &&
				!proto.Equal(b[0], &gamev1.Bound{Seat: 0, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: "Dollars", Max: 100})) {
				t.Errorf("bounds %v, want %d bound on P1's Dollars", b, wantBounds)
			}
			v := obs.GetUltimatum()
			if tc.standing < 0 {
				if v.StandingOffer != nil || v.StandingProposer != nil {
					t.Errorf("standing offer shown with nothing to accept: %v", v)
				}
			} else if v.GetStandingOffer() != tc.standing || v.GetStandingProposer() != tc.proposer {
				t.Errorf("standing %d by %d, want %d by %d", v.GetStandingOffer(), v.GetStandingProposer(), tc.standing, tc.proposer)
			}
			if w := other.GetUltimatum(); w.StandingOffer != nil {
				t.Errorf("the waiting seat sees a standing offer it cannot accept: %v", w)
			}
			if v.GetTurnsLeft() != tc.left || obs.GetPhase() != "bargaining" {
				t.Errorf("turns left %d, phase %q; want %d, bargaining", v.GetTurnsLeft(), obs.GetPhase(), tc.left)
			}
			if obs.GetTurn() != int32(len(tc.moves))+1 || len(obs.GetHistory()) != len(tc.moves) {
				t.Errorf("turn %d with %d history entries after %d moves", obs.GetTurn(), len(obs.GetHistory()), len(tc.moves))
			}
		})
	}
}

func slicesEqual[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestMessagesFiltered checks that a message reaches its recipient and that reasoning and notes
// never show in any observation.
func TestMessagesFiltered(t *testing.T) {
	a := propose(40)
	a.Messages = []*gamev1.Message{{To: []int32{1}, Text: "take it or leave it"}}
	a.PrivateReasoning = "secret-reasoning"
	a.PrivateNotes = "secret-notes"
	st := play(t, nil, a)
	for s := range games.Seat(2) {
		text := st.Observe(s).String()
		if !strings.Contains(text, "take it or leave it") {
			t.Errorf("seat %d does not see the message", s)
		}
		for _, secret := range []string{"secret-reasoning", "secret-notes"} {
			if strings.Contains(text, secret) {
				t.Errorf("seat %d sees %q", s, secret)
			}
		}
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		in      *matchv1.GameParams
		want    *matchv1.GameParams
		wantErr string
	}{
		{name: "nil", in: nil, want: params(100, 8, "Dollars")},
		{name: "no branch", in: &matchv1.GameParams{}, want: params(100, 8, "Dollars")},
		{name: "empty branch", in: params(0, 0, ""), want: params(100, 8, "Dollars")},
		{name: "all set", in: params(10_000_000_000, 3, "ZUP"), want: params(10_000_000_000, 3, "ZUP")},
		{name: "largest", in: params(bargain.MaxAmount, bargain.MaxMaxTurns, "Euro-cents_2"), want: params(bargain.MaxAmount, bargain.MaxMaxTurns, "Euro-cents_2")},
		{name: "zero turns", in: turns(0), wantErr: "ultimatum: max_turns must be from 1 to 10000, got 0"},
		{name: "negative turns", in: turns(-3), wantErr: "ultimatum: max_turns must be from 1 to 10000, got -3"},
		{name: "too many turns", in: turns(bargain.MaxMaxTurns + 1), wantErr: "ultimatum: max_turns must be from 1 to 10000, got 10001"},
		{name: "zero total", in: total(0), wantErr: "ultimatum: total must be at least 1, got 0"},
		{name: "total too large", in: total(bargain.MaxAmount + 1), wantErr: "ultimatum: total must be from 1 to 9007199254740992, got 9007199254740993"},
		{name: "empty currency", in: currency(""), wantErr: "ultimatum: currency must not be empty"},
		{name: "two words", in: currency("US Dollars"), wantErr: `ultimatum: currency must be one word of letters, digits, '_' or '-' starting with a letter, got "US Dollars"`},
		{name: "leading digit", in: currency("1Dollar"), wantErr: "starting with a letter"},
		{name: "braces", in: currency("{x}"), wantErr: "one word"},
		{name: "too long", in: currency(strings.Repeat("a", 33)), wantErr: "currency must be at most 32 characters, got 33"},
		{name: "invalid UTF-8", in: currency("\xff"), wantErr: "valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ultimatum.New().Resolve(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve error = %v, want %q", err, tc.wantErr)
				}
				if _, err := ultimatum.New().NewState(tc.in, 0); err == nil {
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

func turns(n int32) *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{MaxTurns: proto.Int32(n)}}}
}

func total(n int64) *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{Total: proto.Int64(n)}}}
}

func currency(c string) *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{Currency: proto.String(c)}}}
}

func TestResolveDoesNotChangeInput(t *testing.T) {
	in := params(0, 3, "")
	keep := proto.Clone(in)
	if _, err := ultimatum.New().Resolve(in); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(in, keep) {
		t.Errorf("Resolve changed its input to %v", in)
	}
}

func TestInfo(t *testing.T) {
	info := ultimatum.New().Info()
	if info.GetName() != "ultimatum" || info.GetRulesVersion() != "1" || !slicesEqual(info.GetSeats(), []string{"P1", "P2"}) {
		t.Errorf("Info() = %v", info)
	}
	want := map[string]string{"total": "100", "max_turns": "8", "currency": "Dollars"}
	if len(info.GetParams()) != len(want) {
		t.Errorf("%d params, want %d", len(info.GetParams()), len(want))
	}
	for _, p := range info.GetParams() {
		if want[p.GetName()] != p.GetDefaultValue() || p.GetDescription() == "" || p.GetKind() == 0 {
			t.Errorf("param %v, want default %q, a kind and a description", p, want[p.GetName()])
		}
	}
}

// TestRandomActionsAlwaysLegal checks that the bounds this game publishes express every
// constraint: a random action drawn from an observation is never refused. gametest tolerates
// INVALID_TERMS refusals for other families; this family is stricter.
func TestRandomActionsAlwaysLegal(t *testing.T) {
	for _, p := range []*matchv1.GameParams{nil, params(1, 1, ""), params(1, 2, ""), params(10_000_000_000, 5, "")} {
		for seed := range uint64(200) {
			st, err := games.Start(ultimatum.New(), p, seed)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(seed, 1))
			for len(st.ToMove()) > 0 {
				seat := st.ToMove()[0]
				a := games.RandomAction(st.Observe(seat), rng)
				if _, err := st.Apply(seat, a); err != nil {
					t.Fatalf("params %v seed %d: random action %v refused: %v", p, seed, a, err)
				}
			}
		}
	}
}

// TestObserveUnknownSeat checks that a seat outside the game gets an empty observation with an
// explanation, not a panic.
func TestObserveUnknownSeat(t *testing.T) {
	st := play(t, nil, propose(40))
	for _, seat := range []games.Seat{-1, 2, 1 << 30} {
		t.Run(fmt.Sprint(seat), func(t *testing.T) {
			obs := st.Observe(seat)
			if len(obs.GetLegalMoves()) != 0 || len(obs.GetHistory()) != 0 || obs.GetView() != nil || !strings.Contains(obs.GetBriefing(), "does not play") {
				t.Errorf("Observe(%d) = %v", seat, obs)
			}
		})
	}
}
