package roles_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/gen/go/parley/registry/v1/registryv1connect"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/teams/registry"
)

// addTeam adds a team straight to the registry on the fixture's NATS server and returns its
// token.
func (f *fixture) addTeam(t *testing.T, name string) string {
	t.Helper()
	s, err := registry.Open(context.Background(), f.bus.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	token, err := s.AddTeam(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return token
}

func (f *fixture) registryClient() registryv1connect.RegistryServiceClient {
	return registryv1connect.NewRegistryServiceClient(http.DefaultClient, f.url)
}

// withToken returns a request carrying token as a bearer token (none when empty).
func withToken[T any](msg *T, token string) *connect.Request[T] {
	req := connect.NewRequest(msg)
	if token != "" {
		req.Header().Set("Authorization", "Bearer "+token)
	}
	return req
}

func wantCode(t *testing.T, what string, err error, code connect.Code) {
	t.Helper()
	if connect.CodeOf(err) != code {
		t.Fatalf("%s: error %v, want code %s", what, err, code)
	}
}

func (f *fixture) register(t *testing.T, token, name, version, endpoint string) *registryv1.Bot {
	t.Helper()
	resp, err := f.registryClient().RegisterBot(context.Background(), withToken(&registryv1.RegisterBotRequest{
		Name: name, Version: version, Games: []string{"ultimatum"}, Endpoint: endpoint,
	}, token))
	if err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
	return resp.Msg.GetBot()
}

func (f *fixture) listBots(t *testing.T, token string) map[string]*registryv1.Bot {
	t.Helper()
	resp, err := f.registryClient().ListBots(context.Background(), withToken(&registryv1.ListBotsRequest{IncludeRetired: true}, token))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*registryv1.Bot{}
	for _, b := range resp.Msg.GetBots() {
		out[b.GetAddress()] = b
	}
	return out
}

func TestRegistryTokensAndOwnership(t *testing.T) {
	f := start(t)
	red, blue := f.addTeam(t, "red"), f.addTeam(t, "blue")
	c := f.registryClient()
	ctx := context.Background()
	f.register(t, red, "alpha", "1.0", "dialout")
	before := f.listBots(t, red)

	// No token, a malformed header, an unknown token: 401 and nothing registered.
	for _, tok := range []string{"", "pt_not-a-real-token", "garbage"} {
		_, err := c.RegisterBot(ctx, withToken(&registryv1.RegisterBotRequest{Name: "sneaky", Version: "1", Games: []string{"ultimatum"}, Endpoint: "dialout"}, tok))
		wantCode(t, "register with token "+tok, err, connect.CodeUnauthenticated)
	}
	status, data := f.call(t, "/parley.registry.v1.RegistryService/ListBots", `{}`)
	wantError(t, "list without a token", status, data, http.StatusUnauthorized, "unauthenticated")

	// Blue touching red's bot: 403, and red's bot is as it was.
	_, err := c.UpdateBot(ctx, withToken(&registryv1.UpdateBotRequest{Name: "red/alpha", Version: strPtr("6.6.6")}, blue))
	wantCode(t, "blue updates red/alpha", err, connect.CodePermissionDenied)
	_, err = c.RetireBot(ctx, withToken(&registryv1.RetireBotRequest{Name: "bot:red/alpha"}, blue))
	wantCode(t, "blue retires bot:red/alpha", err, connect.CodePermissionDenied)
	_, err = c.RegisterBot(ctx, withToken(&registryv1.RegisterBotRequest{Name: "red/beta", Version: "1", Games: []string{"ultimatum"}, Endpoint: "dialout"}, blue))
	wantCode(t, "blue registers into red", err, connect.CodePermissionDenied)
	// Blue's own bot of the same name is another bot.
	_, err = c.UpdateBot(ctx, withToken(&registryv1.UpdateBotRequest{Name: "alpha", Version: strPtr("2")}, blue))
	wantCode(t, "blue updates its own (missing) alpha", err, connect.CodeNotFound)

	after := f.listBots(t, red)
	if len(after) != 1 || after["bot:red/alpha"].GetVersion() != "1.0" || after["bot:red/alpha"].GetRetired() ||
		!after["bot:red/alpha"].GetUpdated().AsTime().Equal(before["bot:red/alpha"].GetUpdated().AsTime()) {
		t.Fatalf("refused calls changed the registry: before %v, after %v", before, after)
	}

	// Bad input is refused with a reason.
	for _, req := range []*registryv1.RegisterBotRequest{
		{Name: "Bad Name", Version: "1", Games: []string{"ultimatum"}, Endpoint: "dialout"},
		{Name: "ok", Version: "1", Games: []string{"no-such-game"}, Endpoint: "dialout"},
		{Name: "ok", Version: "1", Games: []string{"ultimatum"}, Endpoint: "http://evil"},
		{Name: "ok", Version: "", Games: []string{"ultimatum"}, Endpoint: "dialout"},
	} {
		_, err := c.RegisterBot(ctx, withToken(req, red))
		wantCode(t, fmt.Sprintf("register %v", req), err, connect.CodeInvalidArgument)
	}
	_, err = c.RegisterBot(ctx, withToken(&registryv1.RegisterBotRequest{Name: "alpha", Version: "9", Games: []string{"ultimatum"}, Endpoint: "dialout"}, red))
	wantCode(t, "register alpha twice", err, connect.CodeAlreadyExists)

	// The owner updates and retires its own.
	up, err := c.UpdateBot(ctx, withToken(&registryv1.UpdateBotRequest{Name: "alpha", Version: strPtr("1.1"), Endpoint: strPtr("grpc://127.0.0.1:1")}, red))
	if err != nil || up.Msg.GetBot().GetVersion() != "1.1" || up.Msg.GetBot().GetEndpoint() != "grpc://127.0.0.1:1" {
		t.Fatalf("update: %v %v", up, err)
	}
	ret, err := c.RetireBot(ctx, withToken(&registryv1.RetireBotRequest{Name: "alpha"}, red))
	if err != nil || !ret.Msg.GetBot().GetRetired() {
		t.Fatalf("retire: %v %v", ret, err)
	}
	if got := f.listBots(t, red); !got["bot:red/alpha"].GetRetired() {
		t.Fatalf("list after retire: %v", got)
	}
	// Another team sees none of them: where a team serves its bots is its business.
	if got := f.listBots(t, blue); got["bot:red/alpha"] != nil {
		t.Fatalf("team blue lists team red's bots: %v", got)
	}
	if _, err := c.ListBots(ctx, withToken(&registryv1.ListBotsRequest{Team: "red"}, blue)); connect.CodeOf(err) != connect.CodePermissionDenied {
		t.Fatalf("team blue asking for team red's bots: %v, want permission denied", err)
	}

	// A revoked team's token stops working at once.
	s, err := registry.Open(ctx, f.bus.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeTeam(ctx, "blue"); err != nil {
		t.Fatal(err)
	}
	_, err = c.ListBots(ctx, withToken(&registryv1.ListBotsRequest{}, blue))
	wantCode(t, "list with a revoked token", err, connect.CodeUnauthenticated)
}

func strPtr(s string) *string { return &s }

func TestRegistryRateLimit(t *testing.T) {
	f := start(t, func(c *roles.Config) { c.Gateway.TokenRate, c.Gateway.TokenBurst = 0.01, 3 })
	red, blue := f.addTeam(t, "red"), f.addTeam(t, "blue")
	c := f.registryClient()
	ctx := context.Background()
	for i := range 3 {
		if _, err := c.ListBots(ctx, withToken(&registryv1.ListBotsRequest{}, red)); err != nil {
			t.Fatalf("call %d within the burst: %v", i, err)
		}
	}
	_, err := c.RegisterBot(ctx, withToken(&registryv1.RegisterBotRequest{Name: "late", Version: "1", Games: []string{"ultimatum"}, Endpoint: "dialout"}, red))
	wantCode(t, "call over the rate", err, connect.CodeResourceExhausted)
	// The limit is per token: blue is not slowed by red, and red's refused call changed nothing.
	if got := f.listBots(t, blue); len(got) != 0 {
		t.Fatalf("a refused registration was stored: %v", got)
	}
	// Over HTTP/JSON it is a 429.
	req, _ := http.NewRequest(http.MethodPost, f.url+"/parley.registry.v1.RegistryService/ListBots", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+red)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", resp.StatusCode)
	}
}

// dialBot connects agent as team's bot through the gateway until the test ends.
func (f *fixture) dialBot(t *testing.T, token, bot string, a sdk.Agent) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	welcomed := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- sdk.Dial(ctx, sdk.DialOut{URL: f.url, Token: token, Bot: bot, OnWelcome: func(a string) { welcomed <- a }}, a)
	}()
	select {
	case <-welcomed:
	case err := <-done:
		t.Fatalf("bot %s: %v", bot, err)
	case <-time.After(waitLimit):
		t.Fatalf("bot %s was not welcomed", bot)
	}
	var once atomic.Bool
	stop = func() {
		if once.CompareAndSwap(false, true) {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("bot %s: %v", bot, err)
			}
		}
	}
	t.Cleanup(stop)
	return stop
}

// startPythonBot runs the Python example bot dialling out; it returns once it is connected.
func (f *fixture) startPythonBot(t *testing.T, token, bot string) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "agents", "python", "example_bot.py")
	cmd := exec.Command("/usr/bin/python3", script, "--dial-out", f.url, "--bot", bot)
	cmd.Env = append(os.Environ(), "PARLEY_TOKEN="+token)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		if s.Scan() {
			line <- s.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		if !ok || !strings.HasPrefix(l, "connected as bot:") {
			t.Fatalf("python bot: first line %q; stderr: %s", l, stderr.String())
		}
	case <-time.After(waitLimit):
		t.Fatalf("python bot did not connect; stderr: %s", stderr.String())
	}
}

func faults(events []*eventsv1.MatchEvent) []*eventsv1.AgentFault {
	var out []*eventsv1.AgentFault
	for _, ev := range events {
		if f := ev.GetAgentFault(); f != nil {
			out = append(out, f)
		}
	}
	return out
}

func TestDialOutBotsPlayAMatch(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Fatal("this test needs /usr/bin/python3 with python3-grpcio")
	}
	f := start(t)
	goTeam, pyTeam := f.addTeam(t, "gophers"), f.addTeam(t, "snakes")
	f.register(t, goTeam, "conceder", "1.0", "dialout")
	f.register(t, pyTeam, "steady", "2.1", "dialout")

	// A dial-out bot that is not connected is refused at once, saying so, not waited for.
	// (Its words say why: a bot waited for would be refused for not answering in time.)
	status, data := f.call(t, "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["bot:gophers/conceder","builtin:fair"],"seed":1}`)
	wantError(t, "an unconnected bot", status, data, http.StatusBadRequest, "invalid_argument")
	if !strings.Contains(string(data), "not connected") {
		t.Errorf("the refusal does not say the bot is not connected: %s", data)
	}

	concede, err := builtin.New("fair", nil)
	if err != nil {
		t.Fatal(err)
	}
	f.dialBot(t, goTeam, "conceder", concede)
	f.startPythonBot(t, pyTeam, "steady")
	gophers, snakes := f.listBots(t, goTeam), f.listBots(t, pyTeam)
	if !gophers["bot:gophers/conceder"].GetConnected() || !snakes["bot:snakes/steady"].GetConnected() {
		t.Fatalf("bots not shown connected: %v, %v", gophers, snakes)
	}

	id := f.startMatch(t, `{"game":"ultimatum","agents":["bot:gophers/conceder","bot:snakes/steady@2.1"],"seed":7}`)
	events := f.fullRecord(t, id)
	if fs := faults(events); len(fs) != 0 {
		t.Fatalf("faults in a match of connected bots: %v", fs)
	}
	seats := events[0].GetMatchStarted().GetSeats()
	if seats[0].GetLabel() != "gophers/conceder@1.0" || seats[1].GetLabel() != "snakes/steady@2.1" {
		t.Errorf("labels %q, %q", seats[0].GetLabel(), seats[1].GetLabel())
	}
	if seats[1].GetAgent().GetName() == "" {
		t.Errorf("the python bot's Describe did not arrive: %v", seats[1])
	}
	end := events[len(events)-1].GetMatchEnded().GetOutcome()
	if end.GetCause() == matchv1.EndCause_END_CAUSE_VOID || len(end.GetFaultedSeats()) != 0 {
		t.Fatalf("outcome %v", end)
	}
	var moves [2]int
	for _, ev := range events {
		if a := ev.GetActionTaken(); a != nil {
			moves[a.GetSeat()]++
		}
	}
	if moves[0] == 0 || moves[1] == 0 {
		t.Fatalf("moves per seat %v: both bots must have played", moves)
	}

	// Registered bots enter tournaments by name, labelled team/name@version.
	cup := &tournamentv1.StartTournamentResponse{}
	f.mustCall(t, "/parley.tournament.v1.TournamentService/StartTournament",
		`{"tournamentId":"bots-cup","game":"ultimatum","entrants":[{"address":"bot:gophers/conceder"},{"address":"bot:snakes/steady@2.1"}],"gamesPerAssignment":1,"seed":"9"}`, cup)
	var standings *tournamentv1.GetTournamentResponse
	waitFor(t, "the tournament of bots to end", func() bool {
		standings = &tournamentv1.GetTournamentResponse{}
		f.mustCall(t, "/parley.tournament.v1.TournamentService/GetTournament", `{"tournamentId":"bots-cup"}`, standings)
		return standings.GetStandings().GetComplete()
	})
	var labels []string
	for _, a := range standings.GetStandings().GetAgents() {
		labels = append(labels, a.GetLabel())
	}
	if fmt.Sprint(labels) != "[gophers/conceder@1.0 snakes/steady@2.1]" || standings.GetStandings().GetEnded() != 2 {
		t.Errorf("tournament of bots: labels %v, standings %v", labels, standings.GetStandings())
	}
	for _, row := range standings.GetStandings().GetLeaderboard() {
		if a := row.GetAgent(); a != labels[0] && a != labels[1] {
			t.Errorf("leaderboard names %q, not team/name@version", a)
		}
	}

	// The version pinned in an address must be the registered one.
	status, data = f.call(t, "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["bot:gophers/conceder@0.9","builtin:fair"]}`)
	wantError(t, "wrong version", status, data, http.StatusBadRequest, "invalid_argument")

	// A session for another team's bot, or with a bad token, is refused.
	err = sdk.Dial(context.Background(), sdk.DialOut{URL: f.url, Token: goTeam, Bot: "snakes/steady"}, concede)
	if !errors.Is(err, sdk.ErrRefused) || !strings.Contains(err.Error(), "permission_denied") {
		t.Errorf("dial another team's bot: %v", err)
	}
	err = sdk.Dial(context.Background(), sdk.DialOut{URL: f.url, Token: "pt_nope", Bot: "conceder"}, concede)
	if !errors.Is(err, sdk.ErrRefused) || !strings.Contains(err.Error(), "unauthenticated") {
		t.Errorf("dial with a bad token: %v", err)
	}
}

func TestRegisteredGRPCBotNeedsAllowBotDial(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("allow=%v", allow), func(t *testing.T) {
			f := start(t, func(c *roles.Config) { c.AllowBotDial = allow })
			tok := f.addTeam(t, "served")
			fair, err := builtin.New("fair", nil)
			if err != nil {
				t.Fatal(err)
			}
			addr := sdktest.Addr(t, fair)
			f.register(t, tok, "fair", "3", addr)
			body := `{"game":"ultimatum","agents":["bot:served/fair","builtin:random?seed=2"],"seed":3}`
			if !allow {
				status, data := f.call(t, "/parley.referee.v1.RefereeService/StartMatch", body)
				wantError(t, "registered grpc bot without --allow-bot-dial", status, data, http.StatusBadRequest, "invalid_argument")
				if !strings.Contains(string(data), "--allow-bot-dial") {
					t.Errorf("the refusal does not name the flag: %s", data)
				}
				return
			}
			events := f.fullRecord(t, f.startMatch(t, body))
			if fs := faults(events); len(fs) != 0 {
				t.Fatalf("faults: %v", fs)
			}
			if l := events[0].GetMatchStarted().GetSeats()[0].GetLabel(); l != "served/fair@3" {
				t.Errorf("label %q", l)
			}
		})
	}
}

func TestDialOutBotDisconnectsMidMatch(t *testing.T) {
	f := start(t)
	tok := f.addTeam(t, "flaky")
	f.register(t, tok, "quitter", "1", "dialout")
	// The bot has answered Describe over its link when the match starts; it hangs on its first
	// move until the link is cut.
	var acts atomic.Int32
	second := make(chan struct{})
	quitter := sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		if acts.Add(1) == 1 {
			close(second)
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return patientMove(obs, rand.New(rand.NewPCG(1, 2))), nil
	})
	stop := f.dialBot(t, tok, "quitter", quitter)
	id := f.startMatch(t, `{"game":"ultimatum","agents":["bot:flaky/quitter","builtin:random?seed=1"],"seed":5,"limits":{"move_timeout":"20s"}}`)
	select {
	case <-second:
	case <-time.After(waitLimit):
		t.Fatal("the bot was not asked to move")
	}
	stop() // the bot's link goes down with a call in flight
	events := f.fullRecord(t, id)
	// The fault comes with the disconnect, not at the move's deadline: its kind says which
	// (a deadline's would be a timeout).
	fs := faults(events)
	if len(fs) == 0 {
		t.Fatal("no fault recorded for the disconnected bot")
	}
	if fs[0].GetSeat() != 0 || fs[0].GetKind() != eventsv1.FaultKind_FAULT_KIND_UNAVAILABLE || !strings.Contains(fs[0].GetDetail(), "disconnected") {
		t.Errorf("first fault %v, want seat 0 unavailable, explaining the disconnect", fs[0])
	}
	end := events[len(events)-1].GetMatchEnded().GetOutcome()
	if len(end.GetFaultedSeats()) != 1 || end.GetFaultedSeats()[0] != 0 {
		t.Errorf("outcome %v: seat 0 must be the faulted seat", end)
	}
}

// Revoking a team ends the links its bots hold open, not only its later requests.
func TestRevokedTeamLinksEnd(t *testing.T) {
	f := start(t)
	tok := f.addTeam(t, "gone")
	f.register(t, tok, "fair", "1", "dialout")
	fair, err := builtin.New("fair", nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	welcomed := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- sdk.Dial(ctx, sdk.DialOut{URL: f.url, Token: tok, Bot: "fair", OnWelcome: func(a string) { welcomed <- a }}, fair)
	}()
	select {
	case <-welcomed:
	case err := <-done:
		t.Fatalf("dial: %v", err)
	case <-time.After(waitLimit):
		t.Fatal("the bot was not welcomed")
	}
	s, err := registry.Open(context.Background(), f.bus.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeTeam(context.Background(), "gone"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, sdk.ErrRefused) || connect.CodeOf(err) != connect.CodePermissionDenied || !strings.Contains(err.Error(), "revoked") {
			t.Errorf("the link ended with %v, want a refusal saying the team was revoked", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the revoked team's link is still open")
	}
}

// A second copy of a dial-out bot takes its calls over; the first, an SDK bot set to
// reconnect, stops with a refusal saying why instead of taking them back, and matches play
// against the second.
func TestSecondCopyOfABotTakesOver(t *testing.T) {
	f := start(t)
	tok := f.addTeam(t, "twins")
	f.register(t, tok, "fair", "1", "dialout")
	named := func(name string) sdk.Agent {
		fair, err := builtin.New("fair", nil)
		if err != nil {
			t.Fatal(err)
		}
		return sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
			a, err := fair.Act(ctx, obs)
			if a != nil {
				a.PrivateNotes = name
			}
			return a, err
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	welcomed := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- sdk.Dial(ctx, sdk.DialOut{URL: f.url, Token: tok, Bot: "fair", Reconnect: true, OnWelcome: func(a string) { welcomed <- a }}, named("first"))
	}()
	select {
	case <-welcomed:
	case err := <-done:
		t.Fatalf("dial: %v", err)
	case <-time.After(waitLimit):
		t.Fatal("the first copy was not welcomed")
	}
	f.dialBot(t, tok, "fair", named("second"))
	select {
	case err := <-done:
		if !errors.Is(err, sdk.ErrRefused) || connect.CodeOf(err) != connect.CodeFailedPrecondition || !strings.Contains(err.Error(), "a newer session of this bot took its calls over") {
			t.Errorf("the first copy ended with %v, want a refusal saying a newer session took over", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("the first copy is still connected")
	}
	id := f.startMatch(t, `{"game":"ultimatum","agents":["bot:twins/fair","builtin:random?seed=1"],"seed":5}`)
	moved := 0
	for _, ev := range f.fullRecord(t, id) {
		if a := ev.GetActionTaken(); a != nil && a.GetSeat() == 0 {
			moved++
			if n := a.GetAction().GetPrivateNotes(); n != "second" {
				t.Errorf("turn %d was played by %q, want the second copy", ev.GetTurn(), n)
			}
		}
	}
	if moved == 0 {
		t.Error("the bot never moved")
	}
}

// GET /api/v1/bots lists the active bots of current teams for anyone (the web page's forms),
// with whether a dial-out bot is connected, and never where a bot is served.
func TestPublicBotList(t *testing.T) {
	f := start(t)
	acme, other := f.addTeam(t, "acme"), f.addTeam(t, "other")
	f.register(t, acme, "linked", "1", "dialout")
	f.register(t, acme, "idle", "2", "dialout")
	f.register(t, other, "served", "3", "grpc://10.1.2.3:5000")
	f.register(t, acme, "old", "1", "dialout")
	if _, err := f.registryClient().RetireBot(context.Background(), withToken(&registryv1.RetireBotRequest{Name: "old"}, acme)); err != nil {
		t.Fatal(err)
	}
	fair, err := builtin.New("fair", nil)
	if err != nil {
		t.Fatal(err)
	}
	f.dialBot(t, acme, "linked", fair)

	list := func() map[string]*registryv1.Bot {
		t.Helper()
		status, _, data := f.get(t, "/api/v1/bots")
		if status != http.StatusOK {
			t.Fatalf("GET /api/v1/bots: %d %s", status, data)
		}
		if strings.Contains(string(data), "10.1.2.3") {
			t.Errorf("the public list shows where a bot is served: %s", data)
		}
		var resp registryv1.ListBotsResponse
		if err := protojson.Unmarshal(data, &resp); err != nil {
			t.Fatal(err)
		}
		out := map[string]*registryv1.Bot{}
		for _, b := range resp.GetBots() {
			out[b.GetAddress()] = b
		}
		return out
	}
	got := list()
	if len(got) != 3 || got["bot:acme/linked"] == nil || got["bot:acme/idle"] == nil || got["bot:other/served"] == nil {
		t.Fatalf("listed %v, want acme/linked, acme/idle and other/served (not the retired acme/old)", keys(got))
	}
	if !got["bot:acme/linked"].GetConnected() || got["bot:acme/idle"].GetConnected() {
		t.Errorf("connected: linked %v, idle %v; want true, false", got["bot:acme/linked"].GetConnected(), got["bot:acme/idle"].GetConnected())
	}
	if v := got["bot:other/served"].GetVersion(); v != "3" {
		t.Errorf("version %q, want 3", v)
	}

	s, err := registry.Open(context.Background(), f.bus.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeTeam(context.Background(), "other"); err != nil {
		t.Fatal(err)
	}
	if got := list(); got["bot:other/served"] != nil || len(got) != 2 {
		t.Errorf("after revoking team other: %v", keys(got))
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
