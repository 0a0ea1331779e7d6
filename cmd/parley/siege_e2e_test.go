package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/hostile"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// siegeAdmin is the organiser's token of the siege tests' `parley up`.
const siegeAdmin = "the-organiser-under-siege"

// loopback is the i-th loopback address an attacker or a player sends from: 127.0.0.2 and on
// (Linux routes the whole of 127.0.0.0/8 to the loopback interface).
func loopback(i int) string { return fmt.Sprintf("127.0.%d.%d", 1+i/250, 2+i%250) }

// clientFrom is an HTTP client whose connections come from address ip: a new one for each
// request, as a visitor arriving would make.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}, Timeout: 20 * time.Second}
}

// callFrom posts a Connect JSON call from client c (the organiser's when admin) and decodes
// a 200 answer into out; any other answer is an error carrying its status.
func callFrom(ctx context.Context, c *http.Client, base, procedure, body string, admin bool, out proto.Message) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(base, "/")+procedure, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if admin {
		req.Header.Set("Authorization", "Bearer "+siegeAdmin)
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return &statusError{code: resp.StatusCode, body: string(data)}
	}
	if out == nil {
		return nil
	}
	return protojson.Unmarshal(data, out)
}

type statusError struct {
	code int
	body string
}

func (e *statusError) Error() string { return fmt.Sprintf("status %d: %s", e.code, e.body) }

// startSiegeUp starts `parley up` for a siege test with the policy given (YAML, over the
// defaults) and, when files > 0, a file limit of files descriptors (prlimit), and returns its
// URL.
func startSiegeUp(t *testing.T, policyYAML string, files int, extra ...string) (*proc, string) {
	t.Helper()
	dir := t.TempDir()
	pol := dir + "/policy.yaml"
	if err := os.WriteFile(pol, []byte(policyYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"up", "--data-dir", dir, "--listen", "127.0.0.1:0", "--referee-listen", "127.0.0.1:0",
		"--analytics-listen", "127.0.0.1:0", "--policy", pol}
	args = append(args, extra...)
	name := parleyBin
	if files > 0 {
		prlimit, err := exec.LookPath("prlimit")
		if err != nil {
			t.Skip("prlimit (util-linux) is not installed: the file limit of the server cannot be set")
		}
		name, args = prlimit, append([]string{fmt.Sprintf("--nofile=%d:%d", files, files), parleyBin}, args...)
	}
	up := startProcEnv(t, "", []string{"PARLEY_ADMIN_TOKEN=" + siegeAdmin}, name, args...)
	return up, up.waitLine("Parley is up: ")
}

// slowBody is one connection of a slow-body flood: a request announcing a 100,000-byte body,
// of which it sends a byte at a time. status is what the server answered, once it did.
type slowBody struct {
	conn   net.Conn
	status chan int // the answer's status code, or 0 when the connection closed without one
}

// openSlowBody connects from ip and sends a request's headers and its body's first byte; nil
// when the server did not take the connection.
func openSlowBody(base, ip string) *slowBody {
	u, _ := url.Parse(base)
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	conn, err := d.Dial("tcp", u.Host)
	if err != nil {
		return nil
	}
	_, err = fmt.Fprintf(conn, "POST /parley.referee.v1.RefereeService/StartMatch HTTP/1.1\r\nHost: %s\r\n"+
		"Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", u.Host)
	if err != nil {
		conn.Close()
		return nil
	}
	s := &slowBody{conn: conn, status: make(chan int, 1)}
	go func() {
		code := 0
		if resp, err := http.ReadResponse(bufio.NewReader(conn), nil); err == nil {
			code = resp.StatusCode
			resp.Body.Close()
		}
		s.status <- code
	}()
	return s
}

// TestSiegeSlowBodyFlood is the first attack of issue 30: thousands of connections from many
// addresses, each trickling a request body a byte at a time, against a `parley up` whose file
// limit they would exhaust, while a tournament's matches are being recorded. It checks what
// the edge promises, whichever of its bounds a machine's timing makes answer first (the cap
// per address, the global cap, evictions, the body's read timeout: their own tests are in
// gateway): the process stays below its file limit, honest players' requests are answered and
// their matches stored during the flood, no flood connection is served, and afterwards every
// match of the tournament is stored, with no restart.
func TestSiegeSlowBodyFlood(t *testing.T) {
	const (
		files     = 1024
		addresses = 60
		perAddr   = 20 // 1,200 connections: past the file limit, and past the per-address cap
	)
	up, base := startSiegeUp(t, "starts_per_minute: 1000\nmax_conns_per_client: 16\nreserved_files: 256\nread_timeout: 3s\n", files)
	honest := clientFrom("127.0.0.1")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	// A tournament whose matches are recorded all through the flood.
	tour := &tournamentv1.StartTournamentResponse{}
	if err := callFrom(ctx, honest, base, "/parley.tournament.v1.TournamentService/StartTournament",
		`{"game":"ultimatum","entrants":[{"address":"builtin:fair"},{"address":"builtin:random"}],"gamesPerAssignment":150,"concurrency":8}`,
		true, tour); err != nil {
		t.Fatal(err)
	}

	// The flood: every connection held open, a byte a second, for as long as the attack lasts
	// (rounds), or until the server answers it.
	var (
		mu    sync.Mutex
		flood []*slowBody
		wg    sync.WaitGroup
	)
	for a := range addresses {
		wg.Go(func() {
			for range perAddr {
				if s := openSlowBody(base, loopback(a)); s != nil {
					mu.Lock()
					flood = append(flood, s)
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	t.Logf("flood: %d of %d connections made", len(flood), addresses*perAddr)
	fds := watchDescriptors(t, up.cmd.Process.Pid)

	// While the flood holds: an honest player's match is accepted, played and stored.
	played := func(what string) {
		t.Helper()
		started := &refereev1.StartMatchResponse{}
		if err := callFrom(ctx, honest, base, "/parley.referee.v1.RefereeService/StartMatch",
			`{"game":"ultimatum","agents":["builtin:fair","builtin:random"]}`, false, started); err != nil {
			t.Fatalf("%s: an honest StartMatch: %v", what, err)
		}
		waitEnded(ctx, t, honest, base, started.GetMatchId(), what)
	}
	played("during the flood")
	statuses := map[int]int{}
	for range 5 {
		for _, s := range flood {
			_ = s.conn.SetWriteDeadline(time.Now().Add(time.Second))
			_, _ = s.conn.Write([]byte(" "))
		}
		played("during the flood")
	}
	for _, s := range flood {
		s.conn.Close()
		statuses[<-s.status]++
	}
	peak := fds()
	t.Logf("flood answers by status (0: closed without one): %v; the server's descriptors peaked at %d (limit %d)", statuses, peak, files)
	for code, n := range statuses {
		switch code {
		case 0, http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusServiceUnavailable:
		default:
			t.Errorf("%d flood connections were answered %d: a body that never arrives is refused or cut off, nothing else", n, code)
		}
	}
	if peak >= files {
		t.Errorf("the server held %d descriptors during the flood, at its limit of %d", peak, files)
	}

	// After the flood: the store takes writes, and every match of the tournament is stored.
	pollUntil(t, "/healthz to say ok", func() bool {
		resp, err := honest.Get(base + "healthz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	played("after the flood")
	if out := up.output(); strings.Contains(out, "too many open files") {
		t.Errorf("the server ran out of file descriptors:\n%s", out)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		got := &tournamentv1.GetTournamentResponse{}
		err := callFrom(ctx, honest, base, "/parley.tournament.v1.TournamentService/GetTournament",
			fmt.Sprintf(`{"tournamentId":%q,"standingsOnly":true}`, tour.GetTournamentId()), false, got)
		if err == nil && got.GetStandings().GetComplete() {
			if n := got.GetStandings().GetEnded(); n != tour.GetMatches() {
				t.Errorf("the tournament completed with %d of %d matches ended", n, tour.GetMatches())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tournament's %d matches were not all stored within 2 minutes of the flood: %v %v", tour.GetMatches(), got.GetStandings(), err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// watchDescriptors counts the open descriptors of process pid until the test ends or the
// function returned is called, which returns the most seen at once (0 when /proc cannot be
// read, which fails the test).
func watchDescriptors(t *testing.T, pid int) (peak func() int) {
	t.Helper()
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	if _, err := os.ReadDir(dir); err != nil {
		t.Fatalf("counting the server's descriptors: %v", err)
	}
	var (
		most int
		stop = make(chan struct{})
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if entries, err := os.ReadDir(dir); err == nil {
				most = max(most, len(entries))
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	var once sync.Once
	peak = func() int {
		once.Do(func() { close(stop); <-done })
		return most
	}
	t.Cleanup(func() { peak() })
	return peak
}

// seatMatches is how many matches with a person's seat TestSiege's seat-stream attack starts.
const seatMatches = 5

// waitEnded waits for the record of match id to end, reading it through the gateway.
func waitEnded(ctx context.Context, t *testing.T, c *http.Client, base, id, what string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		got := &refereev1.GetMatchResponse{}
		err := callFrom(ctx, c, base, "/parley.referee.v1.RefereeService/GetMatch", fmt.Sprintf(`{"matchId":%q}`, id), false, got)
		if err == nil && got.GetEnded() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: match %s was accepted but its record did not end within a minute: %v", what, id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSiege runs the attacks of issue 30 that need no file limit against one `parley up`, each
// a subtest that fails without its defence.
func TestSiege(t *testing.T) {
	// The subtests share one server. The seat-stream attack leaves five matches waiting for a
	// person who never moves, each holding a worker until its human move timeout (minutes):
	// with the default four workers the later matches would wait in the queue behind them. A
	// sixth worker is left free for them.
	_, base := startSiegeUp(t, "starts_per_minute: 1000\nmax_record_bytes: 12582912\nbudgets:\n  client:\n    human_seats: 4\n", 0, "--allow-dial", "127.0.0.1/32", "--workers", strconv.Itoa(seatMatches+1))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("seats for people count against the address's budget; seat streams against its stream cap", func(t *testing.T) {
		// Attack 4: one address held every seat of the hub. Matches with a person's seat each
		// from one address until it is refused: budgets.client.human_seats (4 here) are taken,
		// the fifth is refused (429); another address still starts one.
		var links []string
		start := func(from string) error {
			started := &refereev1.StartMatchResponse{}
			err := callFrom(ctx, clientFrom(from), base, "/parley.referee.v1.RefereeService/StartMatch",
				`{"game":"ultimatum","agents":["human","builtin:fair"]}`, false, started)
			if err == nil {
				links = append(links, started.GetSeatLinks()[0])
			}
			return err
		}
		for range seatMatches - 1 {
			if err := start("127.0.0.1"); err != nil {
				t.Fatal(err)
			}
		}
		var refusal *statusError
		if err := start("127.0.0.1"); !errors.As(err, &refusal) || refusal.code != http.StatusTooManyRequests || !strings.Contains(refusal.body, "budgets.client.human_seats") {
			t.Fatalf("a fifth seat for a person from one address: %v, want 429 naming budgets.client.human_seats", err)
		}
		if err := start(loopback(800)); err != nil {
			t.Fatalf("another address's seat for a person: %v", err)
		}
		// Four streams a seat, twenty in all from one address, against a cap of sixteen.
		attacker := loopback(900)
		streams := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(attacker)}}).DialContext}}
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		open, refused := 0, 0
		for _, link := range links {
			token := link[strings.LastIndex(link, "/")+1:]
			for range 4 {
				req, _ := http.NewRequestWithContext(sctx, http.MethodGet, base+"api/v1/seats/"+token, nil)
				req.Header.Set("Accept", "text/event-stream")
				resp, err := streams.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				switch resp.StatusCode {
				case http.StatusOK:
					open++
					defer resp.Body.Close()
				case http.StatusTooManyRequests:
					refused++
					resp.Body.Close()
				default:
					body, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					t.Fatalf("a seat stream: %d %s", resp.StatusCode, body)
				}
			}
		}
		if open != 16 || refused != 4 {
			t.Errorf("one address opened %d seat streams and was refused %d, want 16 and 4 (max_streams 16)", open, refused)
		}
	})

	t.Run("a flood bot fills its share of the record and is faulted; the record is read whole", func(t *testing.T) {
		bot, err := hostile.Start(hostile.MessageFlood)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(bot.Close)
		started := &refereev1.StartMatchResponse{}
		if err := callFrom(ctx, clientFrom("127.0.0.1"), base, "/parley.referee.v1.RefereeService/StartMatch",
			`{"game":"ultimatum","agents":["`+bot.Address()+`","builtin:fixed?offer=1"],"params":{"ultimatum":{"maxTurns":400}},"limits":{"maxReplyBytes":262144}}`,
			false, started); err != nil {
			t.Fatal(err)
		}
		waitEnded(ctx, t, clientFrom("127.0.0.1"), base, started.GetMatchId(), "the flood match")
		got := &refereev1.GetMatchResponse{}
		if err := callFrom(ctx, clientFrom("127.0.0.1"), base, "/parley.referee.v1.RefereeService/GetMatch",
			fmt.Sprintf(`{"matchId":%q}`, started.GetMatchId()), false, got); err != nil {
			t.Fatalf("reading the flood's record: %v", err)
		}
		size, largest := 0, 0
		for _, ev := range got.GetEvents() {
			size += proto.Size(ev)
			largest = max(largest, proto.Size(ev))
		}
		end := got.GetEvents()[len(got.GetEvents())-1].GetMatchEnded().GetOutcome()
		t.Logf("the flood's record: %d events, %d bytes; %v: %s", len(got.GetEvents()), size, end.GetCause(), end.GetSummary())
		if size > 12<<20+largest {
			t.Errorf("the record is %d bytes, over max_record_bytes (12 MiB) by more than one event", size)
		}
		if size < 4<<20 {
			t.Errorf("the record is %d bytes: the flood did not pass gRPC's 4 MiB default, so reading it proves nothing", size)
		}
		if end.GetCause() != matchv1.EndCause_END_CAUSE_AGENT_FAULT || len(end.GetFaultedSeats()) != 1 || end.GetFaultedSeats()[0] != 0 {
			t.Errorf("the flood match ended %v, faulted %v; want an agent fault of the flooder's seat", end.GetCause(), end.GetFaultedSeats())
		}
	})

	t.Run("a match holding a worker is cancelled by its owner, by no one else", func(t *testing.T) {
		// Attack 2: nothing could end a match that holds a worker for minutes (a person's seat
		// nobody takes). Its owner ends it now through the gateway; another address may not.
		owner := clientFrom(loopback(700))
		started := &refereev1.StartMatchResponse{}
		if err := callFrom(ctx, owner, base, "/parley.referee.v1.RefereeService/StartMatch",
			`{"game":"ultimatum","agents":["human","builtin:fair"]}`, false, started); err != nil {
			t.Fatal(err)
		}
		cancelBody := fmt.Sprintf(`{"matchId":%q}`, started.GetMatchId())
		var refusal *statusError
		if err := callFrom(ctx, clientFrom(loopback(701)), base, "/parley.referee.v1.RefereeService/CancelMatch", cancelBody, false, nil); !errors.As(err, &refusal) || refusal.code != http.StatusForbidden {
			t.Fatalf("another address cancelled the match: %v, want 403", err)
		}
		if err := callFrom(ctx, owner, base, "/parley.referee.v1.RefereeService/CancelMatch", cancelBody, false, nil); err != nil {
			t.Fatal(err)
		}
		waitEnded(ctx, t, owner, base, started.GetMatchId(), "the cancelled match")
		got := &refereev1.GetMatchResponse{}
		if err := callFrom(ctx, owner, base, "/parley.referee.v1.RefereeService/GetMatch", cancelBody, false, got); err != nil {
			t.Fatal(err)
		}
		end := got.GetEvents()[len(got.GetEvents())-1].GetMatchEnded().GetOutcome()
		if end.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(end.GetSummary(), "cancelled by its owner") {
			t.Errorf("the cancelled match ended %v %q, want void saying it was cancelled", end.GetCause(), end.GetSummary())
		}
	})

	t.Run("seats reserved through the API count against the address's budget", func(t *testing.T) {
		// Attack 4, the other door: POST /api/v1/seats held seats bound only by the rate of
		// starts and the hub's 256. Now each holds one of budgets.client.human_seats (4 here).
		reserve := func(from string) (int, string) {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"api/v1/seats", strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := clientFrom(from).Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(body)
		}
		for i := range 4 {
			if code, body := reserve(loopback(600)); code != http.StatusCreated {
				t.Fatalf("seat %d of 4: %d %s", i+1, code, body)
			}
		}
		if code, body := reserve(loopback(600)); code != http.StatusTooManyRequests || !strings.Contains(body, "budgets.client.human_seats") {
			t.Fatalf("a fifth seat from one address: %d %s, want 429 naming budgets.client.human_seats", code, body)
		}
		if code, body := reserve(loopback(601)); code != http.StatusCreated {
			t.Fatalf("another address's seat: %d %s", code, body)
		}
	})
}
