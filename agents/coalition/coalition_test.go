package coalition_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	coalitionagent "github.com/parley-arena/parley/agents/coalition"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
)

func params(t *testing.T, kvs ...string) *matchv1.GameParams {
	t.Helper()
	gp, err := games.ParseParams(coalition.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	return gp
}

func agent(t *testing.T, basis coalitionagent.Basis, threshold float64) *coalitionagent.Agent {
	t.Helper()
	a, err := coalitionagent.New(coalitionagent.Config{Basis: basis, Threshold: threshold})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// playMatch plays a match between agents (one per seat) directly on the rules and returns the
// final state and how many actions the rules refused.
func playMatch(t *testing.T, p *matchv1.GameParams, seed uint64, agents ...*coalitionagent.Agent) games.State {
	t.Helper()
	st, err := games.Start(coalition.New(), p, seed)
	if err != nil {
		t.Fatal(err)
	}
	for steps := 0; len(st.ToMove()) > 0; steps++ {
		if steps > 1000 {
			t.Fatal("match does not end")
		}
		movers := st.ToMove()
		actions := make([]*agentv1.Action, len(movers))
		for i, s := range movers {
			a, err := agents[s].Act(context.Background(), st.Observe(s))
			if err != nil {
				t.Fatalf("seat %d: %v", s, err)
			}
			actions[i] = a
		}
		for i, s := range movers {
			if _, err := st.Apply(s, actions[i]); err != nil {
				t.Fatalf("seat %d's action %v refused: %v", s, actions[i], err)
			}
		}
	}
	return st
}

func TestSameBasisAgreesAtOnce(t *testing.T) {
	tests := []struct {
		basis coalitionagent.Basis
		want  []float64
	}{
		{coalitionagent.BasisCore, []float64{500, 250, 250}},
		{coalitionagent.BasisShapley, []float64{417, 292, 291}},
	}
	for _, tc := range tests {
		t.Run(string(tc.basis), func(t *testing.T) {
			for seed := range uint64(20) {
				a := agent(t, tc.basis, 1)
				st := playMatch(t, params(t), seed, a, a, a)
				out := st.Outcome()
				if !out.GetAgreement() || !slices.Equal(out.GetPayoffs(), tc.want) || !strings.Contains(out.GetSummary(), "proposal 1 of 10") {
					t.Fatalf("seed %d: %v, want %v at the first proposal", seed, out, tc.want)
				}
			}
		})
	}
}

func TestCoreAgainstShapleyNeverAgrees(t *testing.T) {
	// A core agent asks A 500 and gives C 250; a Shapley agent in C wants 291 and a core
	// agent in A wants 500, so neither split passes both.
	core, shapley := agent(t, coalitionagent.BasisCore, 1), agent(t, coalitionagent.BasisShapley, 1)
	for seed := range uint64(10) {
		st := playMatch(t, params(t, "max_proposals=4"), seed, core, core, shapley)
		if out := st.Outcome(); out.GetAgreement() || out.GetCause() != matchv1.EndCause_END_CAUSE_TURN_LIMIT {
			t.Fatalf("seed %d: %v", seed, out)
		}
	}
	// A lenient Shapley agent takes the core split: 250 >= 0.85 * 291.
	lenient := agent(t, coalitionagent.BasisShapley, 0.85)
	for seed := range uint64(10) {
		st := playMatch(t, params(t), seed, core, core, lenient)
		if out := st.Outcome(); !out.GetAgreement() {
			t.Fatalf("seed %d with a lenient agent: %v", seed, out)
		}
	}
}

func TestTalkCarriesTheOffer(t *testing.T) {
	st, err := games.Start(coalition.New(), params(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	a := agent(t, coalitionagent.BasisCore, 1)
	act, err := a.Act(context.Background(), st.Observe(0))
	if err != nil {
		t.Fatal(err)
	}
	if act.GetMove().GetSay() == nil || len(act.GetMessages()) != 2 {
		t.Fatalf("active player's action %v", act)
	}
	for i, m := range act.GetMessages() {
		if !slices.Equal(m.GetTo(), []int32{int32(i + 1)}) || games.DescribeProposal(m.GetProposal(), []string{"A", "B", "C"}) != "A 500 g; B 250 g; C 250 g" ||
			!strings.Contains(m.GetText(), "The core") {
			t.Errorf("message %d: %v", i, m)
		}
	}
	if _, err := st.Apply(0, act); err != nil {
		t.Fatal(err)
	}
	// B (a Shapley agent) answers A's offer of 250: less than its 292.
	b := agent(t, coalitionagent.BasisShapley, 1)
	reply, err := b.Act(context.Background(), st.Observe(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(reply.GetMessages()) != 1 || !slices.Equal(reply.GetMessages()[0].GetTo(), []int32{0}) ||
		!strings.Contains(reply.GetMessages()[0].GetText(), "Your offer gives me 250 g, less than the 292 g I would accept") {
		t.Errorf("reply %v", reply)
	}
	if _, err := st.Apply(1, reply); err != nil {
		t.Fatal(err)
	}
}

func TestFallsBackToShapley(t *testing.T) {
	tests := []struct {
		name   string
		params []string
		want   string
		split  string
	}{
		{name: "empty core", params: []string{"values=AB:90,AC:90,BC:90,ABC:90"}, want: "the core is empty", split: "A 30 g; B 30 g; C 30 g"},
		{name: "too many players for the core", params: []string{"players=A,B,C,D,E,F", "values=ABCDEF:601"}, want: "too large", split: "A 101 g; B 100 g; C 100 g; D 100 g; E 100 g; F 100 g"},
		{name: "a core with many points: its middle", params: []string{"values=ABC:90"}, want: "The middle of the core", split: "A 30 g; B 30 g; C 30 g"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := params(t, append(tc.params, "rounds=0")...)
			st, err := games.Start(coalition.New(), p, 1)
			if err != nil {
				t.Fatal(err)
			}
			s := st.ToMove()[0]
			act, err := agent(t, coalitionagent.BasisCore, 1).Act(context.Background(), st.Observe(s))
			if err != nil {
				t.Fatal(err)
			}
			names, _ := games.Seats(coalition.New(), p)
			if got := games.DescribeProposal(act.GetMove().GetPropose().GetProposal(), names); got != tc.split {
				t.Errorf("proposal %q, want %q", got, tc.split)
			}
			if text := act.GetMessages()[0].GetText(); !strings.Contains(text, tc.want) {
				t.Errorf("message %q does not say %q", text, tc.want)
			}
			if _, err := st.Apply(s, act); err != nil {
				t.Errorf("proposal refused: %v", err)
			}
		})
	}
}

func TestThreshold(t *testing.T) {
	// C proposes A+C with A at 450; A's core share is 500.
	p := params(t, "rounds=0")
	var seed uint64
	for ; ; seed++ {
		st, _ := games.Start(coalition.New(), p, seed)
		if st.ToMove()[0] == 2 {
			break
		}
	}
	for _, tc := range []struct {
		threshold float64
		accept    bool
	}{{1, false}, {0.9, true}, {0.91, false}, {0, true}} {
		st, _ := games.Start(coalition.New(), p, seed)
		if _, err := st.Apply(2, &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
			Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
				{Seat: 0, Receives: map[string]int64{"g": 450}}, {Seat: 2, Receives: map[string]int64{"g": 300}},
			}}},
		}}}}}); err != nil {
			t.Fatal(err)
		}
		act, err := agent(t, coalitionagent.BasisCore, tc.threshold).Act(context.Background(), st.Observe(0))
		if err != nil {
			t.Fatal(err)
		}
		if got := act.GetMove().GetAccept() != nil; got != tc.accept {
			t.Errorf("threshold %g: accept = %v, want %v (%v)", tc.threshold, got, tc.accept, act)
		}
	}
}

func TestConfig(t *testing.T) {
	for _, c := range []coalitionagent.Config{{Basis: "x", Threshold: 1}, {Basis: coalitionagent.BasisCore, Threshold: -0.1}, {Basis: coalitionagent.BasisCore, Threshold: 11}} {
		if _, err := coalitionagent.New(c); err == nil {
			t.Errorf("config %+v accepted", c)
		}
	}
	a := agent(t, coalitionagent.BasisShapley, 0.5)
	if d := a.Describe(); d.GetName() != "coalition" || !slices.Equal(d.GetGames(), []string{"coalition"}) || !strings.Contains(d.GetDescription(), "shapley") {
		t.Errorf("Describe = %v", d)
	}
	if _, err := a.Act(context.Background(), &agentv1.Observation{Game: "ultimatum"}); err == nil {
		t.Error("an observation of another game was answered")
	}
}
