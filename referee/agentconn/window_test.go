package agentconn_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/referee/agentconn"
)

// tappedConn keeps a copy of every byte written to and read from a connection.
type tappedConn struct {
	net.Conn
	mu          sync.Mutex
	wrote, read bytes.Buffer
}

func (c *tappedConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.mu.Lock()
	c.wrote.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

func (c *tappedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.read.Write(p[:n])
	c.mu.Unlock()
	return n, err
}

// pings counts the PING frames among HTTP/2 frames, acknowledgements included.
func pings(t *testing.T, frames []byte) (n, total int) {
	t.Helper()
	fr := http2.NewFramer(io.Discard, bytes.NewReader(frames))
	fr.SetMaxReadFrameSize(1 << 24)
	for {
		f, err := fr.ReadFrame()
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return n, total
		}
		if err != nil {
			t.Fatalf("reading the connection's frames: %v", err)
		}
		total++
		if _, ok := f.(*http2.PingFrame); ok {
			n++
		}
	}
}

// TestNoFlowControlPings plays moves between the referee's client and an SDK agent and reads
// every frame either side wrote: with windows of fixed size neither side estimates bandwidth,
// so no PING frame goes either way (gRPC's estimate sends one for a message received while
// none is in flight, about one per message of a move, and its answer).
func TestNoFlowControlPings(t *testing.T) {
	addr := serveAgent(t, "window")
	var tapped []*tappedConn
	var mu sync.Mutex
	r := resolver()
	r.Options = []grpc.DialOption{grpc.WithContextDialer(func(ctx context.Context, target string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", target)
		if err != nil {
			return nil, err
		}
		tc := &tappedConn{Conn: c}
		mu.Lock()
		tapped = append(tapped, tc)
		mu.Unlock()
		return tc, nil
	})}
	c, err := r.Open(context.Background(), agentconn.GRPCPrefix+addr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	const moves = 20
	for i := range moves {
		obs := &agentv1.Observation{MatchId: "window-match", Turn: int32(i + 1), Briefing: string(bytes.Repeat([]byte("rules "), 200))}
		if _, err := c.Client.Act(ctx, &agentv1.ActRequest{Observation: obs}); err != nil {
			t.Fatalf("move %d: %v", i+1, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(tapped) == 0 {
		t.Fatal("no connection was dialled through the tap")
	}
	for _, tc := range tapped {
		tc.mu.Lock()
		wrote := bytes.TrimPrefix(tc.wrote.Bytes(), []byte(http2.ClientPreface))
		read := tc.read.Bytes()
		tc.mu.Unlock()
		if len(wrote) == tc.wrote.Len() {
			t.Fatal("the client's bytes do not begin with the HTTP/2 preface")
		}
		sent, sentFrames := pings(t, wrote)
		got, gotFrames := pings(t, read)
		if sentFrames < moves || gotFrames < moves {
			t.Fatalf("read %d frames the client wrote and %d the agent wrote; want at least %d each (one a move)", sentFrames, gotFrames, moves)
		}
		if sent != 0 || got != 0 {
			t.Errorf("%d moves: the client wrote %d PING frames and the agent %d; want none (fixed windows)", moves, sent, got)
		}
	}
}
