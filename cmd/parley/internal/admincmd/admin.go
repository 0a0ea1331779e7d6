// Package admincmd is `parley admin`: what an organiser does to run a competition, starting
// with teams (`parley admin team add|list|revoke`). It works on the NATS server the gateway
// and referees use: --nats URL, or a running `parley up`'s, found through its data directory.
package admincmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/upcmd"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/teams/registry"
)

type options struct {
	nats    string
	dataDir string
}

// NewCmd returns the admin command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "admin",
		Short: "Organise a competition: teams and their tokens",
		Long: `Organise a competition. Teams register their bots through the gateway with a team token
(RegistryService, "Authorization: Bearer TOKEN"); their bots may dial out to the gateway with
the same token. Tokens are printed once, when a team is added; only their SHA-256 is kept.

Every admin command works on the NATS server of the gateway and referees: --nats URL, or,
without it, the server of the 'parley up' running on --data-dir (its URL is in DATA/nats.url).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&o.nats, "nats", "", "NATS server URL of the gateway and referees (empty: the running 'parley up' of --data-dir)")
	pf.StringVar(&o.dataDir, "data-dir", "", "data directory of a running 'parley up' (default: its default)")
	cmd.AddCommand(newTeamCmd(deps, o))
	return cmd
}

func newTeamCmd(deps *cli.Deps, o *options) *cobra.Command {
	team := &cobra.Command{
		Use:   "team",
		Short: "Add, list and revoke teams",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	add := &cobra.Command{
		Use:   "add NAME",
		Short: "Add a team and print its token (shown this once only)",
		Example: `  parley admin team add acme
  parley admin team add acme --nats nats://127.0.0.1:4222`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), deps, o, func(s *registry.Store) error {
				token, err := s.AddTeam(cmd.Context(), args[0])
				if err != nil {
					return storeError(err)
				}
				fmt.Fprintf(deps.Err, "team %s added; its token follows (shown once: only its hash is kept)\n", args[0])
				fmt.Fprintln(deps.Out, token)
				return nil
			})
		},
	}
	list := &cobra.Command{
		Use:   "list",
		Short: "List the teams",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withStore(cmd.Context(), deps, o, func(s *registry.Store) error {
				teams, err := s.Teams(cmd.Context())
				if err != nil {
					return err
				}
				bots, err := s.Bots(cmd.Context(), "", false)
				if err != nil {
					return err
				}
				count := map[string]int{}
				for _, b := range bots {
					count[b.GetTeam()]++
				}
				tw := tabwriter.NewWriter(deps.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "TEAM\tBOTS\tADDED")
				for _, t := range teams {
					fmt.Fprintf(tw, "%s\t%d\t%s\n", t.Name, count[t.Name], t.Created.Format("2006-01-02 15:04 MST"))
				}
				return tw.Flush()
			})
		},
	}
	revoke := &cobra.Command{
		Use:   "revoke NAME",
		Short: "Revoke a team: its token stops working at once",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd.Context(), deps, o, func(s *registry.Store) error {
				if err := s.RevokeTeam(cmd.Context(), args[0]); err != nil {
					return storeError(err)
				}
				fmt.Fprintf(deps.Out, "team %s revoked\n", args[0])
				return nil
			})
		},
	}
	team.AddCommand(add, list, revoke)
	return team
}

// storeError makes the registry's refusals usage errors (exit status 2).
func storeError(err error) error {
	if errors.Is(err, registry.ErrInvalid) || errors.Is(err, registry.ErrExists) || errors.Is(err, registry.ErrNotFound) {
		return cli.Usagef("%v", strings.TrimPrefix(err.Error(), "registry: "))
	}
	return err
}

// natsURL is --nats, or the URL a running `parley up` wrote in its data directory.
func natsURL(o *options) (string, error) {
	if o.nats != "" {
		return o.nats, nil
	}
	dir := o.dataDir
	if dir == "" {
		dir = upcmd.DefaultDataDir()
	}
	data, err := os.ReadFile(filepath.Join(dir, upcmd.NATSURLFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", cli.Usagef("no running 'parley up' in %s (no %s there); give --nats URL or --data-dir DIR", dir, upcmd.NATSURLFile)
	} else if err != nil {
		return "", cli.Usagef("--data-dir: %v", err)
	}
	return strings.TrimSpace(string(data)), nil
}

func withStore(ctx context.Context, deps *cli.Deps, o *options, f func(*registry.Store) error) error {
	url, err := natsURL(o)
	if err != nil {
		return err
	}
	b, err := bus.Open(ctx, bus.Config{URL: url}, deps.Logger(slog.LevelWarn))
	if err != nil {
		return fmt.Errorf("nats %s: %w", url, err)
	}
	defer b.Close()
	s, err := registry.Open(ctx, b.JetStream())
	if err != nil {
		return err
	}
	return f(s)
}
