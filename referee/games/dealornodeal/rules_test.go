package dealornodeal_test

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

var items = []string{"book", "hat", "ball"}

// propose builds a proposal giving Alice a (Bob the rest of 1 book, 2 hats, 2 balls).
func propose(a ...int) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{
		Proposal: dealornodeal.Proposal(items, []int{1, 2, 2}, solution.Alloc(a)),
	}}}}
}

func shares(sh ...*gamev1.SeatShare) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: sh}},
	}}}}}
}

func accept() *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}}
}

func pass() *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}
}

func newState(t testing.TB, kvs ...string) games.State {
	t.Helper()
	st, err := games.Start(dealornodeal.New(), params(t, kvs...), 1)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestDeal plays the corpus README's dialogue: Bob asks for the book, Alice accepts.
func TestDeal(t *testing.T) {
	st := newState(t)
	obs := st.Observe(0)
	v := obs.GetDealornodeal()
	if !slices.Equal(v.GetValues(), []int64{2, 3, 1}) || v.GetPoolValue() != 10 || len(obs.GetProposalForms()) != 1 || len(obs.GetProposalForms()[0].GetTotals()) != 3 {
		t.Fatalf("Alice's view %v forms %v", v, obs.GetProposalForms())
	}
	if strings.Contains(prototext.Format(obs), "8") && strings.Contains(obs.GetBriefing(), "worth 8") {
		t.Errorf("Alice's observation shows Bob's value of the book")
	}
	// Each seat's form says what an item is worth to it, by its own values (the README's).
	if w := obs.GetProposalForms()[0].GetWorth(); !maps.Equal(w.GetReceivedUnitPoints(), map[string]int64{"book": 2, "hat": 3, "ball": 1}) || w.Minimum != nil {
		t.Errorf("Alice's form's worth %v", w)
	}
	if _, err := st.Apply(0, pass()); err != nil {
		t.Fatal(err)
	}
	if w := st.Observe(1).GetProposalForms()[0].GetWorth().GetReceivedUnitPoints(); w["book"] != 8 || w["hat"] != 1 || w["ball"] != 0 {
		t.Errorf("Bob's form's worth %v, want book 8, hat 1, ball 0", w)
	}
	if _, err := st.Apply(1, propose(0, 2, 2)); err != nil {
		t.Fatal(err)
	}
	if s := st.Observe(0).GetDealornodeal().GetStanding(); !slices.Equal(s.GetAlice(), []int64{0, 2, 2}) {
		t.Fatalf("standing %v", s)
	}
	if b := st.Observe(0).GetBriefing(); !strings.Contains(b, "Bob proposes that you get 2 hats, 2 balls and Bob gets 1 book: worth 8 to you") {
		t.Errorf("briefing:\n%s", b)
	}
	if _, err := st.Apply(0, accept()); err != nil {
		t.Fatal(err)
	}
	out := st.Outcome()
	if out.GetCause() != matchv1.EndCause_END_CAUSE_AGREEMENT || !slices.Equal(out.GetPayoffs(), []float64{8, 8}) {
		t.Fatalf("outcome %v", out)
	}
	if strings.Contains(out.GetSummary(), "8") {
		t.Errorf("the summary shows scores: %s", out.GetSummary())
	}
}

// TestTerms: divisions that break the rules are refused with a reason.
func TestTerms(t *testing.T) {
	cases := []struct {
		name   string
		action *agentv1.Action
		want   string
	}{
		{"too many hats", shares(&gamev1.SeatShare{Seat: 0, Receives: map[string]int64{"book": 1, "hat": 3, "ball": 2}}), "pool holds 2"},
		{"items left over", shares(&gamev1.SeatShare{Seat: 0, Receives: map[string]int64{"book": 1}}), "receive 0 hat"},
		{"double count", shares(&gamev1.SeatShare{Seat: 0, Receives: map[string]int64{"book": 1, "hat": 2, "ball": 2}}, &gamev1.SeatShare{Seat: 1, Receives: map[string]int64{"book": 1}}), "receive 2 book"},
		{"unknown item", shares(&gamev1.SeatShare{Seat: 0, Receives: map[string]int64{"book": 1, "hat": 2, "ball": 2, "cat": 1}}), "no item cat"},
		{"gives", shares(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"book": 1}}), "nobody gives"},
		{"seat 2", shares(&gamev1.SeatShare{Seat: 2}), "seat 2"},
		{"negative", shares(&gamev1.SeatShare{Seat: 0, Receives: map[string]int64{"book": -1, "hat": 2, "ball": 2}}, &gamev1.SeatShare{Seat: 1, Receives: map[string]int64{"book": 2}}), "receives -1"},
		{"no allocation", &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{}}}}, "no allocation"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			st := newState(t)
			_, err := st.Apply(0, tc.action)
			rej, ok := games.AsRejection(err)
			if !ok || rej.Code != gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS || !strings.Contains(rej.Message, tc.want) {
				t.Errorf("%v, want INVALID_TERMS mentioning %q", err, tc.want)
			}
		})
	}
	// A seat left out receives nothing: Alice taking everything is legal.
	st := newState(t)
	if _, err := st.Apply(0, shares(&gamev1.SeatShare{Seat: 0, Receives: map[string]int64{"book": 1, "hat": 2, "ball": 2}})); err != nil {
		t.Errorf("Alice takes all: %v", err)
	}
}

// TestLapseAndLimit: a pass lets the standing proposal lapse; no deal by the turn limit pays 0.
func TestLapseAndLimit(t *testing.T) {
	st := newState(t, "max_turns=3")
	for i, a := range []*agentv1.Action{propose(1, 2, 2), pass()} {
		if _, err := st.Apply(games.Seat(i%2), a); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := st.Apply(0, accept()); err == nil {
		t.Fatal("accepted a lapsed proposal")
	}
	if _, err := st.Apply(0, pass()); err != nil {
		t.Fatal(err)
	}
	if out := st.Outcome(); out.GetCause() != matchv1.EndCause_END_CAUSE_TURN_LIMIT || !slices.Equal(out.GetPayoffs(), []float64{0, 0}) {
		t.Errorf("outcome %v", out)
	}
}

// TestResolve: defaults and refusals.
func TestResolve(t *testing.T) {
	gp, err := dealornodeal.New().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p := gp.GetDealornodeal(); p.GetMaxTurns() != 40 || !slices.Equal(p.GetCounts(), []int64{1, 2, 2}) {
		t.Errorf("resolved %v", p)
	}
	for _, kvs := range [][]string{
		{"counts=1,2"}, {"alice_values=2,3,2"}, {"counts=0,2,2"}, {"items=a,a,b"}, {"max_turns=0"},
		{"counts=1,1,1", "alice_values=0,0,0", "bob_values=0,0,0"}, {"corpus=x.txt"},
	} {
		if _, err := dealornodeal.New().Resolve(params(t, kvs...)); err == nil {
			t.Errorf("%v accepted", kvs)
		}
	}
	// Values without counts: the error names what is missing rather than "0 entries".
	for _, tc := range []struct {
		kvs  []string
		want string
	}{
		{[]string{"alice_values=2,3,1", "bob_values=8,1,0"}, "and counts is missing"},
		{[]string{"counts=1,2,2"}, "and alice_values and bob_values are missing"},
	} {
		_, err := dealornodeal.New().Resolve(params(t, tc.kvs...))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "0 entries") {
			t.Errorf("%v: %v, want %q", tc.kvs, err, tc.want)
		}
	}
}

// TestLoad draws set-ups from the sample corpus: a datapoint by number, or from the seed; the
// resolved params carry the set-up and its source.
func TestLoad(t *testing.T) {
	read := func(name string) ([]byte, error) {
		if name != "sample.txt" {
			return nil, fs.ErrNotExist
		}
		return os.ReadFile("corpus/testdata/sample_tagged.txt")
	}
	g := dealornodeal.New().(games.Loader)
	gp, err := g.Load(params(t, "corpus=sample.txt", "datapoint=2"), 1, read)
	if err != nil {
		t.Fatal(err)
	}
	p := gp.GetDealornodeal()
	if !slices.Equal(p.GetCounts(), []int64{3, 1, 1}) || !slices.Equal(p.GetAliceValues(), []int64{1, 5, 2}) || !slices.Equal(p.GetBobValues(), []int64{2, 1, 3}) ||
		p.GetSource() != "sample.txt dialogue 2 (line 2)" {
		t.Errorf("loaded %v", p)
	}
	if _, err := dealornodeal.New().Resolve(gp); err != nil {
		t.Error(err)
	}
	seen := map[int32]bool{}
	for seed := range uint64(40) {
		gp, err := g.Load(params(t, "corpus=sample.txt"), seed, read)
		if err != nil {
			t.Fatal(err)
		}
		seen[gp.GetDealornodeal().GetDatapoint()] = true
	}
	if len(seen) != 5 {
		t.Errorf("40 seeds drew datapoints %v, want all 5", seen)
	}
	if _, err := g.Load(params(t, "corpus=sample.txt", "datapoint=6"), 1, read); err == nil {
		t.Error("datapoint 6 of 5 accepted")
	}
	if _, err := g.Load(params(t, "corpus=other.txt"), 1, read); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing corpus: %v", err)
	}
	if again, err := g.Load(gp, 1, read); err != nil || !proto.Equal(again, gp) {
		t.Errorf("loading loaded params changed them")
	}
}
