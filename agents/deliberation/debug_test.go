package deliberation_test

import (
	"fmt"
	"testing"

	agent "github.com/parley-arena/parley/agents/deliberation"
	rules "github.com/parley-arena/parley/referee/games/deliberation"
)

func TestDebug(t *testing.T) {
	p := resolved(t, "base")
	s, _ := rules.NewSetup(p)
	agents := make([]*agent.Agent, 6)
	for i := range agents {
		agents[i] = newAgent(t, agent.Config{})
	}
	for seed := uint64(1); seed <= 3; seed++ {
		_, st := playMatch(t, p, seed, agents)
		v := st.Observe(0).GetDeliberation()
		for _, stmt := range v.GetStatements() {
			if stmt.GetDeal() == nil { continue }
			d, _ := s.DealFromProto(stmt.GetDeal())
			vote := s.Vote(d)
			fmt.Printf("turn %2d seat %d %s scores %v yes %d passed %v\n", stmt.GetTurn(), stmt.GetSeat(), s.DealString(d), vote.Scores, vote.YesCount, vote.Passed)
		}
		fmt.Println()
	}
}
