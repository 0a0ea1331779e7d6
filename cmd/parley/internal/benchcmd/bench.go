// Package benchcmd is `parley bench`: the referee benchmarks outside `go test`.
package benchcmd

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/referee/bench"
)

type options struct {
	count       int
	load        bool
	concurrency int
	matches     int
	latency     time.Duration
	inProcess   bool
	cpuProfile  string
	memProfile  string
}

// NewCmd returns the bench command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "bench [--count N] [--load [--concurrency N] [--matches N] [--latency D]]",
		Short: "Measure whole matches over gRPC with events to JetStream against a bare gRPC round trip",
		Long: `Play ultimatum matches between two built-in agents over gRPC on loopback, publishing every
event to an embedded NATS JetStream server, and time a bare gRPC round trip carrying the
observation a match sends on a mid-match move. Prints Go benchmark lines (feed several runs to
benchstat) and a summary: the cost of a move as a multiple of the bare round trip measured side
by side (blocks of matches, each followed by as many round trips as it had moves, so that both
meet the machine in the same state: the figure to quote on a shared machine, whose speed
drifts), the same figures from the benchmarks apart, matches/s, moves/s and allocations per
move (the whole process: referee, agents and NATS); with --count above 1, the median ratios.

With --load, saturate the machine instead: --matches ultimatum match requests wait in the
JetStream work queue and one referee worker plays them --concurrency at a time, as in
production (agents opened through a connection pool, every event stored in JetStream, each
match's record settled before its request is acknowledged), against two bots that answer over
loopback gRPC after --latency, each a 'parley agent' process of its own that this command
starts (--bots-in-process: served in this process). Then, in the same run, as many bare round
trips (Act, one unary gRPC call each, carrying a mid-match observation), as many at a time, go
to the same bots; then as many floor calls: a bare grpc-go unary call carrying 200 bytes each
way to an echo server in a process of its own (in this process with --bots-in-process), the
least a move could cost; then as many again carrying as many bytes as the observation there
(200 back), the least a move that sends it whole could cost. CPU is counted over every process the command runs: this one (the
worker and the embedded NATS server), the bots' and the echo server's. Prints moves/s and CPU
per move, calls/s and CPU per call of both bare calls (client and server), and the ratios;
with a --latency, the largest resident set of this process (referee and NATS; the bots'
apart) and how much longer a match took than its bots' time alone (the platform's overhead).

--cpuprofile FILE writes a CPU profile of this process over the matches only (the bare calls
left out): run 1's to FILE, run N's to FILE.N (go tool pprof reads several files as one);
with --load, the bots' processes write theirs to FILE.bot1 and FILE.bot2 (their whole life,
bare calls included). --memprofile FILE writes this process's allocations over the whole
command when it ends (go tool pprof -sample_index=alloc_space).`,
		Example: `  parley bench --count 5
  parley bench --load --count 3
  parley bench --load --latency 1s --concurrency 1000 --matches 1000   # memory and overhead with slow bots
  parley bench --load --cpuprofile cpu.out && go tool pprof -top cpu.out`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			switch {
			case o.count < 1:
				return cli.Usagef("--count must be at least 1, got %d", o.count)
			case o.concurrency < 1:
				return cli.Usagef("--concurrency must be at least 1, got %d", o.concurrency)
			case o.matches < 1:
				return cli.Usagef("--matches must be at least 1, got %d", o.matches)
			case o.latency < 0:
				return cli.Usagef("--latency must not be negative, got %s", o.latency)
			case !o.load && (cmd.Flags().Changed("concurrency") || cmd.Flags().Changed("matches") || cmd.Flags().Changed("latency") || o.inProcess):
				return cli.Usagef("--concurrency, --matches, --latency and --bots-in-process go with --load")
			}
			prof := &profiler{cpu: o.cpuProfile}
			if o.memProfile != "" {
				defer func() {
					if merr := writeMemProfile(o.memProfile); err == nil {
						err = merr
					}
				}()
			}
			if o.load {
				return runLoad(cmd.Context(), deps, o, prof)
			}
			return run(cmd.Context(), deps, o.count, prof)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&o.count, "count", 1, "how many times to run each benchmark")
	fs.BoolVar(&o.load, "load", false, "saturate the machine with concurrent matches from the work queue (see above)")
	fs.IntVar(&o.concurrency, "concurrency", 32*runtime.GOMAXPROCS(0), "with --load: matches played at once (and bare round trips made at once)")
	fs.IntVar(&o.matches, "matches", 2000, "with --load: matches requested per run")
	fs.DurationVar(&o.latency, "latency", 0, "with --load: how long the bots take per move")
	fs.BoolVar(&o.inProcess, "bots-in-process", false, "with --load: serve the bots in this process instead of processes of their own")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the matches to `FILE` (see above)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write the allocations of the whole command to `FILE` when it ends")
	cmd.AddCommand(newEchoCmd(deps))
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, count int, prof *profiler) error {
	s, err := bench.NewSetup(ctx, deps.Resolver())
	if err != nil {
		return err
	}
	defer s.Close()
	var times, cpus []float64
	for i := range count {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r, err := s.Run(prof.around)
		if err != nil {
			return err
		}
		fmt.Fprintf(deps.Out, "BenchmarkMatch\t%s\t%s\n", r.Match.String(), r.Match.MemString())
		fmt.Fprintf(deps.Out, "BenchmarkRoundTrip\t%s\t%s\n", r.RoundTrip.String(), r.RoundTrip.MemString())
		fmt.Fprintf(deps.Out, "BenchmarkAlternatingRoundTrip\t%s\t%s\n", r.AlternatingRoundTrip.String(), r.AlternatingRoundTrip.MemString())
		fmt.Fprintf(deps.Out, "BenchmarkSideBySide\t%s\n", r.SideBySide.String())
		fmt.Fprintf(deps.Out, "# run %d: side by side, a move takes %.2fx a bare round trip (%.1f µs against %.1f µs) and %.2fx its CPU; "+
			"apart: %.0f matches/s, %.0f moves/s, %.1f µs per move = %.2fx a bare round trip (%.1f µs), %.2fx one alternating between the agents (%.1f µs), CPU %.2fx; %.0f allocs per move\n",
			i+1, r.SideBySideRatio(), r.SideBySide.Extra["ns/move"]/1e3, r.SideBySide.Extra["rt-ns/op"]/1e3, r.SideBySideCPURatio(),
			r.MatchesPerSecond(), r.MatchesPerSecond()*r.MovesPerMatch(), r.NsPerMove()/1e3,
			r.Ratio(), float64(r.RoundTrip.NsPerOp())/1e3,
			r.AlternatingRatio(), float64(r.AlternatingRoundTrip.NsPerOp())/1e3, r.CPURatio(), r.AllocsPerMove())
		times, cpus = append(times, r.SideBySideRatio()), append(cpus, r.SideBySideCPURatio())
	}
	if count > 1 {
		fmt.Fprintf(deps.Out, "# median of %d runs: side by side, a move takes %.2fx a bare round trip and %.2fx its CPU\n", count, median(times), median(cpus))
	}
	return nil
}

// median is the middle of xs (the mean of the two middle ones for an even count).
func median(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func runLoad(ctx context.Context, deps *cli.Deps, o *options, prof *profiler) error {
	serve, echo := bench.InProcess(builtin.Background), bench.InProcessEcho
	if !o.inProcess {
		serve, echo = childBots(ctx, o.cpuProfile), childEcho
	}
	l, err := bench.NewLoad(ctx, serve, o.latency)
	if err != nil {
		return err
	}
	defer l.Close()
	floor, err := echo(ctx)
	if err != nil {
		return err
	}
	defer floor.Stop()
	cores := runtime.GOMAXPROCS(0)
	for i := range o.count {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var r bench.LoadResult
		if err := prof.around(func() (err error) {
			r, err = l.Run(ctx, o.concurrency, o.matches, o.latency)
			return err
		}); err != nil {
			return err
		}
		if r.Void > 0 || r.Faults > 0 {
			return fmt.Errorf("bench: %d void matches and %d agent faults in %d matches: the run measured failures", r.Void, r.Faults, r.Ended)
		}
		fmt.Fprintf(deps.Out, "BenchmarkLoad/concurrency=%d\t%d\t%d ns/op\t%.0f moves/s\t%.1f cpu-µs/move\t%.2f cores\t%.1f MB-rss\n",
			o.concurrency, r.Ended, r.Wall.Nanoseconds()/int64(r.Ended), r.MovesPerSecond(),
			float64(r.CPUPerMove().Nanoseconds())/1e3, r.CPU.Seconds()/r.Wall.Seconds(), float64(r.MaxRSS)/1e6)
		if o.latency > 0 {
			fmt.Fprintf(deps.Out, "# run %d: %d matches of %.1f moves, %d at a time, bots taking %s per move: %.0f moves/s, %.1f µs of CPU per move, largest resident set %.0f MB (the bots' processes: %.0f MB), a match took %s against its bots' %s (%.2f%% overhead)\n",
				i+1, r.Ended, float64(r.Moves)/float64(r.Ended), o.concurrency, o.latency, r.MovesPerSecond(),
				float64(r.CPUPerMove().Nanoseconds())/1e3, float64(r.MaxRSS)/1e6, float64(r.BotsRSS)/1e6, r.MatchTime.Round(time.Millisecond),
				r.Ideal.Round(time.Millisecond), 100*r.Overhead())
			continue
		}
		bare, err := l.Bare(ctx, o.concurrency, r.Moves)
		if err != nil {
			return err
		}
		fmt.Fprintf(deps.Out, "BenchmarkLoadBareRoundTrip/concurrency=%d\t%d\t%d ns/op\t%.0f calls/s\t%.1f cpu-µs/call\t%.2f cores\n",
			o.concurrency, bare.Calls, bare.Wall.Nanoseconds()/int64(bare.Calls), bare.CallsPerSecond(),
			float64(bare.CPUPerCall().Nanoseconds())/1e3, bare.CPU.Seconds()/bare.Wall.Seconds())
		fl, err := bench.Floor(ctx, floor, o.concurrency, r.Moves, bench.FloorBytes)
		if err != nil {
			return err
		}
		fmt.Fprintf(deps.Out, "BenchmarkLoadFloor/concurrency=%d\t%d\t%d ns/op\t%.0f calls/s\t%.1f cpu-µs/call\t%.2f cores\n",
			o.concurrency, fl.Calls, fl.Wall.Nanoseconds()/int64(fl.Calls), fl.CallsPerSecond(),
			float64(fl.CPUPerCall().Nanoseconds())/1e3, fl.CPU.Seconds()/fl.Wall.Seconds())
		obsBytes := l.ObservationBytes()
		flo, err := bench.Floor(ctx, floor, o.concurrency, r.Moves, obsBytes)
		if err != nil {
			return err
		}
		fmt.Fprintf(deps.Out, "BenchmarkLoadFloorObservation/concurrency=%d\t%d\t%d ns/op\t%.0f calls/s\t%.1f cpu-µs/call\t%.2f cores\n",
			o.concurrency, flo.Calls, flo.Wall.Nanoseconds()/int64(flo.Calls), flo.CallsPerSecond(),
			float64(flo.CPUPerCall().Nanoseconds())/1e3, flo.CPU.Seconds()/flo.Wall.Seconds())
		fmt.Fprintf(deps.Out, "# run %d: %d matches (%d moves), %d at a time on %d cores: %.0f moves/s, %.1f µs of CPU per move = %.2fx the CPU of a bare round trip (%.1f µs, %.0f calls/s saturated)\n",
			i+1, r.Ended, r.Moves, o.concurrency, cores, r.MovesPerSecond(), float64(r.CPUPerMove().Nanoseconds())/1e3,
			float64(r.CPUPerMove())/float64(bare.CPUPerCall()), float64(bare.CPUPerCall().Nanoseconds())/1e3, bare.CallsPerSecond())
		fmt.Fprintf(deps.Out, "# run %d: against the floor (a bare unary call of %d bytes each way: %.1f µs of CPU, %.0f calls/s saturated): %.2fx its calls/s, %.2fx its CPU per call\n",
			i+1, bench.FloorBytes, float64(fl.CPUPerCall().Nanoseconds())/1e3, fl.CallsPerSecond(),
			r.MovesPerSecond()/fl.CallsPerSecond(), float64(r.CPUPerMove())/float64(fl.CPUPerCall()))
		fmt.Fprintf(deps.Out, "# run %d: against the floor carrying the observation (a bare unary call of %d bytes there, %d back: %.1f µs of CPU, %.0f calls/s saturated): %.2fx its calls/s, %.2fx its CPU per call\n",
			i+1, obsBytes, bench.FloorBytes, float64(flo.CPUPerCall().Nanoseconds())/1e3, flo.CallsPerSecond(),
			r.MovesPerSecond()/flo.CallsPerSecond(), float64(r.CPUPerMove())/float64(flo.CPUPerCall()))
	}
	return nil
}

// profiler writes CPU profiles of the parts of a run it is put around, one file per part.
type profiler struct {
	cpu string // file of the first part; "": none
	n   int
}

// around runs f, profiling it when asked.
func (p *profiler) around(f func() error) error {
	if p.cpu == "" {
		return f()
	}
	p.n++
	name := p.cpu
	if p.n > 1 {
		name = fmt.Sprintf("%s.%d", p.cpu, p.n)
	}
	out, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return fmt.Errorf("bench: %w", err)
	}
	err = f()
	pprof.StopCPUProfile()
	if cerr := out.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("bench: %w", cerr)
	}
	return err
}

// writeMemProfile writes the allocations of the process so far to name.
func writeMemProfile(name string) error {
	out, err := os.Create(name)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	runtime.GC() // the live objects, up to date
	err = pprof.Lookup("allocs").WriteTo(out, 0)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	return nil
}
