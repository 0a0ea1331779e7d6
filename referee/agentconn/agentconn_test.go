package agentconn_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/llm/llmtest"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// testTimeout bounds every call of these tests.
const testTimeout = time.Minute

// serveAgent serves an agent that describes itself as name on a loopback port until the test
// ends, and returns its address.
func serveAgent(t *testing.T, name string) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	agent := sdk.AgentFunc(func(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: obs.GetMatchId()}}}}, nil
	})
	go func() { done <- sdk.ServeListener(ctx, lis, agent, sdk.WithInfo(&gamev1.AgentInfo{Name: name})) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeListener: %v", err)
		}
	})
	return lis.Addr().String()
}

// unusedAddr returns a loopback address nothing listens on.
func unusedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

// resolver opens the built-in agents and grpc:// addresses, as the binary's does.
func resolver() *agentconn.Resolver { return &agentconn.Resolver{Builtins: builtin.Agents{}} }

func open(t *testing.T, spec string) *agentconn.Conn {
	t.Helper()
	c, err := resolver().Open(context.Background(), spec)
	if err != nil {
		t.Fatalf("Open(%q): %v", spec, err)
	}
	return c
}

func TestOpen(t *testing.T) {
	remote := serveAgent(t, "remote-agent")
	tests := []struct {
		name string
		spec string
		// wantName is what Describe answers.
		wantName string
		// wantDesc is a substring of the description.
		wantDesc string
		// wantTarget is the dialled address; empty means a loopback port of our own.
		wantTarget string
	}{
		{name: "builtin fair with a setting", spec: "builtin:fair?open=0.7", wantName: "fair", wantDesc: "Asks for 70%"},
		{name: "builtin fair, several settings", spec: "builtin:fair?open=0.8&floor=0.3", wantName: "fair", wantDesc: "at least 30%"},
		{name: "builtin random", spec: "builtin:random", wantName: "random"},
		{name: "builtin random with a seed", spec: "builtin:random?seed=4", wantName: "random"},
		{name: "builtin with an empty query", spec: "builtin:fair?", wantName: "fair", wantDesc: "Asks for 60%"},
		{name: "grpc host:port", spec: "grpc://" + remote, wantName: "remote-agent", wantTarget: remote},
		{name: "grpc localhost", spec: "grpc://localhost:" + portOf(t, remote), wantName: "remote-agent", wantTarget: "localhost:" + portOf(t, remote)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := open(t, tc.spec)
			defer func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			}()
			if c.Addr != tc.spec {
				t.Errorf("Addr = %q, want %q", c.Addr, tc.spec)
			}
			if tc.wantTarget != "" && c.Target != tc.wantTarget {
				t.Errorf("Target = %q, want %q", c.Target, tc.wantTarget)
			}
			if tc.wantTarget == "" && c.Target != "in process" {
				t.Errorf("Target = %q, want an agent served in process", c.Target)
			}
			info, err := c.Describe(context.Background(), testTimeout)
			if err != nil {
				t.Fatalf("Describe: %v", err)
			}
			if info.GetName() != tc.wantName || !strings.Contains(info.GetDescription(), tc.wantDesc) {
				t.Errorf("Describe = %v, want name %q and a description with %q", info, tc.wantName, tc.wantDesc)
			}
		})
	}
}

func portOf(t *testing.T, addr string) string {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return port
}

func TestOpenBadSpecs(t *testing.T) {
	tests := []struct {
		name string
		spec string
		// bad says whether the error wraps ErrBadAddress.
		bad bool
		// wantErr lists substrings of the error.
		wantErr []string
	}{
		{name: "no scheme", spec: "fair", bad: true, wantErr: []string{`"fair"`, "builtin:NAME", "grpc://host:port"}},
		{name: "host:port without scheme", spec: "localhost:50051", bad: true, wantErr: []string{`"localhost:50051"`, "grpc://host:port"}},
		{name: "other scheme", spec: "http://localhost:50051", bad: true, wantErr: []string{`"http://localhost:50051"`}},
		{name: "empty", spec: "", bad: true, wantErr: []string{`""`, "builtin:NAME"}},
		{name: "scheme in upper case", spec: "GRPC://localhost:1", bad: true, wantErr: []string{"grpc://host:port"}},
		{name: "grpc without port", spec: "grpc://localhost", bad: true, wantErr: []string{`"grpc://localhost"`, "want grpc://host:port"}},
		{name: "grpc without anything", spec: "grpc://", bad: true, wantErr: []string{"want grpc://host:port"}},
		{name: "grpc with a path", spec: "grpc://localhost:1/agent", bad: true, wantErr: []string{"want grpc://host:port"}},
		{name: "grpc with a port that is not a number", spec: "grpc://localhost:x1", bad: true, wantErr: []string{"want grpc://host:port"}},
		{name: "grpc with a port out of range", spec: "grpc://localhost:65536", bad: true, wantErr: []string{"want grpc://host:port"}},
		{name: "bad query escape", spec: "builtin:fair?open=%zz", bad: true, wantErr: []string{`"builtin:fair?open=%zz"`, "key=value"}},
		{name: "semicolon in query", spec: "builtin:fair?open=0.7;floor=0.1", bad: true, wantErr: []string{"key=value&key=value"}},
		{name: "unknown builtin", spec: "builtin:stubborn", bad: true, wantErr: []string{`unknown built-in agent "stubborn"`, "fair", "random"}},
		{name: "unknown builtin setting", spec: "builtin:fair?seed=1", bad: true, wantErr: []string{`unknown setting "seed"`, "open=F"}},
		{name: "bad builtin value", spec: "builtin:random?seed=x", bad: true, wantErr: []string{`seed="x"`, "non-negative whole number"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := resolver().Open(context.Background(), tc.spec)
			if err == nil {
				c.Close()
				t.Fatalf("Open(%q) succeeded, want an error", tc.spec)
			}
			if cerr := resolver().Check(context.Background(), tc.spec); cerr == nil || cerr.Error() != err.Error() {
				t.Errorf("Check(%q) = %v, want Open's error %v", tc.spec, cerr, err)
			}
			if got := errors.Is(err, agentconn.ErrBadAddress); got != tc.bad {
				t.Errorf("errors.Is(%v, ErrBadAddress) = %v, want %v", err, got, tc.bad)
			}
			for _, s := range tc.wantErr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not contain %q", err, s)
				}
			}
		})
	}
}

func TestDescribeUnreachable(t *testing.T) {
	addr := unusedAddr(t)
	spec := "grpc://" + addr
	c := open(t, spec) // dialling is lazy: opening succeeds
	defer c.Close()
	start := time.Now()
	_, err := c.Describe(context.Background(), testTimeout)
	if err == nil {
		t.Fatalf("Describe on %s succeeded", addr)
	}
	if !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("error %q does not name the address %s as unreachable", err, addr)
	}
	if time.Since(start) >= testTimeout {
		t.Errorf("Describe waited for the whole timeout instead of failing fast")
	}
}

func TestDescribeTimeout(t *testing.T) {
	// An agent that accepts connections but never answers Describe within the timeout.
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	srv := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(srv, stuckDescriber{release: release})
	go srv.Serve(lis)
	defer srv.Stop()
	defer close(release)

	spec := "grpc://" + lis.Addr().String()
	c := open(t, spec)
	defer c.Close()
	if _, err := c.Describe(context.Background(), 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), spec) {
		t.Errorf("Describe of a silent agent = %v, want an error naming %s", err, spec)
	}
}

type stuckDescriber struct {
	agentv1.UnimplementedAgentServiceServer
	release chan struct{}
}

func (s stuckDescriber) Describe(ctx context.Context, _ *agentv1.DescribeRequest) (*agentv1.DescribeResponse, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-s.release:
		return &agentv1.DescribeResponse{}, nil
	}
}

func TestCloseStopsBuiltin(t *testing.T) {
	c := open(t, "builtin:random")
	if _, err := c.Describe(context.Background(), testTimeout); err != nil {
		t.Fatalf("Describe before Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if _, err := c.Client.Describe(ctx, &agentv1.DescribeRequest{}); err == nil {
		t.Errorf("Describe on a closed Conn succeeded")
	}
}

func TestCloseLeavesRemoteRunning(t *testing.T) {
	addr := serveAgent(t, "remote")
	c := open(t, "grpc://"+addr)
	if _, err := c.Describe(context.Background(), testTimeout); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	again := open(t, "grpc://"+addr)
	defer again.Close()
	if _, err := again.Describe(context.Background(), testTimeout); err != nil {
		t.Errorf("the remote agent stopped answering after another Conn closed: %v", err)
	}
}

func TestAct(t *testing.T) {
	c := open(t, "builtin:fair?open=0.7")
	defer c.Close()
	// P1's first-turn observation of a 100-dollar ultimatum game with 8 turns: at 70% the fair
	// agent offers 30.
	st, err := games.Start(ultimatum.New(), &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{
		Total: proto.Int64(100), MaxTurns: proto.Int32(8),
	}}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	obs := st.Observe(0)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	resp, err := c.Client.Act(ctx, &agentv1.ActRequest{Observation: obs})
	if err != nil {
		t.Fatalf("Act: %v", err)
	}
	shares := resp.GetAction().GetMove().GetPropose().GetProposal().GetAllocation().GetShares()
	if len(shares) != 1 || shares[0].GetGives()["Dollars"] != 30 || resp.GetTurn() != 1 {
		t.Errorf("Act = %v, want turn 1 and P1 giving 30 Dollars", resp)
	}
}

func TestOpenAll(t *testing.T) {
	conns, err := resolver().OpenAll(context.Background(), []string{"builtin:random", "builtin:fair"})
	if err != nil {
		t.Fatalf("OpenAll: %v", err)
	}
	if len(conns) != 2 || conns[0].Addr != "builtin:random" || conns[1].Addr != "builtin:fair" {
		t.Errorf("OpenAll gave %d conns in the wrong order", len(conns))
	}
	agentconn.CloseAll(conns)

	if _, err := resolver().OpenAll(context.Background(), []string{"builtin:random", "nonsense"}); !errors.Is(err, agentconn.ErrBadAddress) {
		t.Errorf("OpenAll with a bad spec = %v, want ErrBadAddress", err)
	}
}

// TestOpenLLM starts the language-model agent from its address, settings in the query (the
// base URL URL-encoded or not), and plays one move against a fake chat API.
func TestOpenLLM(t *testing.T) {
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Text(`{"move": {"kind": "propose", "terms": {"P1 gives Dollars": 45}}}`)))
	for _, spec := range []string{
		"builtin:llm?model=fake&base_url=" + srv.URL + "&style=json&persona=cunning&no_cache=true",
		"builtin:llm?model=fake&base_url=" + url.QueryEscape(srv.URL) + "&style=json&no_cache=true&temperature=0.5",
	} {
		c := open(t, spec)
		info, err := c.Describe(context.Background(), testTimeout)
		if err != nil || info.GetName() != "llm:fake" || strings.Contains(info.String(), "cunning") {
			t.Errorf("Describe = %v, %v", info, err)
		}
		st, err := games.Start(ultimatum.New(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		resp, err := c.Client.Act(ctx, &agentv1.ActRequest{Observation: st.Observe(0)})
		cancel()
		if err != nil {
			t.Fatalf("Act: %v", err)
		}
		if got := resp.GetAction().GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[0].GetGives()["Dollars"]; got != 45 {
			t.Errorf("Act = %v, want a proposal of 45", resp.GetAction())
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	for _, bad := range []string{"builtin:llm?base_url=" + srv.URL, "builtin:llm?model=m", "builtin:llm?model=m&base_url=" + srv.URL + "&api_key=sk-1"} {
		if _, err := resolver().Open(context.Background(), bad); err == nil {
			t.Errorf("Open(%q) succeeded", bad)
		}
	}
}

// nameRule is a dial rule that checks targets as written and dials them as any program would.
type nameRule func(target string) error

func (r nameRule) Check(target string) error { return r(target) }

func (r nameRule) DialContext(ctx context.Context, target string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, "tcp", target)
}

// The dial rule applies to every grpc:// address, and errors name the address and the rule;
// forms other than grpc:// are refused as not served when the resolver lacks what serves them.
func TestDialRuleAndNotServed(t *testing.T) {
	remote := serveAgent(t, "remote")
	r := &agentconn.Resolver{Dial: nameRule(func(target string) error {
		if strings.HasPrefix(target, "127.0.0.1:") {
			return errors.New("loopback addresses are the organiser's")
		}
		return nil
	})}
	for _, f := range []func(string) error{
		func(a string) error { _, err := r.Open(context.Background(), a); return err },
		func(a string) error { return r.Check(context.Background(), a) },
	} {
		err := f("grpc://" + remote)
		if !errors.Is(err, agentconn.ErrDialRefused) || !strings.Contains(err.Error(), remote) || !strings.Contains(err.Error(), "organiser") {
			t.Errorf("a refused address: %v", err)
		}
		for _, a := range []string{"builtin:random", "human", "bot:acme/fair"} {
			if err := f(a); !errors.Is(err, agentconn.ErrNotServed) {
				t.Errorf("%s with nothing to serve it: %v, want ErrNotServed", a, err)
			}
		}
	}
	c, err := r.Open(context.Background(), "grpc://localhost:"+portOf(t, remote))
	if err != nil {
		t.Fatalf("an allowed address: %v", err)
	}
	c.Close()

	// The connection is made by the rule's own dialer, where it checks resolved addresses.
	var dialled []string
	rebound := &agentconn.Resolver{Dial: dialRefused{checked: nameRule(func(string) error { return nil }), dialled: &dialled}}
	c, err = rebound.Open(context.Background(), "grpc://localhost:"+portOf(t, remote))
	if err != nil {
		t.Fatalf("an address its name check allows: %v", err)
	}
	defer c.Close()
	if _, err := c.Describe(context.Background(), 5*time.Second); err == nil || !strings.Contains(err.Error(), "resolves to a forbidden address") {
		t.Errorf("Describe through a dialer that refuses: %v", err)
	}
	if want := "localhost:" + portOf(t, remote); !slices.Contains(dialled, want) {
		t.Errorf("the rule's dialer was given %q, want the target as written (%s)", dialled, want)
	}
}

// dialRefused checks names as checked does and refuses every dial, noting its targets.
type dialRefused struct {
	checked nameRule
	dialled *[]string
}

func (r dialRefused) Check(target string) error { return r.checked(target) }

func (r dialRefused) DialContext(_ context.Context, target string) (net.Conn, error) {
	*r.dialled = append(*r.dialled, target)
	return nil, errors.New(target + " resolves to a forbidden address")
}
