// Package root assembles the parley command tree.
package root

import (
	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/agentcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/benchcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/gamescmd"
	"github.com/parley-arena/parley/cmd/parley/internal/playcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/refereecmd"
	"github.com/parley-arena/parley/cmd/parley/internal/replaycmd"
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
	}
	cmd.SetOut(deps.Out)
	cmd.SetErr(deps.Err)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return &cli.UsageError{Err: err} })
	cmd.AddCommand(
		gamescmd.NewCmd(deps),
		playcmd.NewCmd(deps, nil),
		replaycmd.NewCmd(deps),
		agentcmd.NewCmd(deps),
		refereecmd.NewCmd(deps),
		benchcmd.NewCmd(deps),
	)
	cli.DocumentEnv(cmd)
	return cmd
}
