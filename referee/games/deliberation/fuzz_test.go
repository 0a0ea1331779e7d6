package deliberation_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/referee/games/gametest"
)

// fuzzStage is a match of kvs with p1's opening and then talk turns played (talk -1: not even
// the opening).
func fuzzStage(t testing.TB, talk int, kvs ...string) gametest.FuzzStage {
	stage := gametest.FuzzStage{Params: params(t, kvs...)}
	if talk >= 0 {
		s := setup(t, kvs...)
		stage.Moves = append(stage.Moves, propose(s.DealString(s.Opening), "opening"))
		for range talk {
			stage.Moves = append(stage.Moves, say("talk", ""))
		}
	}
	return stage
}

// FuzzApply runs the shared harness (gametest.Fuzz) at the opening, the first talk turn, the
// final turn, and the final turn of a three-party, two-issue cut; on top, a finished match must
// pay every party its deal score or its threshold.
func FuzzApply(f *testing.F) {
	stages := []gametest.FuzzStage{
		fuzzStage(f, -1),
		fuzzStage(f, 0),
		fuzzStage(f, 3),
		fuzzStage(f, 2, "discussion_turns=2"),
		fuzzStage(f, 1, "game=game1", "parties=3", "issues=2", "discussion_turns=1"),
	}
	gametest.Fuzz{Game: newGame(), Seed: 3, Stages: stages, Check: checkPaid, Corpus: []*agentv1.Action{
		propose("A1,B1,C4,D1,E5", "opening"),
		propose("A2,B3,C3,D2,E3", "final"),
		propose("A9,B3,C3,D2,E3", "bad"),
		say("talk", ""),
		say("talk", "A2,B2,C2,D2,E3"),
		say("talk", "A2,A3"),
		reject("no deal"),
		{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, Messages: []*gamev1.Message{{To: []int32{1}, Text: "private"}}},
		{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{}}}}}}, Messages: []*gamev1.Message{{Text: "x"}}},
		{},
	}}.Run(f)
}

func checkPaid(t *testing.T, a gametest.Accepted) {
	if len(a.State.ToMove()) > 0 {
		return
	}
	s, err := deliberation.NewSetup(a.Params)
	if err != nil {
		t.Fatal(err)
	}
	out := a.State.Outcome()
	final := a.Action.GetMove().GetPropose().GetProposal().GetDeal()
	if final == nil {
		for i, x := range out.GetPayoffs() {
			if int(x) != s.Parties[i].Threshold || out.GetCause() != matchv1.EndCause_END_CAUSE_REJECTED {
				t.Fatalf("no deal but %v", out)
			}
		}
		return
	}
	d, err := s.DealFromProto(final)
	if err != nil {
		t.Fatalf("an accepted final deal does not read: %v", err)
	}
	want := s.Vote(d).Payoffs(s)
	for i, x := range out.GetPayoffs() {
		if int(x) != want[i] {
			t.Fatalf("payoffs %v, want %v", out.GetPayoffs(), want)
		}
	}
}
