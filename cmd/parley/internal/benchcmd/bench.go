// Package benchcmd is `parley bench`: the referee benchmark outside `go test`.
package benchcmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/internal/bench"
)

// NewCmd returns the bench command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	var count int
	cmd := &cobra.Command{
		Use:   "bench [--count N]",
		Short: "Measure whole matches over gRPC with events to JetStream against a bare gRPC round trip",
		Long: `Play ultimatum matches between two built-in agents over gRPC on loopback, publishing every
event to an embedded NATS JetStream server, and time a bare gRPC round trip carrying the same
kind of observation. Prints Go benchmark lines (feed several runs to benchstat) and a summary:
matches/s, moves/s, the cost of a move as a multiple of the bare round trip, and allocations
per move (the whole process: referee, agents and NATS).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if count < 1 {
				return cli.Usagef("--count must be at least 1, got %d", count)
			}
			return run(cmd.Context(), deps, count)
		},
	}
	cmd.Flags().IntVar(&count, "count", 1, "how many times to run each benchmark")
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, count int) error {
	s, err := bench.NewSetup(ctx, deps.Resolver())
	if err != nil {
		return err
	}
	defer s.Close()
	for i := range count {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r := s.Run()
		fmt.Fprintf(deps.Out, "BenchmarkMatch\t%s\t%s\n", r.Match.String(), r.Match.MemString())
		fmt.Fprintf(deps.Out, "BenchmarkRoundTrip\t%s\t%s\n", r.RoundTrip.String(), r.RoundTrip.MemString())
		fmt.Fprintf(deps.Out, "BenchmarkAlternatingRoundTrip\t%s\t%s\n", r.AlternatingRoundTrip.String(), r.AlternatingRoundTrip.MemString())
		fmt.Fprintf(deps.Out, "# run %d: %.0f matches/s, %.0f moves/s, %.1f µs per move = %.2fx a bare round trip (%.1f µs), %.2fx one alternating between the agents (%.1f µs); %.0f allocs per move\n",
			i+1, r.MatchesPerSecond(), r.MatchesPerSecond()*r.MovesPerMatch(), r.NsPerMove()/1e3,
			r.Ratio(), float64(r.RoundTrip.NsPerOp())/1e3,
			r.AlternatingRatio(), float64(r.AlternatingRoundTrip.NsPerOp())/1e3, r.AllocsPerMove())
	}
	return nil
}
