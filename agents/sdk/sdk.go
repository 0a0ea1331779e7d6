// Package sdk serves a Parley agent over gRPC. An agent is one type with one method:
//
//	type myAgent struct{}
//	func (myAgent) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) { ... }
//
//	err := sdk.Serve(ctx, "127.0.0.1:50051", myAgent{}, sdk.WithInfo(&gamev1.AgentInfo{Name: "mine"}))
//
// The server also answers standard gRPC health checks and server reflection, turns a panic in
// Act into an error status instead of a crash, serves Play (Act over one stream per seat of a
// match, putting back what a call leaves out as the previous one's), and stops gracefully when
// ctx ends. A Host serves many agents of one process on one loopback server.
package sdk

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Agent decides an action from an observation. Act is called once per move with a deadline
// in ctx; it may be called concurrently for different matches.
type Agent interface {
	Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error)
}

// AgentFunc adapts a function to Agent.
type AgentFunc func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error)

// Act calls f.
func (f AgentFunc) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	return f(ctx, obs)
}

// Describer is implemented by agents that describe themselves; WithInfo overrides it.
type Describer interface {
	Describe() *gamev1.AgentInfo
}

// Stateless is implemented by an agent whose answers depend on each observation alone: it
// keeps nothing between calls and draws no randomness of its own, so one instance may play
// match after match without one match telling in the next (a referee then keeps its
// connection to it, and the connection's Play streams, from one match to the next).
type Stateless interface {
	Stateless() bool
}

// IsStateless reports whether a says it is Stateless.
func IsStateless(a Agent) bool {
	s, ok := a.(Stateless)
	return ok && s.Stateless()
}

// BriefingSkipper is implemented by an agent that never reads Observation.briefing (it acts
// on the typed fields): the referee then writes no briefing for it, and its observations come
// with an empty one (agentv1.Observing.skips_briefing). Agents that act on the text, language
// models, must not say so.
type BriefingSkipper interface {
	SkipsBriefing() bool
}

// SkipsBriefing reports whether a says it is a BriefingSkipper.
func SkipsBriefing(a Agent) bool {
	s, ok := a.(BriefingSkipper)
	return ok && s.SkipsBriefing()
}

// ObservingOf is what Describe says of how a, served by this SDK, takes its observations: put
// back together from what each Play call leaves out, on streams that span matches (the SDK's
// Play follows any stream), and without a briefing when a says it reads none.
func ObservingOf(a Agent) *agentv1.Observing {
	return &agentv1.Observing{StreamsSpanMatches: true, SkipsBriefing: SkipsBriefing(a)}
}

type options struct {
	info        *gamev1.AgentInfo
	logger      *slog.Logger
	grpcOptions []grpc.ServerOption
	gracePeriod time.Duration
}

// Option configures a served agent.
type Option func(*options)

// WithInfo sets what Describe answers.
func WithInfo(info *gamev1.AgentInfo) Option { return func(o *options) { o.info = info } }

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithServerOptions adds gRPC server options.
func WithServerOptions(opts ...grpc.ServerOption) Option {
	return func(o *options) { o.grpcOptions = append(o.grpcOptions, opts...) }
}

// WithGracePeriod sets how long in-flight calls may finish when the server stops (default 5s).
func WithGracePeriod(d time.Duration) Option { return func(o *options) { o.gracePeriod = d } }

// NewServer returns a gRPC server with the agent, health checking and reflection registered,
// not yet serving. Use it to serve on a listener of your own; Serve does all of it.
func NewServer(a Agent, opts ...Option) *grpc.Server {
	return newServer(a, buildOptions(a, opts))
}

func newServer(a Agent, o *options) *grpc.Server {
	srv := agentServer(newService(a, o), o)
	reflection.Register(srv)
	return srv
}

// agentServer returns a server of impl as AgentService, with the health service every agent
// serves.
func agentServer(impl agentv1.AgentServiceServer, o *options) *grpc.Server {
	srv := grpc.NewServer(serverOptions(o)...)
	agentv1.RegisterAgentServiceServer(srv, impl)
	hs := health.NewServer()
	hs.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	hs.SetServingStatus(agentv1.AgentService_ServiceDesc.ServiceName, healthpb.HealthCheckResponse_SERVING)
	healthpb.RegisterHealthServer(srv, hs)
	return srv
}

// windowSize is the HTTP/2 flow-control window of each connection and stream the agent
// serves. A window of fixed size turns off gRPC's bandwidth estimate, whose PING (sent for a
// message received while none is in flight: on a stream of moves, nearly every one) and its
// answer cost every move frames to write and read on both sides. The referee's largest
// observation (512 KiB) fits in it twice.
const windowSize = 1 << 20

// serverOptions are the gRPC server options of o: a pool of stream workers first (a call
// handled on a worker's goroutine finds its stack already grown for decoding an observation;
// when all are busy a call gets a goroutine of its own, so none waits), then the caller's.
func serverOptions(o *options) []grpc.ServerOption {
	return append([]grpc.ServerOption{
		grpc.NumStreamWorkers(uint32(4 * runtime.GOMAXPROCS(0))),
		grpc.InitialWindowSize(windowSize), grpc.InitialConnWindowSize(windowSize),
	}, o.grpcOptions...)
}

// InfoOf returns what an agent served with opts answers to Describe.
func InfoOf(a Agent, opts ...Option) *gamev1.AgentInfo {
	return proto.CloneOf(buildOptions(a, opts).info)
}

func buildOptions(a Agent, opts []Option) *options {
	o := &options{logger: slog.New(slog.DiscardHandler), gracePeriod: 5 * time.Second}
	if d, ok := a.(Describer); ok {
		o.info = d.Describe()
	}
	for _, opt := range opts {
		opt(o)
	}
	if o.info == nil {
		o.info = &gamev1.AgentInfo{Name: fmt.Sprintf("%T", a)}
	}
	return o
}

// Serve listens on addr and serves the agent until ctx ends, then stops gracefully.
func Serve(ctx context.Context, addr string, a Agent, opts ...Option) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("sdk: listen on %s: %w", addr, err)
	}
	return ServeListener(ctx, lis, a, opts...)
}

// ServeListener serves the agent on lis until ctx ends, then stops gracefully. It closes lis.
func ServeListener(ctx context.Context, lis net.Listener, a Agent, opts ...Option) error {
	o := buildOptions(a, opts)
	return serve(ctx, newServer(a, o), lis, o.gracePeriod)
}

// serve runs srv on lis until ctx ends, then stops it gracefully, for grace at most.
func serve(ctx context.Context, srv *grpc.Server, lis net.Listener, grace time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	stopped := make(chan struct{})
	go func() {
		srv.GracefulStop()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(grace):
		srv.Stop()
	}
	if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// service adapts an Agent to the generated AgentService.
type service struct {
	agentv1.UnimplementedAgentServiceServer
	agent     Agent
	info      *gamev1.AgentInfo
	observing *agentv1.Observing
	logger    *slog.Logger
}

func newService(a Agent, o *options) *service {
	return &service{agent: a, info: o.info, observing: ObservingOf(a), logger: o.logger}
}

var _ agentv1.AgentServiceServer = (*service)(nil)

func (s *service) Act(ctx context.Context, req *agentv1.ActRequest) (resp *agentv1.ActResponse, err error) {
	obs := req.GetObservation()
	if obs == nil {
		return nil, status.Error(codes.InvalidArgument, "act: request has no observation")
	}
	defer func() {
		if p := recover(); p != nil {
			s.logger.Error("agent panicked", "match_id", obs.GetMatchId(), "seat", obs.GetSeat(), "turn", obs.GetTurn(), "panic", p)
			resp, err = nil, status.Errorf(codes.Internal, "act: agent panicked: %v", p)
		}
	}()
	if err := ctx.Err(); err != nil {
		// The referee stopped waiting before the agent began (the call queued behind others):
		// no work is worth starting.
		return nil, status.FromContextError(err).Err()
	}
	action, err := s.agent.Act(ctx, obs)
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return nil, err
		}
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			// Out of time is the referee's business to classify, not an agent bug.
			return nil, status.FromContextError(err).Err()
		}
		return nil, status.Errorf(codes.Internal, "act: %v", err)
	}
	return &agentv1.ActResponse{Action: action, Turn: obs.GetTurn()}, nil
}

func (s *service) Describe(context.Context, *agentv1.DescribeRequest) (*agentv1.DescribeResponse, error) {
	return &agentv1.DescribeResponse{Agent: proto.CloneOf(s.info), Observing: proto.CloneOf(s.observing)}, nil
}
