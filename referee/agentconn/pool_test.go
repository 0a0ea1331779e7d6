package agentconn_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/agentconn"
)

// acceptCounter counts the connections it accepts.
type acceptCounter struct {
	net.Listener
	accepted atomic.Int32
}

func (l *acceptCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// countedAgent is an agent served on lis until the test ends (or stop is called): it
// describes itself as version v and counts the connections and the Describe calls it gets.
type countedAgent struct {
	agentv1.UnimplementedAgentServiceServer
	lis       *acceptCounter
	version   string
	describes atomic.Int32
	stop      func()
}

func serveCounted(t *testing.T, lis net.Listener, version string) *countedAgent {
	t.Helper()
	a := &countedAgent{lis: &acceptCounter{Listener: lis}, version: version}
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, a)
	done := make(chan struct{})
	go func() { defer close(done); srv.Serve(a.lis) }()
	var once sync.Once
	a.stop = func() { once.Do(func() { srv.Stop(); <-done }) }
	t.Cleanup(a.stop)
	return a
}

func (a *countedAgent) Act(context.Context, *agentv1.ActRequest) (*agentv1.ActResponse, error) {
	return &agentv1.ActResponse{Action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}}, nil
}

func (a *countedAgent) Describe(context.Context, *agentv1.DescribeRequest) (*agentv1.DescribeResponse, error) {
	a.describes.Add(1)
	return &agentv1.DescribeResponse{Agent: &gamev1.AgentInfo{Name: "counted", Version: a.version}}, nil
}

func describeVia(t *testing.T, c *agentconn.Conn) string {
	t.Helper()
	info, err := c.Describe(context.Background(), testTimeout)
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	return info.GetVersion()
}

// Every match at one address shares one connection through a pool; without a pool each
// opens its own.
func TestPoolSharesOneConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		pool *agentconn.Pool
		want int32
	}{{"pooled", agentconn.NewPool(), 1}, {"unpooled", nil, 5}} {
		t.Run(tc.name, func(t *testing.T) {
			lis, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			a := serveCounted(t, lis, "1")
			r := &agentconn.Resolver{Pool: tc.pool}
			if tc.pool != nil {
				defer tc.pool.Close()
			}
			var conns []*agentconn.Conn
			for range 5 {
				c, err := r.Open(context.Background(), "grpc://"+lis.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
				_, err = c.Client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}})
				cancel()
				if err != nil {
					t.Fatalf("Act: %v", err)
				}
				conns = append(conns, c)
			}
			agentconn.CloseAll(conns)
			if got := a.lis.accepted.Load(); got != tc.want {
				t.Errorf("five matches opened %d connections to the agent, want %d", got, tc.want)
			}
			if tc.pool != nil {
				// Closing the matches' Conns leaves the connection for the next match.
				c, err := r.Open(context.Background(), "grpc://"+lis.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if v := describeVia(t, c); v != "1" || a.lis.accepted.Load() != 1 || tc.pool.Len() != 1 {
					t.Errorf("after the matches closed: version %q, %d connections accepted, %d pooled", v, a.lis.accepted.Load(), tc.pool.Len())
				}
			}
		})
	}
}

// The pool keeps Describe's answer per connection, and asks again once the connection was
// lost: an agent restarted on the same address as a new version is described as that.
func TestPoolDescribeKeptUntilReconnect(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	first := serveCounted(t, lis, "1")
	pool := agentconn.NewPool()
	defer pool.Close()
	r := &agentconn.Resolver{Pool: pool}
	open := func() *agentconn.Conn {
		c, err := r.Open(context.Background(), "grpc://"+addr)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c1, c2 := open(), open()
	if v := knownVersion(c2); v != "" {
		t.Fatalf("before any Describe, the agent's description is known as version %q", v)
	}
	for _, c := range []*agentconn.Conn{c1, c2, c1} {
		if v := describeVia(t, c); v != "1" {
			t.Fatalf("the agent described itself as version %q, want 1", v)
		}
	}
	if n := first.describes.Load(); n != 1 {
		t.Errorf("three Describes over one connection reached the agent %d times, want 1", n)
	}
	if v := knownVersion(c2); v != "1" {
		t.Errorf("once described, the agent is known as version %q, want 1", v)
	}
	first.stop()
	lis2, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the address %s cannot be taken again at once: %v", addr, err)
	}
	serveCounted(t, lis2, "2")
	deadline := time.Now().Add(testTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		resp, err := c2.Client.Describe(ctx, &agentv1.DescribeRequest{})
		cancel()
		if err == nil && resp.GetAgent().GetVersion() == "2" && knownVersion(c1) == "2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the restarted agent is still described as %v (%v)", resp.GetAgent(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	agentconn.CloseAll([]*agentconn.Conn{c1, c2})
}

// A closed pool closes its connections and opens no more; connections idle past Idle, and the
// idle ones past Size, are closed when the next one is opened.
func TestPoolCloseAndEvict(t *testing.T) {
	addrs := make([]string, 3)
	for i := range addrs {
		addrs[i] = "grpc://" + serveAgent(t, "a")
	}
	pool := &agentconn.Pool{Size: 2}
	r := &agentconn.Resolver{Pool: pool}
	var conns []*agentconn.Conn
	for _, a := range addrs[:2] {
		c, err := r.Open(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	// Both in use: a third address is pooled all the same (in-use connections never close).
	c3, err := r.Open(context.Background(), addrs[2])
	if err != nil {
		t.Fatal(err)
	}
	if pool.Len() != 3 {
		t.Errorf("%d pooled, want 3: connections in use are kept whatever the size", pool.Len())
	}
	conns[0].Close()
	c3.Close()
	again, err := r.Open(context.Background(), addrs[1]) // in use: no new connection, no eviction
	if err != nil {
		t.Fatal(err)
	}
	again.Close()
	if pool.Len() != 3 {
		t.Errorf("%d pooled after reusing one, want 3", pool.Len())
	}
	pool.Idle = time.Nanosecond
	fresh := "grpc://" + serveAgent(t, "b")
	c4, err := r.Open(context.Background(), fresh)
	if err != nil {
		t.Fatal(err)
	}
	defer c4.Close()
	// addrs[0] and addrs[2] were idle: closed; addrs[1] is still in use by conns[1].
	if pool.Len() != 2 {
		t.Errorf("%d pooled after idle ones expired, want 2", pool.Len())
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := conns[1].Client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}}); err != nil {
		t.Errorf("a connection in use was closed: %v", err)
	}
	pool.Close()
	if _, err := conns[1].Client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}}); err == nil {
		t.Error("a call through a closed pool succeeded")
	}
	if _, err := r.Open(context.Background(), addrs[0]); !errors.Is(err, agentconn.ErrPoolClosed) {
		t.Errorf("Open through a closed pool: %v, want ErrPoolClosed", err)
	}
	conns[1].Close()
}

// knownVersion is the version of the agent as c knows it without asking ("" when unknown).
func knownVersion(c *agentconn.Conn) string {
	k, ok := c.Client.(interface {
		KnownDescription() *agentv1.DescribeResponse
	})
	if !ok {
		return "no KnownDescription"
	}
	return k.KnownDescription().GetAgent().GetVersion()
}
