package random_test

import (
	"fmt"
	"testing"

	"github.com/parley-arena/parley/agents/random"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
)

// TestPlaysCoalitionLegally plays whole coalition matches between random agents, from the
// generic observation alone (required messages, proposal forms with their totals, offer
// forms): the rules must accept every action at the first attempt.
func TestPlaysCoalitionLegally(t *testing.T) {
	for _, kvs := range [][]string{
		nil,
		{"players=N,E,S,W", "values=N+E:60,S+W:40,N+E+S+W:100,W:3", "rounds=2", "max_proposals=5"},
		{"rounds=0", "max_proposals=1"},
	} {
		p, err := games.ParseParams(coalition.Name, kvs)
		if err != nil {
			t.Fatal(err)
		}
		names, _ := games.Seats(coalition.New(), p)
		for seed := range uint64(50) {
			st, err := games.Start(coalition.New(), p, seed)
			if err != nil {
				t.Fatal(err)
			}
			agents := make([]*random.Agent, len(names))
			for i := range agents {
				agents[i] = random.New(seed*10 + uint64(i))
			}
			offers := 0
			for steps := 0; len(st.ToMove()) > 0; steps++ {
				if steps > 200 {
					t.Fatalf("%v seed %d: no end", kvs, seed)
				}
				movers := st.ToMove()
				actions := make([]*agentv1.Action, len(movers))
				for i, s := range movers {
					obs := st.Observe(s)
					obs.MatchId = fmt.Sprintf("m-%d", seed)
					actions[i] = act(t, agents[s], obs)
				}
				for i, s := range movers {
					for _, m := range actions[i].GetMessages() {
						if m.GetProposal() != nil {
							offers++
						}
					}
					if _, err := st.Apply(s, actions[i]); err != nil {
						t.Fatalf("%v seed %d: seat %d's random action %v refused: %v", kvs, seed, s, actions[i], err)
					}
				}
			}
			if len(kvs) == 0 && offers == 0 {
				t.Errorf("seed %d: no random message carried an offer", seed)
			}
		}
	}
}
