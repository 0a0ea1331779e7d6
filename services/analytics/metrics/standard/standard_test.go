package standard_test

import (
	"context"
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/builtin"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// TestRealRecords computes the metrics of real matches between built-in agents: every
// family reads what the referee records.
func TestRealRecords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	reg := standard.New()
	games := families.New()
	tests := []struct {
		game   string
		agents []string
		want   []string // values that must be present (whole match or seat 0)
	}{
		{"ultimatum", []string{"builtin:fair", "builtin:spe"}, []string{"opening_proposal", "total", "proposals"}},
		{"buysell", []string{"builtin:concede", "builtin:concede?curve=boulware"}, []string{"price_1", "price_2", "first_price", "final_price", "bad_counter_offer", "cost"}},
		{"trading", []string{"builtin:trader", "builtin:trader"}, []string{"proposals", "default_moves"}},
		{"coalition", []string{"builtin:coalition", "builtin:coalition", "builtin:coalition?basis=shapley"}, []string{"winning_coalition", "shapley", "shapley_l2", "core_distance", "in_core", "efficiency"}},
		{"deliberation", []string{"builtin:cooperative", "builtin:cooperative", "builtin:greedy", "builtin:cooperative", "builtin:cooperative", "builtin:adversarial?target=union"},
			[]string{"final_5way", "final_6way", "any", "wrong", "leak", "failed", "pareto", "gini", "p1_own_1"}},
	}
	for _, tc := range tests {
		t.Run(tc.game, func(t *testing.T) {
			var clients []agentv1.AgentServiceClient
			for _, spec := range tc.agents {
				c, err := (&agentconn.Resolver{Builtins: builtin.Agents{}}).Open(ctx, spec)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				clients = append(clients, c.Client)
			}
			g, err := games.Lookup(tc.game)
			if err != nil {
				t.Fatal(err)
			}
			res, err := match.NewRunner(nil).Run(ctx, match.Spec{ID: "m", Game: g, Seed: 3, Agents: clients, Params: gametest.Resolve(t, g, nil)})
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := reg.Lookup(tc.game); !ok {
				t.Fatalf("no metrics family for %s", tc.game)
			}
			row, err := metrics.NewRow(res.Events, reg)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range tc.want {
				_, whole := row.Value(name, metrics.WholeMatch)
				_, seat := row.Value(name, 0)
				if !whole && !seat {
					t.Errorf("%s: no value %s in %v (outcome %v)", tc.game, name, row.Values, res.Outcome)
				}
			}
		})
	}
}
