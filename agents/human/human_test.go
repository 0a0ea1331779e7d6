package human_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parley-arena/parley/agents/human"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

const testTimeout = time.Minute

func observation(turn, attempt int32) *agentv1.Observation {
	return &agentv1.Observation{
		MatchId:    "m1",
		Game:       "ultimatum",
		Turn:       turn,
		Attempt:    attempt,
		LegalMoves: []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_ACCEPT, gamev1.MoveKind_MOVE_KIND_REJECT},
		Briefing:   "You are P2.",
	}
}

// snapshotJSON is the wire form of a seat's state, as a client reads it.
type snapshotJSON struct {
	State       string          `json:"state"`
	Name        string          `json:"name"`
	Version     uint64          `json:"version"`
	Note        string          `json:"note"`
	Observation json.RawMessage `json:"observation"`
	Outcome     json.RawMessage `json:"outcome"`
}

type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// awaitState waits until the seat is in state want.
func awaitState(t *testing.T, s *human.Seat, want human.State) human.Snapshot {
	t.Helper()
	timeout := time.After(testTimeout)
	for {
		snap, changed := s.Snapshot()
		if snap.State == want {
			return snap
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("seat still %q, want %q", snap.State, want)
		}
	}
}

type result struct {
	action *agentv1.Action
	err    error
}

func act(ctx context.Context, s *human.Seat, obs *agentv1.Observation) <-chan result {
	ch := make(chan result, 1)
	go func() {
		a, err := s.Act(ctx, obs)
		ch <- result{a, err}
	}()
	return ch
}

func post(t *testing.T, url, contentType, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

func TestDeadlinePassesActFails(t *testing.T) {
	hub := human.NewHub()
	s, err := hub.NewSeat("alice")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	_, err = s.Act(ctx, observation(2, 1))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Act past the deadline = %v, want DeadlineExceeded (the referee applies the default)", err)
	}
	snap := awaitState(t, s, human.StateWaiting)
	if !strings.Contains(snap.Note, "Time ran out") {
		t.Errorf("note after the deadline = %q, want it to say time ran out", snap.Note)
	}
	if _, err := s.Submit(&agentv1.Action{}, 0, 0); !errors.Is(err, human.ErrNotActing) {
		t.Errorf("Submit after the deadline = %v, want ErrNotActing", err)
	}
}

func TestCloseEndsAct(t *testing.T) {
	s, _ := human.NewHub().NewSeat("")
	ch := act(context.Background(), s, observation(1, 1))
	awaitState(t, s, human.StateActing)
	s.End(&matchv1.Outcome{Summary: "void"})
	s.Close()
	if r := <-ch; !errors.Is(r.err, human.ErrClosed) {
		t.Errorf("Act on a closed seat = %v, want ErrClosed", r.err)
	}
	if snap, _ := s.Snapshot(); snap.State != human.StateEnded || snap.Outcome.GetSummary() != "void" {
		t.Errorf("snapshot after close = %+v", snap)
	}
	if _, err := s.Act(context.Background(), observation(2, 1)); !errors.Is(err, human.ErrClosed) {
		t.Errorf("Act after Close = %v, want ErrClosed", err)
	}
}

// Two seats wait at once; each is answered through its own token, and an action for one never
// reaches the other.
func TestConcurrentSeats(t *testing.T) {
	hub := human.NewHub()
	srv := httptest.NewServer(hub)
	defer srv.Close()
	const n = 4
	seats := make([]*human.Seat, n)
	results := make([]<-chan result, n)
	for i := range n {
		var err error
		if seats[i], err = hub.NewSeat(fmt.Sprintf("p%d", i)); err != nil {
			t.Fatal(err)
		}
		results[i] = act(context.Background(), seats[i], observation(int32(i+1), 1))
	}
	var wg sync.WaitGroup
	for i := n - 1; i >= 0; i-- {
		wg.Go(func() {
			awaitState(t, seats[i], human.StateActing)
			body := fmt.Sprintf(`{"move": {"choose": {"option": "o%d"}}}`, i)
			code, b := post(t, fmt.Sprintf("%s/api/v1/seats/%s/action?turn=%d&attempt=1", srv.URL, seats[i].Token(), i+1), "application/json", body)
			if code != http.StatusAccepted {
				t.Errorf("seat %d: POST action = %d %s, want 202", i, code, b)
			}
		})
	}
	wg.Wait()
	for i := range n {
		r := <-results[i]
		if r.err != nil || r.action.GetMove().GetChoose().GetOption() != fmt.Sprintf("o%d", i) {
			t.Errorf("seat %d got %v, %v; want its own choice o%d", i, r.action, r.err, i)
		}
	}
	if seats[0].Token() == seats[1].Token() || len(seats[0].Token()) < 20 {
		t.Errorf("tokens %q and %q: want distinct, long random tokens", seats[0].Token(), seats[1].Token())
	}
}

func TestHTTPErrors(t *testing.T) {
	hub := human.NewHub()
	srv := httptest.NewServer(hub)
	defer srv.Close()
	s, _ := hub.NewSeat("alice")
	base := srv.URL + "/api/v1/seats/" + s.Token()
	ch := act(context.Background(), s, observation(4, 1))
	awaitState(t, s, human.StateActing)

	tests := []struct {
		name        string
		url         string
		contentType string
		body        string
		wantStatus  int
		wantMessage string
	}{
		{"wrong token", srv.URL + "/api/v1/seats/nope/action", "application/json", `{"move":{"reject":{}}}`, 404, "no such seat"},
		{"not JSON", base + "/action", "application/json", `move=reject`, 400, "not one Action"},
		{"unknown field", base + "/action", "application/json", `{"move":{"reject":{}},"cheat":1}`, 400, "not one Action"},
		{"two actions in one request", base + "/action", "application/json", `{"move":{"reject":{}}}{"move":{"accept":{}}}`, 400, "not one Action"},
		{"an array of actions", base + "/action", "application/json", `[{"move":{"reject":{}}}]`, 400, "not one Action"},
		{"no move", base + "/action", "application/json", `{"privateReasoning":"hmm"}`, 400, "no move"},
		{"wrong media type", base + "/action", "text/plain", `{"move":{"reject":{}}}`, 415, "application/json"},
		{"too large", base + "/action", "application/json", `{"move":{"reject":{}},"privateReasoning":"` + strings.Repeat("x", human.MaxActionBytes) + `"}`, 413, "larger than"},
		{"stale turn", base + "/action?turn=3", "application/json", `{"move":{"reject":{}}}`, 409, "turn 4"},
		{"bad turn", base + "/action?turn=x", "application/json", `{"move":{"reject":{}}}`, 400, "whole number"},
		{"unknown endpoint", base + "/resign", "application/json", `{}`, 404, "no such seat endpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, b := post(t, tc.url, tc.contentType, tc.body)
			var e errorJSON
			if err := json.Unmarshal(b, &e); err != nil {
				t.Fatalf("error body %q is not JSON: %v", b, err)
			}
			if code != tc.wantStatus || !strings.Contains(e.Message, tc.wantMessage) || e.Code == "" {
				t.Errorf("POST = %d %s, want %d with a message containing %q", code, b, tc.wantStatus, tc.wantMessage)
			}
		})
	}
	if code, _ := get(t, srv.URL+"/api/v1/seats/nope"); code != 404 {
		t.Errorf("GET a wrong token = %d, want 404", code)
	}

	// One action per request, one request per observation: the first is taken, the second is
	// refused, since nothing waits any more.
	code, b := post(t, base+"/action?turn=4&attempt=1", "application/json", `{"move":{"accept":{}},"messages":[{"text":"deal"}]}`)
	if code != 202 {
		t.Fatalf("POST = %d %s, want 202", code, b)
	}
	code, b = post(t, base+"/action", "application/json", `{"move":{"reject":{}}}`)
	if code != 409 {
		t.Errorf("second POST = %d %s, want 409", code, b)
	}
	r := <-ch
	if r.err != nil || r.action.GetMove().GetAccept() == nil || r.action.GetMessages()[0].GetText() != "deal" {
		t.Errorf("Act = %v, %v; want the first action", r.action, r.err)
	}
}

func TestSnapshotAndStream(t *testing.T) {
	hub := human.NewHub(human.WithMaxStreams(1))
	srv := httptest.NewServer(hub)
	defer srv.Close()
	s, _ := hub.NewSeat("alice")
	url := srv.URL + "/api/v1/seats/" + s.Token()

	code, b := get(t, url)
	var snap snapshotJSON
	if err := json.Unmarshal(b, &snap); code != 200 || err != nil || snap.State != "waiting" || snap.Name != "alice" {
		t.Fatalf("GET = %d %s, want a waiting snapshot", code, b)
	}

	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type = %q", ct)
	}
	events := make(chan snapshotJSON, 16)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var s snapshotJSON
				if err := json.Unmarshal([]byte(data), &s); err != nil {
					t.Errorf("event %q: %v", data, err)
				}
				events <- s
			}
		}
	}()
	next := func(want string) snapshotJSON {
		t.Helper()
		for {
			select {
			case e, ok := <-events:
				if !ok {
					t.Fatalf("stream ended before state %q", want)
				}
				if e.State == want {
					return e
				}
			case <-time.After(testTimeout):
				t.Fatalf("no %q event", want)
			}
		}
	}
	next("waiting")

	// A second stream of the same seat is over the limit.
	req2, _ := http.NewRequest("GET", url, nil)
	req2.Header.Set("Accept", "text/event-stream")
	if resp2, err := http.DefaultClient.Do(req2); err != nil || resp2.StatusCode != http.StatusTooManyRequests {
		t.Errorf("second stream: %v %v, want 429", resp2.StatusCode, err)
	} else {
		resp2.Body.Close()
	}

	ch := act(context.Background(), s, observation(2, 1))
	e := next("acting")
	obs := &agentv1.Observation{}
	if err := protojson.Unmarshal(e.Observation, obs); err != nil || obs.GetTurn() != 2 || obs.GetBriefing() != "You are P2." {
		t.Errorf("acting event observation = %s (%v)", e.Observation, err)
	}
	if code, b := post(t, url+"/action", "", `{"move":{"reject":{}}}`); code != 202 {
		t.Errorf("POST = %d %s", code, b)
	}
	<-ch
	next("waiting")
	s.End(&matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_REJECTED, Payoffs: []float64{0, 0}})
	s.Close()
	e = next("ended")
	if !strings.Contains(string(e.Outcome), "END_CAUSE_REJECTED") {
		t.Errorf("ended event outcome = %s", e.Outcome)
	}
	// The stream ends after the final state.
	for range events {
	}
}

func TestReserve(t *testing.T) {
	hub := human.NewHub(human.WithTicketTTL(50 * time.Millisecond))
	srv := httptest.NewServer(hub)
	defer srv.Close()
	code, b := post(t, srv.URL+"/api/v1/seats", "application/json", `{"name":"carol"}`)
	var res struct{ Token, Agent, URL string }
	if err := json.Unmarshal(b, &res); code != 201 || err != nil || !strings.HasPrefix(res.Agent, "human:carol?ticket=") || res.URL != "/seat/"+res.Token {
		t.Fatalf("POST /api/v1/seats = %d %s", code, b)
	}
	if strings.Contains(res.Agent, res.Token) {
		t.Errorf("the agent address %q carries the seat's token", res.Agent)
	}
	// Check leaves the ticket for Open; once Open used it, Check fails as Open does.
	if err := hub.Check(res.Agent); err != nil {
		t.Errorf("Check(%q) = %v", res.Agent, err)
	}
	s, err := hub.Open(res.Agent)
	if err != nil || s.Token() != res.Token {
		t.Fatalf("Open(%q) = %v, %v", res.Agent, s, err)
	}
	if _, err := hub.Open(res.Agent); !errors.Is(err, human.ErrNoTicket) {
		t.Errorf("second Open = %v, want ErrNoTicket", err)
	}
	if err := hub.Check(res.Agent); !errors.Is(err, human.ErrNoTicket) {
		t.Errorf("Check of a used ticket = %v, want ErrNoTicket", err)
	}
	if err := hub.Check("human:no spaces"); !errors.Is(err, human.ErrBadAddress) {
		t.Errorf("Check of a bad name = %v, want ErrBadAddress", err)
	}
	if err := human.NewHub().Check("human:ada"); !errors.Is(err, human.ErrNotServed) {
		t.Errorf("Check on a hub nothing serves = %v, want ErrNotServed", err)
	}
	for _, body := range []string{`{"name":"no spaces"}`, `{"nick":"x"}`, `{"name":"a"}{"name":"b"}`} {
		if code, b := post(t, srv.URL+"/api/v1/seats", "application/json", body); code != 400 {
			t.Errorf("POST %s = %d %s, want 400", body, code, b)
		}
	}
	// A reservation no match uses is dropped.
	_, addr, _ := hub.Reserve("")
	deadline := time.Now().Add(testTimeout)
	for hub.Len() > 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := hub.Open(addr); !errors.Is(err, human.ErrNoTicket) || hub.Len() != 1 {
		t.Errorf("expired ticket: Open = %v with %d seats, want ErrNoTicket and 1 seat", err, hub.Len())
	}
}

func TestMaxSeats(t *testing.T) {
	hub := human.NewHub(human.WithMaxSeats(2), human.WithLinger(time.Hour))
	a, _ := hub.NewSeat("")
	if _, err := hub.NewSeat(""); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.NewSeat(""); !errors.Is(err, human.ErrFull) {
		t.Errorf("third seat: %v, want ErrFull", err)
	}
	a.Close() // a closed seat makes room
	if _, err := hub.NewSeat(""); err != nil {
		t.Errorf("seat after one closed: %v", err)
	}
	if _, ok := hub.Seat(a.Token()); ok {
		t.Errorf("the closed seat is still held")
	}
}

func TestParseAddress(t *testing.T) {
	tests := []struct {
		spec, name, ticket string
		bad                bool
	}{
		{spec: "human"},
		{spec: "human:alice", name: "alice"},
		{spec: "human:alice?ticket=abc", name: "alice", ticket: "abc"},
		{spec: "human?ticket=abc", ticket: "abc"},
		{spec: "human:", name: ""},
		{spec: "humane", bad: true},
		{spec: "human:a b", bad: true},
		{spec: "human:a?x=1", bad: true},
		{spec: "human:a?ticket=%zz", bad: true},
	}
	for _, tc := range tests {
		name, ticket, err := human.ParseAddress(tc.spec)
		if (err != nil) != tc.bad || name != tc.name || ticket != tc.ticket {
			t.Errorf("ParseAddress(%q) = %q, %q, %v", tc.spec, name, ticket, err)
		}
		if tc.bad && !errors.Is(err, human.ErrBadAddress) {
			t.Errorf("ParseAddress(%q) error %v does not wrap ErrBadAddress", tc.spec, err)
		}
	}
}

func TestAuthorizeSeat(t *testing.T) {
	hub := human.NewHub()
	s, _ := hub.NewSeat("")
	ctx := context.Background()
	if hub.AuthorizeSeat(ctx, "m1", 0, s.Token()) {
		t.Errorf("a seat that has seen no observation is authorized")
	}
	obs := observation(1, 1)
	obs.Seat = 1
	ch := act(ctx, s, obs)
	awaitState(t, s, human.StateActing)
	tests := []struct {
		match string
		seat  int32
		token string
		want  bool
	}{
		{"m1", 1, s.Token(), true},
		{"m1", 0, s.Token(), false},
		{"m2", 1, s.Token(), false},
		{"m1", 1, "guess", false},
		{"m1", 1, "", false},
	}
	for _, tc := range tests {
		if got := hub.AuthorizeSeat(ctx, tc.match, tc.seat, tc.token); got != tc.want {
			t.Errorf("AuthorizeSeat(%q, %d, %q) = %v, want %v", tc.match, tc.seat, tc.token, got, tc.want)
		}
	}
	s.Close()
	<-ch
	if !hub.AuthorizeSeat(ctx, "m1", 1, s.Token()) {
		t.Errorf("a closed seat's player can no longer read the match they played")
	}
}
