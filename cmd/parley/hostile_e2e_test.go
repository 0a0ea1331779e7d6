package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/parley-arena/parley/agents/hostile"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
)

// hostileAdmin is the organiser's token of TestHostile's `parley up`.
const hostileAdmin = "the-organiser-of-the-hostile-tests"

// post sends body to base+path with the given headers and returns the status and the body.
func post(t *testing.T, base, path string, body io.Reader, headers ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// peakRSS is the peak resident set size of process pid, in MiB, from /proc.
func peakRSS(t *testing.T, pid int) float64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb / 1024
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// TestHostile attacks a real `parley up` on loopback as anonymous users, teams and their bots
// would, and checks each defence: every request over a bound of the policy is refused naming
// the bound, nothing an anonymous user sends makes the referee dial where the organiser did
// not allow or post results under another's name, hostile bots end in recorded, explained
// outcomes while honest agents are never faulted, quotas answer 429 while the server goes on
// answering others, and the process's memory stays bounded.
func TestHostile(t *testing.T) {
	dir := t.TempDir()
	// The default policy, but quotas the suite's own requests stay within until it floods.
	pol := dir + "/policy.yaml"
	if err := os.WriteFile(pol, []byte("starts_per_minute: 80\nauth_failures_per_minute: 20\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	up := startProcEnv(t, "", []string{"PARLEY_ADMIN_TOKEN=" + hostileAdmin}, parleyBin, "up", "--data-dir", dir,
		"--listen", "127.0.0.1:0", "--referee-listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0",
		"--allow-dial", "127.0.0.1/32", "--policy", pol)
	base := up.waitLine("Parley is up: ")
	token := strings.TrimSpace(mustRun(t, nil, "admin", "team", "add", "acme", "--data-dir", dir).stdout)
	other := strings.TrimSpace(mustRun(t, nil, "admin", "team", "add", "rivals", "--data-dir", dir).stdout)
	start := func(body string, headers ...string) (int, string) {
		return post(t, base, "/parley.referee.v1.RefereeService/StartMatch", strings.NewReader(body), headers...)
	}
	refused := func(what string, code int, body string, status int, words ...string) {
		t.Helper()
		if code != status {
			t.Errorf("%s: status %d, want %d: %s", what, code, status, body)
			return
		}
		for _, w := range words {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the answer does not say %q: %s", what, w, body)
			}
		}
	}

	t.Run("limits over the policy's bounds", func(t *testing.T) {
		for _, tc := range []struct{ limits, bound string }{
			{`{"maxRetries":2000000000}`, "max_retries"},
			{`{"maxRetries":2147483647}`, "max_retries"},
			{`{"maxReplyBytes":2147483647}`, "max_reply_bytes"},
			{`{"moveTimeout":"86400s"}`, "max_move_timeout"},
		} {
			code, body := start(`{"game":"ultimatum","agents":["builtin:fair","builtin:random"],"limits":` + tc.limits + `}`)
			refused(tc.limits, code, body, http.StatusBadRequest, tc.bound)
		}
		code, body := post(t, base, "/parley.tournament.v1.TournamentService/StartTournament",
			strings.NewReader(`{"game":"ultimatum","gamesPerAssignment":100000,"entrants":[{"address":"builtin:fair"},{"address":"builtin:random"}]}`))
		refused("a tournament of 200,000 matches", code, body, http.StatusBadRequest, "max_games_per_assignment")
	})

	t.Run("no forged results", func(t *testing.T) {
		code, body := start(`{"game":"ultimatum","agents":["builtin:fair","builtin:random"],"matchId":"cup-a0-g0"}`)
		refused("a spectator naming the match", code, body, http.StatusBadRequest, "only the organiser")
		code, body = start(`{"game":"ultimatum","agents":["builtin:fair","builtin:random"],"labels":["acme/fair@1.0",""]}`)
		refused("a label claiming a registered bot", code, body, http.StatusBadRequest, "registered bots")
		// Attack 7: look-alikes (fullwidth, division slash, fraction slash) and forging text.
		for _, label := range []string{`acme\uff0ffair\uff201.0`, `acme\u2215fair`, `acme\u2044fair`} {
			code, body = start(`{"game":"ultimatum","agents":["builtin:fair","builtin:random"],"labels":["` + label + `",""]}`)
			refused("a label looking like a registered bot's, "+label, code, body, http.StatusBadRequest, "registered bots")
		}
		for _, label := range []string{`fair\u202eriaf`, `fair\nacme/fair@1.0`} {
			code, body = start(`{"game":"ultimatum","agents":["builtin:fair","builtin:random"],"labels":["` + label + `",""]}`)
			refused("a label with a control character, "+label, code, body, http.StatusBadRequest, "control or format character")
		}
	})

	t.Run("a leaderboard's cost", func(t *testing.T) {
		code, body := post(t, base, "/parley.analytics.v1.AnalyticsService/GetLeaderboard",
			strings.NewReader(`{"filter":{"game":"ultimatum"},"bootstrapSamples":5000}`))
		refused("5,000 bootstrap samples", code, body, http.StatusBadRequest, "max_bootstrap_samples 200")
	})

	t.Run("no forged dials", func(t *testing.T) {
		for _, addr := range []string{"grpc://localhost:4222", "grpc://10.0.0.1:7070", "grpc://[::1]:80"} {
			code, body := start(`{"game":"ultimatum","agents":["builtin:fair","` + addr + `"]}`)
			refused(addr, code, body, http.StatusBadRequest, "may not dial", "allow-dial")
		}
		code, body := start(`{"game":"ultimatum","agents":["builtin:fair","builtin:llm?model=m&base_url=http://127.0.0.1:1&api_key_env=HOME"]}`)
		refused("a spectator's language model", code, body, http.StatusBadRequest, "llm_roles")
		code, body = start(`{"game":"dealornodeal","agents":["builtin:bayes?gamma=1e-500000","builtin:dondgreedy"]}`)
		refused("an unbounded built-in setting", code, body, http.StatusBadRequest, "gamma")
	})

	t.Run("bodies", func(t *testing.T) {
		big := `{"game":"` + strings.Repeat("x", 2<<20) + `"}`
		code, body := start(big)
		refused("a 2 MiB body", code, body, http.StatusRequestEntityTooLarge)
		code, body = post(t, base, "/parley.referee.v1.RefereeService/StartMatch", io.MultiReader(strings.NewReader(big)))
		refused("a 2 MiB chunked body", code, body, http.StatusRequestEntityTooLarge)
		// The bot link's stream is unbounded as a whole; a plain JSON call to its path is not.
		code, body = post(t, base, "/parley.botlink.v1.BotLinkService/Connect", io.MultiReader(strings.NewReader(big)))
		refused("a 2 MiB chunked JSON body to the bot link's path", code, body, http.StatusRequestEntityTooLarge)
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write([]byte(`{"game":"`))
		zw.Write(bytes.Repeat([]byte("x"), 16<<20))
		zw.Write([]byte(`"}`))
		zw.Close()
		code, body = post(t, base, "/parley.referee.v1.RefereeService/StartMatch", &z, "Content-Encoding", "gzip")
		refused("a gzip body inflating to 16 MiB", code, body, http.StatusRequestEntityTooLarge)
		code, body = start(`{"game":"ultimatum","agents":["builtin:fair","builtin:random"],"params":{"ultimatum":{"totl":10}}}`)
		refused("a misspelt parameter", code, body, http.StatusBadRequest, "totl")
	})

	t.Run("teams", func(t *testing.T) {
		code, body := teamCall(t, base, token, "/parley.registry.v1.RegistryService/ListBots", `{"team":"rivals"}`)
		refused("a team listing another's bots", code, body, http.StatusForbidden)
		if code, body := teamCall(t, base, other, "/parley.registry.v1.RegistryService/ListBots", `{}`); code != http.StatusOK {
			t.Errorf("a team listing its own bots: %d %s", code, body)
		}
		saw429 := false
		for i := range 200 {
			code, _ := teamCall(t, base, fmt.Sprintf("pt_guess%d", i), "/parley.registry.v1.RegistryService/ListBots", `{}`)
			if code == http.StatusTooManyRequests {
				saw429 = true
				break
			}
			if code != http.StatusUnauthorized {
				t.Fatalf("a guessed token: %d", code)
			}
		}
		if !saw429 {
			t.Error("200 guessed tokens from one address and never a 429")
		}
		// The relay to a team's own dial-out bot checks tokens too, under the same bound.
		saw429 = false
		for i := range 200 {
			code, _ := teamCall(t, base, fmt.Sprintf("pt_relayguess%d", i), "/parley.agent.v1.AgentService/Describe", `{}`)
			if code == http.StatusTooManyRequests {
				saw429 = true
				break
			}
			if code != http.StatusUnauthorized {
				t.Fatalf("a guessed token at the relay: %d", code)
			}
		}
		if !saw429 {
			t.Error("200 guessed tokens at the relay from one address and never a 429")
		}
	})

	t.Run("hostile bots end in explained outcomes", func(t *testing.T) {
		for _, kind := range []hostile.Kind{hostile.MessageFlood, hostile.NoteFlood, hostile.Crash} {
			bot, err := hostile.Start(kind)
			if err != nil {
				t.Fatal(err)
			}
			defer bot.Close()
			code, body := start(fmt.Sprintf(`{"game":"ultimatum","agents":[%q,"builtin:fair"],"params":{"ultimatum":{"maxTurns":200}},"limits":{"moveTimeout":"5s"}}`, bot.Address()),
				"Authorization", "Bearer "+hostileAdmin)
			if code != http.StatusOK {
				t.Fatalf("%s: %d %s", kind, code, body)
			}
			resp := &refereev1.StartMatchResponse{}
			if err := protojson.Unmarshal([]byte(body), resp); err != nil {
				t.Fatal(err)
			}
			events := endedRecord(t, base, resp.GetMatchId())
			end := events[len(events)-1].GetMatchEnded().GetOutcome()
			if end.GetSummary() == "" || end.GetCause() == matchv1.EndCause_END_CAUSE_UNSPECIFIED {
				t.Errorf("%s: an unexplained ending %v", kind, end)
			}
			for _, ev := range events {
				if f := ev.GetAgentFault(); f != nil && f.GetSeat() == 1 {
					t.Errorf("%s: the honest agent was faulted: %v", kind, f)
				}
			}
		}
		// Bots that do not even describe themselves are refused before any match.
		for _, kind := range []hostile.Kind{hostile.Garbage, hostile.Huge, hostile.HTTP1, hostile.Noise} {
			bot, err := hostile.Start(kind)
			if err != nil {
				t.Fatal(err)
			}
			defer bot.Close()
			code, body := start(fmt.Sprintf(`{"game":"ultimatum","agents":[%q,"builtin:fair"]}`, bot.Address()), "Authorization", "Bearer "+hostileAdmin)
			refused(string(kind)+" bot", code, body, http.StatusBadRequest, "unreachable or not a Parley agent")
		}
		// One whose Describe forges lines is refused for the games it claims, and the refusal
		// quotes what it said, on one line.
		bot, err := hostile.Start(hostile.ForgedDescribe)
		if err != nil {
			t.Fatal(err)
		}
		defer bot.Close()
		code, body := start(fmt.Sprintf(`{"game":"ultimatum","agents":[%q,"builtin:fair"]}`, bot.Address()), "Authorization", "Bearer "+hostileAdmin)
		refused("a forged Describe", code, body, http.StatusBadRequest, "not ultimatum")
		var e struct{ Message string }
		if err := json.Unmarshal([]byte(body), &e); err != nil || strings.ContainsAny(e.Message, "\n\r") || len(e.Message) > 1000 {
			t.Errorf("the refusal of a forged Describe carries its lines: %q (%v)", e.Message, err)
		}
	})

	t.Run("quotas", func(t *testing.T) {
		// A burst from one address is refused by its start quota (429) or, past the address's
		// connection cap, at the edge before its request is read (the client sees its
		// connection closed: edgeClosed); another address is answered meanwhile.
		const edgeClosed = -1
		attacker, visitor := clientFrom(loopback(7)), clientFrom(loopback(8))
		burst := func() int {
			req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(base, "/")+"/parley.referee.v1.RefereeService/StartMatch",
				strings.NewReader(`{"game":"ultimatum","agents":["builtin:fair","builtin:random"]}`))
			if err != nil {
				t.Error(err)
				return 0
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := attacker.Do(req)
			if err != nil {
				return edgeClosed
			}
			defer resp.Body.Close()
			io.Copy(io.Discard, resp.Body)
			return resp.StatusCode
		}
		var wg sync.WaitGroup
		codes := make([]int, 120)
		for i := range codes {
			wg.Go(func() { codes[i] = burst() })
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		listErr := callFrom(ctx, visitor, base, "/parley.referee.v1.RefereeService/ListGames", `{}`, false, &refereev1.ListGamesResponse{})
		wg.Wait()
		counts := map[int]int{}
		for _, c := range codes {
			counts[c]++
		}
		if counts[http.StatusTooManyRequests]+counts[edgeClosed] == 0 || counts[http.StatusOK] > 40 {
			t.Errorf("120 starts in a burst from one address: %v (%d: closed at the edge); want most refused", counts, edgeClosed)
		}
		if listErr != nil {
			t.Errorf("ListGames from another address during the burst: %v", listErr)
		}
	})

	t.Run("seat reservations count as starts", func(t *testing.T) {
		// More reservations than the hub holds seats: one address must not take them all.
		counts := map[int]int{}
		for range 300 {
			code, _ := post(t, base, "/api/v1/seats", strings.NewReader(`{}`))
			counts[code]++
		}
		if counts[http.StatusCreated] > 45 || counts[http.StatusTooManyRequests] < 250 {
			t.Errorf("300 seat reservations from one address: %v; want all but the burst refused with 429", counts)
		}
		if code, body := post(t, base, "/api/v1/seats", strings.NewReader(`{}`), "Authorization", "Bearer "+hostileAdmin); code != http.StatusCreated {
			t.Errorf("the organiser reserving a seat after the flood: %d %s", code, body)
		}
	})

	rss := peakRSS(t, up.cmd.Process.Pid)
	t.Logf("peak RSS of parley up over the hostile suite: %.0f MiB", rss)
	if rss > 1024 {
		t.Errorf("peak RSS %.0f MiB: the hostile suite made parley up grow past 1 GiB", rss)
	}
}

// endedRecord is a match's whole record, as the organiser reads it, once it has ended.
func endedRecord(t *testing.T, base, id string) []*eventsv1.MatchEvent {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		code, body := post(t, base, "/parley.referee.v1.RefereeService/GetMatch", strings.NewReader(fmt.Sprintf(`{"matchId":%q}`, id)))
		if code == http.StatusOK {
			resp := &refereev1.GetMatchResponse{}
			if err := protojson.Unmarshal([]byte(body), resp); err != nil {
				t.Fatal(err)
			}
			if resp.GetEnded() {
				return resp.GetEvents()
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("match %s did not end: %d %s", id, code, body)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
