package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/referee/agentconn"
)

// resolver opens agents as the binary's does: built-in agents on one host, dialled ones
// through a connection pool.
func resolver(t testing.TB) *agentconn.Resolver {
	host, pool := sdk.NewHost(), agentconn.NewPool()
	t.Cleanup(func() { pool.Close(); host.Close() })
	return &agentconn.Resolver{Builtins: builtin.Agents{Host: host}, Pool: pool}
}

func setup(b *testing.B) *Setup {
	b.Helper()
	s, err := NewSetup(context.Background(), resolver(b))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

func BenchmarkMatch(b *testing.B)     { setup(b).Matches(b) }
func BenchmarkRoundTrip(b *testing.B) { setup(b).RoundTrips(b) }

func BenchmarkAlternatingRoundTrip(b *testing.B) { setup(b).AlternatingRoundTrips(b) }
func BenchmarkSideBySide(b *testing.B)           { setup(b).SideBySide(b) }

// TestPlayMatch checks the benchmark's match is a real, finished match with moves.
func TestPlayMatch(t *testing.T) {
	s, err := NewSetup(context.Background(), resolver(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	moves, err := s.PlayMatch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if moves < 2 {
		t.Fatalf("benchmark match had %d moves; want a bargaining match of several", moves)
	}
	if err := s.RoundTrip(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
}

// loadLatency is the bots' time per move in the load benchmark.
const loadLatency = 20 * time.Millisecond

// BenchmarkRefereeLoad puts b.N match requests into the work queue at once and has one
// referee worker play them, concurrency at a time, against bots taking loadLatency per move.
// Use a fixed count so every concurrency is exercised, e.g.
//
//	go test -run '^$' -bench RefereeLoad -benchtime 1024x -count 3 ./internal/bench
//
// ns/op is wall time per match; x-ideal is the throughput over concurrency / (moves per match
// x loadLatency), the most the bots allow; it falls below 1 where the referee stops keeping up.
func BenchmarkRefereeLoad(b *testing.B) {
	l, err := NewLoad(context.Background(), InProcess(builtin.Background), loadLatency)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(l.Close)
	for _, c := range []int{8, 64, 256, 1024} {
		b.Run(fmt.Sprintf("concurrency=%d", c), func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			b.ResetTimer()
			r, err := l.Run(ctx, c, b.N, loadLatency)
			b.StopTimer()
			if err != nil {
				b.Fatal(err)
			}
			if r.Ended != r.Requested || r.Left != 0 {
				b.Fatalf("%d of %d requests ended, %d left in the queue", r.Ended, r.Requested, r.Left)
			}
			b.ReportMetric(r.MatchesPerSecond(), "matches/s")
			b.ReportMetric(float64(r.CPUPerMatch().Microseconds())/1000, "cpu-ms/match")
			b.ReportMetric(float64(r.Moves)/float64(r.Ended), "moves/match")
			b.ReportMetric(r.Efficiency(c), "x-ideal")
			b.ReportMetric(float64(r.MatchTime.Microseconds())/1000, "ms/match-running")
			b.ReportMetric(float64(r.MaxQueued), "max-queued")
			b.ReportMetric(float64(r.Faults), "faults")
			b.ReportMetric(float64(r.Requested-r.Ended), "dropped")
		})
	}
}

// saturating is how many matches BenchmarkLoadSaturated plays at once: enough to keep every
// core of a small machine busy with instant bots.
const saturating = 64

// BenchmarkLoadSaturated is `parley bench --load` under `go test`: b.N match requests wait in
// the work queue, one worker plays them saturating at a time against instant bots, then as
// many bare round trips go to the same bots. Use a fixed count of matches, e.g.
//
//	go test -run '^$' -bench LoadSaturated -benchtime 1000x -count 5 ./internal/bench
//
// cpu-µs/move is the process's CPU (worker, NATS, bots) per move; x-bare-cpu divides it by
// the CPU of one bare round trip (client and server) measured the same way.
func BenchmarkLoadSaturated(b *testing.B) {
	l, err := NewLoad(context.Background(), InProcess(builtin.Background), 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(l.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	b.ResetTimer()
	r, err := l.Run(ctx, saturating, b.N, 0)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if r.Ended != r.Requested || r.Void != 0 || r.Faults != 0 {
		b.Fatalf("%d of %d requests ended, %d void, %d faults", r.Ended, r.Requested, r.Void, r.Faults)
	}
	bare, err := l.Bare(ctx, saturating, r.Moves)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(r.MovesPerSecond(), "moves/s")
	b.ReportMetric(float64(r.CPUPerMove().Nanoseconds())/1e3, "cpu-µs/move")
	b.ReportMetric(float64(bare.CPUPerCall().Nanoseconds())/1e3, "bare-cpu-µs/call")
	b.ReportMetric(float64(r.CPUPerMove())/float64(bare.CPUPerCall()), "x-bare-cpu")
	b.ReportMetric(bare.CallsPerSecond(), "bare-calls/s")
}

// TestLoadNoneDropped overloads a referee worker: ten times more requests than it runs at
// once wait in the work queue, and every one of them ends exactly once, none void or faulted.
func TestLoadNoneDropped(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	l, err := NewLoad(ctx, InProcess(builtin.Background), 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	const concurrency, n = 4, 40
	r, err := l.Run(ctx, concurrency, n, 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v; %.0f matches/s, %.2f of ideal, %s CPU per match", r, r.MatchesPerSecond(), r.Efficiency(concurrency), r.CPUPerMatch())
	if r.Ended != n || r.Void != 0 || r.Faults != 0 || r.Left != 0 {
		t.Errorf("%d of %d ended (%d void, %d faults), %d left in the queue", r.Ended, n, r.Void, r.Faults, r.Left)
	}
	if r.MaxQueued < n-2*concurrency {
		t.Errorf("at most %d requests waited in the queue; the worker was not overloaded", r.MaxQueued)
	}
	if r.Moves < 2*n || r.Ideal <= 0 {
		t.Errorf("%d moves in %d matches", r.Moves, n)
	}
}
