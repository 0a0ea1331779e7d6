package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
)

// apiCall posts a Connect-protocol JSON call to a gateway and decodes the answer into out,
// failing the test unless it is 200.
func apiCall(t *testing.T, base, procedure, body string, out proto.Message) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if err := callAPI(ctx, base, procedure, body, out); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
}

// pollUntil calls cond until it holds, within waitTimeout.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestUpRestart runs `parley up`, plays a match and a small tournament through the HTTP API,
// stops it with SIGINT, starts it again on the same data directory, and finds the match, the
// tournament and the leaderboard still there.
func TestUpRestart(t *testing.T) {
	dir := t.TempDir()
	args := []string{"up", "--data-dir", dir, "--listen", "127.0.0.1:0", "--referee-listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0"}

	up := startProc(t, "", parleyBin, args...)
	url := up.waitLine("Parley is up: ")
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("URL %q", url)
	}
	started := &refereev1.StartMatchResponse{}
	apiCall(t, url, "/parley.referee.v1.RefereeService/StartMatch",
		`{"game":"ultimatum","agents":["builtin:fair","builtin:random"],"labels":["fair","rnd"],"seed":"3"}`, started)
	kept := fmt.Sprintf(`{"matchId":%q}`, started.GetMatchId())
	tstart := &tournamentv1.StartTournamentResponse{}
	apiCall(t, url, "/parley.tournament.v1.TournamentService/StartTournament",
		`{"tournamentId":"kept-cup","game":"ultimatum","entrants":[{"address":"builtin:fair"},{"address":"builtin:random"}],"gamesPerAssignment":1}`, tstart)
	var before *analyticsv1.GetLeaderboardResponse
	pollUntil(t, "the match and the tournament in the leaderboard", func() bool {
		before = &analyticsv1.GetLeaderboardResponse{}
		apiCall(t, url, "/parley.analytics.v1.AnalyticsService/GetLeaderboard", `{"filter":{"game":"ultimatum"}}`, before)
		return before.GetMatches() == 3
	})
	record := &refereev1.GetMatchResponse{}
	apiCall(t, url, "/parley.referee.v1.RefereeService/GetMatch", kept, record)
	resp, err := http.Get(url + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(metrics), `parley_matches_finished_total{`) {
		t.Errorf("/metrics has no finished matches:\n%s", metrics)
	}
	checkSecondUp(t, dir, args, up, url)
	if code, took := up.interrupt(); code != 0 {
		t.Fatalf("parley up exited %d after SIGINT (%s)\n%s", code, took, up.output())
	}

	again := startProc(t, "", parleyBin, args...)
	url = again.waitLine("Parley is up: ")
	after := &refereev1.GetMatchResponse{}
	apiCall(t, url, "/parley.referee.v1.RefereeService/GetMatch", kept, after)
	if !after.GetEnded() || !proto.Equal(after, record) {
		t.Errorf("the match after the restart:\n got  %v\n want %v", after, record)
	}
	list := &refereev1.ListMatchesResponse{}
	apiCall(t, url, "/parley.referee.v1.RefereeService/ListMatches", `{}`, list)
	if len(list.GetMatches()) != 3 {
		t.Errorf("%d matches listed after the restart, want 3: %v", len(list.GetMatches()), list)
	}
	lb := &analyticsv1.GetLeaderboardResponse{}
	apiCall(t, url, "/parley.analytics.v1.AnalyticsService/GetLeaderboard", `{"filter":{"game":"ultimatum"}}`, lb)
	if !proto.Equal(lb, before) {
		t.Errorf("leaderboard after the restart:\n got  %v\n want %v", lb, before)
	}
	tour := &tournamentv1.GetTournamentResponse{}
	apiCall(t, url, "/parley.tournament.v1.TournamentService/GetTournament", `{"tournamentId":"kept-cup"}`, tour)
	if !tour.GetStandings().GetComplete() || tour.GetStandings().GetEnded() != 2 {
		t.Errorf("tournament after the restart: %v", tour.GetStandings())
	}
	if code, _ := again.interrupt(); code != 0 {
		t.Fatalf("second parley up exited %d\n%s", code, again.output())
	}
	if out := again.output(); !strings.Contains(out, "Parley stopped") {
		t.Errorf("no goodbye line:\n%s", out)
	}
}

// TestGatewayWithoutReferee: `parley gateway` answers a JSON error with 503 for whatever it
// would ask a referee that cannot be reached, and goes on serving.
func TestGatewayWithoutReferee(t *testing.T) {
	gw := startProc(t, "", parleyBin, "gateway", "--listen", "127.0.0.1:0", "--referee", "127.0.0.1:1", "--analytics", "")
	addr := gw.waitLine("gateway listening on ")
	base := strings.Fields(addr)[0]
	base = strings.TrimSuffix(base, ",")
	for _, method := range []string{"ListGames", "ListMatches", "StartMatch"} {
		req, _ := http.NewRequest(http.MethodPost, base+"/parley.referee.v1.RefereeService/"+method, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), `"code":"unavailable"`) {
			t.Errorf("%s without a referee: %d %s", method, resp.StatusCode, body)
		}
	}
	if code, _ := gw.interrupt(); code != 0 {
		t.Fatalf("parley gateway exited %d\n%s", code, gw.output())
	}
}

// checkSecondUp runs a second `parley up` on the data directory of the running first one: it
// stops at once with one line naming the first (its pid and URL), and the first is untouched:
// its nats.url stays, its NATS server keeps serving `parley admin`, and its store was never
// opened by the second (whose output has no NATS line; the embedded server of the first would
// warn of a store opened twice). The restart that follows shows the directory free again once
// the first has stopped.
func checkSecondUp(t *testing.T, dir string, args []string, first *proc, url string) {
	t.Helper()
	natsURL, err := os.ReadFile(filepath.Join(dir, "nats.url"))
	if err != nil {
		t.Fatal(err)
	}
	second := runParley(t, nil, append(args, "--log-level", "debug")...)
	if second.code == 0 {
		t.Fatalf("a second parley up on the same directory ran:\n%s", second)
	}
	lines := strings.Split(strings.TrimSpace(second.stderr), "\n")
	want := fmt.Sprintf("pid %d at %s", first.cmd.Process.Pid, url)
	if len(lines) != 1 || !strings.Contains(lines[0], dir) || !strings.Contains(lines[0], want) || second.stdout != "" {
		t.Errorf("second parley up said, want one line naming %s and %q:\n%s", dir, want, second)
	}
	if strings.Contains(second.stderr, "nats") || strings.Contains(second.stderr, "JetStream") {
		t.Errorf("the second parley up started NATS:\n%s", second)
	}
	if after, err := os.ReadFile(filepath.Join(dir, "nats.url")); err != nil || string(after) != string(natsURL) {
		t.Errorf("nats.url after the second parley up = %q (%v), want %q kept", after, err, natsURL)
	}
	if r := runParley(t, nil, "admin", "team", "list", "--data-dir", dir); r.code != 0 {
		t.Errorf("parley admin cannot reach the first parley up any more:\n%s", r)
	}
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("the first parley up stopped serving: %v", err)
	}
	resp.Body.Close()
	for _, l := range strings.Split(first.stderr.String(), "\n") {
		if strings.Contains(l, "component=nats-server") {
			t.Errorf("the first parley up's NATS server complained: %s", l)
		}
	}
}
