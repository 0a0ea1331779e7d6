package sdk

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// hostedKey is the metadata key naming which hosted agent a call is for.
const hostedKey = "parley-hosted-agent"

// ErrHostClosed is returned by Host.Serve once the host is closed.
var ErrHostClosed = errors.New("sdk: host closed")

// Host serves any number of agents on one loopback gRPC server, reached through one client
// connection: a process hosting agents of its own (a built-in agent for every seat of every
// match) pays for a server, a connection and their goroutines once, not per agent. Every
// agent it serves has a client of its own whose calls reach that agent only (they name it in
// their metadata), until the agent is let go. The server starts with the first agent and
// stops with Close.
type Host struct {
	opts []Option

	start sync.Once
	err   error // of starting
	cc    *grpc.ClientConn
	stop  func() error

	mu     sync.RWMutex
	agents map[string]*service
	next   uint64
	closed bool
}

// NewHost returns a host whose server takes opts (gRPC server options, grace period, logger);
// each agent's own options (WithInfo) go to Serve.
func NewHost(opts ...Option) *Host { return &Host{opts: opts} }

// Serve starts serving a and returns a client of it and release, which stops serving it
// (calls made after that fail with Unavailable; calls in flight finish).
func (h *Host) Serve(a Agent, opts ...Option) (agentv1.AgentServiceClient, func() error, error) {
	h.start.Do(h.listen)
	if h.err != nil {
		return nil, nil, h.err
	}
	o := buildOptions(a, append(append([]Option(nil), h.opts...), opts...))
	s := newService(a, o)
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, nil, ErrHostClosed
	}
	h.next++
	key := strconv.FormatUint(h.next, 36)
	if h.agents == nil {
		h.agents = make(map[string]*service)
	}
	h.agents[key] = s
	h.mu.Unlock()
	var once sync.Once
	release := func() error {
		once.Do(func() {
			h.mu.Lock()
			delete(h.agents, key)
			h.mu.Unlock()
		})
		return nil
	}
	return &hostedClient{inner: agentv1.NewAgentServiceClient(h.cc), key: key}, release, nil
}

// Len returns how many agents the host serves now.
func (h *Host) Len() int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return len(h.agents)
}

// Close stops the server (letting calls in flight finish for a moment) and lets every agent
// go. It is safe to call more than once.
func (h *Host) Close() error {
	h.start.Do(func() { h.err = ErrHostClosed }) // never started: it never will
	h.mu.Lock()
	already := h.closed
	h.closed, h.agents = true, nil
	h.mu.Unlock()
	if already || h.stop == nil {
		return nil
	}
	return h.stop()
}

// listen starts the server on a free loopback port and dials it.
func (h *Host) listen() {
	o := buildOptions(nil, append([]Option{WithGracePeriod(time.Second)}, h.opts...))
	cc, stop, err := serveLoopback(agentServer(&router{h: h}, o), o.gracePeriod)
	if err != nil {
		h.err = fmt.Errorf("sdk: host: %w", err)
		return
	}
	h.cc, h.stop = cc, stop
}

// lookup finds the agent a call names.
func (h *Host) lookup(ctx context.Context) (*service, error) {
	keys := metadata.ValueFromIncomingContext(ctx, hostedKey)
	if len(keys) != 1 {
		return nil, status.Error(codes.InvalidArgument, "sdk: host: the call names no hosted agent")
	}
	h.mu.RLock()
	s := h.agents[keys[0]]
	h.mu.RUnlock()
	if s == nil {
		return nil, status.Error(codes.Unavailable, "sdk: host: the agent is no longer served")
	}
	return s, nil
}

// router passes each call to the hosted agent it names.
type router struct {
	agentv1.UnimplementedAgentServiceServer
	h *Host
}

func (r *router) Act(ctx context.Context, req *agentv1.ActRequest) (*agentv1.ActResponse, error) {
	s, err := r.h.lookup(ctx)
	if err != nil {
		return nil, err
	}
	return s.Act(ctx, req)
}

func (r *router) Describe(ctx context.Context, req *agentv1.DescribeRequest) (*agentv1.DescribeResponse, error) {
	s, err := r.h.lookup(ctx)
	if err != nil {
		return nil, err
	}
	return s.Describe(ctx, req)
}

func (r *router) Play(stream agentv1.AgentService_PlayServer) error {
	s, err := r.h.lookup(stream.Context())
	if err != nil {
		return err
	}
	return s.Play(stream)
}

// hostedClient calls one hosted agent.
type hostedClient struct {
	inner agentv1.AgentServiceClient
	key   string
}

func (c *hostedClient) Act(ctx context.Context, in *agentv1.ActRequest, opts ...grpc.CallOption) (*agentv1.ActResponse, error) {
	return c.inner.Act(metadata.AppendToOutgoingContext(ctx, hostedKey, c.key), in, opts...)
}

func (c *hostedClient) Describe(ctx context.Context, in *agentv1.DescribeRequest, opts ...grpc.CallOption) (*agentv1.DescribeResponse, error) {
	return c.inner.Describe(metadata.AppendToOutgoingContext(ctx, hostedKey, c.key), in, opts...)
}

func (c *hostedClient) Play(ctx context.Context, opts ...grpc.CallOption) (grpc.BidiStreamingClient[agentv1.PlayRequest, agentv1.PlayResponse], error) {
	return c.inner.Play(metadata.AppendToOutgoingContext(ctx, hostedKey, c.key), opts...)
}
