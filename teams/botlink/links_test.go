package botlink_test

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/contract"
	"github.com/parley-arena/parley/teams/botlink"
	"github.com/parley-arena/parley/teams/registry"
)

// waitTimeout bounds every wait of these tests (the machine may be loaded).
const waitTimeout = 30 * time.Second

// gateways are two gateways' Links on one NATS server, each on its own connection, with the
// team "acme" and its dial-out bot "steady" registered at version 1.
func gateways(t *testing.T) (links [2]*botlink.Links, referee *bus.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	first, err := bus.Open(ctx, bus.Config{ListenAddr: "127.0.0.1:0"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { first.Close() })
	for i, b := range []*bus.Bus{first, openBusAt(t, first.URL())} {
		store, err := registry.Open(ctx, b.JetStream())
		if err != nil {
			t.Fatal(err)
		}
		links[i] = &botlink.Links{Registry: &registry.Service{Store: store}, NC: b.Conn()}
	}
	store, _ := registry.Open(ctx, first.JetStream())
	if _, err := store.AddTeam(ctx, "acme"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Register(ctx, "acme", &registryv1.RegisterBotRequest{Name: "steady", Version: "1", Endpoint: registry.EndpointDialOut}); err != nil {
		t.Fatal(err)
	}
	return links, openBusAt(t, first.URL())
}

// linkedBot is one session of the bot "acme/steady" held through a gateway's Links: it answers
// each act call with its own name in the action's notes, except calls for turn 13, which it
// holds until release.
type linkedBot struct {
	name     string
	in       chan *botlinkv1.ConnectRequest // what the bot sends
	welcome  chan *botlinkv1.Welcome
	held     chan *botlinkv1.Call
	release  chan struct{}
	ended    chan error // what Serve returned
	stopOnce sync.Once
	stop     chan struct{}
}

// connect opens a session of acme/steady named name through l.
func connect(t *testing.T, l *botlink.Links, name string) *linkedBot {
	t.Helper()
	b := &linkedBot{
		name: name, in: make(chan *botlinkv1.ConnectRequest, 64), welcome: make(chan *botlinkv1.Welcome, 1),
		held: make(chan *botlinkv1.Call, 8), release: make(chan struct{}), ended: make(chan error, 1), stop: make(chan struct{}),
	}
	b.in <- &botlinkv1.ConnectRequest{Msg: &botlinkv1.ConnectRequest_Hello{Hello: &botlinkv1.Hello{Bot: "steady", Version: "1"}}}
	recv := func() (*botlinkv1.ConnectRequest, error) {
		select {
		case m := <-b.in:
			return m, nil
		case <-b.stop:
			return nil, io.EOF
		}
	}
	send := func(m *botlinkv1.ConnectResponse) error {
		if w := m.GetWelcome(); w != nil {
			b.welcome <- w
			return nil
		}
		c := m.GetCall()
		go func() {
			if c.GetAct().GetObservation().GetTurn() == 13 {
				b.held <- c
				<-b.release
			}
			b.in <- &botlinkv1.ConnectRequest{Msg: &botlinkv1.ConnectRequest_Result{Result: &botlinkv1.CallResult{
				CallId: c.GetCallId(), Kind: &botlinkv1.CallResult_Act{Act: &agentv1.ActResponse{Action: &agentv1.Action{PrivateNotes: b.name}}},
			}}}
		}()
		return nil
	}
	go func() { b.ended <- l.Serve(context.Background(), "acme", recv, send) }()
	t.Cleanup(func() { b.stopOnce.Do(func() { close(b.stop) }) })
	return b
}

// welcomed waits for the session's Welcome.
func (b *linkedBot) welcomed(t *testing.T) *botlinkv1.Welcome {
	t.Helper()
	select {
	case w := <-b.welcome:
		return w
	case err := <-b.ended:
		select {
		case w := <-b.welcome: // and then ended: the end is for the caller to see
			b.ended <- err
			return w
		default:
		}
		t.Fatalf("session %s ended before its Welcome: %v", b.name, err)
	case <-time.After(waitTimeout):
		t.Fatalf("session %s: no Welcome", b.name)
	}
	return nil
}

// act asks the bot for an action for turn, as a referee does, and returns which session
// answered.
func act(t *testing.T, referee *bus.Bus, turn int32) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	resp, err := botlink.NewClient(referee.Conn(), "acme", "steady").Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: turn}})
	return resp.GetAction().GetPrivateNotes(), err
}

// replacedError checks that a session ended as replaced by a newer one.
func replacedError(t *testing.T, b *linkedBot, err error) {
	t.Helper()
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "a newer session of this bot took its calls over") {
		t.Errorf("session %s ended with %v, want FAILED_PRECONDITION saying a newer session took over", b.name, err)
	}
}

// A second session of a connected bot, through another gateway, takes the calls over: every
// call after its Welcome goes to it; the first still answers the call it had, then ends with
// FAILED_PRECONDITION saying why. Welcome says the contract and the version played.
func TestSecondSessionReplacesTheFirst(t *testing.T) {
	links, referee := gateways(t)
	first := connect(t, links[0], "first")
	w := first.welcomed(t)
	if !proto.Equal(w.GetContract(), contract.Version()) || w.GetContract().GetPackage() != "parley.agent.v1" || w.GetBotVersion() != "1" || w.GetAddress() != "bot:acme/steady" {
		t.Errorf("welcome %v", w)
	}
	if who, err := act(t, referee, 1); err != nil || who != "first" {
		t.Fatalf("before the second session: answered by %q, %v", who, err)
	}
	heldAnswer := make(chan string, 1)
	go func() {
		who, err := act(t, referee, 13)
		if err != nil {
			who = err.Error()
		}
		heldAnswer <- who
	}()
	select {
	case <-first.held:
	case <-time.After(waitTimeout):
		t.Fatal("the first session was not asked")
	}

	second := connect(t, links[1], "second")
	second.welcomed(t)
	for turn := range int32(20) {
		if who, err := act(t, referee, 100+turn); err != nil || who != "second" {
			t.Fatalf("call %d after the second Welcome: answered by %q, %v", turn, who, err)
		}
	}
	select {
	case err := <-first.ended:
		t.Fatalf("the first session ended with a call under way: %v", err)
	default:
	}
	close(first.release)
	if who := <-heldAnswer; who != "first" {
		t.Errorf("the call the first session had was answered by %q", who)
	}
	select {
	case err := <-first.ended:
		replacedError(t, first, err)
	case <-time.After(waitTimeout):
		t.Fatal("the replaced session did not end")
	}
	if who, err := act(t, referee, 2); err != nil || who != "second" {
		t.Errorf("after the first ended: answered by %q, %v", who, err)
	}
}

// Sessions of one bot opening at once, through two gateways, take turns: exactly one is left,
// every other ends as replaced, and every call goes to the one left.
func TestSessionsOpeningAtOnce(t *testing.T) {
	links, referee := gateways(t)
	var bots []*linkedBot
	for i := range 6 {
		bots = append(bots, connect(t, links[i%2], fmt.Sprintf("bot-%d", i)))
	}
	for _, b := range bots {
		b.welcomed(t)
	}
	who, err := act(t, referee, 1)
	if err != nil {
		t.Fatal(err)
	}
	var survivor *linkedBot
	for _, b := range bots {
		if b.name == who {
			survivor = b
			continue
		}
		select {
		case err := <-b.ended:
			replacedError(t, b, err)
		case <-time.After(waitTimeout):
			t.Fatalf("sessions %s and %s are both open", who, b.name)
		}
	}
	select {
	case err := <-survivor.ended:
		t.Fatalf("the session that answered, %s, ended: %v", who, err)
	default:
	}
	for turn := range int32(20) {
		if who, err := act(t, referee, 100+turn); err != nil || who != survivor.name {
			t.Fatalf("call %d: answered by %q, %v; %s is the one left", turn, who, err, survivor.name)
		}
	}
}
