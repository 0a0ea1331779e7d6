package coalition_test

import (
	"slices"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
	"github.com/parley-arena/parley/referee/games/gametest"
)

// fuzzStages are the states a fuzzed action is tried on: the active player's turn, the replies
// (none and one in), a proposal, a vote, the end, and a four-player game without talk. Seed 1
// draws C first (TestBriefingGolden).
func fuzzStages(t testing.TB) []gametest.FuzzStage {
	noTalk := params(t, "rounds=0")
	oneProposal := params(t, "rounds=0", "max_proposals=1")
	return []gametest.FuzzStage{
		{},
		{Moves: []*agentv1.Action{say(msg("b", 1), msg("c", 2))}, Seats: []games.Seat{0}},
		{Moves: []*agentv1.Action{say(msg("b", 1), msg("c", 2)), say(msg("a", 0))}, Seats: []games.Seat{0, 1}},
		{Params: noTalk},
		{Params: noTalk, Moves: []*agentv1.Action{propose(g(0, 500), g(2, 250))}, Seats: []games.Seat{2}},
		{Params: oneProposal, Moves: []*agentv1.Action{propose(g(0, 334), g(1, 333), g(2, 333)), accept(0)}, Seats: []games.Seat{2, 0}},
		{Params: oneProposal, Moves: []*agentv1.Action{propose(g(0, 500), g(2, 250)), reject()}, Seats: []games.Seat{2, 0}},
		{Params: params(t, "players=A,B,C,D", "values=AB:6,CD:4,ABCD:12,D:1", "rounds=0")},
	}
}

// FuzzApply runs the shared harness (gametest.Fuzz) at fuzzStages; on top, a finished match
// must pay a coalition exactly its value in non-negative amounts, or nobody anything.
func FuzzApply(f *testing.F) {
	gametest.Fuzz{Game: coalition.New(), Seed: 1, Stages: fuzzStages(f), Check: checkCoalitionPaid, Corpus: []*agentv1.Action{
		say(msg("b", 1), msg("c", 2)),
		say(offer(msg("b", 1), g(0, 450), g(1, 300)), msg("c", 2)),
		say(msg("a", 0)),
		say(msg("all")),
		propose(g(0, 500), g(2, 250)),
		propose(g(0, -1), g(2, 751)),
		propose(g(0, 1<<62), g(2, 1<<62)),
		propose(g(2, 0)),
		propose(g(1, 250), g(2, 250)),
		accept(0), accept(7), reject(), {},
		{Move: reject().GetMove(), Messages: []*gamev1.Message{offer(msg("x", 1), g(0, 375), g(1, 375))}, PrivateReasoning: "r", PrivateNotes: "n"},
	}}.Run(f)
}

func checkCoalitionPaid(t *testing.T, a gametest.Accepted) {
	if len(a.State.ToMove()) > 0 {
		return
	}
	out := a.State.Outcome()
	var sum float64
	for _, x := range out.GetPayoffs() {
		if x < 0 {
			t.Fatalf("negative payoff: %v", out)
		}
		sum += x
	}
	if !out.GetAgreement() {
		if sum != 0 || out.GetCause() != matchv1.EndCause_END_CAUSE_TURN_LIMIT {
			t.Fatalf("no agreement but %v", out)
		}
		return
	}
	var values []float64
	for _, v := range a.Params.GetCoalition().GetValues() {
		values = append(values, float64(v))
	}
	if !slices.Contains(values, sum) {
		t.Fatalf("payoffs %v add up to %v, the value of no coalition", out.GetPayoffs(), sum)
	}
}
