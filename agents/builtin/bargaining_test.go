package builtin_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/referee/games/trading"
)

// TestBargainingAgents builds the buyer/seller and trading agents from their settings and
// checks their first move in their game.
func TestBargainingAgents(t *testing.T) {
	tests := []struct {
		agent, settings string
		wantErr         string
		wantPrice       int64 // the concede seller's opening price with cost 40 and budget 100
	}{
		{agent: "concede", wantPrice: 80},
		{agent: "concede", settings: "curve=boulware&open=1.5", wantPrice: 60},
		{agent: "concede", settings: "open=9", wantPrice: 100}, // at most the budget
		{agent: "concede", settings: "curve=fast", wantErr: `curve must be linear or boulware, got "fast"`},
		{agent: "concede", settings: "open=0.5", wantErr: "open must be a number from 1 to 1000"},
		{agent: "concede", settings: "open=1e300", wantErr: "open must be a number from 1 to 1000"},
		{agent: "concede", settings: "open=NaN", wantErr: "open must be a number from 1 to 1000"},
		{agent: "concede", settings: "open=lots", wantErr: `open="lots": want a number`},
		{agent: "concede", settings: "seed=1", wantErr: `unknown setting "seed"`},
		{agent: "trader"},
		{agent: "trader", settings: "greed=1", wantErr: `unknown setting "greed" (accepted: none)`},
	}
	for _, tc := range tests {
		t.Run(tc.agent+"?"+tc.settings, func(t *testing.T) {
			settings, err := url.ParseQuery(tc.settings)
			if err != nil {
				t.Fatal(err)
			}
			a, err := builtin.New(tc.agent, settings)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New = %v, want an error with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := a.(sdk.Describer).Describe().GetName(); got != tc.agent {
				t.Errorf("Describe().Name = %q", got)
			}
			game := buysell.New()
			if tc.agent == "trader" {
				game = trading.New()
			}
			st, err := games.Start(game, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			action, err := a.Act(context.Background(), st.Observe(0))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Apply(0, action); err != nil {
				t.Fatalf("first move %v refused: %v", action, err)
			}
			if tc.wantPrice != 0 {
				if got := action.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[1].GetGives()["ZUP"]; got != tc.wantPrice {
					t.Errorf("opening price %d, want %d", got, tc.wantPrice)
				}
			}
		})
	}
}
