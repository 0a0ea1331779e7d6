// Package bench measures the referee: whole ultimatum matches between two built-in agents over
// gRPC on loopback with every event published to JetStream, against a bare gRPC round trip
// carrying a mid-match observation. `go test -bench` and `parley bench` run the same code.
package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/referee/match"
)

// Agents are the two agents benchmarked: deterministic and cheap, so that the numbers measure
// the referee and the transport rather than a strategy. They bargain over several turns.
var Agents = []string{"builtin:fair", "builtin:fair?open=0.7&target=0.55"}

// Setup holds what the benchmarks share: two built-in agents behind real gRPC servers and an
// embedded NATS server with the match stream.
type Setup struct {
	game   games.Game
	agents []*agentconn.Conn
	bus    *bus.Bus
	pub    *bus.Publisher
	runner *match.Runner
	obs    *agentv1.Observation
	run    string
	seq    atomic.Uint64
}

// NewSetup starts the agents, opened with agents, and the embedded NATS server.
func NewSetup(ctx context.Context, agents *agentconn.Resolver) (*Setup, error) {
	conns, err := agents.OpenAll(ctx, Agents)
	if err != nil {
		return nil, err
	}
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		agentconn.CloseAll(conns)
		return nil, err
	}
	pub := bus.NewPublisher(b)
	s := &Setup{
		game:   ultimatum.New(),
		agents: conns,
		bus:    b,
		pub:    pub,
		runner: match.NewRunner(pub),
		run:    fmt.Sprintf("%x", time.Now().UnixNano()),
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

// midMatchObservation is what P1 sees on turn 3 after two proposals, filled in as the runner
// would, so the bare round trip carries a message of the same size as in a match.
func (s *Setup) midMatchObservation() (*agentv1.Observation, error) {
	params, err := s.game.Resolve(nil)
	if err != nil {
		return nil, err
	}
	st, err := s.game.NewState(params, 1)
	if err != nil {
		return nil, err
	}
	for seat, x := range []int64{40, 55} {
		a := &agentv1.Action{
			Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
				Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"Dollars": x}}}}},
			}}}},
			Messages: []*gamev1.Message{{Text: "I propose a split close to even."}},
		}
		if _, err := st.Apply(int32(seat), a); err != nil {
			return nil, err
		}
	}
	obs := st.Observe(0)
	obs.MatchId = "bench-observation"
	obs.Seats = []*gamev1.SeatInfo{{Seat: 0, Name: "P1", Agent: &gamev1.AgentInfo{Name: "fair", Version: "1"}}, {Seat: 1, Name: "P2", Agent: &gamev1.AgentInfo{Name: "fair", Version: "1"}}}
	obs.TimeLimit = durationpb.New(match.DefaultMoveTimeout)
	obs.Attempt = 1
	return obs, nil
}

// PlayMatch plays one match and waits until JetStream has stored all its events. It returns
// the number of agent moves.
func (s *Setup) PlayMatch(ctx context.Context) (moves int, err error) {
	id := fmt.Sprintf("bench-%s-%d", s.run, s.seq.Add(1))
	res, err := s.runner.Run(ctx, match.Spec{
		ID:     id,
		Game:   s.game,
		Seed:   s.seq.Load(),
		Agents: []agentv1.AgentServiceClient{s.agents[0].Client, s.agents[1].Client},
	})
	if err != nil {
		return 0, err
	}
	if err := s.pub.Flush(ctx); err != nil {
		return 0, err
	}
	for _, ev := range res.Events {
		if ev.GetActionTaken() != nil {
			moves++
		}
	}
	return moves, nil
}

// RoundTrip sends the observation to one agent once, as the referee would, without any referee
// work around it.
func (s *Setup) RoundTrip(ctx context.Context, agent int) error {
	cctx, cancel := context.WithTimeout(ctx, match.DefaultMoveTimeout)
	defer cancel()
	_, err := s.agents[agent].Client.Act(cctx, &agentv1.ActRequest{Observation: s.obs})
	return err
}

// Matches benchmarks whole matches and reports per-move figures.
func (s *Setup) Matches(b *testing.B) {
	ctx := context.Background()
	moves := 0
	b.ReportAllocs()
	for b.Loop() {
		n, err := s.PlayMatch(ctx)
		if err != nil {
			b.Fatal(err)
		}
		moves += n
	}
	if moves > 0 {
		b.ReportMetric(float64(moves)/float64(b.N), "moves/match")
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(moves), "ns/move")
	}
}

// RoundTrips benchmarks the bare gRPC round trip to one agent.
func (s *Setup) RoundTrips(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if err := s.RoundTrip(ctx, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// AlternatingRoundTrips benchmarks bare round trips that alternate between the two agents, as
// a match does; switching servers costs more than calling one server in a loop.
func (s *Setup) AlternatingRoundTrips(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.RoundTrip(ctx, i%2); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// Report is what `parley bench` prints.
type Report struct {
	Match, RoundTrip, AlternatingRoundTrip testing.BenchmarkResult
}

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

// AllocsPerMove is the allocations of the whole process (referee, agents, NATS) per move.
func (r Report) AllocsPerMove() float64 {
	return float64(r.Match.AllocsPerOp()) / r.MovesPerMatch()
}

// MatchesPerSecond is whole matches per second, one at a time.
func (r Report) MatchesPerSecond() float64 { return 1e9 / float64(r.Match.NsPerOp()) }

// Run runs both benchmarks once with testing.Benchmark.
func (s *Setup) Run() Report {
	return Report{
		Match:                testing.Benchmark(s.Matches),
		RoundTrip:            testing.Benchmark(s.RoundTrips),
		AlternatingRoundTrip: testing.Benchmark(s.AlternatingRoundTrips),
	}
}
