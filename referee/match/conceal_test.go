package match_test

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// TestConcealAgents: with Limits.conceal_agents each seat is told its own agent only (in the
// briefing's "Who plays" and in Observation.seats, labels included), while the record names
// every seat's agent; without it every seat is told every agent.
func TestConcealAgents(t *testing.T) {
	names := []string{"alpha-model", "beta-model"}
	labels := []string{"Alpha (alpha-model)", "Beta (beta-model)"}
	for _, conceal := range []bool{false, true} {
		logs := [2]*obsLog{{}, {}}
		spec := ultimatumSpec("conceal",
			sdktest.Client(t, logged(logs[0], patient(40)), sdk.WithInfo(&gamev1.AgentInfo{Name: names[0]})),
			sdktest.Client(t, logged(logs[1], patient(40)), sdk.WithInfo(&gamev1.AgentInfo{Name: names[1]})))
		spec.Labels = labels
		spec.Limits = &matchv1.Limits{MoveTimeout: durationpb.New(waitLimit), ConcealAgents: conceal}
		res := run(t, spec)
		for i, s := range res.Events[0].GetMatchStarted().GetSeats() {
			if s.GetAgent().GetName() != names[i] {
				t.Errorf("conceal %v: the record names seat %d's agent %q, want %q", conceal, i, s.GetAgent().GetName(), names[i])
			}
		}
		for seat, l := range logs {
			obs := l.all()
			if len(obs) == 0 {
				t.Fatalf("seat %d was never asked", seat)
			}
			other := 1 - seat
			for _, o := range obs {
				told := strings.Contains(o.GetBriefing(), names[other]) || o.GetSeats()[other].GetAgent().GetName() == names[other] ||
					o.GetSeats()[other].GetLabel() != ""
				if told != !conceal {
					t.Errorf("conceal %v: seat %d on turn %d is told the other seat's agent: %v\n%s", conceal, seat, o.GetTurn(), told, o.GetBriefing())
				}
				if !strings.Contains(o.GetBriefing(), names[seat]) || o.GetSeats()[seat].GetAgent().GetName() != names[seat] {
					t.Errorf("conceal %v: seat %d on turn %d is not told its own agent", conceal, seat, o.GetTurn())
				}
			}
		}
	}
}
