package deliberation_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"google.golang.org/protobuf/proto"
)

// fuzzStage is a state a fuzzed action is tried on: the opening, the first talk turn, the final
// turn, and the final turn of a three-party, two-issue cut.
type fuzzStage struct {
	kvs  []string
	talk int // talk turns played after the opening; -1: not even the opening
}

var fuzzStages = []fuzzStage{
	{talk: -1},
	{talk: 0},
	{talk: 3},
	{kvs: []string{"discussion_turns=2"}, talk: 2},
	{kvs: []string{"game=game1", "parties=3", "issues=2", "discussion_turns=1"}, talk: 1},
}

// FuzzApply feeds arbitrary bytes, read as an Action, to Apply at one of fuzzStages, as one of
// the seats (or one that does not exist). Apply must not panic, must accept or refuse with a
// *games.Rejection, must change nothing when it refuses, and when the match ends must pay every
// party its deal score or its threshold.
func FuzzApply(f *testing.F) {
	seeds := []*agentv1.Action{
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
		st := newState(t, 3, stage.kvs...)
		s := setup(t, stage.kvs...)
		n := s.N()
		if stage.talk >= 0 {
			mustApply(t, st, 0, propose(s.DealString(s.Opening), "opening"))
			for range stage.talk {
				mustApply(t, st, st.ToMove()[0], say("talk", ""))
			}
		}
		seat := st.ToMove()[0]
		if choice/uint8(len(fuzzStages))%4 == 3 {
			seat = games.Seat(int(choice) % (n + 1)) // possibly out of turn, possibly no seat
		}
		before := make([]*agentv1.Observation, n)
		for i := range before {
			before[i] = st.Observe(games.Seat(i))
		}
		if _, err := st.Apply(seat, action); err != nil {
			if _, ok := games.AsRejection(err); !ok {
				t.Fatalf("Apply returned %T %v, want *games.Rejection", err, err)
			}
			for i, b := range before {
				if !proto.Equal(st.Observe(games.Seat(i)), b) {
					t.Fatalf("refused action %v changed seat %d's observation", action, i)
				}
			}
			return
		}
		if len(st.ToMove()) > 0 {
			return
		}
		out := st.Outcome()
		if len(out.GetPayoffs()) != n {
			t.Fatalf("payoffs %v for %d parties", out.GetPayoffs(), n)
		}
		final := action.GetMove().GetPropose().GetProposal().GetDeal()
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
	})
}
