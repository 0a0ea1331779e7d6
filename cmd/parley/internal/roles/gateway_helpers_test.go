package roles_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	"github.com/parley-arena/parley/gateway"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// waitLimit bounds every wait of these tests.
const waitLimit = 2 * time.Minute

// fixture is the whole house in one process, as `parley up` runs it: a real gateway on
// loopback in front of the referee role (its gRPC API on loopback, two workers of the match
// queue, the tournament service) recording to an embedded NATS server, and the analytics
// service (consumer, SQLite file, gRPC API on loopback).
type fixture struct {
	url     string
	bus     *bus.Bus
	stack   *roles.Stack
	metrics *telemetry.Metrics
	seats   *fakeSeats
}

// fakeSeats authorises token "seat-K-MATCH" for seat K of MATCH.
type fakeSeats struct{}

func (fakeSeats) AuthorizeSeat(_ context.Context, matchID string, seat int32, token string) bool {
	return token == fmt.Sprintf("seat-%d-%s", seat, matchID)
}

// listen returns a loopback listener on a free port.
func listen(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	return lis
}

func start(t *testing.T, mutate ...func(*roles.Config)) *fixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	metrics := telemetry.New()
	metrics.WatchConsumer(b.JetStream(), natsname.MatchStream, natsname.AnalyticsConsumer)
	store, err := analytics.OpenStore(ctx, t.TempDir()+"/analytics.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })

	f := &fixture{bus: b, metrics: metrics, seats: &fakeSeats{}}
	// The organiser's policy of these tests: the defaults, but the referee may dial the bots
	// the tests serve on loopback, and no quotas (the quota tests set their own).
	pol := policy.Default()
	pol.Dial = []string{"127.0.0.1/32"}
	pol.StartsPerMinute, pol.AuthFailuresPerMinute = 0, 0
	cfg := roles.Config{
		Bus: b, Games: families.New(), Builtins: builtin.Agents{}, Analytics: store, Families: standard.New(),
		Workers: 2, StartGrace: 2 * time.Second, Consumer: analytics.ConsumerConfig{IdleWait: 200 * time.Millisecond},
		Metrics: metrics, Policy: &pol, AdminToken: organiserToken,
		Gateway: gateway.Config{Seats: f.seats, KeepAlive: 200 * time.Millisecond, StandingsEvery: 50 * time.Millisecond},
	}
	for _, m := range mutate {
		m(&cfg)
	}
	st, err := roles.Start(ctx, cfg, listen(t), listen(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	f.stack = st
	srv := httptest.NewUnstartedServer(st.Gateway)
	srv.Config.Protocols = new(http.Protocols)
	srv.Config.Protocols.SetHTTP1(true)
	srv.Config.Protocols.SetUnencryptedHTTP2(true)
	srv.Config.BaseContext = func(net.Listener) context.Context { return ctx }
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(cancel) // runs first: ends the streams still open
	f.url = srv.URL
	return f
}

// organiserToken is the admin token of the fixtures: a request bearing it is the organiser's.
const organiserToken = "organiser-of-the-tests"

// call makes a Connect-protocol JSON call as a spectator: POST url/procedure with body. It
// returns the status and the body.
func (f *fixture) call(t *testing.T, procedure, body string) (int, []byte) {
	t.Helper()
	return f.callAs(t, "", procedure, body)
}

// callAs makes the call with a bearer token ("" for none).
func (f *fixture) callAs(t *testing.T, token, procedure, body string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url+procedure, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// mustCall makes a call that must succeed and decodes its answer into out.
func (f *fixture) mustCall(t *testing.T, procedure, body string, out proto.Message) {
	t.Helper()
	status, data := f.call(t, procedure, body)
	if status != http.StatusOK {
		t.Fatalf("%s %s: status %d: %s", procedure, body, status, data)
	}
	if err := protojson.Unmarshal(data, out); err != nil {
		t.Fatalf("%s: answer is not a %T: %v\n%s", procedure, out, err, data)
	}
}

// get does a GET and returns the status, content type and body.
func (f *fixture) get(t *testing.T, path string, header ...string) (int, string, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), data
}

// wantError checks a JSON error answer.
func wantError(t *testing.T, what string, status int, data []byte, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("%s: status %d, want %d: %s", what, status, wantStatus, data)
	}
	var e gateway.WireError
	if err := json.Unmarshal(data, &e); err != nil {
		t.Errorf("%s: error body is not JSON: %v: %q", what, err, data)
		return
	}
	if e.Code != wantCode || e.Message == "" {
		t.Errorf("%s: error %+v, want code %q and a message", what, e, wantCode)
	}
}

// startMatch starts a match through the API and returns its id.
func (f *fixture) startMatch(t *testing.T, body string) string {
	t.Helper()
	resp := &refereev1.StartMatchResponse{}
	f.mustCall(t, "/parley.referee.v1.RefereeService/StartMatch", body, resp)
	return resp.GetMatchId()
}

// organise starts a match as the organiser (who may name it).
func (f *fixture) organise(t *testing.T, body string) string {
	t.Helper()
	status, data := f.callAs(t, organiserToken, "/parley.referee.v1.RefereeService/StartMatch", body)
	if status != http.StatusOK {
		t.Fatalf("StartMatch %s as the organiser: %d %s", body, status, data)
	}
	resp := &refereev1.StartMatchResponse{}
	if err := protojson.Unmarshal(data, resp); err != nil {
		t.Fatal(err)
	}
	return resp.GetMatchId()
}

// fullRecord is the organiser's record of a match, read from the match stream once it ended.
func (f *fixture) fullRecord(t *testing.T, id string) []*eventsv1.MatchEvent {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		events, err := bus.ReadMatch(context.Background(), f.bus.JetStream(), id)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(events); n > 0 && events[n-1].GetMatchEnded() != nil {
			return events
		}
		if time.Now().After(deadline) {
			t.Fatalf("match %s did not end within %s", id, waitLimit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sseEvent is one server-sent event.
type sseEvent struct {
	id, event, data string
}

// stream is an open server-sent event stream.
type stream struct {
	resp   *http.Response
	cancel context.CancelFunc
	events chan sseEvent
	done   chan error
	// waiting holds the live news (Waiting) matchEvents read between the events.
	waiting []*refereev1.Waiting
}

// openStream opens a GET stream; it returns the response for a status other than 200.
func (f *fixture) openStream(t *testing.T, path string, header ...string) (*stream, int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		cancel()
		return nil, resp.StatusCode, data
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("%s: content type %q", path, ct)
	}
	s := &stream{resp: resp, cancel: cancel, events: make(chan sseEvent, 1024), done: make(chan error, 1)}
	t.Cleanup(s.close)
	go func() { s.done <- parseSSE(resp.Body, s.events) }()
	return s, http.StatusOK, nil
}

func (s *stream) close() {
	s.cancel()
	s.resp.Body.Close()
}

// parseSSE reads events (comments and retry lines skipped) into out until the body ends.
func parseSSE(r io.Reader, out chan<- sseEvent) error {
	defer close(out)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var ev sseEvent
	var data []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if ev.event != "" || len(data) > 0 {
				ev.data = strings.Join(data, "\n")
				out <- ev
			}
			ev, data = sseEvent{}, nil
		case strings.HasPrefix(line, ":"), strings.HasPrefix(line, "retry:"):
		case strings.HasPrefix(line, "id: "):
			ev.id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			ev.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		default:
			return fmt.Errorf("not a server-sent event line: %q", line)
		}
	}
	return sc.Err()
}

// matchEvents reads a match stream to its end event and returns the match events.
func (s *stream) matchEvents(t *testing.T) []*eventsv1.MatchEvent {
	t.Helper()
	var out []*eventsv1.MatchEvent
	for ev := range s.events {
		switch ev.event {
		case "match_event":
			me := &eventsv1.MatchEvent{}
			if err := protojson.Unmarshal([]byte(ev.data), me); err != nil {
				t.Fatalf("match_event data is not a MatchEvent: %v\n%s", err, ev.data)
			}
			if ev.id != fmt.Sprint(me.GetSeq()) {
				t.Errorf("event id %q, seq %d", ev.id, me.GetSeq())
			}
			out = append(out, me)
		case "waiting":
			w := &refereev1.Waiting{}
			if err := protojson.Unmarshal([]byte(ev.data), w); err != nil || w.GetDeadline() == nil || w.GetTurn() < 1 || ev.id != "" {
				t.Fatalf("waiting event (id %q) is no Waiting with a turn and a deadline: %v\n%s", ev.id, err, ev.data)
			}
			s.waiting = append(s.waiting, w)
		case "end":
			return out
		default:
			t.Fatalf("unexpected event %q: %s", ev.event, ev.data)
		}
	}
	t.Fatalf("stream ended without an end event (%v) after %d events", <-s.done, len(out))
	return nil
}

// sameEvents fails unless got and want are equal event by event.
func sameEvents(t *testing.T, what string, got, want []*eventsv1.MatchEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d events, want %d", what, len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("%s: event %d:\n got  %v\n want %v", what, i+1, got[i], want[i])
		}
	}
}

// slowAgent plays random legal moves after delay.
func slowAgent(delay time.Duration, seed uint64) sdk.Agent {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 1))
	return sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		mu.Lock()
		defer mu.Unlock()
		return patientMove(obs, rng), nil
	})
}

// patientMove proposes while it may and accepts otherwise, so a match runs its turns.
func patientMove(obs *agentv1.Observation, rng *rand.Rand) *agentv1.Action {
	for _, k := range obs.GetLegalMoves() {
		if k == gamev1.MoveKind_MOVE_KIND_PROPOSE {
			for range 100 {
				if a := games.RandomAction(obs, rng); a.GetMove().GetPropose() != nil {
					return a
				}
			}
		}
	}
	return games.RandomAction(obs, rng)
}

// secretAgent plays random legal moves, fills its private fields with SECRET-<seat> and its
// messages to some seats only with TALK.
func secretAgent(seat int, seed uint64) sdk.Agent {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(seed, 2))
	n := 0
	return sdk.AgentFunc(func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		mu.Lock()
		defer mu.Unlock()
		n++
		a := games.RandomAction(obs, rng)
		a.PrivateReasoning = fmt.Sprintf("SECRET-%d reasoning %d", seat, n)
		a.PrivateNotes = fmt.Sprintf("SECRET-%d notes %d", seat, n)
		a.Usage = &agentv1.Usage{Model: "m", PromptTokens: 1, RawOutputs: []string{fmt.Sprintf("SECRET-%d raw %d", seat, n)}}
		for _, m := range a.GetMessages() {
			if len(m.GetTo()) > 0 {
				m.Text = fmt.Sprintf("TALK from %d to %v, %d", seat, m.GetTo(), n)
			}
		}
		return a, nil
	})
}

// decodeLines parses JSON-lines events.
func decodeLines(t *testing.T, data []byte) []*eventsv1.MatchEvent {
	t.Helper()
	var out []*eventsv1.MatchEvent
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		ev := &eventsv1.MatchEvent{}
		if err := protojson.Unmarshal(line, ev); err != nil {
			t.Fatalf("record line is not a MatchEvent: %v\n%s", err, line)
		}
		out = append(out, ev)
	}
	return out
}

// waitFor polls cond until it holds or waitLimit passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
