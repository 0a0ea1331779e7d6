package roles_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/sdk/sdktest"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/gen/go/parley/referee/v1/refereev1connect"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/referee/record"
)

// TestAPI walks the HTTP/JSON API as curl would: games, a match started and read back in each
// form, the listing, the analytics leaderboard and export.
func TestAPI(t *testing.T) {
	f := start(t)
	games := &refereev1.ListGamesResponse{}
	f.mustCall(t, "/parley.referee.v1.RefereeService/ListGames", `{}`, games)
	if len(games.GetGames()) < 8 || games.GetGames()[0].GetName() == "" {
		t.Fatalf("ListGames: %v", games)
	}

	id := f.organise(t, `{"game":"ultimatum","agents":["builtin:fair","builtin:random"],"labels":["fair","rnd"],"seed":"7","matchId":"api-1"}`)
	if id != "api-1" {
		t.Fatalf("match id %q", id)
	}
	full := f.fullRecord(t, id)
	spectator := record.RedactAll(full, record.Spectator)

	// GetMatch over the gateway is the spectator's view: no seed.
	got := &refereev1.GetMatchResponse{}
	f.mustCall(t, "/parley.referee.v1.RefereeService/GetMatch", `{"matchId":"api-1"}`, got)
	if !got.GetEnded() {
		t.Error("GetMatch: not ended")
	}
	sameEvents(t, "GetMatch", got.GetEvents(), spectator)
	if got.GetEvents()[0].GetMatchStarted().GetSeed() != 0 || full[0].GetMatchStarted().GetSeed() != 7 {
		t.Error("GetMatch shows the seed")
	}
	if l := got.GetEvents()[0].GetMatchStarted().GetSeats()[1].GetLabel(); l != "rnd" {
		t.Errorf("seat 1 label %q, want rnd", l)
	}

	// The record as JSON lines, and the same through the live stream of an ended match.
	status, ctype, data := f.get(t, "/api/v1/matches/api-1/record")
	if status != http.StatusOK || !strings.HasPrefix(ctype, "application/jsonl") {
		t.Fatalf("record: %d %q %s", status, ctype, data)
	}
	sameEvents(t, "record", decodeLines(t, data), spectator)
	s, status, data := f.openStream(t, "/api/v1/matches/api-1/events")
	if s == nil {
		t.Fatalf("events: %d %s", status, data)
	}
	sameEvents(t, "events", s.matchEvents(t), spectator)
	s, _, _ = f.openStream(t, "/api/v1/matches/api-1/events?from_seq=3")
	sameEvents(t, "events from 3", s.matchEvents(t), spectator[2:])
	s, _, _ = f.openStream(t, "/api/v1/matches/api-1/events", "Last-Event-ID", "4")
	sameEvents(t, "events after Last-Event-ID 4", s.matchEvents(t), spectator[4:])

	// The listing.
	list := &refereev1.ListMatchesResponse{}
	f.mustCall(t, "/parley.referee.v1.RefereeService/ListMatches", `{"state":"MATCH_STATE_ENDED","game":"ultimatum"}`, list)
	if len(list.GetMatches()) != 1 || list.GetMatches()[0].GetMatchId() != "api-1" || list.GetMatches()[0].GetOutcome() == nil ||
		list.GetMatches()[0].GetStarted() == nil || list.GetMatches()[0].GetEnded() == nil {
		t.Fatalf("ListMatches: %v", list)
	}
	f.mustCall(t, "/parley.referee.v1.RefereeService/ListMatches", `{"state":"MATCH_STATE_RUNNING"}`, list)
	if len(list.GetMatches()) != 0 {
		t.Fatalf("running matches: %v", list)
	}

	// Analytics, once its consumer has the match: rated under the labels ("fair" only repeats
	// builtin:fair's own name, so it is fair@1, the one identity of that agent).
	lb := &analyticsv1.GetLeaderboardResponse{}
	waitFor(t, "the analytics row", func() bool {
		f.mustCall(t, "/parley.analytics.v1.AnalyticsService/GetLeaderboard", `{"filter":{"game":"ultimatum"}}`, lb)
		return lb.GetMatches() == 1
	})
	var agents []string
	for _, e := range lb.GetEntries() {
		agents = append(agents, e.GetAgent())
	}
	if fmt.Sprint(agents) != "[fair@1 rnd]" && fmt.Sprint(agents) != "[rnd fair@1]" {
		t.Errorf("leaderboard agents %v, want fair@1 and the label rnd", agents)
	}
	status, ctype, data = f.get(t, "/api/v1/exports/matches.csv?game=ultimatum")
	if status != http.StatusOK || !strings.HasPrefix(ctype, "text/csv") || !strings.Contains(string(data), "api-1,") {
		t.Errorf("CSV export: %d %q %s", status, ctype, data)
	}
	status, ctype, data = f.get(t, "/api/v1/exports/matches.jsonl")
	if status != http.StatusOK || !strings.Contains(ctype, "jsonl") || !strings.Contains(string(data), `"api-1"`) {
		t.Errorf("JSONL export: %d %q %s", status, ctype, data)
	}
	status, _, data = f.get(t, "/healthz")
	if status != http.StatusOK || !strings.Contains(string(data), "ok") {
		t.Errorf("healthz: %d %s", status, data)
	}
}

// TestGRPCClient: the same handler serves gRPC (HTTP/2 without TLS) to a generated client.
func TestGRPCClient(t *testing.T) {
	f := start(t)
	client := refereev1connect.NewRefereeServiceClient(&http.Client{Transport: h2cTransport()}, f.url, connect.WithGRPC())
	resp, err := client.ListGames(context.Background(), connect.NewRequest(&refereev1.ListGamesRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Msg.GetGames()) == 0 {
		t.Fatal("no games over gRPC")
	}
	_, err = client.GetMatch(context.Background(), connect.NewRequest(&refereev1.GetMatchRequest{MatchId: "nope"}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("GetMatch of an unknown match over gRPC: %v", err)
	}
}

func h2cTransport() *http.Transport {
	tr := &http.Transport{}
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true)
	return tr
}

// TestLateJoiner: viewers who join a running match at its start, after a few events, and
// after reconnecting each get every event once, in order, then the live ones, and the stream
// ends after match_ended.
func TestLateJoiner(t *testing.T) {
	f := start(t)
	p1, p2 := sdktest.Addr(t, slowAgent(60*time.Millisecond, 1)), sdktest.Addr(t, slowAgent(60*time.Millisecond, 2))
	id := f.startMatch(t, fmt.Sprintf(`{"game":"ultimatum","agents":[%q,%q],"params":{"ultimatum":{"maxTurns":8}}}`, p1, p2))

	early, _, data := f.openStream(t, "/api/v1/matches/"+id+"/events")
	if early == nil {
		t.Fatalf("early viewer: %s", data)
	}
	waitFor(t, "three events", func() bool {
		events, err := bus.ReadMatch(context.Background(), f.bus.JetStream(), id)
		return err == nil && len(events) >= 3
	})
	late, _, data := f.openStream(t, "/api/v1/matches/"+id+"/events")
	if late == nil {
		t.Fatalf("late viewer: %s", data)
	}
	var wg sync.WaitGroup
	var earlyEvents, lateEvents []*eventsv1.MatchEvent
	wg.Go(func() { earlyEvents = early.matchEvents(t) })
	wg.Go(func() { lateEvents = late.matchEvents(t) })
	wg.Wait()
	if t.Failed() {
		return
	}
	full := f.fullRecord(t, id)
	if len(full) < 8 {
		t.Fatalf("the match was too short to join late: %d events", len(full))
	}
	want := record.RedactAll(full, record.Spectator)
	sameEvents(t, "early viewer", earlyEvents, want)
	sameEvents(t, "late viewer", lateEvents, want)
	// Between the events, the viewer that followed from the start was told whom the match
	// waited for: each seat asked on a turn answered it then (its action is recorded).
	answered := map[[2]int32]bool{}
	for _, ev := range full {
		if a := ev.GetActionTaken(); a != nil {
			answered[[2]int32{a.GetSeat(), ev.GetTurn()}] = true
		}
	}
	if len(early.waiting) == 0 {
		t.Error("the early viewer was never told whom the match waited for")
	}
	for _, w := range early.waiting {
		if !answered[[2]int32{w.GetSeat(), w.GetTurn()}] {
			t.Errorf("told that seat %d was asked on turn %d, which the record does not show it answering", w.GetSeat(), w.GetTurn())
		}
	}
	for i, ev := range lateEvents {
		if ev.GetSeq() != uint64(i+1) {
			t.Fatalf("late viewer: event %d has seq %d", i+1, ev.GetSeq())
		}
	}
}

// TestStreamWaitsForStart: a stream opened for a match id before its first event waits for
// it; one for an id that never starts is 404 after the grace period.
func TestStreamWaitsForStart(t *testing.T) {
	f := start(t)
	p1, p2 := sdktest.Addr(t, slowAgent(0, 1)), sdktest.Addr(t, slowAgent(0, 2))
	type opened struct {
		s    *stream
		code int
	}
	ch := make(chan opened, 1)
	go func() {
		s, code, _ := f.openStream(t, "/api/v1/matches/soon/events")
		ch <- opened{s, code}
	}()
	time.Sleep(300 * time.Millisecond)
	f.organise(t, fmt.Sprintf(`{"game":"ultimatum","agents":[%q,%q],"matchId":"soon"}`, p1, p2))
	o := <-ch
	if o.s == nil {
		t.Fatalf("stream opened before the match started: status %d", o.code)
	}
	sameEvents(t, "soon", o.s.matchEvents(t), record.RedactAll(f.fullRecord(t, "soon"), record.Spectator))

	_, status, data := f.openStream(t, "/api/v1/matches/never/events")
	wantError(t, "stream of a match that never starts", status, data, http.StatusNotFound, "not_found")
}

// TestRedaction plays whole matches of games with private parts (private talk, draws for one
// seat, private parameters) between agents that fill every private field, and checks what
// spectators and each seat get through every route.
func TestRedaction(t *testing.T) {
	f := start(t)
	cases := []struct {
		game   string
		seats  int
		params string
	}{
		{"coalition", 3, `{}`},
		{"buysell", 2, `{"buysell":{"draw":true}}`},
		{"dealornodeal", 2, `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.game, func(t *testing.T) {
			var agents []string
			for i := range tc.seats {
				agents = append(agents, fmt.Sprintf("%q", sdktest.Addr(t, secretAgent(i, uint64(i)))))
			}
			id := f.startMatch(t, fmt.Sprintf(`{"game":%q,"agents":[%s],"params":%s}`, tc.game, strings.Join(agents, ","), tc.params))
			full := f.fullRecord(t, id)
			var all strings.Builder
			for _, ev := range full {
				all.WriteString(protojson.Format(ev))
			}
			if !strings.Contains(all.String(), "SECRET-") {
				t.Fatal("the agents' secrets are not in the record")
			}
			check := func(who string, got []*eventsv1.MatchEvent, viewer record.Viewer) {
				t.Helper()
				sameEvents(t, who, got, record.RedactAll(full, viewer))
				seat, isSeat := viewer.Seat()
				for _, ev := range got {
					text := protojson.Format(ev)
					if !isSeat && strings.Contains(text, "TALK") {
						t.Fatalf("%s sees private talk: %s", who, text)
					}
					for s := range tc.seats {
						if (!isSeat || int32(s) != seat) && strings.Contains(text, fmt.Sprintf("SECRET-%d", s)) {
							t.Fatalf("%s sees seat %d's secret: %s", who, s, text)
						}
					}
				}
			}
			s, _, _ := f.openStream(t, "/api/v1/matches/"+id+"/events")
			check("spectator stream", s.matchEvents(t), record.Spectator)
			_, _, data := f.get(t, "/api/v1/matches/"+id+"/record")
			check("spectator record", decodeLines(t, data), record.Spectator)
			got := &refereev1.GetMatchResponse{}
			f.mustCall(t, "/parley.referee.v1.RefereeService/GetMatch", fmt.Sprintf(`{"matchId":%q}`, id), got)
			check("GetMatch", got.GetEvents(), record.Spectator)
			for seat := range tc.seats {
				token := fmt.Sprintf("seat-%d-%s", seat, id)
				s, status, data := f.openStream(t, fmt.Sprintf("/api/v1/matches/%s/events?seat=%d&token=%s", id, seat, token))
				if s == nil {
					t.Fatalf("seat %d stream: %d %s", seat, status, data)
				}
				check(fmt.Sprintf("seat %d stream", seat), s.matchEvents(t), record.SeatViewer(int32(seat)))
				_, _, data = f.get(t, fmt.Sprintf("/api/v1/matches/%s/record?seat=%d", id, seat), "Authorization", "Bearer "+token)
				check(fmt.Sprintf("seat %d record", seat), decodeLines(t, data), record.SeatViewer(int32(seat)))
			}
			// A seat view without that seat's token is refused.
			_, status, data := f.openStream(t, fmt.Sprintf("/api/v1/matches/%s/events?seat=0&token=seat-1-%s", id, id))
			wantError(t, "seat 0 with seat 1's token", status, data, http.StatusForbidden, "permission_denied")
			status, _, data = f.get(t, fmt.Sprintf("/api/v1/matches/%s/record?seat=1", id))
			wantError(t, "seat view without a token", status, data, http.StatusForbidden, "permission_denied")
		})
	}

	// A match that reveals its private parts shows them to spectators, not to another seat.
	// Only the organiser may reveal a dialled agent's (attack 8: anyone could).
	a, b := sdktest.Addr(t, secretAgent(0, 9)), sdktest.Addr(t, secretAgent(1, 9))
	reveal := fmt.Sprintf(`{"game":"buysell","agents":[%q,%q],"params":{"buysell":{"draw":true}},"revealPrivate":true}`, a, b)
	status, data := f.call(t, "/parley.referee.v1.RefereeService/StartMatch", reveal)
	wantError(t, "a spectator revealing dialled agents' private parts", status, data, http.StatusBadRequest, "invalid_argument")
	if !strings.Contains(string(data), "only the organiser may reveal") {
		t.Errorf("the refusal does not say who may reveal: %s", data)
	}
	id := f.organise(t, reveal)
	full := f.fullRecord(t, id)
	s, _, _ := f.openStream(t, "/api/v1/matches/"+id+"/events")
	sameEvents(t, "revealed to spectators", s.matchEvents(t), full)
	s, _, _ = f.openStream(t, fmt.Sprintf("/api/v1/matches/%s/events?seat=1&token=seat-1-%s", id, id))
	for _, ev := range s.matchEvents(t) {
		if strings.Contains(protojson.Format(ev), "SECRET-0") {
			t.Fatalf("seat 1 sees seat 0's secret in a revealed match: %v", ev)
		}
	}
}

// TestSeatViewsWithoutAuthorizer: a gateway with no seat authorizer refuses every seat view.
func TestSeatViewsWithoutAuthorizer(t *testing.T) {
	f := start(t, func(c *roles.Config) { c.Gateway.Seats = nil })
	id := f.startMatch(t, `{"game":"ultimatum","agents":["builtin:fair","builtin:fair"]}`)
	f.fullRecord(t, id)
	status, _, data := f.get(t, fmt.Sprintf("/api/v1/matches/%s/record?seat=0&token=seat-0-%s", id, id))
	wantError(t, "seat view", status, data, http.StatusForbidden, "permission_denied")
}

// TestBadRequests: every bad request gets a JSON error with the fitting status.
func TestBadRequests(t *testing.T) {
	f := start(t, func(c *roles.Config) { c.Gateway.MaxStreamsPerClient = 2; c.Gateway.MaxBodyBytes = 4096 })
	rpc := []struct {
		name, procedure, body string
		status                int
		code                  string
	}{
		{"malformed JSON", "/parley.referee.v1.RefereeService/StartMatch", `{"game":`, 400, "invalid_argument"},
		{"unknown field", "/parley.referee.v1.RefereeService/StartMatch", `{"gme":"ultimatum"}`, 400, "invalid_argument"},
		{"unknown game", "/parley.referee.v1.RefereeService/StartMatch", `{"game":"chess","agents":["builtin:fair","builtin:fair"]}`, 400, "invalid_argument"},
		{"wrong number of agents", "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["builtin:fair"]}`, 400, "invalid_argument"},
		{"bad agent", "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["builtin:fair","builtin:nobody"]}`, 400, "invalid_argument"},
		{"labels for some seats", "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["builtin:fair","builtin:fair"],"labels":["a"]}`, 400, "invalid_argument"},
		{"bad match id to start", "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["builtin:fair","builtin:fair"],"matchId":"a.b"}`, 400, "invalid_argument"},
		{"an agent for another game", "/parley.referee.v1.RefereeService/StartMatch", `{"game":"buysell","agents":["builtin:fair","builtin:concede"]}`, 400, "invalid_argument"},
		{"bad match id", "/parley.referee.v1.RefereeService/GetMatch", `{"matchId":"a.b"}`, 400, "invalid_argument"},
		{"unknown match", "/parley.referee.v1.RefereeService/GetMatch", `{"matchId":"nope"}`, 404, "not_found"},
		{"bad page token", "/parley.referee.v1.RefereeService/ListMatches", `{"pageToken":"nope"}`, 400, "invalid_argument"},
		{"oversized body", "/parley.referee.v1.RefereeService/StartMatch", `{"game":"` + strings.Repeat("x", 5000) + `"}`, 413, "resource_exhausted"},
		{"unknown method", "/parley.referee.v1.RefereeService/Nope", `{}`, 404, "not_found"},
		{"unknown tournament", "/parley.tournament.v1.TournamentService/GetTournament", `{"tournamentId":"nope"}`, 404, "not_found"},
		{"tournament of an unknown game", "/parley.tournament.v1.TournamentService/StartTournament", `{"game":"chess","entrants":[{"address":"builtin:fair"}]}`, 400, "invalid_argument"},
		{"tournament without agents", "/parley.tournament.v1.TournamentService/StartTournament", `{"game":"ultimatum"}`, 400, "invalid_argument"},
		{"tournament with twin labels", "/parley.tournament.v1.TournamentService/StartTournament", `{"game":"ultimatum","entrants":[{"address":"builtin:fair"},{"address":"builtin:fair"}]}`, 400, "invalid_argument"},
		{"a language model without leave", "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["builtin:fair","builtin:llm?model=m&base_url=http://x&api_key_env=HOME"]}`, 400, "invalid_argument"},
		{"a language model in a tournament", "/parley.tournament.v1.TournamentService/StartTournament", `{"game":"ultimatum","entrants":[{"address":"builtin:fair"},{"address":"builtin:llm?model=m"}]}`, 400, "invalid_argument"},
		{"leaderboard without a game", "/parley.analytics.v1.AnalyticsService/GetLeaderboard", `{}`, 400, "invalid_argument"},
	}
	for _, tc := range rpc {
		t.Run(tc.name, func(t *testing.T) {
			status, data := f.call(t, tc.procedure, tc.body)
			if tc.code == "not_found" && tc.name == "unknown method" {
				if status != http.StatusNotFound {
					t.Errorf("status %d, want 404: %s", status, data)
				}
				return
			}
			wantError(t, tc.name, status, data, tc.status, tc.code)
		})
	}
	get := []struct {
		name, path string
		status     int
		code       string
	}{
		{"record of an unknown match", "/api/v1/matches/nope/record", 404, "not_found"},
		{"record of a bad id", "/api/v1/matches/a.b/record", 400, "invalid_argument"},
		{"bad seat", "/api/v1/matches/x/record?seat=minus", 400, "invalid_argument"},
		{"bad from_seq", "/api/v1/matches/x/events?from_seq=z", 400, "invalid_argument"},
		{"unknown export", "/api/v1/exports/matches.xml", 404, "not_found"},
		{"bad exclude_void", "/api/v1/exports/matches.csv?exclude_void=maybe", 400, "invalid_argument"},
		{"standings of an unknown tournament", "/api/v1/tournaments/nope/standings", 404, "not_found"},
		{"unknown API route", "/api/v1/nope", 404, "not_found"},
	}
	// A match id already requested is refused, whether its match runs yet or not.
	f.organise(t, `{"game":"ultimatum","agents":["builtin:fair","builtin:fair"],"matchId":"twice"}`)
	status, data := f.callAs(t, organiserToken, "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["builtin:fair","builtin:fair"],"matchId":"twice"}`)
	wantError(t, "a match id taken", status, data, http.StatusConflict, "already_exists")
	for _, tc := range get {
		t.Run(tc.name, func(t *testing.T) {
			status, ctype, data := f.get(t, tc.path)
			if !strings.HasPrefix(ctype, "application/json") {
				t.Errorf("content type %q", ctype)
			}
			wantError(t, tc.name, status, data, tc.status, tc.code)
		})
	}

	// Too many streams from one address: the third is refused while two are open.
	p1, p2 := sdktest.Addr(t, slowAgent(300*time.Millisecond, 1)), sdktest.Addr(t, slowAgent(300*time.Millisecond, 2))
	id := f.startMatch(t, fmt.Sprintf(`{"game":"ultimatum","agents":[%q,%q]}`, p1, p2))
	var open []*stream
	for range 2 {
		s, status, data := f.openStream(t, "/api/v1/matches/"+id+"/events")
		if s == nil {
			t.Fatalf("stream: %d %s", status, data)
		}
		<-s.events // the stream is open: its first event came
		open = append(open, s)
	}
	_, status, data = f.openStream(t, "/api/v1/matches/"+id+"/events")
	wantError(t, "third stream", status, data, http.StatusTooManyRequests, "resource_exhausted")
	status, data = f.callStream(t, "/parley.referee.v1.RefereeService/StreamMatchEvents", fmt.Sprintf(`{"matchId":%q}`, id))
	if status != http.StatusOK || !strings.Contains(string(data), "resource_exhausted") {
		t.Errorf("third stream as an RPC: %d %q, want the stream to end with resource_exhausted", status, data)
	}
	open[0].close()
	waitFor(t, "a stream slot", func() bool {
		s, _, _ := f.openStream(t, "/api/v1/matches/"+id+"/events")
		if s == nil {
			return false
		}
		s.close()
		return true
	})
}

// callStream makes a Connect server-streaming call with a JSON request and returns the status
// and the raw enveloped answer.
func (f *fixture) callStream(t *testing.T, procedure, body string) (int, []byte) {
	t.Helper()
	env := make([]byte, 5+len(body))
	env[1], env[2], env[3], env[4] = byte(len(body)>>24), byte(len(body)>>16), byte(len(body)>>8), byte(len(body))
	copy(env[5:], body)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, f.url+procedure, strings.NewReader(string(env)))
	req.Header.Set("Content-Type", "application/connect+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, []byte(b.String())
}

// TestTournamentStandings starts a tournament through the API and follows its standings live
// to the end.
func TestTournamentStandings(t *testing.T) {
	f := start(t)
	body := `{"tournamentId":"cup","game":"ultimatum","entrants":[{"address":"builtin:fair"},{"label":"rnd","address":"builtin:random"}],"gamesPerAssignment":2,"seed":"5"}`
	resp := &tournamentv1.StartTournamentResponse{}
	f.mustCall(t, "/parley.tournament.v1.TournamentService/StartTournament", body, resp)
	if resp.GetTournamentId() != "cup" || resp.GetMatches() != 4 {
		t.Fatalf("StartTournament: %v", resp)
	}
	s, status, data := f.openStream(t, "/api/v1/tournaments/cup/standings")
	if s == nil {
		t.Fatalf("standings: %d %s", status, data)
	}
	var last *analyticsv1.Standings
	var seen []uint32
	var wasPending bool
	for ev := range s.events {
		if ev.event == "end" {
			break
		}
		if ev.event != "standings" {
			t.Fatalf("event %q: %s", ev.event, ev.data)
		}
		last = &analyticsv1.Standings{}
		if err := protojson.Unmarshal([]byte(ev.data), last); err != nil {
			t.Fatal(err)
		}
		// Each update counts more ended matches, or brings the whole standings of counts sent
		// alone before.
		if n := len(seen); n > 0 && last.GetEnded() <= seen[n-1] && !(wasPending && !last.GetPending() && last.GetEnded() == seen[n-1]) {
			t.Errorf("standings went %v then %d (pending before: %v)", seen, last.GetEnded(), wasPending)
		}
		seen, wasPending = append(seen, last.GetEnded()), last.GetPending()
	}
	if last == nil || !last.GetComplete() || last.GetPending() || last.GetEnded() != 4 || last.GetMatches() != 4 {
		t.Fatalf("last standings: %v", last)
	}
	var labels []string
	for _, a := range last.GetAgents() {
		labels = append(labels, a.GetLabel())
	}
	if fmt.Sprint(labels) != "[fair@1 rnd]" || last.GetPairs() == nil || len(last.GetLeaderboard()) != 2 || len(last.GetTables()) == 0 {
		t.Errorf("standings content: agents %v, pairs %v, leaderboard %d, tables %d", labels, last.GetPairs(), len(last.GetLeaderboard()), len(last.GetTables()))
	}

	got := &tournamentv1.GetTournamentResponse{}
	f.mustCall(t, "/parley.tournament.v1.TournamentService/GetTournament", `{"tournamentId":"cup"}`, got)
	if !proto.Equal(got.GetStandings(), last) || len(got.GetSpec().GetMatches()) != 4 {
		t.Errorf("GetTournament: %v", got)
	}
	if got.GetSpec().GetSeed() != 0 || got.GetSpec().GetMatches()[0].GetSeed() != 0 {
		t.Errorf("GetTournament shows the seeds: %v", got.GetSpec())
	}
	list := &tournamentv1.ListTournamentsResponse{}
	f.mustCall(t, "/parley.tournament.v1.TournamentService/ListTournaments", `{}`, list)
	if len(list.GetTournaments()) != 1 || list.GetTournaments()[0].GetTournamentId() != "cup" {
		t.Errorf("ListTournaments: %v", list)
	}
	// Every match is listed with its tournament, and recorded under the entrants' labels.
	matches := &refereev1.ListMatchesResponse{}
	f.mustCall(t, "/parley.referee.v1.RefereeService/ListMatches", `{"tournamentId":"cup"}`, matches)
	if len(matches.GetMatches()) != 4 {
		t.Fatalf("matches of the tournament: %v", matches)
	}
	for _, m := range matches.GetMatches() {
		for _, seat := range m.GetSeats() {
			if seat.GetLabel() != "fair" && seat.GetLabel() != "rnd" {
				t.Errorf("%s seat %d label %q", m.GetMatchId(), seat.GetSeat(), seat.GetLabel())
			}
		}
	}
	// The same id again with another schedule is refused; the same request resumes.
	status, data = f.call(t, "/parley.tournament.v1.TournamentService/StartTournament", strings.Replace(body, `"gamesPerAssignment":2`, `"gamesPerAssignment":3`, 1))
	wantError(t, "a different tournament under a taken id", status, data, http.StatusConflict, "already_exists")
	if !strings.Contains(string(data), "games_per_assignment 2 (asked: 3)") {
		t.Errorf("the refusal does not say which setting differs: %s", data)
	}
	f.mustCall(t, "/parley.tournament.v1.TournamentService/StartTournament", body, resp)
}

// TestTournamentAtThePolicyBound: a tournament of as many matches as the default policy allows
// (max_tournament_matches) starts through the API for the organiser (an anonymous caller is
// refused: it counts as all its matches against the address's budget), and its whole schedule
// reads back and is listed, although it is larger than one NATS message.
func TestTournamentAtThePolicyBound(t *testing.T) {
	f := start(t)
	const id = "api-tournament-of-twenty-entrants-at-the-bound"
	var entrants []string
	for i := range 20 {
		entrants = append(entrants, fmt.Sprintf(`{"label":"r%d","address":"builtin:random?seed=%d"}`, i, i))
	}
	// 20 entrants: 380 ordered pairs, 52 games each.
	const want = 380 * 52
	if most := policy.Default().MaxTournamentMatches; want > most || want < most-380 {
		t.Fatalf("%d matches is not at the bound %d", want, most)
	}
	body := fmt.Sprintf(`{"tournamentId":%q,"game":"ultimatum","gamesPerAssignment":52,"entrants":[%s]}`, id, strings.Join(entrants, ","))
	status, data := f.call(t, "/parley.tournament.v1.TournamentService/StartTournament", strings.Replace(body, id, "", 1))
	wantError(t, "an anonymous tournament at the bound", status, data, http.StatusTooManyRequests, "resource_exhausted")
	if !strings.Contains(string(data), "budgets.client.matches") {
		t.Errorf("the refusal does not name the budget: %s", data)
	}
	status, data = f.callAs(t, organiserToken, "/parley.tournament.v1.TournamentService/StartTournament", body)
	resp := &tournamentv1.StartTournamentResponse{}
	if status != http.StatusOK || protojson.Unmarshal(data, resp) != nil {
		t.Fatalf("the organiser's tournament at the bound: %d %s", status, data)
	}
	if resp.GetMatches() != want {
		t.Fatalf("scheduled %d matches, want %d", resp.GetMatches(), want)
	}
	got := &tournamentv1.GetTournamentResponse{}
	f.mustCall(t, "/parley.tournament.v1.TournamentService/GetTournament", fmt.Sprintf(`{"tournamentId":%q}`, id), got)
	if n := len(got.GetSpec().GetMatches()); n != want {
		t.Errorf("GetTournament shows %d scheduled matches, want %d", n, want)
	}
	if size := proto.Size(got.GetSpec()); size <= 1<<20 {
		t.Errorf("the schedule is %d bytes, not more than one NATS message carries: the test shows nothing", size)
	}
	list := &tournamentv1.ListTournamentsResponse{}
	f.mustCall(t, "/parley.tournament.v1.TournamentService/ListTournaments", `{}`, list)
	if ts := list.GetTournaments(); len(ts) != 1 || ts[0].GetMatches() != want {
		t.Errorf("ListTournaments: %v, want the one of %d matches", ts, want)
	}
}

// TestMetrics: /metrics shows what matches and requests did.
func TestMetrics(t *testing.T) {
	f := start(t)
	id := f.startMatch(t, `{"game":"ultimatum","agents":["builtin:fair","builtin:random"],"labels":["fair","rnd"]}`)
	f.fullRecord(t, id)
	f.get(t, "/api/v1/matches/"+id+"/record")
	s, _, _ := f.openStream(t, "/api/v1/matches/"+id+"/events")
	s.matchEvents(t)
	wants := []string{
		`parley_matches_started_total{game="ultimatum"} 1`,
		`parley_matches_running{game="ultimatum"} 0`,
		`parley_moves_total{agent="fair@1",game="ultimatum"}`, // the label "fair" only repeats its name
		`parley_move_latency_seconds_bucket{agent="rnd",`,
		`parley_http_requests_total{code="200",method="GET",route="GET /api/v1/matches/{id}/record"} 1`,
		`parley_http_requests_total{code="200",method="POST",route="/parley.referee.v1.RefereeService/"}`,
		`parley_http_streams_open{route="GET /api/v1/matches/{id}/events"} 0`,
		`parley_jetstream_consumer_pending_messages{consumer="analytics",stream="PARLEY_MATCHES"}`,
		`go_goroutines`,
	}
	var text string
	missing := func() []string {
		var out []string
		for _, w := range wants {
			if !strings.Contains(text, w) {
				out = append(out, w)
			}
		}
		return out
	}
	// Requests are counted, and streams closed, once their handlers return: just after the
	// client has read their answers.
	deadline := time.Now().Add(waitLimit)
	for {
		_, _, data := f.get(t, "/metrics")
		text = string(data)
		if len(missing()) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/metrics lacks %q", missing())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A match asked for without a seed gets a fresh one, returned and recorded; one with a bare
// human seat gets that seat reserved and its page returned, and the person plays it there.
func TestSeedsAndHumanSeatsOverTheAPI(t *testing.T) {
	f := start(t)
	seeds := map[uint64]bool{}
	for range 3 {
		resp := &refereev1.StartMatchResponse{}
		f.mustCall(t, "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["builtin:fair","builtin:fair"]}`, resp)
		if resp.GetSeed() == 0 || seeds[resp.GetSeed()] {
			t.Errorf("seed %d: want a fresh one each time (have %v)", resp.GetSeed(), seeds)
		}
		seeds[resp.GetSeed()] = true
		if got := f.fullRecord(t, resp.GetMatchId())[0].GetMatchStarted().GetSeed(); got != resp.GetSeed() {
			t.Errorf("recorded seed %d, answered %d", got, resp.GetSeed())
		}
	}

	resp := &refereev1.StartMatchResponse{}
	f.mustCall(t, "/parley.referee.v1.RefereeService/StartMatch", `{"game":"ultimatum","agents":["builtin:fair","human:ada"],"limits":{"moveTimeout":"20s"}}`, resp)
	links := resp.GetSeatLinks()
	if len(links) != 2 || links[0] != "" || !strings.HasPrefix(links[1], "/seat/") {
		t.Fatalf("seat links %q, want the second seat's page", links)
	}
	token := strings.TrimPrefix(links[1], "/seat/")
	seat, status, data := f.openStream(t, "/api/v1/seats/"+token)
	if seat == nil {
		t.Fatalf("the seat's stream: %d %s", status, data)
	}
	defer seat.close()
	for ev := range seat.events {
		var snap struct {
			State       string
			Observation *json.RawMessage
		}
		if err := json.Unmarshal([]byte(ev.data), &snap); err != nil {
			t.Fatal(err)
		}
		if snap.State == "acting" {
			break
		}
	}
	code, body := f.call(t, "/api/v1/seats/"+token+"/action", `{"move":{"reject":{}}}`)
	if code != http.StatusAccepted {
		t.Fatalf("the person's move: %d %s", code, body)
	}
	events := f.fullRecord(t, resp.GetMatchId())
	end := events[len(events)-1].GetMatchEnded().GetOutcome()
	if end.GetCause() != matchv1.EndCause_END_CAUSE_REJECTED {
		t.Errorf("outcome %v, want the person's reject", end)
	}
}
