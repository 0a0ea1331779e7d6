package gateway

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
)

// TestConnLimiterSharesSlots fills a listener's slots from one address and checks the bounds
// as connections come: the per-address cap answers 429, and with every slot taken a newcomer
// from another address takes the oldest connection of the address holding the most, while
// one that would hold as many as everyone else is refused 503.
func TestConnLimiterSharesSlots(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &connLimiter{Listener: inner, perClient: 3, total: 4, log: slog.New(slog.DiscardHandler),
		byKey: map[string][]*limitedConn{}, stop: make(chan struct{})}
	defer c.Close()
	accepted := make(chan net.Conn, 16)
	go func() {
		for {
			conn, err := c.Accept()
			if err != nil {
				return
			}
			accepted <- conn
		}
	}()
	dial := func(ip string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
		conn, err := d.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	// served waits for the server side of the next accepted connection.
	served := func(what string) net.Conn {
		t.Helper()
		select {
		case conn := <-accepted:
			return conn
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: not accepted", what)
			return nil
		}
	}
	refused := func(conn net.Conn, want int, what string) {
		t.Helper()
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: no answer: %v", what, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("%s: status %d, want %d", what, resp.StatusCode, want)
		}
	}

	var first net.Conn
	for i := range 3 {
		dial("127.0.0.2")
		if conn := served("a connection within the cap"); i == 0 {
			first = conn
		}
	}
	refused(dial("127.0.0.2"), http.StatusTooManyRequests, "a fourth connection from one address")
	dial("127.0.0.3")
	served("a second address while a slot is free")

	// Every slot is taken: 127.0.0.2 holds 3, 127.0.0.3 holds 1.
	dial("127.0.0.4")
	served("a newcomer with every slot taken")
	_ = first.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := first.Read(make([]byte, 1)); err == nil {
		t.Errorf("the oldest connection of the heaviest address is still open after a newcomer took its slot (read: %v)", err)
	}
	// Now 2, 1, 1: a newcomer would hold 1, as the heaviest but one does: someone else's turn.
	dial("127.0.0.5")
	served("a newcomer while an address holds two")
	refused(dial("127.0.0.6"), http.StatusServiceUnavailable, "a newcomer when every address holds one")
}

// TestHealthzSaysNotReady: /healthz answers 503 with the reason while Ready fails, and ok once
// it passes.
func TestHealthzSaysNotReady(t *testing.T) {
	var broken atomic.Bool
	broken.Store(true)
	g, err := New(Config{Referee: refereev1.NewRefereeServiceClient(nil), Ready: func() error {
		if broken.Load() {
			return errors.New("the store does not take writes: write error")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	get := func() (int, string) {
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
		return rec.Code, rec.Body.String()
	}
	if code, body := get(); code != http.StatusServiceUnavailable || !strings.Contains(body, "write error") {
		t.Errorf("while not ready: %d %s, want 503 naming the reason", code, body)
	}
	broken.Store(false)
	if code, body := get(); code != http.StatusOK || !strings.Contains(body, `"ok"`) {
		t.Errorf("once ready: %d %s", code, body)
	}
}

// TestSlowBodyIsCutOff: a client that announces a body and trickles none of it is answered 408
// once the read timeout has passed and its connection closed, instead of holding a slot for
// as long as it likes. Without the body's read deadline the handler waits for the body for
// good and the client's own (generous) deadline fails the test.
func TestSlowBodyIsCutOff(t *testing.T) {
	reached := make(chan struct{}, 1)
	srv := httptest.NewServer(limitBody(1<<20, 100*time.Millisecond, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
	})))
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("POST /parley.referee.v1.RefereeService/StartMatch HTTP/1.1\r\nHost: x\r\n" +
		"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{")); err != nil {
		t.Fatal(err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("no answer to a body that never arrives: %v", err)
	}
	_, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a body that never arrives: status %d, want 408", resp.StatusCode)
	}
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Error("the connection of a body that never arrived is still open after its 408")
	}
	select {
	case <-reached:
		t.Error("the handler ran for a request whose body never arrived")
	default:
	}
}
