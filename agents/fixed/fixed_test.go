package fixed

import (
	"context"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"google.golang.org/protobuf/proto"
)

// TestOfferReachesTheDecider plays the published probe: total 10, the scripted player makes
// its offer on the penultimate turn, and the decider must then see exactly that offer.
func TestOfferReachesTheDecider(t *testing.T) {
	g := ultimatum.New()
	for _, maxTurns := range []int32{2, 3} {
		for offer := int64(0); offer <= 10; offer++ {
			params, err := g.Resolve(&matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{Total: proto.Int64(10), MaxTurns: proto.Int32(maxTurns)}}})
			if err != nil {
				t.Fatal(err)
			}
			st, err := games.Start(g, params, 1)
			if err != nil {
				t.Fatal(err)
			}
			scripted := int32(maxTurns % 2) // the seat moving on the penultimate turn
			decider := 1 - scripted
			a, _ := New(offer)
			if maxTurns == 3 { // P1 opens with anything; the probe is P2's offer on turn 2
				open := &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"Dollars": 5}}}}}}}}}}
				if _, err := st.Apply(0, open); err != nil {
					t.Fatal(err)
				}
			}
			act, err := a.Act(context.Background(), st.Observe(scripted))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Apply(scripted, act); err != nil {
				t.Fatalf("max_turns=%d offer=%d: refused: %v", maxTurns, offer, err)
			}
			view := st.Observe(decider).GetUltimatum()
			got := view.GetStandingOffer() // dollars to P2
			if decider == 0 {
				got = 10 - got
			}
			if view.StandingOffer == nil || got != offer {
				t.Errorf("max_turns=%d: the decider is offered %d, want %d", maxTurns, got, offer)
			}
		}
	}
}
