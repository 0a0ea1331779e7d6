// Package root assembles the parley command tree.
package root

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/admincmd"
	"github.com/parley-arena/parley/cmd/parley/internal/agentcheckcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/agentcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/analyticscmd"
	"github.com/parley-arena/parley/cmd/parley/internal/analyzecmd"
	"github.com/parley-arena/parley/cmd/parley/internal/benchcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/gamescmd"
	"github.com/parley-arena/parley/cmd/parley/internal/gatewaycmd"
	"github.com/parley-arena/parley/cmd/parley/internal/healthcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/importcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/playcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/refereecmd"
	"github.com/parley-arena/parley/cmd/parley/internal/replaycmd"
	"github.com/parley-arena/parley/cmd/parley/internal/reportcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/reproducecmd"
	"github.com/parley-arena/parley/cmd/parley/internal/tournamentcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/upcmd"
)

// NewCmd returns the root command with every subcommand.
func NewCmd(deps *cli.Deps) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "parley",
		Short: "Parley: an arena where agents negotiate",
		Long: `Parley runs negotiation and game-theory matches between agents written in any language,
records every event to NATS JetStream and prints what happened.

Every flag can also be set from the environment variable shown in its help.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			return cli.ApplyEnv(cmd, deps.Getenv)
		},
		// With Args and RunE set, an unknown subcommand is a one-line usage error rather than
		// cobra's multi-line message (exit status 1); no subcommand at all prints the help.
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			hint := ""
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				hint = fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
			}
			return cli.Usagef("unknown command %q%s; see `parley --help` for the commands", args[0], hint)
		},
		RunE:                       func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
		SuggestionsMinimumDistance: 2,
	}
	cmd.SetOut(deps.Out)
	cmd.SetErr(deps.Err)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cli.UsageError{Err: err} })
	cmd.AddCommand(
		upcmd.NewCmd(deps),
		gamescmd.NewCmd(deps),
		playcmd.NewCmd(deps, nil),
		replaycmd.NewCmd(deps),
		agentcmd.NewCmd(deps),
		agentcheckcmd.NewCmd(deps),
		refereecmd.NewCmd(deps),
		benchcmd.NewCmd(deps),
		analyzecmd.NewCmd(deps),
		tournamentcmd.NewCmd(deps),
		reportcmd.NewCmd(deps),
		reproducecmd.NewCmd(deps),
		importcmd.NewCmd(deps),
		analyticscmd.NewCmd(deps),
		gatewaycmd.NewCmd(deps),
		healthcmd.NewCmd(deps),
		admincmd.NewCmd(deps),
	)
	cli.DocumentEnv(cmd)
	usageArgs(cmd)
	return cmd
}

// usageArgs makes a wrong number of arguments to any subcommand a usage error (exit status 2)
// that shows how the command is called.
func usageArgs(cmd *cobra.Command) {
	for _, sub := range cmd.Commands() {
		if check := sub.Args; check != nil {
			sub.Args = func(c *cobra.Command, args []string) error {
				if err := check(c, args); err != nil {
					return cli.Usagef("%s: %v; usage: %s", c.Name(), err, c.UseLine())
				}
				return nil
			}
		}
		usageArgs(sub)
	}
}
