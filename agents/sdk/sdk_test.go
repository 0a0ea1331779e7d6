package sdk_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// testTimeout bounds every wait of these tests; none of them sleeps.
const testTimeout = time.Minute

// described is an agent that also describes itself.
type described struct {
	sdk.AgentFunc
	info *gamev1.AgentInfo
}

func (d described) Describe() *gamev1.AgentInfo { return d.info }

var rejectAction = &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}

func rejecting(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
	return rejectAction, nil
}

// server is an agent served by sdk.ServeListener on a loopback port.
type server struct {
	addr   string
	conn   *grpc.ClientConn
	client agentv1.AgentServiceClient
	cancel context.CancelFunc
	done   chan error // ServeListener's result
}

// serve serves a on 127.0.0.1:0 and stops it when the test ends.
func serve(t *testing.T, a sdk.Agent, opts ...sdk.Option) *server {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &server{addr: lis.Addr().String(), cancel: cancel, done: make(chan error, 1)}
	go func() { s.done <- sdk.ServeListener(ctx, lis, a, opts...) }()
	s.conn, err = grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		cancel()
		t.Fatalf("dial: %v", err)
	}
	s.client = agentv1.NewAgentServiceClient(s.conn)
	t.Cleanup(func() {
		s.conn.Close()
		s.stop(t)
	})
	return s
}

// stop cancels the server's context and returns what ServeListener returned.
func (s *server) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case err, ok := <-s.done:
		if ok {
			close(s.done)
		}
		return err
	case <-time.After(testTimeout):
		t.Errorf("ServeListener did not return within %v of cancel", testTimeout)
		return errors.New("ServeListener did not return")
	}
}

// waitFor polls cond until it holds or the test times out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func callCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func TestDescribe(t *testing.T) {
	own := &gamev1.AgentInfo{Name: "own", Version: "2", Author: "me", Games: []string{"ultimatum"}, Description: "d"}
	given := &gamev1.AgentInfo{Name: "given", Version: "9"}
	tests := []struct {
		name  string
		agent sdk.Agent
		opts  []sdk.Option
		want  *gamev1.AgentInfo
	}{
		{name: "no description: the Go type", agent: sdk.AgentFunc(rejecting), want: &gamev1.AgentInfo{Name: "sdk.AgentFunc"}},
		{name: "Describer", agent: described{AgentFunc: rejecting, info: own}, want: own},
		{name: "WithInfo overrides a Describer", agent: described{AgentFunc: rejecting, info: own}, opts: []sdk.Option{sdk.WithInfo(given)}, want: given},
		{name: "WithInfo without a Describer", agent: sdk.AgentFunc(rejecting), opts: []sdk.Option{sdk.WithInfo(given)}, want: given},
		{name: "Describer answering nil", agent: described{AgentFunc: rejecting}, want: &gamev1.AgentInfo{Name: "sdk_test.described"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := serve(t, tc.agent, tc.opts...)
			resp, err := s.client.Describe(callCtx(t), &agentv1.DescribeRequest{})
			if err != nil {
				t.Fatalf("Describe: %v", err)
			}
			if !proto.Equal(resp.GetAgent(), tc.want) {
				t.Errorf("Describe = %v, want %v", resp.GetAgent(), tc.want)
			}
		})
	}
}

func TestAct(t *testing.T) {
	echo := sdk.AgentFunc(func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		return &agentv1.Action{
			Move:     &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: obs.GetMatchId()}}},
			Messages: []*gamev1.Message{{To: []int32{1 - obs.GetSeat()}, Text: obs.GetBriefing()}},
		}, nil
	})
	tests := []struct {
		name string
		obs  *agentv1.Observation
		want *agentv1.ActResponse
	}{
		{
			name: "turn echoed, action returned",
			obs:  &agentv1.Observation{MatchId: "m-7", Seat: 0, Turn: 7, Briefing: "hello"},
			want: &agentv1.ActResponse{Turn: 7, Action: &agentv1.Action{
				Move:     &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: "m-7"}}},
				Messages: []*gamev1.Message{{To: []int32{1}, Text: "hello"}},
			}},
		},
		{
			name: "empty observation is still an observation",
			obs:  &agentv1.Observation{},
			want: &agentv1.ActResponse{Action: &agentv1.Action{
				Move:     &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{}}},
				Messages: []*gamev1.Message{{To: []int32{1}}},
			}},
		},
	}
	s := serve(t, echo)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := s.client.Act(callCtx(t), &agentv1.ActRequest{Observation: tc.obs})
			if err != nil {
				t.Fatalf("Act: %v", err)
			}
			if !proto.Equal(resp, tc.want) {
				t.Errorf("Act = %v, want %v", resp, tc.want)
			}
		})
	}
}

func TestActErrors(t *testing.T) {
	detailed, err := status.New(codes.NotFound, "no such game here").WithDetails(
		&gamev1.Rejection{Code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, Message: "details survive"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		act     sdk.AgentFunc
		req     *agentv1.ActRequest
		code    codes.Code
		wantMsg string // exact status message when exact, else substring
		exact   bool
		// wantStatus, when set, is the whole status the client must see, details included.
		wantStatus *status.Status
	}{
		{
			name: "plain error becomes Internal",
			act:  func(context.Context, *agentv1.Observation) (*agentv1.Action, error) { return nil, errors.New("boom") },
			code: codes.Internal, wantMsg: "act: boom", exact: true,
		},
		{
			name: "status error passes through unchanged",
			act:  func(context.Context, *agentv1.Observation) (*agentv1.Action, error) { return nil, detailed.Err() },
			code: codes.NotFound, wantMsg: "no such game here", exact: true, wantStatus: detailed,
		},
		{
			name: "status error with another code",
			act: func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
				return nil, status.Error(codes.ResourceExhausted, "budget spent")
			},
			code: codes.ResourceExhausted, wantMsg: "budget spent", exact: true,
		},
		{
			name: "running out of time is DeadlineExceeded, not Internal",
			act: func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
				return nil, fmt.Errorf("thinking: %w", context.DeadlineExceeded)
			},
			code: codes.DeadlineExceeded,
		},
		{
			name: "a cancelled call is Canceled",
			act: func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
				return nil, context.Canceled
			},
			code: codes.Canceled,
		},
		{
			name: "panic becomes Internal",
			act:  func(context.Context, *agentv1.Observation) (*agentv1.Action, error) { panic("kaboom") },
			code: codes.Internal, wantMsg: "agent panicked: kaboom",
		},
		{
			name: "panic with an error value",
			act: func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
				var m map[string]int
				m["x"] = 1 // assignment to a nil map
				return nil, nil
			},
			code: codes.Internal, wantMsg: "agent panicked",
		},
		{
			name: "no observation is InvalidArgument",
			act: func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
				panic("Act must not be called without an observation")
			},
			req:  &agentv1.ActRequest{},
			code: codes.InvalidArgument, wantMsg: "no observation",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Turn 99 is the healthy call made after the failure.
			agent := sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
				if obs.GetTurn() == 99 {
					return rejectAction, nil
				}
				return tc.act(ctx, obs)
			})
			s := serve(t, agent)
			req := tc.req
			if req == nil {
				req = &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: 3}}
			}
			resp, err := s.client.Act(callCtx(t), req)
			if err == nil {
				t.Fatalf("Act = %v, want a %v error", resp, tc.code)
			}
			st, ok := status.FromError(err)
			if !ok {
				t.Fatalf("Act error %v is not a gRPC status", err)
			}
			if st.Code() != tc.code {
				t.Errorf("code = %v, want %v (%v)", st.Code(), tc.code, st.Message())
			}
			if tc.exact && st.Message() != tc.wantMsg || !strings.Contains(st.Message(), tc.wantMsg) {
				t.Errorf("message = %q, want %q", st.Message(), tc.wantMsg)
			}
			if tc.wantStatus != nil && !proto.Equal(st.Proto(), tc.wantStatus.Proto()) {
				t.Errorf("status = %v, want %v", st.Proto(), tc.wantStatus.Proto())
			}
			// The server keeps serving after the failure.
			resp, err = s.client.Act(callCtx(t), &agentv1.ActRequest{Observation: &agentv1.Observation{Turn: 99}})
			if err != nil {
				t.Fatalf("Act after the failure: %v", err)
			}
			if resp.GetTurn() != 99 || !proto.Equal(resp.GetAction(), rejectAction) {
				t.Errorf("Act after the failure = %v", resp)
			}
		})
	}
}

func TestHealth(t *testing.T) {
	s := serve(t, sdk.AgentFunc(rejecting))
	hc := healthpb.NewHealthClient(s.conn)
	tests := []struct {
		service string
		want    healthpb.HealthCheckResponse_ServingStatus
		code    codes.Code
	}{
		{service: "", want: healthpb.HealthCheckResponse_SERVING},
		{service: "parley.agent.v1.AgentService", want: healthpb.HealthCheckResponse_SERVING},
		{service: "parley.agent.v1.Other", code: codes.NotFound},
	}
	for _, tc := range tests {
		t.Run("service "+tc.service, func(t *testing.T) {
			resp, err := hc.Check(callCtx(t), &healthpb.HealthCheckRequest{Service: tc.service})
			if status.Code(err) != tc.code {
				t.Fatalf("Check(%q) error %v, want code %v", tc.service, err, tc.code)
			}
			if err == nil && resp.GetStatus() != tc.want {
				t.Errorf("Check(%q) = %v, want %v", tc.service, resp.GetStatus(), tc.want)
			}
		})
	}
}

func TestReflection(t *testing.T) {
	s := serve(t, sdk.AgentFunc(rejecting))
	stream, err := reflectionpb.NewServerReflectionClient(s.conn).ServerReflectionInfo(callCtx(t))
	if err != nil {
		t.Fatalf("ServerReflectionInfo: %v", err)
	}
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{ListServices: ""},
	}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	var names []string
	for _, svc := range resp.GetListServicesResponse().GetService() {
		names = append(names, svc.GetName())
	}
	for _, want := range []string{"parley.agent.v1.AgentService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %q, want it to include %q", names, want)
		}
	}
	// The agent service's descriptor can be fetched too, so tools like grpcurl can call it.
	if err := stream.Send(&reflectionpb.ServerReflectionRequest{
		MessageRequest: &reflectionpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "parley.agent.v1.AgentService"},
	}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	resp, err = stream.Recv()
	if err != nil {
		t.Fatalf("Recv: %v", err)
	}
	if len(resp.GetFileDescriptorResponse().GetFileDescriptorProto()) == 0 {
		t.Errorf("no file descriptor for parley.agent.v1.AgentService: %v", resp.GetErrorResponse())
	}
	stream.CloseSend()
}

func TestServeListenerStops(t *testing.T) {
	t.Run("cancel returns nil and stops serving", func(t *testing.T) {
		s := serve(t, sdk.AgentFunc(rejecting))
		if _, err := s.client.Describe(callCtx(t), &agentv1.DescribeRequest{}); err != nil {
			t.Fatalf("Describe before stop: %v", err)
		}
		if err := s.stop(t); err != nil {
			t.Fatalf("ServeListener = %v, want nil", err)
		}
		if _, err := s.client.Describe(callCtx(t), &agentv1.DescribeRequest{}); err == nil {
			t.Errorf("Describe after stop succeeded")
		}
	})

	t.Run("an in-flight call finishes during the grace period", func(t *testing.T) {
		entered, release := make(chan struct{}), make(chan struct{})
		slow := sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
			close(entered)
			<-release
			return rejectAction, nil
		})
		s := serve(t, slow, sdk.WithGracePeriod(testTimeout))
		result := make(chan error, 1)
		ctx := callCtx(t)
		go func() {
			_, err := s.client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}})
			result <- err
		}()
		<-entered
		stopped := make(chan error, 1)
		go func() { stopped <- s.stop(t) }()
		// Once the listener is closed the server is stopping; only then let the call finish.
		waitFor(t, "the listener to close", func() bool {
			c, err := net.Dial("tcp", s.addr)
			if err != nil {
				return true
			}
			c.Close()
			return false
		})
		close(release)
		if err := <-result; err != nil {
			t.Errorf("in-flight Act during graceful stop: %v", err)
		}
		if err := <-stopped; err != nil {
			t.Errorf("ServeListener = %v, want nil", err)
		}
	})

	t.Run("a call still running after the grace period is cut off", func(t *testing.T) {
		entered := make(chan struct{})
		stuck := sdk.AgentFunc(func(ctx context.Context, _ *agentv1.Observation) (*agentv1.Action, error) {
			close(entered)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		s := serve(t, stuck, sdk.WithGracePeriod(time.Millisecond))
		result := make(chan error, 1)
		ctx := callCtx(t)
		go func() {
			_, err := s.client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}})
			result <- err
		}()
		<-entered
		if err := s.stop(t); err != nil {
			t.Errorf("ServeListener = %v, want nil", err)
		}
		if err := <-result; err == nil {
			t.Errorf("Act cut off by the stop succeeded")
		}
	})
}

func TestServeBadAddress(t *testing.T) {
	err := sdk.Serve(context.Background(), "127.0.0.1:notaport", sdk.AgentFunc(rejecting))
	if err == nil || !strings.Contains(err.Error(), "127.0.0.1:notaport") {
		t.Errorf("Serve on a bad address = %v, want an error naming it", err)
	}
}

func TestNewServer(t *testing.T) {
	srv := sdk.NewServer(sdk.AgentFunc(rejecting), sdk.WithInfo(&gamev1.AgentInfo{Name: "x"}))
	defer srv.Stop()
	info := srv.GetServiceInfo()
	for _, want := range []string{"parley.agent.v1.AgentService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection"} {
		if _, ok := info[want]; !ok {
			t.Errorf("NewServer has no %s service", want)
		}
	}
}

// Delay holds each answer for its duration, and lets go when the call's context ends first;
// Background serves over real gRPC until stopped.
func TestBackgroundAndDelay(t *testing.T) {
	calls := 0
	inner := sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		calls++
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}, nil
	})
	const d = 50 * time.Millisecond
	addr, stop, err := sdk.Background("127.0.0.1:0", sdk.Delay(inner, d))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	client := agentv1.NewAgentServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	start := time.Now()
	if _, err := client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < d {
		t.Errorf("a delayed answer came after %v, before its %v", took, d)
	}
	short, cancelShort := context.WithTimeout(context.Background(), d/5)
	defer cancelShort()
	if _, err := client.Act(short, &agentv1.ActRequest{Observation: &agentv1.Observation{}}); status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("a call whose deadline ends first: %v, want DeadlineExceeded", err)
	}
	stop()
	if calls != 1 {
		t.Errorf("the inner agent answered %d calls, want 1 (the second gave up waiting)", calls)
	}
	if _, err := client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}}); err == nil {
		t.Error("a call after stop succeeded")
	}
}

// Gated answers only once its gate is closed, and gives up with the call's context.
func TestGated(t *testing.T) {
	pass := sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		return &agentv1.Action{}, nil
	})
	gate := make(chan struct{})
	a := sdk.Gated(pass, gate)
	short, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := a.Act(short, &agentv1.Observation{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("before the gate opens: %v, want the deadline", err)
	}
	close(gate)
	if _, err := a.Act(context.Background(), &agentv1.Observation{}); err != nil {
		t.Errorf("after the gate opens: %v", err)
	}
}

// A delayed agent describes itself as the agent it delays.
func TestDelayKeepsDescribe(t *testing.T) {
	got := sdk.InfoOf(sdk.Delay(described{info: &gamev1.AgentInfo{Name: "steady", Version: "3"}}, time.Millisecond))
	if got.GetName() != "steady" || got.GetVersion() != "3" {
		t.Errorf("a delayed agent describes itself as %v, want steady 3", got)
	}
}

// skipping is an agent that says it never reads the briefing.
type skipping struct{ sdk.AgentFunc }

func (skipping) SkipsBriefing() bool { return true }

// Describe says how the agent takes its observations: on streams that span matches (the SDK
// puts every call back together), and without a briefing only when the agent says so, delayed
// or not.
func TestDescribeObserving(t *testing.T) {
	for _, tc := range []struct {
		name  string
		agent sdk.Agent
		skips bool
	}{
		{"reads the briefing", sdk.AgentFunc(rejecting), false},
		{"skips the briefing", skipping{rejecting}, true},
		{"skips it, delayed", sdk.Delay(skipping{rejecting}, time.Millisecond), true},
		{"reads it, delayed", sdk.Delay(sdk.AgentFunc(rejecting), time.Millisecond), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := serve(t, tc.agent).client.Describe(callCtx(t), &agentv1.DescribeRequest{})
			if err != nil {
				t.Fatalf("Describe: %v", err)
			}
			want := &agentv1.Observing{StreamsSpanMatches: true, SkipsBriefing: tc.skips}
			if !proto.Equal(resp.GetObserving(), want) || !proto.Equal(sdk.ObservingOf(tc.agent), want) {
				t.Errorf("Describe says %v (ObservingOf %v), want %v", resp.GetObserving(), sdk.ObservingOf(tc.agent), want)
			}
		})
	}
}
