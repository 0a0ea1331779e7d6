package games

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"google.golang.org/protobuf/proto"
)

func TestRandomAction(t *testing.T) {
	var (
		propose = gamev1.MoveKind_MOVE_KIND_PROPOSE
		accept  = gamev1.MoveKind_MOVE_KIND_ACCEPT
		reject  = gamev1.MoveKind_MOVE_KIND_REJECT
		pass    = gamev1.MoveKind_MOVE_KIND_PASS
		choose  = gamev1.MoveKind_MOVE_KIND_CHOOSE
		gives   = gamev1.ShareSide_SHARE_SIDE_GIVES
		recv    = gamev1.ShareSide_SHARE_SIDE_RECEIVES
	)
	tests := []struct {
		name string
		obs  *agentv1.Observation
		// check is called on many draws; it reports what is wrong, or "".
		check func(a *agentv1.Action) string
	}{
		{
			name:  "no legal move gives nil",
			obs:   &agentv1.Observation{},
			check: func(a *agentv1.Action) string { return want(a == nil, "want nil, got %v", a) },
		},
		{
			name:  "accept only",
			obs:   &agentv1.Observation{LegalMoves: []gamev1.MoveKind{accept}},
			check: func(a *agentv1.Action) string { return want(a.GetMove().GetAccept() != nil, "want accept, got %v", a) },
		},
		{
			name:  "reject only",
			obs:   &agentv1.Observation{LegalMoves: []gamev1.MoveKind{reject}},
			check: func(a *agentv1.Action) string { return want(a.GetMove().GetReject() != nil, "want reject, got %v", a) },
		},
		{
			name:  "pass only",
			obs:   &agentv1.Observation{LegalMoves: []gamev1.MoveKind{pass}},
			check: func(a *agentv1.Action) string { return want(a.GetMove().GetPass() != nil, "want pass, got %v", a) },
		},
		{
			name: "choose one of the options",
			obs: &agentv1.Observation{LegalMoves: []gamev1.MoveKind{choose}, Choices: []*gamev1.Option{
				{Id: "a"}, {Id: "b"}, {Id: "c"},
			}},
			check: func(a *agentv1.Action) string {
				o := a.GetMove().GetChoose().GetOption()
				return want(o == "a" || o == "b" || o == "c", "option %q is not listed", o)
			},
		},
		{
			name: "proposal amounts within bounds, one share per seat in bound order",
			obs: &agentv1.Observation{LegalMoves: []gamev1.MoveKind{propose}, ProposalBounds: []*gamev1.Bound{
				{Seat: 2, Side: gives, Resource: "X", Min: 3, Max: 7},
				{Seat: 0, Side: recv, Resource: "Y", Min: 0, Max: 1},
				{Seat: 2, Side: recv, Resource: "Z", Min: -5, Max: -5},
			}},
			check: func(a *agentv1.Action) string {
				shares := a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()
				if len(shares) != 2 || shares[0].GetSeat() != 2 || shares[1].GetSeat() != 0 {
					return "want shares for seats 2 then 0, got " + a.String()
				}
				x, y, z := shares[0].GetGives()["X"], shares[1].GetReceives()["Y"], shares[0].GetReceives()["Z"]
				if x < 3 || x > 7 || y < 0 || y > 1 || z != -5 {
					return "amount out of bounds: " + a.String()
				}
				return want(len(shares[0].GetGives()) == 1 && len(shares[0].GetReceives()) == 1 &&
					len(shares[1].GetGives()) == 0 && len(shares[1].GetReceives()) == 1, "unexpected entries: %v", a)
			},
		},
		{
			name: "full int64 range does not overflow",
			obs: &agentv1.Observation{LegalMoves: []gamev1.MoveKind{propose}, ProposalBounds: []*gamev1.Bound{
				{Seat: 0, Side: gives, Resource: "X", Min: math.MinInt64, Max: math.MaxInt64},
				{Seat: 0, Side: gives, Resource: "Y", Min: math.MaxInt64 - 1, Max: math.MaxInt64},
			}},
			check: func(a *agentv1.Action) string {
				y := a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[0].GetGives()["Y"]
				return want(y >= math.MaxInt64-1, "Y = %d is out of bounds", y)
			},
		},
		{
			name: "propose with no bounds is an empty allocation",
			obs:  &agentv1.Observation{LegalMoves: []gamev1.MoveKind{propose}},
			check: func(a *agentv1.Action) string {
				alloc := a.GetMove().GetPropose().GetProposal().GetAllocation()
				return want(alloc != nil && len(alloc.GetShares()) == 0, "want empty allocation, got %v", a)
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			for range 200 {
				if msg := tc.check(RandomAction(tc.obs, rng)); msg != "" {
					t.Fatal(msg)
				}
			}
		})
	}
}

// TestRandomActionCoversEverything checks that every kind, choice and amount turns up, which a
// constant or biased draw would not manage.
func TestRandomActionCoversEverything(t *testing.T) {
	obs := &agentv1.Observation{
		LegalMoves: []gamev1.MoveKind{
			gamev1.MoveKind_MOVE_KIND_PROPOSE, gamev1.MoveKind_MOVE_KIND_ACCEPT, gamev1.MoveKind_MOVE_KIND_REJECT,
			gamev1.MoveKind_MOVE_KIND_PASS, gamev1.MoveKind_MOVE_KIND_CHOOSE,
		},
		ProposalBounds: []*gamev1.Bound{{Seat: 0, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: "D", Min: 0, Max: 4}},
		Choices:        []*gamev1.Option{{Id: "left"}, {Id: "right"}},
	}
	rng := rand.New(rand.NewPCG(7, 7))
	seen := map[string]int{}
	const draws = 5000
	for range draws {
		m := RandomAction(obs, rng).GetMove()
		switch k := m.GetKind().(type) {
		case *gamev1.Move_Propose:
			seen["propose"]++
			seen["amount "+string(rune('0'+k.Propose.GetProposal().GetAllocation().GetShares()[0].GetGives()["D"]))]++
		case *gamev1.Move_Accept:
			seen["accept"]++
		case *gamev1.Move_Reject:
			seen["reject"]++
		case *gamev1.Move_Pass:
			seen["pass"]++
		case *gamev1.Move_Choose:
			seen["choose "+k.Choose.GetOption()]++
		}
	}
	tests := []struct {
		key  string
		want int // expected count
	}{
		{"propose", draws / 5}, {"accept", draws / 5}, {"reject", draws / 5}, {"pass", draws / 5},
		{"choose left", draws / 10}, {"choose right", draws / 10},
		{"amount 0", draws / 25}, {"amount 2", draws / 25}, {"amount 4", draws / 25},
	}
	for _, tc := range tests {
		t.Run(tc.key, func(t *testing.T) {
			// Far looser than sampling noise (several standard deviations), tight enough to
			// catch a kind or value that is never or always drawn.
			if got := seen[tc.key]; got < tc.want/2 || got > tc.want*2 {
				t.Errorf("%s drawn %d times in %d, want about %d", tc.key, got, draws, tc.want)
			}
		})
	}
}

func TestRandomActionIsDeterministic(t *testing.T) {
	obs := &agentv1.Observation{
		LegalMoves: []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE, gamev1.MoveKind_MOVE_KIND_REJECT},
		ProposalBounds: []*gamev1.Bound{
			{Seat: 1, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: "A", Max: 1000},
			{Seat: 0, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: "B", Max: 1000},
			{Seat: 1, Side: gamev1.ShareSide_SHARE_SIDE_GIVES, Resource: "C", Max: 1000},
		},
	}
	a, b := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	for i := range 100 {
		x, y := RandomAction(obs, a), RandomAction(obs, b)
		if !proto.Equal(x, y) {
			t.Fatalf("draw %d differs with the same seed: %v vs %v", i, x, y)
		}
		x2, _ := proto.MarshalOptions{Deterministic: true}.Marshal(x)
		y2, _ := proto.MarshalOptions{Deterministic: true}.Marshal(y)
		if string(x2) != string(y2) {
			t.Fatalf("draw %d serializes differently with the same seed", i)
		}
	}
}

// want returns the formatted complaint unless ok.
func want(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(format, args...)
}
