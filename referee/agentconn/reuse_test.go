package agentconn_test

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/agentconn"
)

// streamLog notes, per stream opened, whether each call left out what the one before carried.
type streamLog struct {
	logMu   sync.Mutex
	streams [][]bool
}

// opened notes a stream and returns its index.
func (l *streamLog) opened() int {
	l.logMu.Lock()
	defer l.logMu.Unlock()
	l.streams = append(l.streams, nil)
	return len(l.streams) - 1
}

// called notes a call on stream n.
func (l *streamLog) called(n int, req *agentv1.PlayRequest) {
	l.logMu.Lock()
	defer l.logMu.Unlock()
	l.streams[n] = append(l.streams[n], req.GetSameAsBefore() != nil)
}

func (l *streamLog) seen() [][]bool {
	l.logMu.Lock()
	defer l.logMu.Unlock()
	out := make([][]bool, len(l.streams))
	for i, s := range l.streams {
		out[i] = append([]bool(nil), s...)
	}
	return out
}

// pass is the action the test agents answer every call with.
var pass = &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}

// streamAgent answers every Play call with a pass and notes, per stream, whether each call left
// out what the one before carried.
type streamAgent struct {
	agentv1.UnimplementedAgentServiceServer
	streamLog
}

func (a *streamAgent) Play(s grpc.BidiStreamingServer[agentv1.PlayRequest, agentv1.PlayResponse]) error {
	n := a.opened()
	for {
		req, err := s.Recv()
		if err != nil {
			return nil
		}
		a.called(n, req)
		if err := s.Send(&agentv1.PlayResponse{Call: req.GetCall(), Act: &agentv1.ActResponse{Action: pass}}); err != nil {
			return nil
		}
	}
}

// localAgents serves "local:NAME" addresses, every one by the same streamAgent, reusable or
// not, and counts what it opens and closes.
type localAgents struct {
	reusable bool
	client   agentv1.AgentServiceClient
	mu       sync.Mutex
	opened   int
	closed   int
}

func newLocalAgents(t *testing.T, reusable bool) (*localAgents, *streamAgent) {
	t.Helper()
	agent := &streamAgent{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, agent)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	cc, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return &localAgents{reusable: reusable, client: agentv1.NewAgentServiceClient(cc)}, agent
}

func (l *localAgents) Open(_ context.Context, addr string) (*agentconn.Local, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.opened++
	return &agentconn.Local{Client: l.client, Reusable: l.reusable, Info: &gamev1.AgentInfo{Name: addr},
		Close: func() error {
			l.mu.Lock()
			defer l.mu.Unlock()
			l.closed++
			return nil
		}}, nil
}

func (l *localAgents) Check(string) error { return nil }

func (l *localAgents) counts() (opened, closed int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.opened, l.closed
}

// play makes calls through c as a match would, each observation carrying the same long
// briefing, so that a call may leave out what the one before carried.
func play(t *testing.T, c *agentconn.Conn, calls int) {
	t.Helper()
	briefing := strings.Repeat("The same rules, line after line.\n", 20)
	for i := range calls {
		obs := &agentv1.Observation{Turn: int32(i + 1), Briefing: briefing}
		if _, err := c.Client.Act(context.Background(), &agentv1.ActRequest{Observation: obs}); err != nil {
			t.Fatal(err)
		}
	}
}

// A reusable local agent's Conn, closed, is handed to the next Open of its address with its
// Play stream, and the first call of each match sends the observation whole; an agent that is
// not reusable is opened and closed for every match.
func TestReusableLocalAgentKeepsItsStream(t *testing.T) {
	for _, reusable := range []bool{true, false} {
		t.Run(fmt.Sprintf("reusable %v", reusable), func(t *testing.T) {
			local, agent := newLocalAgents(t, reusable)
			pool := agentconn.NewPool()
			r := &agentconn.Resolver{Builtins: local, Pool: pool}
			for range 3 {
				c, err := r.Open(context.Background(), "builtin:same")
				if err != nil {
					t.Fatal(err)
				}
				play(t, c, 3)
				c.Close()
				c.Close() // twice: kept once
			}
			opened, closed := local.counts()
			streams := agent.seen()
			want := [][]bool{{false, true, true}, {false, true, true}, {false, true, true}}
			if reusable {
				want = [][]bool{{false, true, true, false, true, true, false, true, true}}
				if opened != 1 || closed != 0 {
					t.Errorf("opened %d times and closed %d, want once and not yet", opened, closed)
				}
			} else if opened != 3 || closed != 3 {
				t.Errorf("opened %d times and closed %d, want 3 and 3", opened, closed)
			}
			if fmt.Sprint(streams) != fmt.Sprint(want) {
				t.Errorf("calls per stream, leaving out or not: %v, want %v", streams, want)
			}
			pool.Close()
			if _, closed := local.counts(); closed != opened {
				t.Errorf("after the pool closed, %d of %d opened agents are closed", closed, opened)
			}
		})
	}
}

// Conns in use are never handed out twice; the pool keeps at most Size of them, and none idle
// for longer than Idle.
func TestReusableLocalAgentBounds(t *testing.T) {
	local, _ := newLocalAgents(t, true)
	pool := &agentconn.Pool{Size: 2}
	defer pool.Close()
	r := &agentconn.Resolver{Builtins: local, Pool: pool}
	open := func() *agentconn.Conn {
		c, err := r.Open(context.Background(), "builtin:same")
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b, c := open(), open(), open()
	if a == b || b == c || a == c {
		t.Fatal("one Conn lent to two users at once")
	}
	for _, x := range []*agentconn.Conn{a, b, c} {
		x.Close()
	}
	if opened, closed := local.counts(); opened != 3 || closed != 1 {
		t.Errorf("opened %d and closed %d, want 3 and 1 (the pool keeps 2)", opened, closed)
	}
	if d := open(); d != c && d != b {
		t.Error("a kept Conn was not handed out again")
	}

	// A caller naming many addresses (a request may name any settings) is bounded the same way.
	many, _ := newLocalAgents(t, true)
	few := &agentconn.Pool{Size: 2}
	defer few.Close()
	rm := &agentconn.Resolver{Builtins: many, Pool: few}
	var conns []*agentconn.Conn
	for i := range 5 {
		c, err := rm.Open(context.Background(), fmt.Sprintf("builtin:same?n=%d", i))
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	agentconn.CloseAll(conns)
	if opened, closed := many.counts(); opened != 5 || closed != 3 {
		t.Errorf("5 addresses: opened %d and closed %d, want 5 and 3 (the pool keeps 2 in all)", opened, closed)
	}

	stale, _ := newLocalAgents(t, true)
	quick := &agentconn.Pool{Idle: 1} // anything kept before the next put is stale
	defer quick.Close()
	rq := &agentconn.Resolver{Builtins: stale, Pool: quick}
	first, _ := rq.Open(context.Background(), "builtin:one")
	second, _ := rq.Open(context.Background(), "builtin:two")
	first.Close()
	second.Close()
	if opened, closed := stale.counts(); opened != 2 || closed != 1 {
		t.Errorf("opened %d and closed %d, want the Conn kept first closed when the second came back", opened, closed)
	}
}
