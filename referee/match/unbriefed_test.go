package match_test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/referee/match"
)

// unbriefed is an agent that says it never reads the briefing.
type unbriefed struct{ sdk.Agent }

func (unbriefed) SkipsBriefing() bool { return true }

// briefless hides a game's ObserveUnbriefed, for the runner's other way of leaving the
// briefing out.
type briefless struct{ games.Game }

func (g briefless) NewState(p *matchv1.GameParams, seed uint64) (games.State, error) {
	st, err := g.Game.NewState(p, seed)
	return struct{ games.State }{st}, err
}

// TestUnbriefedAgentIsWrittenNoBriefing plays the same match twice, once with seat 0's agent
// reading the briefing and once saying it reads none (Observing.skips_briefing, through
// Describe): the second is sent every observation the first was, less the briefing, with
// games that build observations without it and with those that cannot.
func TestUnbriefedAgentIsWrittenNoBriefing(t *testing.T) {
	for _, g := range []games.Game{ultimatum.New(), briefless{ultimatum.New()}} {
		var briefed, bare obsLog
		spec := func(id string, a sdk.Agent) match.Spec {
			s := ultimatumSpec(id, sdktest.Client(t, a, sdk.WithInfo(&gamev1.AgentInfo{Name: "patient"})), sdktest.Client(t, accepter(60)))
			s.Game = g
			return s
		}
		run(t, spec("briefed", logged(&briefed, patient(40))))
		run(t, spec("bare", unbriefed{logged(&bare, patient(40))}))
		want, got := briefed.all(), bare.all()
		if len(want) == 0 || len(got) != len(want) {
			t.Fatalf("%d observations unbriefed, %d briefed", len(got), len(want))
		}
		for i := range want {
			if want[i].GetBriefing() == "" {
				t.Fatalf("call %d: the agent that reads the briefing got none", i)
			}
			w := proto.CloneOf(want[i])
			w.Briefing, w.MatchId, w.Deadline = "", got[i].GetMatchId(), got[i].GetDeadline()
			if !proto.Equal(got[i], w) {
				t.Fatalf("call %d: unbriefed observation\n%v\nwant the briefed one less its briefing\n%v", i, got[i], w)
			}
		}
	}
}
