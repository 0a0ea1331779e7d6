// Package analyzecmd is `parley analyze`: exact game-theoretic references for a game's
// parameters, computed without playing. Each game family with an analysis is a subcommand.
package analyzecmd

import (
	"context"
	"fmt"
	"io"
	"math/big"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
)

// NewCmd returns the analyze command with its subcommands.
func NewCmd(deps *cli.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "analyze",
		Short: "Compute exact game-theoretic references for a game",
		Long: `Compute exact references for a game's parameters without playing it: the benchmarks
matches are measured against.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newCoalitionCmd(deps, nil))
	cmd.AddCommand(newDeliberationCmd(deps, nil))
	cmd.AddCommand(newEquilibriaCmd(deps, nil))
	cmd.AddCommand(newDondCmd(deps, nil))
	return cmd
}

// coalitionOptions are the flags of `analyze coalition`.
type coalitionOptions struct {
	params []string
}

// newCoalitionCmd returns `analyze coalition`. runF, when non-nil, replaces the run step (for
// tests of flag handling).
func newCoalitionCmd(deps *cli.Deps, runF func(context.Context, *coalitionOptions) error) *cobra.Command {
	o := &coalitionOptions{}
	cmd := &cobra.Command{
		Use:   "coalition [--param key=value ...]",
		Short: "Shapley value and core of a coalition game",
		Long: `Print a coalition game's values, its Shapley value and its core, computed exactly.

The game is given by the same parameters as ` + "`parley play coalition`" + ` (see ` + "`parley games`" + `);
without any, the published setup: A, B, C with AB=750, AC=750, BC=500, ABC=1000.
The Shapley value is written as an exact fraction and as a decimal; the core as its vertices
(one when it is a single point), or as empty.`,
		Example: `  parley analyze coalition
  parley analyze coalition --param players=N,E,S,W --param values=N+E:60,S+W:40,N+E+S+W:100`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runCoalition(deps.Out, o)
		},
	}
	cli.ParamsFlag(cmd.Flags(), &o.params, "")
	return cmd
}

func runCoalition(out io.Writer, o *coalitionOptions) error {
	gp, err := games.ParseParams(coalition.Name, o.params)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	s, err := coalition.NewSetup(gp)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	return writeCoalition(out, s)
}

// writeCoalition prints the analysis of s.
func writeCoalition(out io.Writer, s *coalition.Setup) error {
	g := s.Game()
	grand := s.Grand()
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "Coalition game: players %s; values in %s\n\n", strings.Join(s.Players, ", "), s.Unit)
	fmt.Fprintln(tw, "Values")
	for _, c := range s.Coalitions() {
		fmt.Fprintf(tw, "  %s\t%d\n", s.Name(c), s.Values[c])
	}
	fmt.Fprintln(tw)
	fmt.Fprintf(tw, "Shapley value (each player's average marginal contribution; sums to %s)\n", s.Amount(s.Values[grand]))
	for i, x := range g.Shapley() {
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", s.Players[i], x.RatString(), x.FloatString(2))
	}
	fmt.Fprintln(tw)
	core, err := g.Core()
	switch {
	case err != nil:
		fmt.Fprintf(tw, "Core: not computed (%v)\n", err)
	case core.Empty():
		fmt.Fprintf(tw, "Core: empty. No split of %s's %s gives every coalition at least its value.\n", s.Name(grand), s.Amount(s.Values[grand]))
	default:
		if len(core.Vertices) == 1 {
			fmt.Fprintln(tw, "Core: a single point")
		} else {
			fmt.Fprintf(tw, "Core: %d vertices (the core is every weighted average of them)\n", len(core.Vertices))
		}
		fmt.Fprintf(tw, "  \t%s\n", strings.Join(s.Players, "\t"))
		for k, v := range core.Vertices {
			label := ""
			if len(core.Vertices) > 1 {
				label = fmt.Sprint(k + 1)
			}
			fmt.Fprintf(tw, "  %s\t%s\n", label, strings.Join(amounts(v), "\t"))
		}
	}
	return tw.Flush()
}

// amounts writes each amount as a whole number, or as a fraction with its decimal.
func amounts(x []*big.Rat) []string {
	out := make([]string, len(x))
	for i, v := range x {
		if v.IsInt() {
			out[i] = v.RatString()
		} else {
			out[i] = fmt.Sprintf("%s (%s)", v.RatString(), v.FloatString(2))
		}
	}
	return out
}
