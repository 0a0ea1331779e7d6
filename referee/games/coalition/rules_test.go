package coalition_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
	"google.golang.org/protobuf/proto"
)

const (
	A games.Seat = 0
	B games.Seat = 1
	C games.Seat = 2
)

// draws returns the first k proposers drawn with seed: every proposal is the default one
// (the grand coalition) and every vote a rejection.
func draws(t testing.TB, seed uint64, k int) []games.Seat {
	t.Helper()
	st := newState(t, params(t, "rounds=0", "max_proposals=1000"), seed)
	var out []games.Seat
	for len(out) < k {
		p := st.ToMove()[0]
		out = append(out, p)
		play(t, st, step{p, st.Default(p)})
		for _, v := range st.ToMove() {
			play(t, st, step{v, reject()})
		}
	}
	return out
}

// seedFor finds a seed whose first proposers are want.
func seedFor(t testing.TB, want ...games.Seat) uint64 {
	t.Helper()
	for seed := uint64(1); seed < 1000; seed++ {
		if slices.Equal(draws(t, seed, len(want)), want) {
			return seed
		}
	}
	t.Fatalf("no seed draws %v", want)
	return 0
}

// TestRules plays each case's steps, then tries its action, which must be accepted or refused
// with the code and a reason containing every wantText part.
func TestRules(t *testing.T) {
	var (
		missing = gamev1.RejectionCode_REJECTION_CODE_MISSING_MOVE
		illegal = gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE
		terms   = gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS
		turn    = gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN
		message = gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE
	)
	// In phase 2 below, A proposes first, then C, then B.
	seedACB := seedFor(t, A, C, B)
	talk := params(t)
	direct := params(t, "rounds=0")
	once := params(t, "rounds=0", "max_proposals=1")
	twice := params(t, "rounds=0", "max_proposals=2")
	opening := say(msg("hi B", 1), msg("hi C", 2))
	acSplit := propose(g(0, 500), g(2, 250))

	tests := []struct {
		name     string
		params   *matchv1.GameParams
		steps    []step
		seat     games.Seat
		action   *agentv1.Action
		wantCode gamev1.RejectionCode // unspecified: accepted
		wantText []string
	}{
		// Phase 1, the active player's turn.
		{name: "active writes to each other player", params: talk, seat: A, action: opening},
		{name: "active writes with offers", params: talk, seat: A, action: say(offer(msg("AB?", 1), g(0, 450), g(1, 300)), offer(msg("ABC?", 2), g(0, 500), g(1, 250), g(2, 250)))},
		{name: "no move", params: talk, seat: A, action: &agentv1.Action{}, wantCode: missing},
		{name: "propose in phase 1", params: talk, seat: A, action: acSplit, wantCode: illegal, wantText: []string{"phase 1 is talk only", "B (to: [1]) and C (to: [2])"}},
		{name: "accept in phase 1", params: talk, seat: A, action: accept(0), wantCode: illegal},
		{name: "pass in phase 1", params: talk, seat: A, action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}, wantCode: illegal},
		{name: "message missing", params: talk, seat: A, action: say(msg("hi B", 1)), wantCode: message, wantText: []string{"no message to C"}},
		{name: "no messages", params: talk, seat: A, action: say(), wantCode: message, wantText: []string{"no message to B"}},
		{name: "two messages to one player", params: talk, seat: A, action: say(msg("hi B", 1), msg("again", 1), msg("hi C", 2)), wantCode: message, wantText: []string{"2 messages to B", "exactly one"}},
		{name: "one message to two players", params: talk, seat: A, action: say(msg("hi both", 1, 2)), wantCode: message, wantText: []string{"addressed to 2 players"}},
		{name: "public message", params: talk, seat: A, action: say(msg("hi all")), wantCode: message, wantText: []string{"public"}},
		{name: "public message besides the right ones", params: talk, seat: A, action: say(msg("hi B", 1), msg("hi C", 2), msg("hi all")), wantCode: message, wantText: []string{"message 3 is public"}},
		{name: "message to self", params: talk, seat: A, action: say(msg("hi B", 1), msg("hi C", 2), msg("me", 0)), wantCode: message, wantText: []string{"own seat"}},
		{name: "message to a seat that does not exist", params: talk, seat: A, action: say(msg("hi B", 1), msg("hi", 3)), wantCode: message, wantText: []string{"seat 3"}},
		{name: "seat not active", params: talk, seat: B, action: say(msg("hi", 0)), wantCode: turn, wantText: []string{"B is not to move", "A's turn"}},
		{name: "seat that does not exist", params: talk, seat: 7, action: opening, wantCode: turn},
		{name: "negative seat", params: talk, seat: -1, action: say(), wantCode: turn},
		{name: "offer without the sender", params: talk, seat: A, action: say(offer(msg("BC?", 1), g(1, 250), g(2, 250)), msg("hi C", 2)), wantCode: terms, wantText: []string{"offer in message 1", "B+C, which does not include you (A)"}},
		{name: "offer with a wrong sum", params: talk, seat: A, action: say(offer(msg("AB?", 1), g(0, 400), g(1, 300)), msg("hi C", 2)), wantCode: terms, wantText: []string{"adding up to 700 g", "A+B is worth 750 g"}},
		{name: "offer with a negative amount", params: talk, seat: A, action: say(msg("hi B", 1), offer(msg("AC?", 2), g(0, 800), g(2, -50))), wantCode: terms, wantText: []string{"offer in message 2", "negative"}},
		{name: "offer to an unknown seat", params: talk, seat: A, action: say(offer(msg("?", 1), g(0, 0), g(5, 0)), msg("hi C", 2)), wantCode: terms, wantText: []string{"seat 5", "0 (A) to 2 (C)"}},
		{name: "offer with a duplicate member", params: talk, seat: A, action: say(offer(msg("?", 1), g(0, 375), g(1, 0), g(0, 375)), msg("hi C", 2)), wantCode: terms, wantText: []string{"two shares for A"}},
		{name: "offer with no terms", params: talk, seat: A, action: say(&gamev1.Message{To: []int32{1}, Text: "?", Proposal: &gamev1.Proposal{}}, msg("hi C", 2)), wantCode: terms, wantText: []string{"no allocation"}},

		// Phase 1, the replies.
		{name: "reply to the active player", params: talk, steps: []step{{A, opening}}, seat: B, action: say(msg("hi A", 0))},
		{name: "reply with an offer", params: talk, steps: []step{{A, opening}}, seat: C, action: say(offer(msg("AC?", 0), g(0, 375), g(2, 375)))},
		{name: "reply to a non-active player", params: talk, steps: []step{{A, opening}}, seat: B, action: say(msg("hi C", 2)), wantCode: message, wantText: []string{"message to C", "active player A only"}},
		{name: "reply to both", params: talk, steps: []step{{A, opening}}, seat: B, action: say(msg("hi A", 0), msg("hi C", 2)), wantCode: message, wantText: []string{"message to C"}},
		{name: "reply to both in one message", params: talk, steps: []step{{A, opening}}, seat: B, action: say(msg("hi", 0, 2)), wantCode: message, wantText: []string{"addressed to 2 players"}},
		{name: "two replies in one move", params: talk, steps: []step{{A, opening}}, seat: B, action: say(msg("hi A", 0), msg("again", 0)), wantCode: message, wantText: []string{"2 messages to A"}},
		{name: "no reply", params: talk, steps: []step{{A, opening}}, seat: B, action: say(), wantCode: message, wantText: []string{"no message to A"}},
		{name: "public reply", params: talk, steps: []step{{A, opening}}, seat: B, action: say(msg("all")), wantCode: message, wantText: []string{"public"}},
		{name: "reject instead of a reply", params: talk, steps: []step{{A, opening}}, seat: B, action: reject(), wantCode: illegal},
		{name: "active player moves again", params: talk, steps: []step{{A, opening}}, seat: A, action: opening, wantCode: turn, wantText: []string{"waiting for B and C to reply to A"}},
		{name: "replying twice", params: talk, steps: []step{{A, opening}, {B, say(msg("hi A", 0))}}, seat: B, action: say(msg("again", 0)), wantCode: turn},
		{name: "round 2's active player is B", params: talk, steps: []step{{A, opening}, {B, say(msg("1", 0))}, {C, say(msg("2", 0))}}, seat: B, action: say(msg("hi A", 0), msg("hi C", 2))},
		{name: "round 2: A is not active", params: talk, steps: []step{{A, opening}, {B, say(msg("1", 0))}, {C, say(msg("2", 0))}}, seat: A, action: opening, wantCode: turn},

		// Phase 2, the proposal.
		{name: "proposal", params: direct, seat: A, action: acSplit},
		{name: "proposal with messages and offers", params: direct, seat: A, action: &agentv1.Action{Move: acSplit.GetMove(), Messages: []*gamev1.Message{msg("public"), offer(msg("to B", 1), g(0, 375), g(1, 375))}}},
		{name: "proposal by another seat", params: direct, seat: C, action: acSplit, wantCode: turn, wantText: []string{"waiting for A's proposal"}},
		{name: "say instead of proposing", params: direct, seat: A, action: say(), wantCode: illegal, wantText: []string{"only legal move"}},
		{name: "accept instead of proposing", params: direct, seat: A, action: accept(0), wantCode: illegal},
		{name: "coalition without the proposer", params: direct, seat: A, action: propose(g(1, 250), g(2, 250)), wantCode: terms, wantText: []string{"B+C, which does not include you (A)", "Your coalitions: A alone 0 g; A+B 750 g; A+C 750 g; A+B+C 1000 g"}},
		{name: "sum too small", params: direct, seat: A, action: propose(g(0, 500), g(2, 200)), wantCode: terms, wantText: []string{"adding up to 700 g", "A+C is worth 750 g"}},
		{name: "sum too large", params: direct, seat: A, action: propose(g(0, 500), g(1, 250), g(2, 251)), wantCode: terms, wantText: []string{"1001 g"}},
		{name: "negative amount", params: direct, seat: A, action: propose(g(0, 800), g(2, -50)), wantCode: terms, wantText: []string{"negative amount (-50 g)"}},
		{name: "unknown seat", params: direct, seat: A, action: propose(g(0, 750), g(3, 0)), wantCode: terms, wantText: []string{"seat 3"}},
		{name: "negative seat in a share", params: direct, seat: A, action: propose(g(0, 750), g(-1, 0)), wantCode: terms, wantText: []string{"seat -1"}},
		{name: "duplicate member", params: direct, seat: A, action: propose(g(0, 375), g(2, 0), g(0, 375)), wantCode: terms, wantText: []string{"two shares for A"}},
		{name: "amounts past the value (no overflow)", params: direct, seat: A, action: propose(g(0, math.MaxInt64), g(2, math.MaxInt64)), wantCode: terms, wantText: []string{"more than the coalition A+C is worth"}},
		{name: "a member giving", params: direct, seat: A, action: propose(g(0, 750), &gamev1.SeatShare{Seat: 2, Gives: map[string]int64{"g": 5}}), wantCode: terms, wantText: []string{"C giving 5 g"}},
		{name: "a member giving 0 is fine", params: direct, seat: A, action: propose(g(0, 750), &gamev1.SeatShare{Seat: 2, Gives: map[string]int64{"g": 0}})},
		{name: "another resource", params: direct, seat: A, action: propose(g(0, 750), &gamev1.SeatShare{Seat: 2, Receives: map[string]int64{"kg": 1}}), wantCode: terms, wantText: []string{"no resource kg", "amounts are in g"}},
		{name: "another resource at 0 is fine", params: direct, seat: A, action: propose(g(0, 750), &gamev1.SeatShare{Seat: 2, Receives: map[string]int64{"kg": 0}})},
		{name: "no shares", params: direct, seat: A, action: propose(), wantCode: terms, wantText: []string{"names no coalition"}},
		{name: "no allocation", params: direct, seat: A, action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{}}}}, wantCode: terms, wantText: []string{"has no allocation"}},
		{name: "proposer alone, worth 0", params: direct, seat: A, action: propose(g(0, 0))},
		{name: "bad offer in a proposal's message", params: direct, seat: A, action: &agentv1.Action{Move: acSplit.GetMove(), Messages: []*gamev1.Message{offer(msg("x", 1), g(0, 1))}}, wantCode: terms, wantText: []string{"offer in message 1", "more than the coalition A is worth (0 g)"}},

		// Phase 2, the votes.
		{name: "member accepts", params: direct, steps: []step{{A, acSplit}}, seat: C, action: accept(0)},
		{name: "member accepts naming the proposal's turn", params: direct, steps: []step{{A, acSplit}}, seat: C, action: accept(1)},
		{name: "member rejects", params: direct, steps: []step{{A, acSplit}}, seat: C, action: reject()},
		{name: "accept naming another turn", params: direct, steps: []step{{A, acSplit}}, seat: C, action: accept(5), wantCode: turn, wantText: []string{"proposal_turn to 1 or 0"}},
		{name: "non-member votes", params: direct, steps: []step{{A, acSplit}}, seat: B, action: accept(0), wantCode: turn, wantText: []string{"waiting for C to vote on A's proposal"}},
		{name: "proposer votes", params: direct, steps: []step{{A, acSplit}}, seat: A, action: accept(0), wantCode: turn},
		{name: "member proposes instead", params: direct, steps: []step{{A, acSplit}}, seat: C, action: propose(g(0, 250), g(2, 500)), wantCode: illegal, wantText: []string{"accept or reject"}},
		{name: "member talks instead", params: direct, steps: []step{{A, acSplit}}, seat: C, action: say(msg("hm", 0)), wantCode: illegal},
		{name: "vote with a message", params: direct, steps: []step{{A, acSplit}}, seat: C, action: &agentv1.Action{Move: reject().GetMove(), Messages: []*gamev1.Message{msg("too little", 0)}}},
		{name: "voting twice", params: direct, steps: []step{{A, propose(g(0, 334), g(1, 333), g(2, 333))}, {B, accept(0)}}, seat: B, action: reject(), wantCode: turn},
		{name: "next proposer after a rejection", params: direct, steps: []step{{A, acSplit}, {C, reject()}}, seat: C, action: propose(g(1, 250), g(2, 250))},
		{name: "old proposer after a rejection", params: direct, steps: []step{{A, acSplit}, {C, reject()}}, seat: A, action: acSplit, wantCode: turn, wantText: []string{"waiting for C's proposal"}},

		// The proposal limit.
		{name: "no moves after the last proposal is rejected", params: once, steps: []step{{A, acSplit}, {C, reject()}}, seat: C, action: propose(g(1, 250), g(2, 250)), wantCode: turn, wantText: []string{"game is over"}},
		{name: "proposers run out after two", params: twice, steps: []step{{A, acSplit}, {C, reject()}, {C, propose(g(1, 250), g(2, 250))}, {B, reject()}}, seat: B, action: propose(g(0, 375), g(1, 375)), wantCode: turn, wantText: []string{"game is over"}},
		{name: "no moves after an agreement", params: direct, steps: []step{{A, acSplit}, {C, accept(0)}}, seat: B, action: accept(0), wantCode: turn, wantText: []string{"game is over"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(t, tc.params, seedACB)
			play(t, st, tc.steps...)
			before := observeAll(st)
			_, err := st.Apply(tc.seat, tc.action)
			if tc.wantCode == gamev1.RejectionCode_REJECTION_CODE_UNSPECIFIED {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			rej, ok := games.AsRejection(err)
			if !ok {
				t.Fatalf("Apply = %v, want a rejection with %v", err, tc.wantCode)
			}
			if rej.Code != tc.wantCode {
				t.Errorf("code %v, want %v (%s)", rej.Code, tc.wantCode, rej.Message)
			}
			for _, w := range tc.wantText {
				if !strings.Contains(rej.Message, w) {
					t.Errorf("reason %q does not contain %q", rej.Message, w)
				}
			}
			for s, o := range observeAll(st) {
				if !proto.Equal(o, before[s]) {
					t.Errorf("a refused action changed seat %d's observation", s)
				}
			}
		})
	}
}

func observeAll(st games.State) []*agentv1.Observation {
	var out []*agentv1.Observation
	for s := range games.Seat(3) {
		out = append(out, st.Observe(s))
	}
	return out
}

// TestMatchFlow follows a whole match: turns, who moves, phases, events and the outcome.
func TestMatchFlow(t *testing.T) {
	seed := seedFor(t, C, B)
	st := newState(t, params(t, "rounds=2"), seed)
	opening := st.(games.Opener).OpeningEvents()
	if len(opening) != 1 || opening[0].GetPhaseStarted().GetPhase() != coalition.PhaseTalk {
		t.Fatalf("opening events %v, want the talk phase", opening)
	}
	expect := func(turn int32, toMove []games.Seat, phase string) {
		t.Helper()
		if st.Turn() != turn || !slices.Equal(st.ToMove(), toMove) || st.Observe(0).GetPhase() != phase {
			t.Fatalf("turn %d, to move %v, phase %q; want %d, %v, %q", st.Turn(), st.ToMove(), st.Observe(0).GetPhase(), turn, toMove, phase)
		}
	}
	noEvents := func(evs []*eventsv1.MatchEvent) {
		t.Helper()
		if len(evs) != 0 {
			t.Fatalf("unexpected events %v", evs)
		}
	}
	expect(1, []games.Seat{A}, "talk")
	noEvents(play(t, st, step{A, say(msg("b", 1), msg("c", 2))}))
	expect(2, []games.Seat{B, C}, "talk")
	noEvents(play(t, st, step{C, say(msg("a", 0))}))
	expect(2, []games.Seat{B}, "talk")
	noEvents(play(t, st, step{B, say(msg("a", 0))}))
	expect(3, []games.Seat{B}, "talk")
	if v := st.Observe(C).GetCoalition(); v.GetRound() != 2 || v.GetActive() != B {
		t.Fatalf("view %v, want round 2 with B active", v)
	}
	noEvents(play(t, st, step{B, say(msg("a", 0), msg("c", 2))}))
	expect(4, []games.Seat{A, C}, "talk")
	noEvents(play(t, st, step{A, say(msg("b", 1))}))
	evs := play(t, st, step{C, say(msg("b", 1))})
	if len(evs) != 2 || evs[0].GetPhaseStarted().GetPhase() != coalition.PhaseProposals || evs[1].GetChanceDrawn().GetSeat() != C || evs[1].GetChanceDrawn().GetWhat() != "proposer" {
		t.Fatalf("events at the start of phase 2: %v", evs)
	}
	expect(5, []games.Seat{C}, "proposals")
	noEvents(play(t, st, step{C, propose(g(0, 334), g(1, 333), g(2, 333))}))
	expect(6, []games.Seat{A, B}, "proposals")
	if v := st.Observe(B).GetCoalition(); v.GetProposer() != C || v.GetPending() == nil || v.GetProposalsMade() != 1 {
		t.Fatalf("view %v, want C's pending proposal", v)
	}
	noEvents(play(t, st, step{A, accept(0)}))
	evs = play(t, st, step{B, reject()})
	if len(evs) != 2 {
		t.Fatalf("events %v, want ProposalResolved and ChanceDrawn", evs)
	}
	res := evs[0].GetProposalResolved()
	if res.GetAccepted() || res.GetProposer() != C || !slices.Equal(res.GetAcceptedBy(), []int32{A, C}) || !slices.Equal(res.GetRejectedBy(), []int32{B}) {
		t.Fatalf("ProposalResolved %v", res)
	}
	if d := evs[1].GetChanceDrawn(); d.GetSeat() != B || !strings.Contains(d.GetSummary(), "Proposal 2 of 10: B") {
		t.Fatalf("ChanceDrawn %v", d)
	}
	expect(7, []games.Seat{B}, "proposals")
	noEvents(play(t, st, step{B, propose(g(1, 375), g(0, 375))}))
	expect(8, []games.Seat{A}, "proposals")
	evs = play(t, st, step{A, accept(7)})
	if len(evs) != 1 || !evs[0].GetProposalResolved().GetAccepted() {
		t.Fatalf("events %v, want an accepted proposal", evs)
	}
	expect(8, nil, "")
	out := st.Outcome()
	want := &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_AGREEMENT, Agreement: true, Payoffs: []float64{375, 375, 0},
		Summary: "B's proposal 2 of 10 passed, so the coalition A+B shares 750 g: A gets 375 g, B gets 375 g, C gets 0 g."}
	if !proto.Equal(out, want) {
		t.Errorf("outcome %v, want %v", out, want)
	}
	if v := st.Observe(A).GetCoalition(); v.GetProposalsMade() != 2 || v.Proposer != nil || v.GetPending() != nil {
		t.Errorf("final view %v", v)
	}
}

func TestProposalLimitEndsWithEveryoneAtZero(t *testing.T) {
	st := newState(t, params(t, "rounds=0", "max_proposals=3"), 5)
	for range 3 {
		p := st.ToMove()[0]
		play(t, st, step{p, st.Default(p)})
		for _, v := range st.ToMove() {
			play(t, st, step{v, reject()})
		}
	}
	if len(st.ToMove()) != 0 {
		t.Fatal("the game goes on after the last proposal")
	}
	out := st.Outcome()
	if out.GetCause() != matchv1.EndCause_END_CAUSE_TURN_LIMIT || out.GetAgreement() || !slices.Equal(out.GetPayoffs(), []float64{0, 0, 0}) ||
		!strings.Contains(out.GetSummary(), "All 3 proposals were rejected") {
		t.Errorf("outcome %v", out)
	}
}

func TestProposerAloneEndsTheGame(t *testing.T) {
	st := newState(t, params(t, "rounds=0", "values=A:10,B:20,C:30,ABC:60"), seedFor(t, C))
	evs := play(t, st, step{C, propose(g(2, 30))})
	if len(st.ToMove()) != 0 || len(evs) != 1 || !evs[0].GetProposalResolved().GetAccepted() {
		t.Fatalf("to move %v, events %v", st.ToMove(), evs)
	}
	if out := st.Outcome(); !slices.Equal(out.GetPayoffs(), []float64{0, 0, 30}) || out.GetCause() != matchv1.EndCause_END_CAUSE_AGREEMENT {
		t.Errorf("outcome %v", out)
	}
}

func TestDefaults(t *testing.T) {
	st := newState(t, params(t, "rounds=1", "values=AB:750,AC:750,BC:500,ABC:1000"), seedFor(t, B))
	d := st.Default(A)
	if d.GetMove().GetSay() == nil || len(d.GetMessages()) != 2 || d.GetMessages()[0].GetText() != coalition.DefaultText {
		t.Fatalf("talk default %v", d)
	}
	play(t, st, step{A, d})
	play(t, st, step{B, st.Default(B)})
	play(t, st, step{C, st.Default(C)})
	d = st.Default(B)
	want := propose(g(0, 334), g(1, 333), g(2, 333))
	if !proto.Equal(d, want) {
		t.Fatalf("proposer default %v, want %v", d, want)
	}
	play(t, st, step{B, d})
	if d := st.Default(A); d.GetMove().GetReject() == nil {
		t.Fatalf("voter default %v, want reject", d)
	}
	// Not to move: a reject, which is refused.
	if _, err := st.Apply(B, st.Default(B)); err == nil {
		t.Fatal("a default of a seat not to move was accepted")
	}
}

func TestResolve(t *testing.T) {
	tests := []struct {
		name    string
		kvs     []string
		want    []string // FormatParams of the resolved params
		wantErr string
	}{
		{name: "defaults", want: []string{"players=A,B,C", "values=A:0,AB:750,ABC:1000,AC:750,B:0,BC:500,C:0", "rounds=3", "max_proposals=10", "unit=g"}},
		{name: "keys in any order and form", kvs: []string{"values=BA:1,C+A:2,ABC:3"}, want: []string{"players=A,B,C", "values=A:0,AB:1,ABC:3,AC:2,B:0,BC:0,C:0", "rounds=3", "max_proposals=10", "unit=g"}},
		{name: "long names", kvs: []string{"players=Ann,Bob", "values=Bob+Ann:5,Ann:1", "rounds=0", "max_proposals=1", "unit=coins"}, want: []string{"players=Ann,Bob", "values=Ann+Bob:5,Ann:1,Bob:0", "rounds=0", "max_proposals=1", "unit=coins"}},
		{name: "one-letter names run together", kvs: []string{"players=X,Y", "values=XY:2"}, want: []string{"players=X,Y", "values=X:0,XY:2,Y:0", "rounds=3", "max_proposals=10", "unit=g"}},
		{name: "other players need values", kvs: []string{"players=X,Y"}, wantErr: "values must be given"},
		{name: "one player", kvs: []string{"players=A"}, wantErr: "players must have 2 to 8 entries"},
		{name: "nine players", kvs: []string{"players=A,B,C,D,E,F,G,H,I", "values=AB:1"}, wantErr: "players must have 2 to 8 entries"},
		{name: "duplicate player", kvs: []string{"players=A,A", "values=A:1"}, wantErr: `"A" is named twice`},
		{name: "odd player name", kvs: []string{"players=A,B c", "values=A:1"}, wantErr: "one word"},
		{name: "empty player name", kvs: []string{"players=A,,C", "values=A:1"}, wantErr: "must not be empty"},
		{name: "unknown player in values", kvs: []string{"values=AD:5"}, wantErr: `"D", who is not a player`},
		{name: "member named twice", kvs: []string{"values=AA:5"}, wantErr: "names A twice"},
		{name: "same coalition twice", kvs: []string{"values=AB:5,BA:6"}, wantErr: "name the same coalition A+B"},
		{name: "negative value", kvs: []string{"values=AB:-5"}, wantErr: "at least 0, got -5"},
		{name: "value too large", kvs: []string{"values=AB:9007199254740993"}, wantErr: "0 to 9007199254740992"},
		{name: "negative rounds", kvs: []string{"rounds=-1"}, wantErr: "rounds must be from 0"},
		{name: "too many rounds", kvs: []string{"rounds=1001"}, wantErr: "rounds must be from 0 to 1000"},
		{name: "no proposals", kvs: []string{"max_proposals=0"}, wantErr: "max_proposals must be from 1"},
		{name: "bad unit", kvs: []string{"unit=1kg"}, wantErr: "unit must be one word"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gp := params(t, tc.kvs...)
			got, err := coalition.New().Resolve(gp)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Resolve = %v, %v; want an error with %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f := games.FormatParams(got); !slices.Equal(f, tc.want) {
				t.Errorf("resolved %v, want %v", f, tc.want)
			}
			again, err := coalition.New().Resolve(got)
			if err != nil || !proto.Equal(again, got) {
				t.Errorf("Resolve is not idempotent: %v, %v", again, err)
			}
			if names, _ := games.Seats(coalition.New(), got); !slices.Equal(names, got.GetCoalition().GetPlayers()) {
				t.Errorf("seats %v, want the players", names)
			}
		})
	}
	if _, err := coalition.New().Resolve(&matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{}}); err == nil || !strings.Contains(err.Error(), `"ultimatum" game`) {
		t.Errorf("params of another game: %v", err)
	}
}
