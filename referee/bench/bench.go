// Package bench measures the referee: whole ultimatum matches between two built-in agents over
// gRPC on loopback with every event stored in JetStream, against a bare gRPC round trip
// carrying the observation a move of such a match carries. `go test -bench` and `parley
// bench` run the same code.
package bench

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/match"
)

// benchGame is the game every benchmark plays: ultimatum, short matches of a few moves.
const benchGame = "ultimatum"

// Agents are the two agents benchmarked: deterministic and cheap, so that the numbers measure
// the referee and the transport rather than a strategy. They bargain over several turns.
var Agents = []string{"builtin:fair", "builtin:fair?open=0.7&target=0.55"}

// Setup holds what the benchmarks share: an embedded NATS server with the match stream, and
// the agents, opened through a resolver as a referee opens them.
type Setup struct {
	bus     *bus.Bus
	settler *bus.MatchSettler
	player  *launch.Player
	match   *launch.Match // prepared once; each match takes a fresh id and seed
	// agents stay open for the bare round trips; obs is what those carry.
	agents []*agentconn.Conn
	obs    *agentv1.Observation
	run    string
	seq    atomic.Uint64
}

// NewSetup prepares the benchmark match, opening its agents with agents as every match of a
// referee does (give it the binary's: built-in agents on one host, a connection pool), and
// starts the embedded NATS server.
func NewSetup(ctx context.Context, agents *agentconn.Resolver) (*Setup, error) {
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		return nil, err
	}
	s := &Setup{
		bus:     b,
		settler: bus.NewPublisher(b).SettleEachMatch(),
		player:  &launch.Player{Agents: agents},
		run:     fmt.Sprintf("%x", time.Now().UnixNano()),
	}
	prep := &launch.Preparer{Games: families.New(), Agents: agents, NoProbe: true}
	if s.match, err = prep.Prepare(ctx, launch.Request{Game: benchGame, Agents: Agents, MatchID: "bench-" + s.run}); err != nil {
		s.Close()
		return nil, err
	}
	if s.agents, err = agents.OpenAll(ctx, Agents); err != nil {
		s.Close()
		return nil, err
	}
	if s.obs, err = s.midMatchObservation(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the agents and NATS.
func (s *Setup) Close() {
	agentconn.CloseAll(s.agents)
	s.bus.Close()
}

// midMatchObservation is the observation the runner sends P1 on its second move (turn 3,
// after two proposals), captured from a real match, so that the bare round trip carries
// exactly what a move of a match carries.
func (s *Setup) midMatchObservation() (*agentv1.Observation, error) {
	return CaptureObservation(context.Background(), s.match, agentconn.Clients(s.agents), 3)
}

// CaptureObservation plays the prepared match m between agents, recording nothing, and returns
// the observation the runner sent with its n-th call to an agent (counting from 1).
func CaptureObservation(ctx context.Context, m *launch.Match, agents []agentv1.AgentServiceClient, n int) (*agentv1.Observation, error) {
	c := &capture{want: n}
	wrapped := make([]agentv1.AgentServiceClient, len(agents))
	for i, a := range agents {
		wrapped[i] = &capturingClient{AgentServiceClient: a, c: c}
	}
	if _, err := m.Run(ctx, wrapped, nil, nil); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.obs == nil {
		return nil, fmt.Errorf("bench: the match made fewer than %d calls", n)
	}
	return c.obs, nil
}

type capture struct {
	mu    sync.Mutex
	calls int
	want  int
	obs   *agentv1.Observation
}

// capturingClient keeps a copy of the want-th observation sent through it.
type capturingClient struct {
	agentv1.AgentServiceClient
	c *capture
}

func (cc *capturingClient) Act(ctx context.Context, in *agentv1.ActRequest, opts ...grpc.CallOption) (*agentv1.ActResponse, error) {
	cc.c.mu.Lock()
	cc.c.calls++
	if cc.c.calls == cc.c.want {
		cc.c.obs = proto.CloneOf(in.GetObservation())
	}
	cc.c.mu.Unlock()
	return cc.AgentServiceClient.Act(ctx, in, opts...)
}

// PlayMatch plays one match as a referee worker does (its agents opened through the resolver,
// its record settled: every event stored before it returns). It returns the number of agent
// moves.
func (s *Setup) PlayMatch(ctx context.Context) (moves int, err error) {
	m := *s.match
	n := s.seq.Add(1)
	m.ID, m.Seed = fmt.Sprintf("bench-%s-%d", s.run, n), n
	res, err := s.player.Play(ctx, &m, s.settler, launch.PlayOptions{})
	if err != nil {
		return 0, err
	}
	for _, ev := range res.Events {
		if ev.GetActionTaken() != nil {
			moves++
		}
	}
	return moves, nil
}

// RoundTrip sends the observation to one agent once in a gRPC call of its own (Act, unary),
// without any referee work around it.
func (s *Setup) RoundTrip(ctx context.Context, agent int) error {
	cctx, cancel := context.WithTimeout(ctx, match.DefaultMoveTimeout)
	defer cancel()
	_, err := agentconn.ActOnly(s.agents[agent].Client).Act(cctx, &agentv1.ActRequest{Observation: s.obs})
	return err
}

// Matches benchmarks whole matches and reports per-move figures.
func (s *Setup) Matches(b *testing.B) {
	ctx := context.Background()
	moves := 0
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		n, err := s.PlayMatch(ctx)
		if err != nil {
			b.Fatal(err)
		}
		moves += n
	}
	cpu := cpuTime() - cpu0
	if moves > 0 {
		b.ReportMetric(float64(moves)/float64(b.N), "moves/match")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(moves), "ns/move")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(moves), "cpu-ns/move")
	}
}

// RoundTrips benchmarks the bare gRPC round trip to one agent.
func (s *Setup) RoundTrips(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if err := s.RoundTrip(ctx, 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// AlternatingRoundTrips benchmarks bare round trips that alternate between the two agents, as
// a match does; switching servers costs more than calling one server in a loop.
func (s *Setup) AlternatingRoundTrips(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	cpu0 := cpuTime()
	for b.Loop() {
		if err := s.RoundTrip(ctx, i%2); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// sideBySideBlock is how many matches SideBySide plays before the round trips that match
// them: a block long enough (tens of milliseconds) that the garbage collection a half's
// allocations call for runs mostly within that half, and short enough to follow the
// machine's drift.
const sideBySideBlock = 16

// SideBySide benchmarks matches and bare round trips in turn, each of its iterations a block:
// sideBySideBlock matches, then as many bare round trips as they made moves, alternating
// between the agents as a match does. Both halves meet the machine as it is at that moment,
// so their ratio holds when the machine's speed drifts from one benchmark to the next (on a
// shared machine, by a third within a minute). It reports the time and CPU of a move and of
// a round trip, and their ratios.
func (s *Setup) SideBySide(b *testing.B) {
	ctx := context.Background()
	var inMatch, bare, matchCPU, bareCPU time.Duration
	moves := 0
	for b.Loop() {
		t0, c0 := time.Now(), cpuTime()
		n := 0
		for range sideBySideBlock {
			k, err := s.PlayMatch(ctx)
			if err != nil {
				b.Fatal(err)
			}
			n += k
		}
		t1, c1 := time.Now(), cpuTime()
		for i := range n {
			if err := s.RoundTrip(ctx, i%2); err != nil {
				b.Fatal(err)
			}
		}
		inMatch, bare = inMatch+t1.Sub(t0), bare+time.Since(t1)
		matchCPU, bareCPU = matchCPU+(c1-c0), bareCPU+(cpuTime()-c1)
		moves += n
	}
	if moves == 0 || bare == 0 || bareCPU == 0 {
		return
	}
	perMove := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / float64(moves) }
	b.ReportMetric(perMove(inMatch), "ns/move")
	b.ReportMetric(perMove(bare), "rt-ns/op")
	b.ReportMetric(float64(inMatch)/float64(bare), "x-round-trip")
	b.ReportMetric(perMove(matchCPU), "cpu-ns/move")
	b.ReportMetric(perMove(bareCPU), "rt-cpu-ns/op")
	b.ReportMetric(float64(matchCPU)/float64(bareCPU), "x-round-trip-cpu")
}

// Report is what `parley bench` prints.
type Report struct {
	Match, RoundTrip, AlternatingRoundTrip, SideBySide testing.BenchmarkResult
}

// SideBySideRatio is the time of a move over a bare round trip's measured in turn with it
// (see Setup.SideBySide): the figure the referee's sequential target is about.
func (r Report) SideBySideRatio() float64 { return r.SideBySide.Extra["x-round-trip"] }

// SideBySideCPURatio is the CPU of a move over a bare round trip's, measured in turn.
func (r Report) SideBySideCPURatio() float64 { return r.SideBySide.Extra["x-round-trip-cpu"] }

// MovesPerMatch is the mean number of agent moves per match.
func (r Report) MovesPerMatch() float64 { return r.Match.Extra["moves/match"] }

// NsPerMove is the wall time of one move inside a match, referee and NATS included.
func (r Report) NsPerMove() float64 { return r.Match.Extra["ns/move"] }

// Ratio is NsPerMove over the bare round trip's time.
func (r Report) Ratio() float64 { return r.NsPerMove() / float64(r.RoundTrip.NsPerOp()) }

// AlternatingRatio is NsPerMove over the alternating round trip's time.
func (r Report) AlternatingRatio() float64 {
	return r.NsPerMove() / float64(r.AlternatingRoundTrip.NsPerOp())
}

// CPURatio is the CPU time of a move over that of a bare round trip (client and server): the
// figure that holds up on a machine busy with other work, where wall times stretch.
func (r Report) CPURatio() float64 {
	return r.Match.Extra["cpu-ns/move"] / r.RoundTrip.Extra["cpu-ns/op"]
}

// AllocsPerMove is the allocations of the whole process (referee, agents, NATS) per move.
func (r Report) AllocsPerMove() float64 {
	return float64(r.Match.AllocsPerOp()) / r.MovesPerMatch()
}

// MatchesPerSecond is whole matches per second, one at a time.
func (r Report) MatchesPerSecond() float64 { return 1e9 / float64(r.Match.NsPerOp()) }

// Run runs the benchmarks once each with testing.Benchmark, the one of whole matches inside
// around (a profiler's; nil: none).
func (s *Setup) Run(around func(func() error) error) (Report, error) {
	var r Report
	matches := func() error { r.Match = testing.Benchmark(s.Matches); return nil }
	if around == nil {
		around = func(f func() error) error { return f() }
	}
	if err := around(matches); err != nil {
		return r, err
	}
	r.RoundTrip = testing.Benchmark(s.RoundTrips)
	r.AlternatingRoundTrip = testing.Benchmark(s.AlternatingRoundTrips)
	r.SideBySide = testing.Benchmark(s.SideBySide)
	return r, nil
}
