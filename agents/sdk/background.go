package sdk

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Background serves a on addr (host:port; port 0 picks a free one) in a goroutine. It returns
// the address it listens on and stop, which stops the server gracefully and waits for it.
// Tests and benchmarks that host bots in their own process use it.
func Background(addr string, a Agent, opts ...Option) (bound string, stop func(), err error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("sdk: listen on %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ServeListener(ctx, lis, a, opts...)
	}()
	return lis.Addr().String(), func() { cancel(); <-done }, nil
}

// Delay returns an agent that waits d before letting a answer each call (giving up when the
// call's context ends first): a bot with a fixed thinking time, for load tests. It describes
// itself as a does.
func Delay(a Agent, d time.Duration) Agent { return delayed{a: a, d: d} }

type delayed struct {
	a Agent
	d time.Duration
}

func (w delayed) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	t := time.NewTimer(w.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
	if err := ctx.Err(); err != nil {
		// Also when both were ready at once (a goroutine woken late on a busy machine).
		return nil, err
	}
	return w.a.Act(ctx, obs)
}

func (w delayed) Describe() *gamev1.AgentInfo { return InfoOf(w.a) }

// SkipsBriefing is a's: waiting reads nothing.
func (w delayed) SkipsBriefing() bool { return SkipsBriefing(w.a) }

// Gated returns an agent whose answers wait until gate is closed (or the call's context ends):
// tests use it to hold a match at a move of their choosing.
func Gated(a Agent, gate <-chan struct{}) Agent {
	return AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return a.Act(ctx, obs)
	})
}

// Loopback serves a on a free loopback port and returns a client of it, and stop, which stops
// the server (letting calls in flight finish for a moment) and closes the client. It is how a
// process hosts an agent of its own, a built-in agent or a person's seat, over real gRPC like
// any other agent.
func Loopback(a Agent, opts ...Option) (client agentv1.AgentServiceClient, stop func() error, err error) {
	o := buildOptions(a, append([]Option{WithGracePeriod(time.Second)}, opts...))
	conn, stop, err := serveLoopback(newServer(a, o), o.gracePeriod)
	if err != nil {
		return nil, nil, err
	}
	return agentv1.NewAgentServiceClient(conn), stop, nil
}

// serveLoopback serves srv on a free loopback port and dials it. stop closes the client, then
// stops the server, letting calls in flight finish for grace at most.
func serveLoopback(srv *grpc.Server, grace time.Duration) (*grpc.ClientConn, func() error, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("sdk: listen on loopback: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, srv, lis, grace) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		cancel()
		<-done
		return nil, nil, fmt.Errorf("sdk: dial %s: %w", lis.Addr(), err)
	}
	return conn, func() error {
		err := conn.Close()
		cancel()
		return errors.Join(err, <-done)
	}, nil
}
