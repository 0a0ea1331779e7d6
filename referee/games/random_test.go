package games

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
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
			name: "an unknown maximum is a modest ask",
			obs: &agentv1.Observation{LegalMoves: []gamev1.MoveKind{propose}, ProposalBounds: []*gamev1.Bound{
				{Seat: 0, Side: gives, Resource: "X", Min: 0, Max: 25},
				{Seat: 1, Side: gives, Resource: "Y", Min: 2, Max: math.MaxInt64, MaxUnknown: true},
			}},
			check: func(a *agentv1.Action) string {
				y := a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[1].GetGives()["Y"]
				return want(y == 2 || y == 3, "Y = %d is not within [2, 3]", y)
			},
		},
		{
			name: "say only",
			obs:  &agentv1.Observation{LegalMoves: []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_SAY}},
			check: func(a *agentv1.Action) string {
				return want(a.GetMove().GetSay() != nil && len(a.GetMessages()) == 0, "want say without messages, got %v", a)
			},
		},
		{
			name: "required messages, one per slot, whatever the move; terms only where forms allow",
			obs: &agentv1.Observation{
				LegalMoves:       []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_SAY, reject},
				RequiredMessages: []*gamev1.MessageSlot{{To: []int32{2}}, {To: []int32{0, 3}}, {}},
			},
			check: func(a *agentv1.Action) string {
				msgs := a.GetMessages()
				if len(msgs) != 3 {
					return "want 3 messages, got " + a.String()
				}
				for i, to := range [][]int32{{2}, {0, 3}, nil} {
					if !slices.Equal(msgs[i].GetTo(), to) || msgs[i].GetText() != RandomMessageText || msgs[i].GetProposal() != nil {
						return fmt.Sprintf("message %d: want to %v, text %q, no terms; got %v", i, to, RandomMessageText, msgs[i])
					}
				}
				return ""
			},
		},
		{
			name: "message terms take one of the forms",
			obs: &agentv1.Observation{
				LegalMoves:       []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_SAY},
				RequiredMessages: []*gamev1.MessageSlot{{To: []int32{1}}},
				MessageTermForms: []*gamev1.ProposalForm{pool(10, 0, 1)},
			},
			check: func(a *agentv1.Action) string {
				p := a.GetMessages()[0].GetProposal()
				if p == nil {
					return ""
				}
				return checkPool(p.GetAllocation(), 10, 0, 1)
			},
		},
		{
			name: "proposal forms: one form, amounts within bounds adding up to the total",
			obs: &agentv1.Observation{
				LegalMoves:     []gamev1.MoveKind{propose},
				ProposalBounds: []*gamev1.Bound{{Seat: 0, Side: recv, Resource: "g", Max: 1000}},
				ProposalForms:  []*gamev1.ProposalForm{pool(0, 0), pool(750, 0, 1), pool(1000, 0, 1, 2), pool(3, 2, 0, 1)},
			},
			check: func(a *agentv1.Action) string {
				alloc := a.GetMove().GetPropose().GetProposal().GetAllocation()
				switch len(alloc.GetShares()) {
				case 1:
					return checkPool(alloc, 0, 0)
				case 2:
					return checkPool(alloc, 750, 0, 1)
				case 3:
					if alloc.GetShares()[0].GetSeat() == 2 {
						return checkPool(alloc, 3, 2, 0, 1)
					}
					return checkPool(alloc, 1000, 0, 1, 2)
				}
				return "unexpected allocation " + alloc.String()
			},
		},
		{
			name: "proposal form with tight bounds: every amount forced",
			obs: &agentv1.Observation{LegalMoves: []gamev1.MoveKind{propose}, ProposalForms: []*gamev1.ProposalForm{{
				Bounds: []*gamev1.Bound{
					{Seat: 0, Side: recv, Resource: "g", Min: 5, Max: 5},
					{Seat: 1, Side: recv, Resource: "g", Min: 0, Max: 7},
					{Seat: 1, Side: gives, Resource: "h", Min: 1, Max: 2},
				},
				Totals: []*gamev1.AmountTotal{{Side: recv, Resource: "g", Total: 12}},
			}}},
			check: func(a *agentv1.Action) string {
				sh := a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()
				h := sh[1].GetGives()["h"]
				return want(sh[0].GetReceives()["g"] == 5 && sh[1].GetReceives()["g"] == 7 && h >= 1 && h <= 2, "want 5 and 7 g and 1-2 h, got %v", a)
			},
		},
		{
			name: "unreachable total stays within bounds",
			obs: &agentv1.Observation{LegalMoves: []gamev1.MoveKind{propose}, ProposalForms: []*gamev1.ProposalForm{{
				Bounds: []*gamev1.Bound{
					{Seat: 0, Side: recv, Resource: "g", Min: 0, Max: math.MaxInt64},
					{Seat: 1, Side: recv, Resource: "g", Min: math.MinInt64, Max: 3},
				},
				Totals: []*gamev1.AmountTotal{{Side: recv, Resource: "g", Total: math.MinInt64}},
			}}},
			check: func(a *agentv1.Action) string {
				sh := a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()
				x, y := sh[0].GetReceives()["g"], sh[1].GetReceives()["g"]
				return want(x >= 0 && y <= 3, "amounts %d, %d out of bounds", x, y)
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

// TestRandomFormCoversSplits checks that the amounts under a total are spread out: every split
// of 4 between two seats turns up, with neither seat favoured.
func TestRandomFormCoversSplits(t *testing.T) {
	obs := &agentv1.Observation{LegalMoves: []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_PROPOSE}, ProposalForms: []*gamev1.ProposalForm{pool(4, 0, 1)}}
	rng := rand.New(rand.NewPCG(9, 9))
	seen := map[int64]int{}
	const draws = 5000
	for range draws {
		seen[RandomAction(obs, rng).GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[0].GetReceives()["g"]]++
	}
	for x := range int64(5) {
		if seen[x] < draws/20 {
			t.Errorf("seat 0 got %d in %d of %d draws: %v", x, seen[x], draws, seen)
		}
	}
	if d := seen[0] - seen[4]; d > draws/10 || d < -draws/10 {
		t.Errorf("splits favour one seat: %v", seen)
	}
}

// pool is a form in which seats share total g, each receiving 0 to total.
func pool(total int64, seats ...int32) *gamev1.ProposalForm {
	f := &gamev1.ProposalForm{Totals: []*gamev1.AmountTotal{{Side: gamev1.ShareSide_SHARE_SIDE_RECEIVES, Resource: "g", Total: total}}}
	for _, s := range seats {
		f.Bounds = append(f.Bounds, &gamev1.Bound{Seat: s, Side: gamev1.ShareSide_SHARE_SIDE_RECEIVES, Resource: "g", Max: total})
	}
	return f
}

// checkPool reports what is wrong with alloc as a split of total g between seats, in order.
func checkPool(alloc *gamev1.Allocation, total int64, seats ...int32) string {
	sh := alloc.GetShares()
	if len(sh) != len(seats) {
		return fmt.Sprintf("want shares for %v, got %v", seats, alloc)
	}
	var sum int64
	for i, s := range sh {
		x, ok := s.GetReceives()["g"]
		if s.GetSeat() != seats[i] || !ok || x < 0 || x > total || len(s.GetGives()) != 0 {
			return fmt.Sprintf("share %d is not seat %d receiving 0 to %d g: %v", i, seats[i], total, alloc)
		}
		sum += x
	}
	return want(sum == total, "shares add up to %d, want %d: %v", sum, total, alloc)
}

// want returns the formatted complaint unless ok.
func want(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(format, args...)
}
