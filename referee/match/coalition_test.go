package match_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/parley-arena/parley/agents/random"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/match"
)

// TestOpeningEventsAndParamSeats runs coalition matches, a game whose seats come from its
// parameters (games.SeatLister) and whose rules act before the first move (games.Opener):
// the runner takes one agent per player, names the seats after the players, and records the
// opening events right after MatchStarted.
func TestOpeningEventsAndParamSeats(t *testing.T) {
	p, err := games.ParseParams(coalition.Name, []string{"players=N,E,S,W", "values=N+E:60,S+W:40,N+E+S+W:100", "rounds=0", "max_proposals=2"})
	if err != nil {
		t.Fatal(err)
	}
	p = gametest.Resolve(t, coalition.New(), p)
	agents := make([]agentv1.AgentServiceClient, 4)
	for i := range agents {
		agents[i] = sdktest.Client(t, random.New(uint64(i)))
	}
	runner := match.NewRunner(nil)
	if _, err := runner.Run(t.Context(), match.Spec{ID: "c-3", Game: coalition.New(), Params: p, Agents: agents[:3]}); !errors.Is(err, match.ErrBadSpec) {
		t.Fatalf("three agents for four players: %v, want ErrBadSpec", err)
	}
	for seed := range uint64(5) {
		res, err := runner.Run(t.Context(), match.Spec{ID: "c-4", Game: coalition.New(), Params: p, Seed: seed, Agents: agents})
		if err != nil {
			t.Fatal(err)
		}
		evs := res.Events
		var names []string
		for _, s := range evs[0].GetMatchStarted().GetSeats() {
			names = append(names, s.GetName())
		}
		if !slices.Equal(names, []string{"N", "E", "S", "W"}) {
			t.Errorf("seats %v, want the players", names)
		}
		phase, draw := evs[1].GetPhaseStarted(), evs[2].GetChanceDrawn()
		if phase.GetPhase() != coalition.PhaseProposals || draw.GetWhat() != "proposer" || evs[1].GetTurn() != 1 || evs[2].GetTurn() != 1 {
			t.Fatalf("seed %d: events 2 and 3 are %v and %v, want the phase and the draw on turn 1", seed, evs[1], evs[2])
		}
		if first := evs[3].GetActionTaken(); first.GetSeat() != draw.GetSeat() || first.GetAction().GetMove().GetPropose() == nil || first.GetAttempt() != 1 {
			t.Errorf("seed %d: the first action %v is not the drawn proposer's (%d) proposal", seed, first, draw.GetSeat())
		}
		if res.Outcome.GetCause() == 0 || len(res.Outcome.GetPayoffs()) != 4 || len(res.Outcome.GetFaultedSeats()) != 0 {
			t.Errorf("seed %d: outcome %v", seed, res.Outcome)
		}
	}
}
