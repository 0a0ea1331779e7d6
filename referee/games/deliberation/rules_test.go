package deliberation_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/parley-arena/parley/referee/games/gametest"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/deliberation"
)

// TestVotesAndPayoffsBase checks hand-worked deals of the base game (seats: SportCo, Department
// of Tourism, Mayor, Other cities, Local Labour Union, Environmental League; thresholds 55, 65,
// 30, 31, 50, 55; quorum 5; vetoes SportCo and Tourism; bonus 10).
func TestVotesAndPayoffsBase(t *testing.T) {
	s := setup(t)
	tests := []struct {
		name      string
		deal      string
		scores    []int
		yes       []bool
		passed    bool
		unanimous bool
		byBonus   bool
		payoffs   []int
	}{
		{
			// SportCo 14+11+17+35+23, Tourism 0+0+9+10+0, Mayor 14+12+0+40+10, Cities 0, Union
			// 15+0+0+30+0, League 0: only SportCo and the Mayor say yes.
			name: "opening deal", deal: "A1,B1,C4,D1,E5",
			scores: []int{100, 19, 76, 0, 45, 0}, yes: []bool{true, false, true, false, false, false},
			payoffs: []int{55, 65, 30, 31, 50, 55},
		},
		{
			// SportCo 8+0+10+29+10, Tourism 11+25+4+26+15, Mayor 8+0+12+30+4, Cities 4+0+6+8+30,
			// Union 20+0+25+20+6, League 22+55: everyone at or above the minimum; SportCo gets
			// its bonus.
			name: "unanimous", deal: "A2,B3,C3,D2,E3",
			scores: []int{57, 81, 54, 48, 71, 77}, yes: []bool{true, true, true, true, true, true},
			passed: true, unanimous: true, payoffs: []int{67, 81, 54, 48, 71, 77},
		},
		{
			// Tourism 11+25+2+10+15 = 63 < 65: five yes-votes, but a veto holder says no.
			name: "a veto party refuses", deal: "A2,B3,C2,D1,E3",
			scores: []int{58, 63, 70, 42, 91, 77}, yes: []bool{true, false, true, true, true, true},
			payoffs: []int{55, 65, 30, 31, 50, 55},
		},
		{
			// SportCo 8+0+5+29+10 = 52 < 55, but every other party says yes and 52+10 >= 55.
			name: "p1 only through its bonus", deal: "A2,B3,C2,D2,E3",
			scores: []int{52, 79, 60, 50, 81, 77}, yes: []bool{true, true, true, true, true, true},
			passed: true, unanimous: true, byBonus: true, payoffs: []int{62, 79, 60, 50, 81, 77},
		},
		{
			// The League (22+25 = 47 < 55) says no; the other five pass it without a bonus.
			name: "five of six", deal: "A2,B2,C2,D2,E3",
			scores: []int{59, 74, 68, 50, 81, 47}, yes: []bool{true, true, true, true, true, false},
			passed: true, payoffs: []int{59, 74, 68, 50, 81, 47},
		},
		{
			// Cities 4+0+8+8+15 = 35, League 47 < 55: five of six again, p1 on its own score.
			name: "five of six, no bonus", deal: "A2,B2,C2,D2,E4",
			scores: []int{64, 71, 71, 35, 83, 47}, yes: []bool{true, true, true, true, true, false},
			passed: true, payoffs: []int{64, 71, 71, 35, 83, 47},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := deal(t, s, tc.deal)
			v := s.Vote(d)
			if !slices.Equal(v.Scores, tc.scores) || !slices.Equal(v.Yes, tc.yes) || v.Passed != tc.passed || v.Unanimous != tc.unanimous || v.ByBonus != tc.byBonus {
				t.Fatalf("Vote(%s) = %+v, want scores %v yes %v passed %v unanimous %v by bonus %v", tc.deal, v, tc.scores, tc.yes, tc.passed, tc.unanimous, tc.byBonus)
			}
			if got := v.Payoffs(s); !slices.Equal(got, tc.payoffs) {
				t.Fatalf("payoffs %v, want %v", got, tc.payoffs)
			}
			// The same through a whole match: p1 tables it as the final deal.
			st := newState(t, 1)
			talkAll(t, st, s)
			events, err := st.Apply(0, propose(tc.deal, "My final deal."))
			if err != nil {
				t.Fatal(err)
			}
			if len(st.ToMove()) != 0 {
				t.Fatal("the match goes on after the final deal")
			}
			res := events[0].GetProposalResolved()
			var yes []int32
			for seat, y := range tc.yes {
				if y {
					yes = append(yes, int32(seat))
				}
			}
			if res.GetAccepted() != tc.passed || !slices.Equal(res.GetAcceptedBy(), yes) || len(res.GetAcceptedBy())+len(res.GetRejectedBy()) != 6 {
				t.Fatalf("proposal_resolved %v, want accepted %v by %v", res, tc.passed, yes)
			}
			out := st.Outcome()
			wantCause := matchv1.EndCause_END_CAUSE_TURN_LIMIT
			if tc.passed {
				wantCause = matchv1.EndCause_END_CAUSE_AGREEMENT
			}
			if out.GetCause() != wantCause || out.GetAgreement() != tc.passed {
				t.Fatalf("outcome %v", out)
			}
			for seat, x := range out.GetPayoffs() {
				if int(x) != tc.payoffs[seat] {
					t.Fatalf("outcome payoffs %v, want %v", out.GetPayoffs(), tc.payoffs)
				}
			}
		})
	}
}

// TestBonusNeedsEveryOtherYes checks the bonus rule's other side: p1 cannot say yes through its
// bonus when another party says no.
func TestBonusNeedsEveryOtherYes(t *testing.T) {
	s := setup(t)
	d := deal(t, s, "A2,B2,C2,D3,E3") // SportCo 8+7+5+20+10 = 50, 60 with the bonus; League 47 < 55.
	v := s.Vote(d)
	if v.Scores[0] != 50 || v.Yes[0] || v.Yes[5] || v.Passed {
		t.Fatalf("Vote = %+v; want SportCo (50, bonus out of reach without the League) to say no", v)
	}
}

// TestNoDealAndDefaults: p1 tabling no deal ends the match at the thresholds; the default moves
// are legal and do what the rules say.
func TestNoDealAndDefaults(t *testing.T) {
	s := setup(t)
	st := newState(t, 2)
	mustApply(t, st, 0, st.Default(0))
	for len(st.ToMove()) > 0 && st.Turn() < int32(s.MaxTurns()) {
		seat := st.ToMove()[0]
		d := st.Default(seat)
		if d.GetMove().GetSay() == nil || d.GetMessages()[0].GetText() != deliberation.DefaultText || d.GetMessages()[0].GetProposal() != nil {
			t.Fatalf("discussion default %v", d)
		}
		mustApply(t, st, seat, d)
	}
	if d := st.Default(0); d.GetMove().GetReject() == nil {
		t.Fatalf("final default %v, want reject", d)
	}
	events, err := st.Apply(0, st.Default(0))
	if err != nil || len(events) != 0 {
		t.Fatalf("no deal: %v, %v", events, err)
	}
	out := st.Outcome()
	if out.GetCause() != matchv1.EndCause_END_CAUSE_REJECTED || out.GetAgreement() {
		t.Fatalf("outcome %v", out)
	}
	for seat, x := range out.GetPayoffs() {
		if int(x) != s.Parties[seat].Threshold {
			t.Fatalf("payoffs %v, want the thresholds", out.GetPayoffs())
		}
	}
}

// TestRefusals checks the reasons given for bad deals and moves.
func TestRefusals(t *testing.T) {
	opened := func() games.State {
		st := newState(t, 1)
		mustApply(t, st, 0, propose("A1,B1,C4,D1,E5", "hello"))
		return st
	}
	tests := []struct {
		name   string
		st     func() games.State
		action func(games.State) (games.Seat, *gamev1.Move, []*gamev1.Message)
		code   gamev1.RejectionCode
		want   string
	}{
		{"opening must be the opening deal", func() games.State { return newState(t, 1) },
			func(games.State) (games.Seat, *gamev1.Move, []*gamev1.Message) {
				a := propose("A2,B1,C4,D1,E5", "x")
				return 0, a.Move, a.Messages
			}, gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "must be A1,B1,C4,D1,E5"},
		{"unknown option", opened,
			func(st games.State) (games.Seat, *gamev1.Move, []*gamev1.Message) {
				a := say("x", "A1,B4,C4,D1,E5")
				return st.ToMove()[0], a.Move, a.Messages
			}, gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, `"B4", which is no option`},
		{"missing issue", opened,
			func(st games.State) (games.Seat, *gamev1.Move, []*gamev1.Message) {
				a := say("x", "A1,B1,C4,D1")
				return st.ToMove()[0], a.Move, a.Messages
			}, gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "no option of issue E"},
		{"two options of one issue", opened,
			func(st games.State) (games.Seat, *gamev1.Move, []*gamev1.Message) {
				a := say("x", "A1,A2,B1,C4,D1,E5")
				return st.ToMove()[0], a.Move, a.Messages
			}, gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "two options of issue A (A1 and A2)"},
		{"private message", opened,
			func(st games.State) (games.Seat, *gamev1.Move, []*gamev1.Message) {
				seat := st.ToMove()[0]
				a := say("x", "")
				a.Messages[0].To = []int32{(seat + 1) % 6}
				return seat, a.Move, a.Messages
			}, gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "exactly one public message"},
		{"no message", opened,
			func(st games.State) (games.Seat, *gamev1.Move, []*gamev1.Message) {
				return st.ToMove()[0], say("x", "").Move, nil
			}, gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE, "exactly one public message"},
		{"propose in the discussion", opened,
			func(st games.State) (games.Seat, *gamev1.Move, []*gamev1.Message) {
				a := propose("A1,B1,C4,D1,E5", "x")
				return st.ToMove()[0], a.Move, a.Messages
			}, gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "only legal move is say"},
		{"out of turn", opened,
			func(st games.State) (games.Seat, *gamev1.Move, []*gamev1.Message) {
				a := say("x", "")
				return (st.ToMove()[0] + 1) % 6, a.Move, a.Messages
			}, gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "not to move"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := tc.st()
			seat, move, msgs := tc.action(st)
			before := st.Observe(seat)
			_, err := st.Apply(seat, &agentv1.Action{Move: move, Messages: msgs})
			rej, ok := games.AsRejection(err)
			if !ok || rej.Code != tc.code || !strings.Contains(rej.Message, tc.want) {
				t.Fatalf("Apply: %v, want %v containing %q", err, tc.code, tc.want)
			}
			if !proto.Equal(before, st.Observe(seat)) {
				t.Fatal("a refused action changed the state")
			}
		})
	}
}

// TestTurnOrder checks the speaking orders over many seeds and sizes: every block is an order
// of all parties (the last one the start of one), no block starts with the party that spoke
// just before nor ends with p1, every party speaks discussion_turns / n times, and the match's
// events announce the same orders.
func TestTurnOrder(t *testing.T) {
	seeds := 500
	if gametest.Race || testing.Short() {
		seeds = 100
	}
	for _, kvs := range [][]string{nil, {"discussion_turns=7"}, {"game=game2", "discussion_turns=30"}, {"game=game1", "parties=3", "discussion_turns=10"}, {"parties=4", "discussion_turns=1"}} {
		s := setup(t, kvs...)
		n := s.N()
		for seed := range uint64(seeds) {
			order := deliberation.Schedule(s, seed)
			if len(order) != s.Discussion {
				t.Fatalf("%v seed %d: %d talk turns, want %d", kvs, seed, len(order), s.Discussion)
			}
			prev := 0
			count := make([]int, n)
			for b := 0; b*n < len(order); b++ {
				block := order[b*n : min((b+1)*n, len(order))]
				if block[0] == prev {
					t.Fatalf("%v seed %d: block %d %v starts with the previous speaker %d", kvs, seed, b+1, block, prev)
				}
				if block[len(block)-1] == 0 {
					t.Fatalf("%v seed %d: block %d %v ends with p1", kvs, seed, b+1, block)
				}
				seen := map[int]bool{}
				for _, seat := range block {
					if seat < 0 || seat >= n || seen[seat] {
						t.Fatalf("%v seed %d: block %d %v is not part of an order of the parties", kvs, seed, b+1, block)
					}
					seen[seat] = true
					count[seat]++
				}
				prev = block[len(block)-1]
			}
			if s.Discussion%n == 0 {
				for seat, c := range count {
					if c != s.Discussion/n {
						t.Fatalf("%v seed %d: seat %d speaks %d times, want %d", kvs, seed, seat, c, s.Discussion/n)
					}
				}
			}
		}
	}
	// The orders differ between seeds (the draws are not constant).
	s := setup(t)
	if slices.Equal(deliberation.Schedule(s, 1), deliberation.Schedule(s, 2)) {
		t.Fatal("seeds 1 and 2 draw the same speaking orders")
	}
}

// TestTurnStructure plays a match through and checks the turn count, phases, who may move, the
// last-turn notice and the events.
func TestTurnStructure(t *testing.T) {
	s := setup(t)
	const seed = 11
	order := deliberation.Schedule(s, seed)
	st := newState(t, seed)
	if o, ok := st.(games.Opener); !ok || o.OpeningEvents()[0].GetPhaseStarted().GetPhase() != deliberation.PhaseOpening {
		t.Fatal("no opening phase event")
	}
	obs := st.Observe(0)
	if obs.GetMaxTurns() != 26 || obs.GetPhase() != deliberation.PhaseOpening || !slices.Equal(obs.GetLegalMoves(), []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE}) {
		t.Fatalf("opening observation: max %d phase %q legal %v", obs.GetMaxTurns(), obs.GetPhase(), obs.GetLegalMoves())
	}
	events, err := st.Apply(0, propose("A1,B1,C4,D1,E5", "We start here."))
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 || events[0].GetPhaseStarted().GetPhase() != deliberation.PhaseDiscussion || events[1].GetChanceDrawn().GetWhat() != "speaking order" {
		t.Fatalf("events after the opening: %v", events)
	}
	lastSeen := map[int]bool{}
	for i, want := range order {
		if got := st.ToMove(); len(got) != 1 || int(got[0]) != want {
			t.Fatalf("talk turn %d: to move %v, want %d", i+1, got, want)
		}
		v := st.Observe(games.Seat(want)).GetDeliberation()
		last := !slices.Contains(order[i+1:], want)
		if v.GetLastTurn() != last {
			t.Fatalf("talk turn %d: last_turn %v, want %v", i+1, v.GetLastTurn(), last)
		}
		if last {
			lastSeen[want] = true
			if !strings.Contains(st.Observe(games.Seat(want)).GetBriefing(), "This is your last discussion turn.") {
				t.Fatalf("talk turn %d: the briefing does not announce the last turn", i+1)
			}
		}
		events, err := st.Apply(games.Seat(want), say("words", ""))
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case i == len(order)-1:
			if len(events) != 1 || events[0].GetPhaseStarted().GetPhase() != deliberation.PhaseFinal {
				t.Fatalf("events after the last talk turn: %v", events)
			}
		case (i+1)%6 == 0:
			if len(events) != 1 || events[0].GetChanceDrawn() == nil {
				t.Fatalf("events after block end: %v", events)
			}
		default:
			if len(events) != 0 {
				t.Fatalf("events after talk turn %d: %v", i+1, events)
			}
		}
	}
	if len(lastSeen) != 6 {
		t.Fatalf("last turns announced to %v", lastSeen)
	}
	if st.Turn() != 26 || st.Observe(0).GetPhase() != deliberation.PhaseFinal {
		t.Fatalf("turn %d, phase %q", st.Turn(), st.Observe(0).GetPhase())
	}
	legal := st.Observe(0).GetLegalMoves()
	if !slices.Equal(legal, []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE, gamev1.MoveKind_MOVE_KIND_REJECT}) {
		t.Fatalf("final legal moves %v", legal)
	}
	if !strings.Contains(st.Observe(0).GetBriefing(), "This is the deciding vote") {
		t.Fatal("p1 is not told the final turn is the deciding vote")
	}
}

// TestSoloBaseline: only p1 speaks, for solo_turns turns, and sees its own earlier messages;
// the others still vote.
func TestSoloBaseline(t *testing.T) {
	s := setup(t, "solo_turns=6")
	if s.Discussion != 0 || s.TalkTurns() != 6 || s.MaxTurns() != 8 {
		t.Fatalf("solo setup: discussion %d talk %d max %d", s.Discussion, s.TalkTurns(), s.MaxTurns())
	}
	st := newState(t, 5, "solo_turns=6")
	events, err := st.Apply(0, propose("A1,B1,C4,D1,E5", "opening"))
	if err != nil || events[0].GetPhaseStarted().GetPhase() != deliberation.PhaseSolo || len(events) != 1 {
		t.Fatalf("after the opening: %v, %v", events, err)
	}
	for i := range 6 {
		if got := st.ToMove(); !slices.Equal(got, []games.Seat{0}) {
			t.Fatalf("solo turn %d: to move %v", i+1, got)
		}
		mustApply(t, st, 0, say("thinking aloud "+string(rune('a'+i)), "A2,B3,C3,D2,E3"))
	}
	obs := st.Observe(0)
	if obs.GetPhase() != deliberation.PhaseFinal {
		t.Fatalf("phase %q", obs.GetPhase())
	}
	// With the default window of 6, p1's history still shows its own latest messages.
	var texts []string
	for _, e := range obs.GetHistory() {
		for _, m := range e.GetMessages() {
			texts = append(texts, m.GetText())
		}
	}
	if len(texts) != 6 || texts[5] != "thinking aloud f" {
		t.Fatalf("p1's history messages: %q", texts)
	}
	events, err = st.Apply(0, propose("A2,B3,C3,D2,E3", "final"))
	if err != nil || !events[0].GetProposalResolved().GetAccepted() {
		t.Fatalf("final: %v, %v", events, err)
	}
}

// TestParams checks defaults, resolution and the errors of bad parameters.
func TestParams(t *testing.T) {
	g := newGame()
	resolved, err := g.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := resolved.GetDeliberation()
	if p.GetGame() != "base" || p.GetParties() != 6 || p.GetIssues() != 5 || p.GetDiscussionTurns() != 24 || p.GetQuorum() != 5 ||
		!slices.Equal(p.GetVetoes(), []string{"sportco", "tourism"}) || p.GetP1Bonus() != 10 || p.GetOpeningDeal() != "A1,B1,C4,D1,E5" ||
		p.GetSoloTurns() != 0 || p.GetAdversaryNoDealValue() != 150 || p.GetHistoryWindow() != 6 || p.GetScenario() == nil {
		t.Fatalf("defaults: %v", games.FormatParams(resolved))
	}
	again, err := g.Resolve(resolved)
	if err != nil || !proto.Equal(again, resolved) {
		t.Fatalf("Resolve is not idempotent: %v", err)
	}
	// Every parameter of the spec's table can be set.
	s := setup(t, "game=game2", "parties=5", "issues=4", "discussion_turns=9", "quorum=3", "vetoes=aid,Local government",
		"p1_bonus=4", "opening_deal=A1,B2,C3,D1", "adversary_no_deal_value=99", "history_window=0")
	if s.N() != 5 || len(s.Issues) != 4 || s.Discussion != 9 || s.Quorum != 3 || !slices.Equal(s.Vetoes, []int{1, 2}) || s.Bonus != 4 ||
		s.DealString(s.Opening) != "A1,B2,C3,D1" || s.NoDealValue != 99 || s.HistoryWindow != 0 || s.Parties[4].Name != "Local NGO" {
		t.Fatalf("setup %+v", s)
	}
	if s := setup(t, "vetoes=none", "quorum=6"); len(s.Vetoes) != 0 || s.Quorum != 6 {
		t.Fatalf("no vetoes: %v", s.Vetoes)
	}
	bad := []struct {
		kvs  []string
		want string
	}{
		{[]string{"game=nowhere"}, `game "nowhere" is not one of base, game1, game2, game3, nor a readable folder`},
		{[]string{"parties=2"}, "parties must be from 3 to 6"},
		{[]string{"issues=6"}, "issues must be from 1 to 5"},
		{[]string{"quorum=7"}, "quorum must be from 1 to 6"},
		{[]string{"quorum=0"}, "quorum must be from 1 to 6"},
		{[]string{"vetoes=nobody"}, `vetoes: "nobody" is no party`},
		{[]string{"vetoes=p1,sportco"}, "SportCo is named twice"},
		{[]string{"opening_deal=A1,B1"}, "opening_deal: the deal names no option of issue C, D, E"},
		{[]string{"discussion_turns=-1"}, "discussion_turns must be from 0"},
		{[]string{"p1_bonus=-1"}, "p1_bonus must be from 0"},
		{[]string{"history_window=-2"}, "history_window must be from 0"},
		{[]string{"solo_turns=-1"}, "solo_turns must be from 0"},
	}
	for _, tc := range bad {
		_, err := g.Resolve(params(t, tc.kvs...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%v) = %v, want an error containing %q", tc.kvs, err, tc.want)
		}
	}
	if _, err := deliberation.New().Resolve(params(t, "game="+dataDir+"/base")); err == nil || !strings.Contains(err.Error(), "a game folder must be loaded first") {
		t.Errorf("a game without folders imported one: %v", err)
	}
}

// TestEveryDealEnumerated: the shipped games have 720 complete deals each, all distinct.
func TestEveryDealEnumerated(t *testing.T) {
	for _, name := range deliberation.ShippedNames() {
		s := setup(t, "game="+name)
		seen := map[string]bool{}
		s.Deals(func(d deliberation.Deal) bool {
			seen[s.DealString(d)] = true
			return true
		})
		if len(seen) != 720 || s.DealCount() != 720 {
			t.Errorf("%s: %d deals enumerated, DealCount %d; want 720", name, len(seen), s.DealCount())
		}
		for seat, p := range s.Parties {
			if p.Max() != 100 {
				t.Errorf("%s: %s's best deal is worth %d, want 100", name, s.Parties[seat].Name, p.Max())
			}
		}
	}
}

// TestEventsAreStampless: events carry only their payload (the runner stamps them).
func TestEventsAreStampless(t *testing.T) {
	st := newState(t, 3)
	events, _ := st.Apply(0, propose("A1,B1,C4,D1,E5", "x"))
	for _, ev := range events {
		if ev.GetSeq() != 0 || ev.GetMatchId() != "" || ev.GetTurn() != 0 {
			t.Fatalf("stamped event %v", ev)
		}
		var _ *eventsv1.MatchEvent = ev
	}
}

// TestFixedSpeakingOrder: speaking_order replaces the drawn blocks with the given speakers,
// in any order (an imported match's), sets the discussion's length and is refused where it
// cannot hold.
func TestFixedSpeakingOrder(t *testing.T) {
	// Union twice in a row and p1 last: both against the drawn blocks' rules, yet allowed.
	names := []string{"union", "Union", "p2", "Mayor", "p1"}
	want := []int{4, 4, 1, 2, 0}
	s := setup(t, "speaking_order="+strings.Join(names, ","))
	if s.Discussion != len(names) {
		t.Fatalf("discussion %d turns, want %d", s.Discussion, len(names))
	}
	for _, seed := range []uint64{1, 2, 99} {
		if got := deliberation.Schedule(s, seed); !slices.Equal(got, want) {
			t.Fatalf("seed %d: schedule %v, want %v", seed, got, want)
		}
	}
	// The resolved params keep the order by party id, and resolve to the same again.
	resolved := s.Params()
	again, err := deliberation.NewSetup(resolved)
	if err != nil || !slices.Equal(again.Order, want) {
		t.Fatalf("resolved order %v (%v), want %v", again.Order, err, want)
	}
	// A match follows it: each turn's speaker is the next of the order, told of its last turn.
	st, err := newGame().NewState(resolved, 7)
	if err != nil {
		t.Fatal(err)
	}
	mustApply(t, st, 0, propose(s.DealString(s.Opening), "open"))
	for i, seat := range want {
		if got := st.ToMove(); len(got) != 1 || int(got[0]) != seat {
			t.Fatalf("talk turn %d: to move %v, want seat %d", i+1, got, seat)
		}
		last := st.Observe(games.Seat(seat)).GetDeliberation().GetLastTurn()
		if wantLast := !slices.Contains(want[i+1:], seat); last != wantLast {
			t.Fatalf("talk turn %d: last turn %v, want %v", i+1, last, wantLast)
		}
		events, err := st.Apply(games.Seat(seat), say("hi", ""))
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range events {
			if ev.GetChanceDrawn() != nil {
				t.Fatalf("talk turn %d: a fixed order draws nothing, got %v", i+1, ev)
			}
		}
	}
	if got := st.ToMove(); len(got) != 1 || got[0] != 0 || st.Observe(0).GetPhase() != deliberation.PhaseFinal {
		t.Fatalf("after the order: to move %v in phase %q, want p1's final turn", got, st.Observe(0).GetPhase())
	}
	bad := []struct {
		kvs  []string
		want string
	}{
		{[]string{"speaking_order=union,nobody"}, `speaking_order: turn 2: "nobody" is no party`},
		{[]string{"speaking_order=union,mayor", "discussion_turns=3"}, "speaking_order names 2 turns but discussion_turns is 3"},
		{[]string{"speaking_order=union", "solo_turns=2"}, "with solo_turns only p1 speaks"},
	}
	for _, tc := range bad {
		_, err := newGame().Resolve(params(t, tc.kvs...))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Resolve(%v) = %v, want an error containing %q", tc.kvs, err, tc.want)
		}
	}
}

// TestFormsSayWhatOptionsAreWorth: every form a seat is shown (the opening deal, a message's
// terms, the final deal) carries that seat's own points for each option it offers and the
// seat's minimum score, read here from the set-up's parties.
func TestFormsSayWhatOptionsAreWorth(t *testing.T) {
	s := setup(t)
	st := newState(t, 1)
	forms := 0
	check := func() {
		for _, seat := range st.ToMove() {
			obs := st.Observe(seat)
			p := s.Parties[seat]
			for _, f := range append(obs.GetProposalForms(), obs.GetMessageTermForms()...) {
				forms++
				w := f.GetWorth()
				if w.Minimum == nil || w.GetMinimum() != int64(p.Threshold) {
					t.Errorf("seat %d, form %q: minimum %v, want its threshold %d", seat, f.GetLabel(), w.Minimum, p.Threshold)
				}
				offered := 0
				for i, is := range s.Issues {
					for k := range is.Options {
						if got, ok := w.GetOptionPoints()[is.OptionID(k)]; ok {
							offered++
							if got != int64(p.Points[i][k]) {
								t.Errorf("seat %d, form %q: %s worth %d, want %d", seat, f.GetLabel(), is.OptionID(k), got, p.Points[i][k])
							}
						}
					}
				}
				want := 0
				for _, is := range f.GetIssues() {
					want += len(is.GetOptions())
				}
				if offered != want || len(w.GetOptionPoints()) != want {
					t.Errorf("seat %d, form %q: points for %d options (%d known), the form offers %d", seat, f.GetLabel(), len(w.GetOptionPoints()), offered, want)
				}
			}
		}
	}
	check() // the opening deal
	mustApply(t, st, 0, propose(s.DealString(s.Opening), "Here is where we start."))
	check() // a message's terms
	for i := 0; i < s.TalkTurns(); i++ {
		mustApply(t, st, st.ToMove()[0], say("more", ""))
	}
	check() // the final deal
	if forms < 3 {
		t.Fatalf("%d forms checked, want the opening, a message's and the final", forms)
	}
}
