package match_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	delibagent "github.com/parley-arena/parley/agents/deliberation"
	"github.com/parley-arena/parley/agents/hostile"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/referee/match"
)

// TestRecordFloodFaultsTheFlooder: a bot that answers every move with as many messages as its
// reply limit holds, in a long match with a record of at most 1 MiB. The flooder fills its
// half and from then on plays the game's default move, recorded once as its fault; the match
// ends as that move ends it, charged to the flooder, the honest seat never faulted, never void,
// and the record stays within the bound but for the event that crossed it.
func TestRecordFloodFaultsTheFlooder(t *testing.T) {
	const limit, turns = 1 << 20, 200
	bot, err := hostile.Start(hostile.MessageFlood)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bot.Close)
	h := newHonest(t)
	honest := sdktest.Client(t, h, sdk.WithInfo(&gamev1.AgentInfo{Name: "honest", Version: "1"}))
	game := ultimatum.New()
	params, err := game.Resolve(&matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{MaxTurns: proto.Int32(turns)}}})
	if err != nil {
		t.Fatal(err)
	}
	spec := match.Spec{
		ID: "record-flood", Game: game, Seed: 3, Agents: []agentv1.AgentServiceClient{openConn(t, bot.Address()).Client, honest},
		Params:         params,
		Limits:         &matchv1.Limits{MoveTimeout: durationpb.New(5 * time.Second)},
		MaxRecordBytes: limit,
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res := runCtx(t, ctx, spec)
	if c := res.Outcome.GetCause(); c == matchv1.EndCause_END_CAUSE_VOID {
		t.Fatalf("the match is void: %s", res.Outcome.GetSummary())
	}
	var flooder []*eventsv1.AgentFault
	for _, f := range faults(res.Events) {
		if f.GetSeat() == 1 {
			t.Fatalf("the honest seat was faulted: %v %s", f.GetKind(), f.GetDetail())
		}
		flooder = append(flooder, f)
	}
	if len(flooder) != 1 || flooder[0].GetKind() != eventsv1.FaultKind_FAULT_KIND_OVERSIZED || !strings.Contains(flooder[0].GetDetail(), "share of the match's record") {
		t.Fatalf("the flooder's faults: %v, want one saying it filled its share of the record", flooder)
	}
	total, largest := 0, 0
	for _, ev := range res.Events {
		total += proto.Size(ev)
		largest = max(largest, proto.Size(ev))
	}
	if total > limit+largest {
		t.Errorf("the record is %d bytes, over the %d bound by more than its largest event (%d)", total, limit, largest)
	}
	// The flooder's next move is the game's default, which ends an ultimatum match: the end is
	// charged to it.
	if c, seats := res.Outcome.GetCause(), res.Outcome.GetFaultedSeats(); c != matchv1.EndCause_END_CAUSE_AGENT_FAULT || len(seats) != 1 || seats[0] != 0 {
		t.Errorf("the match ended %v with faulted seats %v, want an agent fault of the flooder's seat", c, seats)
	}
	t.Logf("record: %d events, %d bytes; the flooder was cut off on turn %d", len(res.Events), total, turnOfFault(res.Events))
}

func turnOfFault(evs []*eventsv1.MatchEvent) int32 {
	for _, ev := range evs {
		if ev.GetAgentFault() != nil {
			return ev.GetTurn()
		}
	}
	return -1
}

// bloater plays as a deliberation agent does, with every message it sends padded to the
// longest text the rules allow: every statement stays in every seat's observation.
type bloater struct{ sdk.Agent }

func (b bloater) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	a, err := b.Agent.Act(ctx, obs)
	if err == nil {
		for _, m := range a.GetMessages() {
			m.Text += strings.Repeat(" pad", (games.MaxTextBytes-len(m.GetText()))/4)
		}
	}
	return a, err
}

// TestObservationBloatFaultsTheBloater: in a long deliberation (every public statement stays
// in every seat's observation, whatever the history shows), one party pads every message to
// the longest text allowed, until its statements alone would pass the observation's budget.
// Without a charge the match went void as soon as an observation could not fit ("referee
// error"); the bloater must be refused and faulted instead, the match played to its end, and
// no honest party faulted.
func TestObservationBloatFaultsTheBloater(t *testing.T) {
	game := deliberation.New()
	params := &matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{Parties: proto.Int32(3), DiscussionTurns: proto.Int32(240)}}}
	resolved, err := game.Resolve(params)
	if err != nil {
		t.Fatal(err)
	}
	seats, _ := games.Seats(game, resolved)
	const bloaterSeat = 1
	agents := make([]agentv1.AgentServiceClient, len(seats))
	for i := range seats {
		a, err := delibagent.New(delibagent.Config{})
		if err != nil {
			t.Fatal(err)
		}
		var agent sdk.Agent = a
		if i == bloaterSeat {
			agent = bloater{a}
		}
		agents[i] = sdktest.Client(t, agent)
	}
	spec := match.Spec{ID: "bloat", Game: game, Params: resolved, Seed: 5, Agents: agents, Limits: withTimeout(10 * time.Second)}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	res := runCtx(t, ctx, spec)
	if c := res.Outcome.GetCause(); c == matchv1.EndCause_END_CAUSE_VOID {
		t.Fatalf("the match is void: %s", res.Outcome.GetSummary())
	}
	bloated := false
	for _, f := range faults(res.Events) {
		if f.GetSeat() != bloaterSeat {
			t.Errorf("honest party %d was faulted: %v %s", f.GetSeat(), f.GetKind(), f.GetDetail())
		}
		bloated = true
	}
	if !bloated {
		t.Error("the bloater was never faulted")
	}
	refusedBloat := 0
	for _, r := range refused(res.Events) {
		if r.GetSeat() == bloaterSeat && strings.Contains(r.GetRejection().GetMessage(), "the other seats' observations") {
			refusedBloat++
		}
	}
	if refusedBloat == 0 {
		t.Error("no action of the bloater was refused for what it adds to the others' observations")
	}
	t.Logf("%d events, %d bloating actions refused, ended %v", len(res.Events), refusedBloat, res.Outcome.GetCause())
}
