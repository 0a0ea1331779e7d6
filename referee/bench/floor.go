package bench

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// FloorBytes is the size of the message a floor call carries each way: a small request, the
// size of a typical RPC's.
const FloorBytes = 200

// wrapperBytes is what a BytesValue of a few hundred bytes adds to them: the field's tag and
// length.
const wrapperBytes = 3

// echoMethod is the floor's one call: it answers with its request's first FloorBytes, as
// a move's observation is answered with a small action.
const echoMethod = "/parley.bench.v1.EchoService/Echo"

// echoService is a gRPC service with one unary call that echoes a bytes message: the floor a
// referee's move is measured against, a bare grpc-go call between two processes with nothing
// around it. It is written by hand (no contract: only the bench serves and calls it).
var echoService = grpc.ServiceDesc{
	ServiceName: "parley.bench.v1.EchoService",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{
		MethodName: "Echo",
		Handler: func(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
			in := new(wrapperspb.BytesValue)
			if err := dec(in); err != nil {
				return nil, err
			}
			in.Value = in.Value[:min(len(in.Value), FloorBytes-wrapperBytes)]
			return in, nil
		},
	}},
}

// ServeEcho serves the floor's echo call on lis with grpc-go's defaults until ctx ends.
func ServeEcho(ctx context.Context, lis net.Listener) error {
	srv := grpc.NewServer()
	srv.RegisterService(&echoService, struct{}{})
	stop := context.AfterFunc(ctx, srv.Stop)
	defer stop()
	if err := srv.Serve(lis); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// InProcessEcho serves the floor's echo call in this process, on a loopback port.
func InProcessEcho(ctx context.Context) (Echo, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Echo{}, fmt.Errorf("bench: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = ServeEcho(ctx, lis)
	}()
	return Echo{Addr: lis.Addr().String(), Stop: func() { cancel(); <-done }}, nil
}

// Echo is an echo server the floor calls go to.
type Echo struct {
	// Addr is its host:port.
	Addr string
	// CPU, for a server in a process of its own, is the CPU time that process has used; nil
	// for one in this process.
	CPU func() time.Duration
	// Stop stops it.
	Stop func()
}

// Floor makes n bare unary calls to e carrying size bytes there and at most FloorBytes back,
// concurrency at a time, over one connection (as the bare round trips to the bots go over one
// each). The CPU counted is this process's and e's.
func Floor(ctx context.Context, e Echo, concurrency, n, size int) (BareResult, error) {
	conn, err := grpc.NewClient(e.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return BareResult{}, err
	}
	defer conn.Close()
	cpu := func() time.Duration {
		t := cpuTime()
		if e.CPU != nil {
			t += e.CPU()
		}
		return t
	}
	msg := &wrapperspb.BytesValue{Value: make([]byte, max(size-wrapperBytes, 0))}
	var next atomic.Int64
	errs := make(chan error, concurrency)
	cpu0, start := cpu(), time.Now()
	var wg sync.WaitGroup
	for range concurrency {
		wg.Go(func() {
			out := new(wrapperspb.BytesValue)
			for next.Add(1) <= int64(n) {
				if err := conn.Invoke(ctx, echoMethod, msg, out); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	res := BareResult{Calls: n, Wall: time.Since(start), CPU: cpu() - cpu0}
	select {
	case err := <-errs:
		return res, fmt.Errorf("bench: floor call: %w", err)
	default:
	}
	return res, nil
}
