package coalition_test

import (
	"slices"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
	"google.golang.org/protobuf/proto"
)

// fuzzStage is a state a fuzzed action is tried on.
type fuzzStage struct {
	kvs   []string
	steps []step
}

// fuzzStages: the active player's turn, the replies (none and one in), a proposal, a vote, the
// end, and a four-player game without talk. Seed 1 draws C first (TestBriefingGolden).
var fuzzStages = []fuzzStage{
	{},
	{steps: []step{{0, say(msg("b", 1), msg("c", 2))}}},
	{steps: []step{{0, say(msg("b", 1), msg("c", 2))}, {1, say(msg("a", 0))}}},
	{kvs: []string{"rounds=0"}},
	{kvs: []string{"rounds=0"}, steps: []step{{2, propose(g(0, 500), g(2, 250))}}},
	{kvs: []string{"rounds=0", "max_proposals=1"}, steps: []step{{2, propose(g(0, 334), g(1, 333), g(2, 333))}, {0, accept(0)}}},
	{kvs: []string{"rounds=0", "max_proposals=1"}, steps: []step{{2, propose(g(0, 500), g(2, 250))}, {0, reject()}}},
	{kvs: []string{"players=A,B,C,D", "values=AB:6,CD:4,ABCD:12,D:1", "rounds=0"}},
}

// FuzzApply feeds arbitrary bytes, read as an Action, to Apply at one of fuzzStages, as one of
// the seats (or one that does not exist). Apply must not panic, must accept or refuse with a
// *games.Rejection, must change nothing when it refuses, and, when the game ends, must pay a
// coalition exactly its value in non-negative amounts.
func FuzzApply(f *testing.F) {
	seeds := []*agentv1.Action{
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
	}
	for i, a := range seeds {
		b, err := proto.Marshal(a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Fuzz(func(t *testing.T, choice uint8, data []byte) {
		action := &agentv1.Action{}
		if err := proto.Unmarshal(data, action); err != nil {
			return
		}
		stage := fuzzStages[int(choice)%len(fuzzStages)]
		p := params(t, stage.kvs...)
		resolved, err := coalition.New().Resolve(p)
		if err != nil {
			t.Fatal(err)
		}
		n := len(resolved.GetCoalition().GetPlayers())
		seat := games.Seat(int(choice/uint8(len(fuzzStages))) % (n + 1)) // n does not play
		st := newState(t, p, 1)
		play(t, st, stage.steps...)
		before := make([]*agentv1.Observation, n)
		for s := range before {
			before[s] = st.Observe(games.Seat(s))
		}
		if _, err := st.Apply(seat, action); err != nil {
			if _, ok := games.AsRejection(err); !ok {
				t.Fatalf("Apply returned %T %v, want *games.Rejection", err, err)
			}
			for s, b := range before {
				if !proto.Equal(st.Observe(games.Seat(s)), b) {
					t.Fatalf("refused action %v changed seat %d's observation", action, s)
				}
			}
			return
		}
		if len(st.ToMove()) > 0 {
			return
		}
		out := st.Outcome()
		if len(out.GetPayoffs()) != n {
			t.Fatalf("payoffs %v for %d players", out.GetPayoffs(), n)
		}
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
		for _, v := range resolved.GetCoalition().GetValues() {
			values = append(values, float64(v))
		}
		if !slices.Contains(values, sum) {
			t.Fatalf("payoffs %v add up to %v, the value of no coalition", out.GetPayoffs(), sum)
		}
	})
}
