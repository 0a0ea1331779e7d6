package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/human"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	"github.com/parley-arena/parley/gateway"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// TestSameRefusalsEverywhere walks the refusals of `parley play` through the HTTP API (as the
// organiser, the command line's role): the same request is refused by both, the CLI with exit
// status 2 and the API with 400, and the API's message is the CLI's (both come from the one preparation path, referee/launch). Parameters
// travel as text on the command line and typed in JSON, so for them both name the bad
// parameter or value rather than share a sentence.
func TestSameRefusalsEverywhere(t *testing.T) {
	base := startStack(t)
	nobody := func() string {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer lis.Close()
		return "grpc://" + lis.Addr().String()
	}()
	tests := []struct {
		name string
		cli  []string // after "play"
		body string   // StartMatch
		// same: the API's message is the CLI's; otherwise both contain want.
		same bool
		want string
	}{
		{"unknown game", []string{"chess", "--agent", "builtin:fair", "--agent", "builtin:fair"},
			`{"game":"chess","agents":["builtin:fair","builtin:fair"]}`, true, "chess"},
		{"unknown built-in agent", []string{"ultimatum", "--agent", "builtin:fair", "--agent", "builtin:nobody"},
			`{"game":"ultimatum","agents":["builtin:fair","builtin:nobody"]}`, true, "nobody"},
		{"bad setting of a built-in agent", []string{"ultimatum", "--agent", "builtin:fair?open=lots", "--agent", "builtin:fair"},
			`{"game":"ultimatum","agents":["builtin:fair?open=lots","builtin:fair"]}`, true, "open"},
		{"unknown setting", []string{"ultimatum", "--agent", "builtin:fair?seed=1", "--agent", "builtin:fair"},
			`{"game":"ultimatum","agents":["builtin:fair?seed=1","builtin:fair"]}`, true, "seed"},
		{"an address that is none", []string{"ultimatum", "--agent", "builtin:fair", "--agent", "localhost:1"},
			`{"game":"ultimatum","agents":["builtin:fair","localhost:1"]}`, true, "localhost:1"},
		{"a built-in agent for another game", []string{"buysell", "--agent", "builtin:fair", "--agent", "builtin:concede"},
			`{"game":"buysell","agents":["builtin:fair","builtin:concede"]}`, true, "not buysell"},
		{"an unknown registered bot", []string{"ultimatum", "--agent", "builtin:fair", "--agent", "bot:acme/nobody"},
			`{"game":"ultimatum","agents":["builtin:fair","bot:acme/nobody"]}`, true, "bot:acme/nobody"},
		{"too few agents", []string{"ultimatum", "--agent", "builtin:fair"},
			`{"game":"ultimatum","agents":["builtin:fair"]}`, false, "needs 2 agents, one per seat (P1, P2)"},
		{"a bad match id", []string{"ultimatum", "--agent", "builtin:fair", "--agent", "builtin:fair", "--match-id", "a.b"},
			`{"game":"ultimatum","agents":["builtin:fair","builtin:fair"],"matchId":"a.b"}`, true, `"a.b"`},
		{"a misspelt parameter", []string{"ultimatum", "--agent", "builtin:fair", "--agent", "builtin:fair", "--param", "totl=10"},
			`{"game":"ultimatum","agents":["builtin:fair","builtin:fair"],"params":{"ultimatum":{"totl":"10"}}}`, false, "totl"},
		{"a value out of range", []string{"ultimatum", "--agent", "builtin:fair", "--agent", "builtin:fair", "--param", "max_turns=0"},
			`{"game":"ultimatum","agents":["builtin:fair","builtin:fair"],"params":{"ultimatum":{"maxTurns":0}}}`, true, "max_turns"},
		{"an unknown field", []string{"ultimatum", "--agent", "builtin:fair", "--agent", "builtin:fair", "--bogus", "1"},
			`{"game":"ultimatum","agents":["builtin:fair","builtin:fair"],"bogus":1}`, false, "bogus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := runInProcess(t, nil, append([]string{"play"}, tc.cli...)...)
			cliMsg := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(r.stderr), "parley: "))
			if r.code != 2 || cliMsg == "" {
				t.Fatalf("parley play: exit %d, want 2 with a message:\n%s", r.code, r)
			}
			status, apiMsg := startMatch(t, base, tc.body)
			if status != http.StatusBadRequest {
				t.Fatalf("StartMatch: status %d (%s), want 400", status, apiMsg)
			}
			switch {
			case tc.same && apiMsg != cliMsg:
				t.Errorf("the API says\n  %s\nthe CLI says\n  %s", apiMsg, cliMsg)
			case !strings.Contains(cliMsg, tc.want) || !strings.Contains(apiMsg, tc.want):
				t.Errorf("want both to name %q:\n  API: %s\n  CLI: %s", tc.want, apiMsg, cliMsg)
			}
		})
	}
	// An address with nothing listening is refused before the match by both too; the CLI
	// exits 1, as the address may be right and its agent down.
	r := runInProcess(t, nil, "play", "ultimatum", "--agent", "builtin:fair", "--agent", nobody)
	status, apiMsg := startMatch(t, base, fmt.Sprintf(`{"game":"ultimatum","agents":["builtin:fair",%q]}`, nobody))
	if r.code != 1 || status != http.StatusBadRequest || !strings.Contains(r.stderr, "unreachable") || !strings.Contains(apiMsg, "unreachable") {
		t.Errorf("nothing listening: CLI exit %d (%s), API %d (%s)", r.code, r.stderr, status, apiMsg)
	}
}

// startStack runs the whole house in the test, as `parley up` does, and returns the gateway's
// URL.
func startStack(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	store, err := analytics.OpenStore(ctx, t.TempDir()+"/analytics.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	listen := func() net.Listener {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { lis.Close() })
		return lis
	}
	// The organiser's own requests: what the command line refuses, the organiser's HTTP
	// request is refused for too (a spectator is refused more: see referee/policy).
	pol := policy.Default()
	pol.StartsPerMinute = 0
	pol.Dial = []string{"127.0.0.1/32"}
	st, err := roles.Start(ctx, roles.Config{
		Bus: b, Games: families.New(), Builtins: builtin.Agents{}, Analytics: store, Families: standard.New(),
		Workers: 1, Policy: &pol, AdminToken: refusalsToken, Gateway: gateway.Config{},
	}, listen(), listen())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	srv := httptest.NewServer(st.Gateway)
	t.Cleanup(srv.Close)
	t.Cleanup(cancel)
	return srv.URL
}

// refusalsToken is the organiser's token of TestSameRefusalsEverywhere.
const refusalsToken = "the-organisers"

// startMatch posts body to StartMatch as the organiser and returns the status and the error's
// message.
func startMatch(t *testing.T, base, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base+"/parley.referee.v1.RefereeService/StartMatch", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+refusalsToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var e struct{ Message string }
	_ = json.Unmarshal(data, &e)
	if e.Message == "" {
		return resp.StatusCode, string(data)
	}
	return resp.StatusCode, e.Message
}

// TestRefusedRequestsHoldNoSeats sends more refused requests for human seats than the hub has
// seats: none of them may keep one, so a good request afterwards still gets its seat.
func TestRefusedRequestsHoldNoSeats(t *testing.T) {
	base := startStack(t)
	for i := 0; i < human.DefaultMaxSeats/3+10; i++ {
		// Three seats for a two-seat game: refused, after the seats could have been taken.
		if code, msg := startMatch(t, base, `{"game":"ultimatum","agents":["human","human","human"]}`); code != http.StatusBadRequest {
			t.Fatalf("request %d for three seats of ultimatum: status %d (%s), want 400", i, code, msg)
		}
	}
	code, body := startMatch(t, base, `{"game":"ultimatum","agents":["human","builtin:fair"]}`)
	if code != http.StatusOK || !strings.Contains(body, `"seatLinks"`) {
		t.Fatalf("a good request for a human seat after the refused ones: status %d: %s", code, body)
	}
}
