package bargain_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"google.golang.org/protobuf/proto"
)

// toy is a minimal game on the engine: a proposal is n, the number of "coins" seat 0 gives
// seat 1 (at most 9); a deal pays seat 0 -n and seat 1 n.
type toy struct{}

func (toy) Terms(_ games.Seat, alloc *gamev1.Allocation) (int64, error) {
	gives, err := bargain.Gives(alloc)
	if err != nil {
		return 0, games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "%v", err)
	}
	n := gives[0]["coin"]
	if n > 9 {
		return 0, errors.New("too many coins") // not a *games.Rejection: the engine wraps it
	}
	return n, nil
}

func (toy) Bounds(*bargain.Match[int64], games.Seat) []*gamev1.Bound {
	return []*gamev1.Bound{{Seat: 0, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: "coin", Max: 9}}
}

func (toy) Payoffs(deal *int64) [2]float64 {
	if deal == nil {
		return [2]float64{}
	}
	return [2]float64{-float64(*deal), float64(*deal)}
}

func (toy) Describe(n int64) string { return fmt.Sprintf("%d coins", n) }

func (toy) Result(deal *int64) string {
	if deal == nil {
		return "no coins move"
	}
	return fmt.Sprintf("%d coins move", *deal)
}

func (toy) View(*bargain.Match[int64], games.Seat, *agentv1.Observation) {}

func (toy) Briefing(m *bargain.Match[int64], seat games.Seat) string {
	if m.Over() {
		return "over"
	}
	var b strings.Builder
	m.TurnLines(seat, func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) })
	return b.String()
}

func newMatch(t *testing.T, cfg bargain.Config) *bargain.Match[int64] {
	t.Helper()
	cfg.Game, cfg.Title = "toy", "toy"
	m, err := bargain.New[int64](cfg, toy{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func propose(n int64) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"coin": n}}}}},
	}}}}}
}

func move(m *gamev1.Move) *agentv1.Action { return &agentv1.Action{Move: m} }

var (
	accept = move(&gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}})
	reject = move(&gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}})
	pass   = move(&gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}})
	say    = move(&gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}})
)

func apply(t *testing.T, m *bargain.Match[int64], moves ...*agentv1.Action) {
	t.Helper()
	for _, a := range moves {
		if _, err := m.Apply(m.Mover(), a); err != nil {
			t.Fatalf("turn %d: %v: %v", m.Turn(), a, err)
		}
	}
}

func TestConfigChecked(t *testing.T) {
	for _, cfg := range []bargain.Config{
		{MaxTurns: 0, Pass: true},
		{MaxTurns: bargain.MaxMaxTurns + 1, Pass: true},
		{MaxTurns: 4, MaxProposals: -1, Reject: true},
		{MaxTurns: 4}, // neither pass nor reject: a player could be left with no move
	} {
		if _, err := bargain.New[int64](cfg, toy{}); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if _, err := bargain.New[int64](bargain.Config{MaxTurns: 1, Pass: true}, nil); err == nil {
		t.Error("New without rules accepted")
	}
}

func TestSkeleton(t *testing.T) {
	var (
		pr = gamev1.MoveKind_MOVE_KIND_PROPOSE
		ac = gamev1.MoveKind_MOVE_KIND_ACCEPT
		ps = gamev1.MoveKind_MOVE_KIND_PASS
		rj = gamev1.MoveKind_MOVE_KIND_REJECT
	)
	m := newMatch(t, bargain.Config{MaxTurns: 6, MaxProposals: 2, Pass: true, Reject: true})
	if got := m.LegalMoves(0); fmt.Sprint(got) != fmt.Sprint([]gamev1.MoveKind{pr, ps, rj}) {
		t.Errorf("turn 1 legal %v", got)
	}
	if len(m.LegalMoves(1)) != 0 {
		t.Errorf("the waiting seat has legal moves %v", m.LegalMoves(1))
	}
	apply(t, m, propose(3))
	if got := m.LegalMoves(1); fmt.Sprint(got) != fmt.Sprint([]gamev1.MoveKind{pr, ac, ps, rj}) {
		t.Errorf("turn 2 legal %v", got)
	}
	st, ok := m.Standing()
	if !ok || st.Turn != 1 || st.By != 0 || st.Terms != 3 {
		t.Errorf("standing %+v, %v", st, ok)
	}
	// A pass leaves nothing to accept.
	apply(t, m, pass)
	if _, ok := m.Standing(); ok {
		t.Error("a proposal stands after a pass")
	}
	if _, err := m.Apply(0, accept); err == nil {
		t.Error("accept after a pass accepted")
	}
	apply(t, m, propose(4)) // P1's second and last proposal
	if got, _ := m.Own(0); got.Terms != 4 || m.ProposalsMade(0) != 2 || m.ProposalsLeft(0) != 0 {
		t.Errorf("own %+v, made %d, left %d", got, m.ProposalsMade(0), m.ProposalsLeft(0))
	}
	apply(t, m, propose(1))
	if got := m.LegalMoves(0); fmt.Sprint(got) != fmt.Sprint([]gamev1.MoveKind{ac, ps, rj}) {
		t.Errorf("turn 5 legal %v (P1 has no proposals left)", got)
	}
	c := m.Clone()
	apply(t, m, accept)
	if !m.Over() || m.Cause() != matchv1.EndCause_END_CAUSE_AGREEMENT || m.EndedBy() != 0 || fmt.Sprint(m.Payoffs()) != "[-1 1]" {
		t.Errorf("after accept: over %v cause %v by %d payoffs %v", m.Over(), m.Cause(), m.EndedBy(), m.Payoffs())
	}
	if got := m.Outcome().GetSummary(); got != "P1 accepted P2's offer: 1 coins move." {
		t.Errorf("summary %q", got)
	}
	if len(c.ToMove()) != 1 || c.Turn() != 5 {
		t.Errorf("the clone moved on with the original: to move %v, turn %d", c.ToMove(), c.Turn())
	}
}

func TestEndings(t *testing.T) {
	tests := []struct {
		name    string
		cfg     bargain.Config
		moves   []*agentv1.Action
		cause   matchv1.EndCause
		summary string
		turn    int32
	}{
		{name: "turn limit after passes", cfg: bargain.Config{MaxTurns: 3, Pass: true}, moves: []*agentv1.Action{pass, pass, pass},
			cause: matchv1.EndCause_END_CAUSE_TURN_LIMIT, summary: "No proposal was accepted in the 3 turns of the game, so no coins move.", turn: 3},
		{name: "turn limit after a last proposal", cfg: bargain.Config{MaxTurns: 2, Reject: true}, moves: []*agentv1.Action{propose(1), propose(2)},
			cause: matchv1.EndCause_END_CAUSE_TURN_LIMIT, turn: 2},
		{name: "reject with an offer standing", cfg: bargain.Config{MaxTurns: 4, Reject: true}, moves: []*agentv1.Action{propose(5), reject},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, summary: "P2 rejected P1's offer (5 coins) on turn 2, so no coins move.", turn: 2},
		{name: "reject after a pass", cfg: bargain.Config{MaxTurns: 4, Reject: true, Pass: true}, moves: []*agentv1.Action{propose(5), pass, reject},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, summary: "P1 rejected on turn 3, so no coins move.", turn: 3},
		{name: "default with reject", cfg: bargain.Config{MaxTurns: 4, Reject: true, Pass: true}, moves: []*agentv1.Action{nil},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, turn: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newMatch(t, tc.cfg)
			for _, a := range tc.moves {
				if a == nil {
					a = m.Default(m.Mover())
				}
				apply(t, m, a)
			}
			if !m.Over() || m.Cause() != tc.cause || m.Turn() != tc.turn {
				t.Fatalf("over %v cause %v turn %d; want %v on turn %d", m.Over(), m.Cause(), m.Turn(), tc.cause, tc.turn)
			}
			if tc.summary != "" && m.Summary() != tc.summary {
				t.Errorf("summary %q, want %q", m.Summary(), tc.summary)
			}
			if fmt.Sprint(m.Payoffs()) != "[0 0]" {
				t.Errorf("payoffs %v with no deal", m.Payoffs())
			}
		})
	}
	// Pass is the default where there is no reject.
	m := newMatch(t, bargain.Config{MaxTurns: 2, Pass: true})
	if m.Default(0).GetMove().GetPass() == nil {
		t.Errorf("default %v, want pass", m.Default(0))
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name   string
		cfg    bargain.Config
		moves  []*agentv1.Action
		action *agentv1.Action
		code   gamev1.RejectionCode
		msg    string
	}{
		{name: "no pass", cfg: bargain.Config{MaxTurns: 4, Reject: true}, action: pass,
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: "the toy game has no pass move; legal now: propose or reject"},
		{name: "no reject", cfg: bargain.Config{MaxTurns: 4, Pass: true}, action: reject,
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: "the toy game has no reject move; legal now: propose or pass"},
		{name: "no say", cfg: bargain.Config{MaxTurns: 4, Pass: true}, action: say,
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: "the toy game has no say move"},
		{name: "no proposal on the last turn", cfg: bargain.Config{MaxTurns: 2, Reject: true, NoLastProposal: true}, moves: []*agentv1.Action{propose(1)}, action: propose(2),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: "turn 2 is the last turn, on which no proposal may be made; legal now: accept or reject"},
		{name: "proposal limit", cfg: bargain.Config{MaxTurns: 9, MaxProposals: 1, Pass: true}, moves: []*agentv1.Action{propose(1), pass}, action: propose(2),
			code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, msg: "P1 has made all 1 of its proposals and may make no more; legal now: pass"},
		{name: "terms refused by a plain error", cfg: bargain.Config{MaxTurns: 4, Pass: true}, action: propose(10),
			code: gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, msg: "too many coins"},
		{name: "stale proposal_turn", cfg: bargain.Config{MaxTurns: 4, Pass: true}, moves: []*agentv1.Action{propose(1), propose(2)},
			action: move(&gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{ProposalTurn: 1}}}),
			code:   gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, msg: "the only proposal that can be accepted is P2's of turn 2 (2 coins); set proposal_turn to 2 or 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := newMatch(t, tc.cfg)
			apply(t, m, tc.moves...)
			before := proto.CloneOf(m.Observe(m.Mover()))
			_, err := m.Apply(m.Mover(), tc.action)
			rej, ok := games.AsRejection(err)
			if !ok || rej.Code != tc.code || !strings.Contains(rej.Message, tc.msg) {
				t.Fatalf("Apply = %v, want %v %q", err, tc.code, tc.msg)
			}
			if !proto.Equal(before, m.Observe(m.Mover())) {
				t.Error("the refusal changed the match")
			}
		})
	}
}

func TestTurnLines(t *testing.T) {
	m := newMatch(t, bargain.Config{MaxTurns: 5, MaxProposals: 1, Pass: true})
	apply(t, m, propose(1))
	if got := m.Observe(1).GetBriefing(); got != "- It is turn 2 of 5, your turn; 3 turns remain after this one.\n"+
		"- Counting this one, you have 2 turns left (the last is turn 4) and may propose on 1 of them.\n"+
		"- You have made 0 of the 1 proposals you may make.\n" {
		t.Errorf("P2's turn lines:\n%s", got)
	}
	if got := m.Observe(0).GetBriefing(); got != "- It is turn 2 of 5, P2's turn; you are waiting for P2's move.\n"+
		"- You have 2 turns left (the next is turn 3, the last turn 5) and may propose on 0 of them.\n"+
		"- You have made 1 of the 1 proposals you may make.\n" {
		t.Errorf("P1's turn lines:\n%s", got)
	}
	apply(t, m, pass, pass, pass)
	if got := m.Observe(0).GetBriefing(); got != "- It is turn 5 of 5, your turn, and the last one: you cannot propose, only pass, as there is nothing to accept.\n"+
		"- You have made 1 of the 1 proposals you may make.\n" {
		t.Errorf("P1's last turn lines:\n%s", got)
	}
}

func TestObserveUnknownSeat(t *testing.T) {
	m := newMatch(t, bargain.Config{MaxTurns: 2, Pass: true})
	for _, seat := range []games.Seat{-1, 2} {
		obs := m.Observe(seat)
		if len(obs.GetLegalMoves()) != 0 || !strings.Contains(obs.GetBriefing(), "does not play") {
			t.Errorf("Observe(%d) = %v", seat, obs)
		}
	}
}

func TestGives(t *testing.T) {
	got, err := bargain.Gives(&gamev1.Allocation{Shares: []*gamev1.SeatShare{
		{Seat: 1, Gives: map[string]int64{"Y": 2, "Z": 0}},
		{Seat: 0, Gives: map[string]int64{"X": 0}, Receives: map[string]int64{"X": 0}},
	}})
	if err != nil || fmt.Sprint(got) != "[map[] map[Y:2]]" {
		t.Errorf("Gives = %v, %v", got, err)
	}
	if got[0] != nil {
		t.Error("a share of zeros gives a non-nil map")
	}
	for _, alloc := range []*gamev1.Allocation{
		nil,
		{Shares: []*gamev1.SeatShare{{Seat: 3}}},
		{Shares: []*gamev1.SeatShare{{Seat: 0}, {Seat: 0}}},
		{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"X": -1}}}},
		{Shares: []*gamev1.SeatShare{{Seat: 0, Receives: map[string]int64{"X": 1}}}},
	} {
		if _, err := bargain.Gives(alloc); err == nil {
			t.Errorf("Gives(%v) accepted", alloc)
		}
	}
}

func TestHelpers(t *testing.T) {
	if got := bargain.OrList([]string{"a", "b", "c"}); got != "a, b or c" {
		t.Errorf("OrList = %q", got)
	}
	if got := bargain.AndList([]string{"a", "b"}); got != "a and b" {
		t.Errorf("AndList = %q", got)
	}
	if got := bargain.Bundle(map[string]int64{"Y": 2, "X": 10, "Z": 0}); got != "{X: 10, Y: 2}" {
		t.Errorf("Bundle = %q", got)
	}
	for turns, want := range map[int32]int32{1: 0, 2: 0, 3: 0, 4: 1, 8: 3, 10: 4, 11: 4} {
		if got := bargain.DefaultMaxProposals(turns); got != want {
			t.Errorf("DefaultMaxProposals(%d) = %d, want %d", turns, got, want)
		}
	}
	if err := bargain.CheckName("g", "item", "X-2"); err != nil {
		t.Error(err)
	}
	if err := bargain.CheckName("g", "item", "2X"); err == nil || !strings.HasPrefix(err.Error(), "g: item must be one word") {
		t.Errorf("CheckName(2X) = %v", err)
	}
}
