package botlink_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/teams/botlink"
	"github.com/parley-arena/parley/teams/registry"
)

// relayFixture is a relay served over HTTP/2 without TLS, as the gateway serves it, on a real
// NATS server with a real registry.
type relayFixture struct {
	bus   *bus.Bus
	store *registry.Store
	url   string
}

// newRelay serves a relay; limits, when given, changes its bounds.
func newRelay(t *testing.T, limits ...func(*botlink.Relay)) *relayFixture {
	t.Helper()
	b := openBus(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	store, err := registry.Open(ctx, b.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	relay := &botlink.Relay{Teams: &registry.Service{Store: store}, NC: b.Conn()}
	for _, l := range limits {
		l(relay)
	}
	mux := http.NewServeMux()
	relay.Mount(mux)
	srv := httptest.NewUnstartedServer(mux)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Start()
	t.Cleanup(srv.Close)
	return &relayFixture{bus: b, store: store, url: srv.URL}
}

// team adds a team with a dial-out bot named bot and returns its token.
func (f *relayFixture) team(t *testing.T, team, bot, endpoint string) string {
	t.Helper()
	ctx := context.Background()
	token, err := f.store.AddTeam(ctx, team)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Register(ctx, team, &registryv1.RegisterBotRequest{Name: bot, Version: "1", Games: []string{"ultimatum"}, Endpoint: endpoint}); err != nil {
		t.Fatal(err)
	}
	return token
}

// connect opens a session for team/name whose "bot" answers with answer (run on its own
// goroutine); it is closed when the test ends.
func (f *relayFixture) connect(t *testing.T, team, name string, answer func(*botlinkv1.Call) *botlinkv1.CallResult) {
	t.Helper()
	var s *botlink.Session
	s = botlink.NewSession(f.bus.Conn(), team, name, func(c *botlinkv1.Call) error {
		go func() {
			res := answer(c)
			res.CallId = c.GetCallId()
			s.Deliver(res)
		}()
		return nil
	})
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close("test over") })
}

// dial returns AgentService and Health clients of the relay for token and bot.
func (f *relayFixture) dial(t *testing.T, token, bot string) (agentv1.AgentServiceClient, healthpb.HealthClient) {
	t.Helper()
	conn, err := botlink.DialRelay(f.url, token, bot)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return agentv1.NewAgentServiceClient(conn), healthpb.NewHealthClient(conn)
}

// echoBot describes itself as name and answers every act with the observation's match id as
// its notes, and the observation's unknown fields' length as its reasoning.
func echoBot(name string) func(*botlinkv1.Call) *botlinkv1.CallResult {
	return func(c *botlinkv1.Call) *botlinkv1.CallResult {
		if c.GetDescribe() != nil {
			return &botlinkv1.CallResult{Kind: &botlinkv1.CallResult_Describe{Describe: &agentv1.DescribeResponse{Agent: &gamev1.AgentInfo{Name: name}}}}
		}
		obs := c.GetAct().GetObservation()
		unknown := len(obs.ProtoReflect().GetUnknown())
		return &botlinkv1.CallResult{Kind: &botlinkv1.CallResult_Act{Act: &agentv1.ActResponse{Action: &agentv1.Action{
			PrivateNotes: obs.GetMatchId(), PrivateReasoning: strings.Repeat("u", unknown),
		}}}}
	}
}

func code(err error) codes.Code { return status.Code(err) }

// A team calls its own dial-out bot through the relay: Act and Describe reach the bot over its
// link, unknown fields included, and health follows the link.
func TestRelayReachesOwnBot(t *testing.T) {
	f := newRelay(t)
	token := f.team(t, "acme", "steady", registry.EndpointDialOut)
	agent, health := f.dial(t, token, "steady")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Not connected yet: health says NOT_SERVING, calls fail at once as unavailable.
	if h, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || h.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health before the bot connects: %v, %v", h, err)
	}
	if _, err := agent.Describe(ctx, &agentv1.DescribeRequest{}); code(err) != codes.Unavailable || !strings.Contains(err.Error(), "not connected") {
		t.Fatalf("describe before the bot connects: %v", err)
	}

	f.connect(t, "acme", "steady", echoBot("steady-bot"))
	if h, err := health.Check(ctx, &healthpb.HealthCheckRequest{Service: "parley.agent.v1.AgentService"}); err != nil || h.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health of a connected bot: %v, %v", h, err)
	}
	d, err := agent.Describe(ctx, &agentv1.DescribeRequest{})
	if err != nil || d.GetAgent().GetName() != "steady-bot" {
		t.Fatalf("describe: %v, %v", d, err)
	}
	obs := &agentv1.Observation{MatchId: "m-1"}
	extra := protowire.AppendVarint(protowire.AppendTag(nil, 4002, protowire.VarintType), 42)
	obs.ProtoReflect().SetUnknown(extra)
	a, err := agent.Act(ctx, &agentv1.ActRequest{Observation: obs})
	if err != nil || a.GetAction().GetPrivateNotes() != "m-1" || len(a.GetAction().GetPrivateReasoning()) != len(extra) {
		t.Fatalf("act: %v, %v", a, err)
	}

	// "acme/steady" and "bot:acme/steady" name the same bot.
	for _, name := range []string{"acme/steady", "bot:acme/steady"} {
		agent, _ := f.dial(t, token, name)
		if d, err := agent.Describe(ctx, &agentv1.DescribeRequest{}); err != nil || d.GetAgent().GetName() != "steady-bot" {
			t.Errorf("describe as %q: %v, %v", name, d, err)
		}
	}
}

// Tokens and bot names are checked on every call: no token, a wrong one, another team's bot,
// a bot that is not registered or does not dial out are refused with the code that says so;
// a token never reaches another team's bot of the same name.
func TestRelayRefuses(t *testing.T) {
	f := newRelay(t)
	acme := f.team(t, "acme", "steady", registry.EndpointDialOut)
	rival := f.team(t, "rival", "steady", registry.EndpointDialOut)
	if _, err := f.store.Register(context.Background(), "acme", &registryv1.RegisterBotRequest{Name: "served", Version: "1", Games: []string{"ultimatum"}, Endpoint: "grpc://127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	f.connect(t, "acme", "steady", echoBot("acme's"))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	tests := []struct {
		name, token, bot string
		want             codes.Code
		says             string
	}{
		{"no token", "", "steady", codes.Unauthenticated, "team token"},
		{"a wrong token", "pt_nonsense", "steady", codes.Unauthenticated, "not valid"},
		{"another team's bot", rival, "acme/steady", codes.PermissionDenied, "only its own bots"},
		{"no bot named", acme, "", codes.InvalidArgument, botlink.BotHeader},
		{"a bad name", acme, "Not A Name", codes.InvalidArgument, botlink.BotHeader},
	}
	for _, tc := range tests {
		agent, health := f.dial(t, tc.token, tc.bot)
		_, err := agent.Describe(ctx, &agentv1.DescribeRequest{})
		_, herr := health.Check(ctx, &healthpb.HealthCheckRequest{})
		for _, e := range []error{err, herr} {
			if code(e) != tc.want || !strings.Contains(e.Error(), tc.says) {
				t.Errorf("%s: %v, want %s saying %q", tc.name, e, tc.want, tc.says)
			}
		}
	}

	// Rival's own "steady" is not acme's: its token reaches its own bot, which is not connected.
	agent, health := f.dial(t, rival, "steady")
	if _, err := agent.Describe(ctx, &agentv1.DescribeRequest{}); code(err) != codes.Unavailable {
		t.Errorf("rival's token reached a bot: %v", err)
	}
	if h, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); err != nil || h.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Errorf("rival's unconnected bot: %v, %v", h, err)
	}

	_, health = f.dial(t, acme, "ghost")
	if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); code(err) != codes.NotFound || !strings.Contains(err.Error(), "not registered") {
		t.Errorf("health of an unregistered bot: %v", err)
	}
	_, health = f.dial(t, acme, "served")
	if _, err := health.Check(ctx, &healthpb.HealthCheckRequest{}); code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "grpc://127.0.0.1:1") {
		t.Errorf("health of a bot that does not dial out: %v", err)
	}
}

// A team's calls are bounded: more under way at once than allowed are refused at once, and so
// is a call that would have to wait past its deadline for the rate.
func TestRelayLimits(t *testing.T) {
	f := newRelay(t, func(r *botlink.Relay) { r.Rate, r.Burst, r.InFlight = 1.0/60, 2, 1 })
	token := f.team(t, "acme", "slow", registry.EndpointDialOut)
	asked, release := make(chan struct{}, 1), make(chan struct{})
	f.connect(t, "acme", "slow", func(c *botlinkv1.Call) *botlinkv1.CallResult {
		if c.GetAct() != nil {
			asked <- struct{}{}
			<-release
		}
		return echoBot("slow")(c)
	})
	agent, _ := f.dial(t, token, "slow")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	first := make(chan error, 1)
	go func() {
		_, err := agent.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{MatchId: "m"}})
		first <- err
	}()
	<-asked // the first call holds the one place
	if _, err := agent.Describe(ctx, &agentv1.DescribeRequest{}); code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "under way") {
		t.Fatalf("a second call while one is under way: %v", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatalf("the first call: %v", err)
	}

	// One call of the burst of two is left (a refused call takes none); after it, the rate is
	// one a minute, so a call with 10s to live cannot wait for the next.
	short, cancelShort := context.WithTimeout(ctx, 10*time.Second)
	defer cancelShort()
	var err error
	for range 3 {
		if _, err = agent.Describe(short, &agentv1.DescribeRequest{}); code(err) == codes.ResourceExhausted {
			break
		}
	}
	if code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "a second") {
		t.Fatalf("calls over the rate: %v", err)
	}
}
