package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/natstest"
)

// watchMatches is the least number of matches TestWatchLargeTournament schedules: 5,000 in
// CI; larger for a report (go test -run TestWatchLargeTournament -watch-matches 20000
// ./cmd/parley).
var watchMatches = flag.Int("watch-matches", 5000, "least matches of TestWatchLargeTournament")

// watchAdmin is the organiser's token of TestWatchLargeTournament's `parley up`.
const watchAdmin = "the-organiser-of-the-watched-tournament"

// TestWatchLargeTournament runs a tournament of thousands of matches in a real `parley up`
// and watches it the whole time as spectators do: the standings (whole and standings only),
// the tournament's match list page by page, the standings stream, and the tournament page in a
// real browser. Every read answers while the matches run, the page never shows an error or
// loses its stream, the reads leave no NATS consumers behind, and at the end the standings are
// whole and every match is listed once. Read latencies are logged, not asserted.
func TestWatchLargeTournament(t *testing.T) {
	dir := t.TempDir()
	up := startProcEnv(t, "", []string{"PARLEY_ADMIN_TOKEN=" + watchAdmin}, parleyBin, "up", "--data-dir", dir,
		"--listen", "127.0.0.1:0", "--referee-listen", "127.0.0.1:0", "--analytics-listen", "127.0.0.1:0")
	base := strings.TrimSuffix(up.waitLine("Parley is up: "), "/")
	js := watchJetStream(t, dir)
	before := natstest.Consumers(t, js, natsname.MatchStream)

	entrants := []string{"fair", "random", "spe"}
	assignments := len(entrants) * (len(entrants) - 1) // ordered pairs of different entrants
	games := (*watchMatches + assignments - 1) / assignments
	body := fmt.Sprintf(`{"tournamentId":"watched","game":"ultimatum","entrants":[{"address":"builtin:fair"},{"address":"builtin:random"},{"address":"builtin:spe"}],"gamesPerAssignment":%d}`, games)
	status, out := post(t, base, "/parley.tournament.v1.TournamentService/StartTournament", strings.NewReader(body),
		"Authorization", "Bearer "+watchAdmin)
	if status != http.StatusOK {
		t.Fatalf("StartTournament: status %d: %s", status, out)
	}
	started := &tournamentv1.StartTournamentResponse{}
	if err := protojson.Unmarshal([]byte(out), started); err != nil {
		t.Fatal(err)
	}
	scheduled := started.GetMatches()
	if int(scheduled) < *watchMatches {
		t.Fatalf("scheduled %d matches, want at least %d", scheduled, *watchMatches)
	}
	t.Logf("%d matches scheduled", scheduled)
	const id = "watched"

	// The spectators, each in its own goroutine until the tournament is whole.
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	lat := &latencies{}
	var readers sync.WaitGroup
	spectate := func(name string, read func(context.Context) error) {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for ctx.Err() == nil {
				if err := read(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("%s: %v", name, err)
					return
				}
			}
		}()
	}
	spectate("standings", standingsReader(base, id, true, scheduled, lat))
	spectate("whole tournament", standingsReader(base, id, false, scheduled, lat))
	spectate("match list", matchListReader(base, id, lat))
	// The stream is followed to its own end, which may come a tick after the other readers
	// see the standings whole: however long the matches take, it is waited for from then on.
	streamCtx, stopStream := context.WithCancel(context.Background())
	defer stopStream()
	streamed := make(chan string, 1)
	go func() { streamed <- followStandings(streamCtx, t, base, id, scheduled) }()

	tb := newBrowser(t).tab(t)
	tb.do("open the tournament page", chromedp.Navigate(base+"/#/tournament/"+id), chromedp.WaitVisible(chromedp.CSS("#tournament-state")))
	mostConsumers, looks := 0, 0
	for whole := false; !whole; {
		if n := natstest.Consumers(t, js, natsname.MatchStream); n > mostConsumers {
			mostConsumers = n
		}
		looks++
		page := eval[map[string]string](tb, `({
			alert: [...document.querySelectorAll('[role=alert]')].map((e) => e.textContent).join(' | '),
			conn: document.querySelector('#conn').hidden ? '' : document.querySelector('#conn').textContent,
			progress: document.querySelector('#progress').textContent,
		})`)
		if page["alert"] != "" || page["conn"] == "disconnected" {
			tb.fail("the tournament page, %d looks in: alert %q, connection %q, progress %q", looks, page["alert"], page["conn"], page["progress"])
		}
		st := &tournamentv1.GetTournamentResponse{}
		if callAPI(ctx, base, "/parley.tournament.v1.TournamentService/GetTournament", `{"tournamentId":"watched","standingsOnly":true}`, st) == nil {
			whole = st.GetStandings().GetComplete() && !st.GetStandings().GetPending()
		}
		if !whole {
			time.Sleep(200 * time.Millisecond)
		}
	}
	stop()
	readers.Wait()
	select {
	case end := <-streamed:
		if end != "complete" {
			t.Errorf("the standings stream ended with %q, want complete", end)
		}
	case <-time.After(waitTimeout):
		stopStream()
		<-streamed // ended by the cancel, before the test ends
		t.Errorf("the standings stream had not ended %s after the standings were whole", waitTimeout)
	}
	if t.Failed() {
		return
	}

	// The whole standings, as stored and as the page shows them.
	final := &tournamentv1.GetTournamentResponse{}
	apiCall(t, base, "/parley.tournament.v1.TournamentService/GetTournament", `{"tournamentId":"watched"}`, final)
	st := final.GetStandings()
	if st.GetEnded() != scheduled || st.GetMatches() != scheduled {
		t.Errorf("standings: %d of %d ended, want %d of %d", st.GetEnded(), st.GetMatches(), scheduled, scheduled)
	}
	played := 0
	for _, a := range st.GetAgents() {
		played += int(a.GetMatches())
	}
	if len(st.GetAgents()) != len(entrants) || played != 2*int(scheduled) {
		t.Errorf("standings: %d agents with %d seats played, want %d with %d", len(st.GetAgents()), played, len(entrants), 2*scheduled)
	}
	tb.waitFor("the complete standings", `document.querySelector('#tournament-state').textContent === 'complete'`)
	tb.waitFor("every entrant ranked", fmt.Sprintf(`document.querySelectorAll('.leaderboard tbody tr').length === %d`, len(entrants)))
	tb.waitFor("the heat maps", fmt.Sprintf(`document.querySelectorAll('[data-heat] tbody tr').length === %d`, 3*len(entrants)))
	tb.waitFor("a first page of ended matches", `document.querySelectorAll('#tournament-matches tr').length === 100 && !document.querySelector('#tournament-matches .tag.live')`)
	first := eval[string](tb, `document.querySelector('#tournament-matches a').textContent`)
	tb.click("#tournament-matches-pager [data-page=older]")
	tb.waitFor("the second page", fmt.Sprintf(`document.querySelector('#tournament-matches-pager span').textContent === 'page 2' && document.querySelector('#tournament-matches a').textContent !== %s`, jsString(first)))

	// Every match is listed once.
	seen := map[string]bool{}
	token := ""
	for pages := 0; ; pages++ {
		resp := &refereev1.ListMatchesResponse{}
		apiCall(t, base, "/parley.referee.v1.RefereeService/ListMatches", fmt.Sprintf(`{"tournamentId":%q,"pageSize":500,"pageToken":%q}`, id, token), resp)
		for _, m := range resp.GetMatches() {
			if seen[m.GetMatchId()] {
				t.Errorf("match %s listed twice", m.GetMatchId())
			}
			seen[m.GetMatchId()] = true
			if m.GetState() != refereev1.MatchState_MATCH_STATE_ENDED {
				t.Errorf("match %s listed as %s after the tournament ended", m.GetMatchId(), m.GetState())
			}
		}
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
		if pages > int(scheduled) {
			t.Fatal("the match list never ends")
		}
	}
	if len(seen) != int(scheduled) {
		t.Errorf("the match list has %d matches, want %d", len(seen), scheduled)
	}

	// Reads leave no consumer behind: at most the one the page's and the test's streams hold
	// while they follow, never one per read.
	after := natstest.Consumers(t, js, natsname.MatchStream)
	t.Logf("consumers on %s: %d before, at most %d in %d looks while the matches ran, %d after", natsname.MatchStream, before, mostConsumers, looks, after)
	if mostConsumers > before+4 || after > before+2 {
		t.Errorf("consumers on %s: %d before, %d at most during the run, %d after: reads leave consumers behind", natsname.MatchStream, before, mostConsumers, after)
	}
	lat.log(t, scheduled)
}

// watchJetStream connects to the NATS server of the `parley up` in dir.
func watchJetStream(t *testing.T, dir string) jetstream.JetStream {
	t.Helper()
	url, err := os.ReadFile(filepath.Join(dir, "nats.url"))
	if err != nil {
		t.Fatalf("up wrote no nats.url: %v", err)
	}
	nc, err := nats.Connect(strings.TrimSpace(string(url)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// callAPI posts body to one procedure of the gateway and decodes the answer into out. It
// returns its failure, for readers in goroutines of their own; apiCall fails the test.
func callAPI(ctx context.Context, base, procedure, body string, out proto.Message) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+procedure, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: status %d: %s", procedure, resp.StatusCode, data)
	}
	return protojson.Unmarshal(data, out)
}

// standingsReader asks for the tournament's standings (standings only, or with the schedule)
// and checks each answer against the one before.
func standingsReader(base, id string, standingsOnly bool, scheduled uint32, lat *latencies) func(context.Context) error {
	var last uint32
	return func(ctx context.Context) error {
		resp := &tournamentv1.GetTournamentResponse{}
		began := time.Now()
		err := callAPI(ctx, base, "/parley.tournament.v1.TournamentService/GetTournament", fmt.Sprintf(`{"tournamentId":%q,"standingsOnly":%t}`, id, standingsOnly), resp)
		if err != nil {
			return err
		}
		st := resp.GetStandings()
		what := "standings"
		if !standingsOnly {
			what = "whole tournament"
			if resp.GetSpec().GetTournamentId() != id {
				return fmt.Errorf("the schedule is missing: %v", resp.GetSpec())
			}
		}
		lat.add(what, st.GetEnded(), time.Since(began))
		switch {
		case st.GetMatches() != scheduled:
			return fmt.Errorf("standings of %d matches, want %d", st.GetMatches(), scheduled)
		case st.GetEnded() < last:
			return fmt.Errorf("ended went back from %d to %d", last, st.GetEnded())
		case !st.GetPending() && st.GetEnded() > 0 && len(st.GetAgents()) == 0:
			return fmt.Errorf("whole standings of %d ended matches name no agent", st.GetEnded())
		}
		last = st.GetEnded()
		if standingsOnly {
			sleep(ctx, 200*time.Millisecond)
		} else {
			sleep(ctx, time.Second)
		}
		return nil
	}
}

// matchListReader reads the first two pages of the tournament's matches, as the page does.
func matchListReader(base, id string, lat *latencies) func(context.Context) error {
	return func(ctx context.Context) error {
		token := ""
		for page := 0; page < 2; page++ {
			resp := &refereev1.ListMatchesResponse{}
			began := time.Now()
			if err := callAPI(ctx, base, "/parley.referee.v1.RefereeService/ListMatches", fmt.Sprintf(`{"tournamentId":%q,"pageSize":100,"pageToken":%q}`, id, token), resp); err != nil {
				return err
			}
			lat.add(fmt.Sprintf("match list, page %d", page+1), 0, time.Since(began))
			if n := len(resp.GetMatches()); n > 100 {
				return fmt.Errorf("a page of 100 has %d matches", n)
			}
			ids := map[string]bool{}
			for _, m := range resp.GetMatches() {
				if m.GetTournamentId() != id || ids[m.GetMatchId()] {
					return fmt.Errorf("page %d lists %s (tournament %q) twice or from elsewhere", page+1, m.GetMatchId(), m.GetTournamentId())
				}
				ids[m.GetMatchId()] = true
			}
			if token = resp.GetNextPageToken(); token == "" {
				break
			}
		}
		sleep(ctx, 500*time.Millisecond)
		return nil
	}
}

// followStandings follows the standings stream to its end event and returns its reason,
// checking that the ended count never goes back and that no error event comes.
func followStandings(ctx context.Context, t *testing.T, base, id string, scheduled uint32) string {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/tournaments/"+id+"/standings", nil)
	if err != nil {
		t.Error(err)
		return ""
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("standings stream: %v", err)
		return ""
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := io.ReadAll(resp.Body)
		t.Errorf("standings stream: status %d: %s", resp.StatusCode, data)
		return ""
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var event string
	var last uint32
	events := 0
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data := strings.TrimPrefix(line, "data: ")
			switch event {
			case "standings":
				events++
				st := &analyticsv1.Standings{}
				if err := protojson.Unmarshal([]byte(data), st); err != nil {
					t.Errorf("standings stream: %v\n%s", err, data)
					return ""
				}
				if st.GetEnded() < last || st.GetMatches() != scheduled {
					t.Errorf("standings stream: %d of %d ended after %d", st.GetEnded(), st.GetMatches(), last)
				}
				last = st.GetEnded()
			case "end":
				t.Logf("standings stream: %d events, the last at %d ended", events, last)
				if strings.Contains(data, `"reason":"complete"`) {
					return "complete"
				}
				return data
			default:
				t.Errorf("standings stream: %s event: %s", event, data)
				return event
			}
		}
	}
	if ctx.Err() == nil {
		t.Errorf("standings stream ended without an end event: %v", sc.Err())
	}
	return ""
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// latencies collects read latencies by kind and by the quarter of the tournament that had
// ended when the read answered.
type latencies struct {
	mu   sync.Mutex
	took map[string][]time.Duration
	when map[string][]uint32
}

func (l *latencies) add(what string, ended uint32, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.took == nil {
		l.took, l.when = map[string][]time.Duration{}, map[string][]uint32{}
	}
	l.took[what] = append(l.took[what], d)
	l.when[what] = append(l.when[what], ended)
}

// log writes p50, p95 and the slowest read of each kind, overall and by quarter of the
// matches ended (for the reads that report it).
func (l *latencies) log(t *testing.T, scheduled uint32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	kinds := make([]string, 0, len(l.took))
	for k := range l.took {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	for _, k := range kinds {
		t.Logf("%-22s %s", k, quantiles(l.took[k]))
		if strings.HasPrefix(k, "match list") {
			continue
		}
		quarters := make([][]time.Duration, 4)
		for i, d := range l.took[k] {
			q := min(3, int(4*uint64(l.when[k][i])/uint64(scheduled)))
			quarters[q] = append(quarters[q], d)
		}
		for q, ds := range quarters {
			if len(ds) > 0 {
				t.Logf("%-22s   %d–%d%% ended: %s", "", 25*q, 25*(q+1), quantiles(ds))
			}
		}
	}
}

func quantiles(ds []time.Duration) string {
	ds = slices.Clone(ds)
	slices.Sort(ds)
	at := func(p float64) time.Duration { return ds[min(len(ds)-1, int(p*float64(len(ds))))] }
	return fmt.Sprintf("%d reads, p50 %s, p95 %s, max %s", len(ds), at(0.5).Round(time.Microsecond), at(0.95).Round(time.Microsecond), ds[len(ds)-1].Round(time.Microsecond))
}
