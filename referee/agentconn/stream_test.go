package agentconn_test

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/random"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/match"
)

// recorder is an agent that keeps every observation it is given, per seat, without the
// deadline (a wall-clock time). It plays at random, but never accepts or rejects while it can
// do something else, so that matches run long.
type recorder struct {
	mu   sync.Mutex
	seen map[int32][]*agentv1.Observation
}

func (r *recorder) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	kept := proto.CloneOf(obs)
	kept.Deadline = nil
	r.mu.Lock()
	r.seen[obs.GetSeat()] = append(r.seen[obs.GetSeat()], kept)
	r.mu.Unlock()
	var action *agentv1.Action
	for seed := range uint64(32) {
		a, err := random.New(seed).Act(ctx, obs)
		if err != nil {
			return nil, err
		}
		action = a
		if a.GetMove().GetAccept() == nil && a.GetMove().GetReject() == nil {
			break
		}
	}
	return action, nil
}

// received counts the bytes of the messages a server receives.
type received struct{ bytes atomic.Int64 }

func (*received) TagRPC(ctx context.Context, _ *stats.RPCTagInfo) context.Context   { return ctx }
func (*received) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context { return ctx }
func (*received) HandleConn(context.Context, stats.ConnStats)                       {}
func (r *received) HandleRPC(_ context.Context, s stats.RPCStats) {
	if in, ok := s.(*stats.InPayload); ok {
		r.bytes.Add(int64(in.Length))
	}
}

// playOnce plays game with one recording agent in every seat, reached through a pooled
// resolver over Play (streamed) or over Act, and returns what each seat was given and how
// many bytes the agent received.
func playOnce(t *testing.T, g games.Game, params *matchv1.GameParams, streamed bool) (map[int32][]*agentv1.Observation, int64) {
	t.Helper()
	rec := &recorder{seen: map[int32][]*agentv1.Observation{}}
	in := &received{}
	addr, stop, err := sdk.Background("127.0.0.1:0", rec, sdk.WithServerOptions(grpc.StatsHandler(in)))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	pool := agentconn.NewPool()
	defer pool.Close()
	r := &agentconn.Resolver{Pool: pool}
	params, err = g.Resolve(params)
	if err != nil {
		t.Fatal(err)
	}
	names, _ := games.Seats(g, params)
	var clients []agentv1.AgentServiceClient
	for range names {
		c, err := r.Open(context.Background(), "grpc://"+addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if streamed {
			clients = append(clients, c.Client)
		} else {
			clients = append(clients, agentconn.ActOnly(c.Client))
		}
	}
	res, err := match.NewRunner(nil).Run(context.Background(), match.Spec{ID: "same", Game: g, Params: params, Seed: 3, Agents: clients})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome.GetCause() == matchv1.EndCause_END_CAUSE_VOID {
		t.Fatalf("void match: %s", res.Outcome.GetSummary())
	}
	return rec.seen, in.bytes.Load()
}

// Over a Play stream the agent is given, call for call, the very observations Act gives it
// (what each call leaves out as the previous call's is put back), in games with private talk,
// history only some seats see, and long briefings; and it is sent much less.
func TestPlayGivesWhatActGives(t *testing.T) {
	reg := families.New()
	for _, tc := range []struct {
		game   string
		params []string
	}{
		{"ultimatum", nil}, {"buysell", nil}, {"trading", nil}, {"coalition", nil},
		{"matrix", []string{"talk_rounds=2", "rounds=3"}}, {"deliberation", nil},
	} {
		t.Run(tc.game, func(t *testing.T) {
			g, err := reg.Lookup(tc.game)
			if err != nil {
				t.Fatal(err)
			}
			params, err := games.ParseParams(tc.game, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			streamed, streamedBytes := playOnce(t, g, params, true)
			acted, actedBytes := playOnce(t, g, params, false)
			if streamedBytes*10 > actedBytes*7 {
				t.Errorf("the agent received %d bytes over Play, %d over Act: the stream left little out", streamedBytes, actedBytes)
			}
			calls := 0
			for seat, got := range streamed {
				want := acted[seat]
				if len(got) != len(want) {
					t.Fatalf("seat %d: %d observations over Play, %d over Act", seat, len(got), len(want))
				}
				for k := range got {
					if !proto.Equal(got[k], want[k]) {
						t.Fatalf("seat %d, call %d: over Play\n%v\nover Act\n%v", seat, k+1, got[k], want[k])
					}
				}
				calls += len(got)
			}
			if calls < 6 || len(streamed) != len(acted) {
				t.Errorf("%d calls of %d seats compared (%d seats over Act)", calls, len(streamed), len(acted))
			}
		})
	}
}

// actOnly serves Act and Describe; its Play fails before answering anything, with playErr
// (UNIMPLEMENTED when nil, as grpc-go's generated code answers), after waiting for ctx when
// playWaits. It counts the Play streams opened to it and the Act calls; an Act fails with
// actErr when that is set.
type actOnly struct {
	agentv1.UnimplementedAgentServiceServer
	playErr   error
	playWaits bool
	actErr    error
	mu        sync.Mutex
	acts      int
	plays     int
}

func (a *actOnly) Act(ctx context.Context, req *agentv1.ActRequest) (*agentv1.ActResponse, error) {
	a.mu.Lock()
	a.acts++
	a.mu.Unlock()
	if a.actErr != nil {
		return nil, a.actErr
	}
	action, err := random.New(1).Act(ctx, req.GetObservation())
	return &agentv1.ActResponse{Action: action}, err
}

func (a *actOnly) Play(s grpc.BidiStreamingServer[agentv1.PlayRequest, agentv1.PlayResponse]) error {
	a.mu.Lock()
	a.plays++
	a.mu.Unlock()
	if a.playWaits {
		<-s.Context().Done()
	}
	if a.playErr != nil {
		return a.playErr
	}
	return a.UnimplementedAgentServiceServer.Play(nil)
}

func (a *actOnly) counts() (plays, acts int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.plays, a.acts
}

// serveRaw serves a on a loopback port until the test ends and returns its address.
func serveRaw(t *testing.T, a agentv1.AgentServiceServer) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, a)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// playMatch plays an ultimatum match between two Conns to addr opened through r.
func playMatch(t *testing.T, r *agentconn.Resolver, addr string, seed uint64, timeout time.Duration) *match.Result {
	t.Helper()
	g, err := families.New().Lookup("ultimatum")
	if err != nil {
		t.Fatal(err)
	}
	var conns []*agentconn.Conn
	for range 2 {
		c, err := r.Open(context.Background(), "grpc://"+addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	defer agentconn.CloseAll(conns)
	spec := match.Spec{ID: "fallback", Game: g, Params: gametest.Resolve(t, g, nil), Seed: seed, Agents: agentconn.Clients(conns)}
	if timeout > 0 {
		spec.Limits = &matchv1.Limits{MoveTimeout: durationpb.New(timeout)}
	}
	res, err := match.NewRunner(nil).Run(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// faults are the details of a match's agent faults.
func faults(res *match.Result) []string {
	var out []string
	for _, ev := range res.Events {
		if f := ev.GetAgentFault(); f != nil {
			out = append(out, f.GetDetail())
		}
	}
	return out
}

// An agent whose Play fails before answering anything plays all the same, asked with Act,
// whatever the status: UNIMPLEMENTED (grpc-go, grpcio), UNKNOWN "Illegal arity" (grpc-ruby
// with Play left out), INTERNAL. Its connection remembers it, so later matches open no stream.
func TestPlayFallsBackToAct(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"unimplemented", nil},
		{"unknown", status.Error(codes.Unknown, "Illegal arity of reply handler: want 2, got 1")},
		{"internal", status.Error(codes.Internal, "no handler for Play")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &actOnly{playErr: tc.err}
			addr := serveRaw(t, a)
			pool := agentconn.NewPool()
			defer pool.Close()
			r := &agentconn.Resolver{Pool: pool}
			for m := range 3 {
				res := playMatch(t, r, addr, uint64(m), 0)
				if f := faults(res); len(f) > 0 {
					t.Fatalf("match %d: faults %q: %s", m, f, res.Outcome.GetSummary())
				}
			}
			if plays, acts := a.counts(); plays != 1 || acts < 3 {
				t.Errorf("%d Play streams and %d Act calls over three matches; want one stream failed, then Act", plays, acts)
			}
		})
	}
}

// A Play that fails only once the move's time is up is a timeout of Play: it is not tried
// again with Act after the deadline.
func TestPlayFailingLateIsATimeout(t *testing.T) {
	a := &actOnly{playErr: status.Error(codes.Unknown, "too late"), playWaits: true}
	addr := serveRaw(t, a)
	res := playMatch(t, &agentconn.Resolver{}, addr, 1, 200*time.Millisecond)
	f := faults(res)
	if len(f) == 0 {
		t.Fatalf("no faults: %s", res.Outcome.GetSummary())
	}
	for _, ev := range res.Events {
		f := ev.GetAgentFault()
		switch {
		case f == nil || f.GetKind() == eventsv1.FaultKind_FAULT_KIND_RETRIES_EXHAUSTED:
		case f.GetKind() != eventsv1.FaultKind_FAULT_KIND_TIMEOUT:
			t.Errorf("fault %s: %s, want timeouts", f.GetKind(), f.GetDetail())
		case !strings.Contains(f.GetDetail(), "Play: ") || strings.Contains(f.GetDetail(), "Act"):
			t.Errorf("timeout %q does not name Play alone", f.GetDetail())
		}
	}
	if _, acts := a.counts(); acts != 0 {
		t.Errorf("%d Act calls after Plays that failed at their deadline, want none", acts)
	}
}

// Every fault names the call that failed: an agent whose Play is not served and whose Act
// fails is reported naming Act (and what Play said, unless only UNIMPLEMENTED); one whose
// Play answers with an error is reported naming Play; neither is reported as the other.
func TestFaultsNameTheCall(t *testing.T) {
	boom := status.Error(codes.FailedPrecondition, "my strategy broke")
	for _, tc := range []struct {
		name      string
		agent     *actOnly
		want, not []string
	}{
		{"act fails after an unimplemented play", &actOnly{actErr: boom},
			[]string{"Act: my strategy broke"}, []string{"Play"}},
		{"act fails after play fails", &actOnly{actErr: boom, playErr: status.Error(codes.Unknown, "Illegal arity")},
			[]string{"Act: my strategy broke", "after Play failed before answering: Unknown: Illegal arity"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serveRaw(t, tc.agent)
			res := playMatch(t, &agentconn.Resolver{}, addr, 1, 0)
			f := faults(res)
			if len(f) == 0 {
				t.Fatalf("no faults: %s", res.Outcome.GetSummary())
			}
			for _, d := range f {
				for _, w := range tc.want {
					if !strings.Contains(d, w) {
						t.Errorf("fault %q does not say %q", d, w)
					}
				}
				for _, n := range tc.not {
					if strings.Contains(d, n) {
						t.Errorf("fault %q says %q", d, n)
					}
				}
			}
		})
	}

	// An agent that serves Play and answers with errors over it.
	addr, stop, err := sdk.Background("127.0.0.1:0", sdk.AgentFunc(func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
		return nil, boom
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	res := playMatch(t, &agentconn.Resolver{}, addr, 1, 0)
	f := faults(res)
	if len(f) == 0 {
		t.Fatalf("no faults: %s", res.Outcome.GetSummary())
	}
	for _, d := range f {
		if !strings.Contains(d, "Play: ") || strings.Contains(d, "Act:") {
			t.Errorf("fault %q of an agent answering errors over Play does not name Play alone", d)
		}
	}
}

// lastMoment is an agent that answers a call with a short time limit only when its time is
// up, as close to the referee's own deadline as an agent can come, and others at once. (By
// the limit, not by counting calls: on a loaded machine a call may time out before it
// reaches the agent at all.)
type lastMoment struct{}

func (lastMoment) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	if obs.GetTimeLimit().AsDuration() < time.Second {
		<-ctx.Done()
	}
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}, nil
}

// A call whose time runs out as its answer comes leaves the stream fit for the next call: the
// call after it is answered, never failed at once with "Canceled" (which the referee counted
// against the agent as an error) because the timer cancelled the stream under it.
func TestPlayTimeoutAtTheLastMoment(t *testing.T) {
	addr, stop, err := sdk.Background("127.0.0.1:0", lastMoment{})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	c, err := (&agentconn.Resolver{}).Open(context.Background(), "grpc://"+addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const limit = 2 * time.Millisecond
	obs := &agentv1.Observation{Turn: 1, TimeLimit: durationpb.New(limit)}
	// The call after has time enough whatever the machine's load: only a stream left unfit
	// fails it.
	nextObs := &agentv1.Observation{Turn: 1, TimeLimit: durationpb.New(2 * time.Minute)}
	late, next := map[codes.Code]int{}, map[codes.Code]int{}
	for range 300 {
		ctx, cancel := context.WithTimeout(context.Background(), limit)
		_, err := c.Client.Act(ctx, &agentv1.ActRequest{Observation: obs})
		cancel()
		late[status.Code(err)]++
		ctx, cancel = context.WithTimeout(context.Background(), 2*time.Minute)
		_, err = c.Client.Act(ctx, &agentv1.ActRequest{Observation: nextObs})
		cancel()
		next[status.Code(err)]++
	}
	if late[codes.OK]+late[codes.DeadlineExceeded] != 300 {
		t.Errorf("calls answered at the last moment ended as %v, want answers or timeouts", late)
	}
	if next[codes.OK] != 300 {
		t.Errorf("the calls after them ended as %v, want all answered", next)
	}
}
