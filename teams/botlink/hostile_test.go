package botlink_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/fixed"
	"github.com/parley-arena/parley/agents/hostile"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/teams/botlink"
)

// received is what a linked bot was sent.
type received struct {
	mu      sync.Mutex
	sizes   []int // every observation's, encoded
	omitted int32 // the most history entries left out of one
}

// linked serves agent as a dial-out bot would be: a session on nc whose calls the agent
// answers, and the client a referee uses to reach it. What the bot is sent goes in got.
func linked(t *testing.T, nc *nats.Conn, name string, agent sdk.Agent, got *received) agentv1.AgentServiceClient {
	t.Helper()
	var session *botlink.Session
	session = botlink.NewSession(nc, "team", name, func(c *botlinkv1.Call) error {
		go func() {
			res := &botlinkv1.CallResult{CallId: c.GetCallId()}
			if obs := c.GetAct().GetObservation(); obs != nil {
				got.mu.Lock()
				got.sizes = append(got.sizes, proto.Size(obs))
				got.omitted = max(got.omitted, obs.GetHistoryOmitted())
				got.mu.Unlock()
				ctx, cancel := context.WithDeadline(context.Background(), c.GetDeadline().AsTime())
				defer cancel()
				action, err := agent.Act(ctx, obs)
				if err != nil {
					res.Kind = &botlinkv1.CallResult_Error{Error: err.Error()}
				} else {
					res.Kind = &botlinkv1.CallResult_Act{Act: &agentv1.ActResponse{Action: action, Turn: obs.GetTurn()}}
				}
			} else {
				res.Kind = &botlinkv1.CallResult_Describe{Describe: &agentv1.DescribeResponse{}}
			}
			session.Deliver(res)
		}()
		return nil
	})
	if err := session.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { session.Close("test over") })
	return botlink.NewClient(nc, "team", name)
}

// dialHostile serves a hostile bot of kind and returns a client of it.
func dialHostile(t *testing.T, kind hostile.Kind) agentv1.AgentServiceClient {
	t.Helper()
	bot, err := hostile.Start(kind)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bot.Close)
	c, err := (&agentconn.Resolver{}).Open(t.Context(), bot.Address())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c.Client
}

// A dial-out bot is never faulted for the size of what the referee sends it: against an
// opponent flooding public messages, every observation crosses the link, within the NATS
// payload limit, whatever that limit is.
func TestDialOutUnderFlood(t *testing.T) {
	for _, tc := range []struct {
		name       string
		maxPayload int // 0: the default 1 MiB
	}{{"default payload limit", 0}, {"64 KiB payload limit, under the observation budget", 64 << 10}} {
		t.Run(tc.name, func(t *testing.T) {
			url := ""
			if tc.maxPayload > 0 {
				url = natstest.StartWithMaxPayload(t, tc.maxPayload).URL
			}
			b := openBusAt(t, url)
			honest, err := fixed.New(1)
			if err != nil {
				t.Fatal(err)
			}
			var got received
			spec := match.Spec{
				ID: "dial-out-flood", Game: ultimatum.New(), Seed: 1,
				Agents: []agentv1.AgentServiceClient{dialHostile(t, hostile.MessageFlood), linked(t, b.Conn(), "honest", honest, &got)},
				// 16 messages of 8 KiB a move: whole, the history would pass 1 MiB by turn 20.
				Params: gametest.Resolve(t, ultimatum.New(), &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{MaxTurns: proto.Int32(80)}}}),
				Limits: &matchv1.Limits{MoveTimeout: durationpb.New(10 * time.Second), MaxReplyBytes: 512 << 10},
			}
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // 80 turns of a loaded machine
			defer cancel()
			res, err := match.NewRunner(nil).Run(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			for _, ev := range res.Events {
				if f := ev.GetAgentFault(); f != nil {
					t.Fatalf("turn %d: seat %d faulted: %v %s", ev.GetTurn(), f.GetSeat(), f.GetKind(), f.GetDetail())
				}
			}
			if last := res.Events[len(res.Events)-1].GetTurn(); last != 80 || len(got.sizes) != 40 {
				t.Fatalf("the match ended on turn %d after %d calls to the linked bot, want turn 80 and 40", last, len(got.sizes))
			}
			limit := int(b.Conn().MaxPayload())
			for i, n := range got.sizes {
				if n > limit {
					t.Errorf("call %d carried a %d-byte observation over a %d-byte link", i, n, limit)
				}
			}
			if got.omitted == 0 {
				t.Error("no history was ever left out: the flood did not flood")
			}
		})
	}
}

// A dial-out bot's reply too large for the link is its own fault, recorded as oversized at
// once, not a timeout after the deadline.
func TestDialOutOversizedReply(t *testing.T) {
	b := openBusAt(t, natstest.StartWithMaxPayload(t, 256<<10).URL)
	huge, err := hostile.NewAgent(hostile.Huge, hostile.WithSize(300<<10))
	if err != nil {
		t.Fatal(err)
	}
	var got received
	honest, err := fixed.New(1)
	if err != nil {
		t.Fatal(err)
	}
	spec := match.Spec{
		ID: "dial-out-huge", Game: ultimatum.New(), Seed: 1, Params: gametest.Resolve(t, ultimatum.New(), nil),
		Agents: []agentv1.AgentServiceClient{linked(t, b.Conn(), "huge", huge, &got), sdktest.Client(t, honest)},
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(time.Minute), MaxReplyBytes: 512 << 10},
	}
	res, err := match.NewRunner(nil).Run(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []eventsv1.FaultKind
	for _, ev := range res.Events {
		if f := ev.GetAgentFault(); f != nil {
			kinds = append(kinds, f.GetKind())
		}
	}
	if len(kinds) != 1 || kinds[0] != eventsv1.FaultKind_FAULT_KIND_OVERSIZED {
		t.Errorf("faults %v, want the linked bot's reply oversized", kinds)
	}
}
