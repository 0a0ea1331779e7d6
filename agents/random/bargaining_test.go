package random_test

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/random"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/referee/games/trading"
)

// TestBargainingGames plays the random agent against itself in the buyer/seller and trading
// games, from the observation's legal moves and bounds alone. Buyer/seller bounds say exactly
// what is legal, so nothing is refused; in trading the opponent's side has no known upper limit
// (its holdings are private), so the random agent asks for at most one of each, which is
// refused only where the opponent holds none: most moves go through.
func TestBargainingGames(t *testing.T) {
	tests := []struct {
		name       string
		game       games.Game
		params     *matchv1.GameParams
		maxRefused float64 // largest share of refused actions
	}{
		{name: "buysell", game: buysell.New(), maxRefused: 0},
		{name: "buysell drawn and scaled", game: buysell.New(), maxRefused: 0,
			params: &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{Draw: proto.Bool(true), Scale: proto.Int64(100)}}}},
		{name: "trading", game: trading.New(), maxRefused: 0.05},
		{name: "trading with more resources and goals", game: trading.New(), maxRefused: 0.25,
			params: &matchv1.GameParams{Family: &matchv1.GameParams_Trading{Trading: &tradingv1.Params{
				P2Holdings: map[string]int64{"X": 5, "Y": 25, "Z": 10, "W": 7}, P1Goal: map[string]int64{"X": 15, "Y": 15},
			}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var moves, refused, deals int
			for seed := range uint64(100) {
				st, err := games.Start(tc.game, tc.params, seed)
				if err != nil {
					t.Fatal(err)
				}
				agent := random.New(seed)
				for len(st.ToMove()) > 0 {
					seat := st.ToMove()[0]
					obs := st.Observe(seat)
					obs.MatchId = fmt.Sprint(seed)
					obs.Attempt = 1
					a, err := agent.Act(context.Background(), obs)
					if err != nil {
						t.Fatal(err)
					}
					moves++
					if _, err := st.Apply(seat, a); err != nil {
						rej, ok := games.AsRejection(err)
						if !ok || rej.Code.String() != "REJECTION_CODE_INVALID_TERMS" {
							t.Fatalf("seed %d: %v refused with %v", seed, a, err)
						}
						refused++
						if _, err := st.Apply(seat, st.Default(seat)); err != nil {
							t.Fatal(err)
						}
					}
				}
				if st.Outcome().GetAgreement() {
					deals++
				}
			}
			share := float64(refused) / float64(moves)
			t.Logf("%d moves, %d refused (%.0f%%), %d deals in 100 matches", moves, refused, 100*share, deals)
			if share > tc.maxRefused {
				t.Errorf("%.0f%% of random actions refused, want at most %.0f%%", 100*share, 100*tc.maxRefused)
			}
			if deals == 0 {
				t.Error("no random match ended in a deal")
			}
		})
	}
}
