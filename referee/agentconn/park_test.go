package agentconn_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/agentconn"
)

// parkAgent answers Play calls with a pass, notes per stream whether each call left out what
// the one before carried, says in Describe whether its streams span matches, and can close
// every stream it has open (as an agent that lets idle streams go does).
type parkAgent struct {
	agentv1.UnimplementedAgentServiceServer
	streamLog
	spans bool

	mu    sync.Mutex
	ended int
	kill  chan struct{}
	hold  chan struct{} // when set, calls are not answered until it is closed
}

func (a *parkAgent) Describe(context.Context, *agentv1.DescribeRequest) (*agentv1.DescribeResponse, error) {
	return &agentv1.DescribeResponse{Agent: &gamev1.AgentInfo{Name: "park"}, Observing: &agentv1.Observing{StreamsSpanMatches: a.spans}}, nil
}

func (a *parkAgent) Play(s grpc.BidiStreamingServer[agentv1.PlayRequest, agentv1.PlayResponse]) error {
	n := a.opened()
	a.mu.Lock()
	if a.kill == nil {
		a.kill = make(chan struct{})
	}
	kill, hold := a.kill, a.hold
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.ended++
		a.mu.Unlock()
	}()
	reqs := make(chan *agentv1.PlayRequest)
	go func() {
		defer close(reqs)
		for {
			req, err := s.Recv()
			if err != nil {
				return
			}
			select {
			case reqs <- req:
			case <-s.Context().Done():
				return
			}
		}
	}()
	for {
		select {
		case <-kill:
			return status.Error(codes.Unavailable, "park agent: closing its streams")
		case req, ok := <-reqs:
			if !ok {
				return nil
			}
			a.called(n, req)
			if hold != nil {
				select {
				case <-hold:
				case <-s.Context().Done():
					return nil
				}
			}
			if err := s.Send(&agentv1.PlayResponse{Call: req.GetCall(), Act: &agentv1.ActResponse{Action: pass}}); err != nil {
				return nil
			}
		}
	}
}

// closeStreams ends every stream open now and waits until their handlers have returned.
func (a *parkAgent) closeStreams(t *testing.T) {
	open := len(a.seen())
	a.mu.Lock()
	if a.kill != nil {
		close(a.kill)
	}
	a.kill = make(chan struct{})
	a.mu.Unlock()
	waitFor(t, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.ended >= open
	})
}

// waitFor polls cond until it holds, failing the test after a generous deadline.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in time")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// playSelf opens two seats at addr through r, as a match of the agent against itself would,
// makes three calls on each, and closes them.
func playSelf(t *testing.T, r *agentconn.Resolver, addr string) {
	t.Helper()
	conns, err := r.OpenAll(context.Background(), []string{addr, addr})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range conns {
		if _, err := c.Describe(context.Background(), time.Minute); err != nil {
			t.Fatal(err)
		}
		play(t, c, 3)
	}
	agentconn.CloseAll(conns)
}

// An agent whose streams span matches plays match after match on the streams of its pooled
// connection, each match's first call sent whole; one that does not gets a stream per seat and
// match, as before.
func TestPooledStreamsSpanMatches(t *testing.T) {
	for _, spans := range []bool{true, false} {
		t.Run(fmt.Sprintf("spans %v", spans), func(t *testing.T) {
			a := &parkAgent{spans: spans}
			addr := agentconn.GRPCPrefix + serveRaw(t, a)
			pool := agentconn.NewPool()
			defer pool.Close()
			r := &agentconn.Resolver{Pool: pool}
			for range 3 {
				playSelf(t, r, addr)
			}
			seat := []bool{false, true, true}
			want := [][]bool{seat, seat, seat, seat, seat, seat}
			if spans {
				three := append(append(append([]bool(nil), seat...), seat...), seat...)
				want = [][]bool{three, three}
			}
			if got := a.seen(); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("calls per stream, leaving out or not: %v, want %v", got, want)
			}
		})
	}
}

// A parked stream the agent closed meanwhile is replaced, the call made again on a new one
// without failing; and the pool's Close ends the streams parked.
func TestParkedStreamClosedByTheAgent(t *testing.T) {
	a := &parkAgent{spans: true}
	addr := agentconn.GRPCPrefix + serveRaw(t, a)
	pool := agentconn.NewPool()
	r := &agentconn.Resolver{Pool: pool}
	playSelf(t, r, addr)
	a.closeStreams(t)
	playSelf(t, r, addr) // fails the test if a call fails
	seat := []bool{false, true, true}
	if got, want := a.seen(), [][]bool{seat, seat, seat, seat}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("calls per stream: %v, want two streams closed and two new", got)
	}
	pool.Close()
	waitFor(t, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.ended == 4
	})
}

// Closing a Conn while a call waits on a stream that would be parked ends the call at once,
// and the stream is not parked: the next match opens a new one.
func TestCloseEndsACallWaitingOnAParkableStream(t *testing.T) {
	hold := make(chan struct{})
	a := &parkAgent{spans: true, hold: hold}
	addr := agentconn.GRPCPrefix + serveRaw(t, a)
	pool := agentconn.NewPool()
	defer pool.Close()
	r := &agentconn.Resolver{Pool: pool}
	c, err := r.Open(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Describe(context.Background(), time.Minute); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Client.Act(context.Background(), &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: 1}})
		done <- err
	}()
	waitFor(t, func() bool { return len(a.seen()) == 1 && len(a.seen()[0]) == 1 })
	c.Close()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("the call waiting when its Conn closed was answered")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the call waiting when its Conn closed did not end")
	}
	close(hold)
	playSelf(t, r, addr)
	if got := len(a.seen()); got != 3 {
		t.Errorf("%d streams opened, want the closed one and two new", got)
	}
}
