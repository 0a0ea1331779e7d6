// Package gamescmd is `parley games`: the game catalogue with parameters.
package gamescmd

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
)

// NewCmd returns the games command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	return &cobra.Command{
		Use:   "games",
		Short: "List the games with their parameters",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			tw := tabwriter.NewWriter(deps.Out, 2, 8, 2, ' ', 0)
			for _, g := range deps.Games.Games() {
				info := g.Info()
				fmt.Fprintf(tw, "%s\t%s\n", info.GetName(), info.GetDescription())
				fmt.Fprintf(tw, "\tseats: %s; rules version %s\n", strings.Join(info.GetSeats(), ", "), info.GetRulesVersion())
				for _, p := range info.GetParams() {
					fmt.Fprintf(tw, "\t  --param %s=%s\t%s\n", p.GetName(), p.GetDefaultValue(), p.GetDescription())
				}
				fmt.Fprintln(tw)
			}
			return tw.Flush()
		},
	}
}
