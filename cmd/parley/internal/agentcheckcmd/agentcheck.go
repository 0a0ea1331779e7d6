// Package agentcheckcmd is `parley agent-check`: the conformance check a team runs against its
// own bot before submitting it. It plays real matches, built by the referee's own match
// runner and rules, with the bot in every seat against built-in agents, and looks at what the
// bot did with each request.
package agentcheckcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/match"
)

// NewCmd returns the agent-check command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	cfg := Config{}
	cmd := &cobra.Command{
		Use:   "agent-check ADDR [--game G]...",
		Short: "Check that a bot speaks the agent protocol correctly before it enters a competition",
		Long: `Check the bot at ADDR (grpc://host:port) the way a referee would use it, and print a
PASS or FAIL line per check:

  health          the standard gRPC health service answers SERVING
  describe        Describe answers with a name; the games it claims exist
  G: legal replies  real matches of each game G (every game the bot claims, or --game),
                  --matches per seat with the bot in every seat against built-in agents
                  (--opponent), seeded:
                  every reply the referee's rules accept, no errors, no malformed replies
  G: rejection    the bot's first answer is swapped for an action with no move; the referee
                  refuses it and asks again with the reason, and the bot's next answer must be
                  legal
  G: unknown fields  every request carries fields no Parley version defines (as a newer
                  referee might send); every reply must still be legal
  deadline        every reply arrives within --deadline; latency percentiles p50, p90, p99

The exit status is 1 when any check fails.`,
		Example: `  parley agent-check grpc://127.0.0.1:50061
  parley agent-check grpc://127.0.0.1:50061 --game ultimatum --matches 5 --deadline 2s
  parley agent-check grpc://127.0.0.1:50061 --game ultimatum --param total=10 --param max_turns=3`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg.Addr = args[0]
			cfg.Agents = deps.Resolver()
			return run(cmd.Context(), deps, cfg)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&cfg.Games, "game", nil, "a game to check (repeatable; default: every game the bot claims)")
	fs.IntVar(&cfg.Matches, "matches", 3, "matches per seat per game for the legal-replies check")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the matches")
	fs.DurationVar(&cfg.Deadline, "deadline", match.DefaultMoveTimeout, "time the bot has for each answer (the referee's move timeout)")
	fs.StringArrayVarP(&cfg.Params, "param", "p", nil, "game parameter key=value for the one --game (repeatable; see parley games; default: the game's defaults)")
	fs.StringVar(&cfg.Opponent, "opponent", "", "agent in the other seats (default: each built-in agent that plays the game, in turn, and builtin:random, seeded)")
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, cfg Config) error {
	switch {
	case cfg.Matches < 1:
		return cli.Usagef("--matches must be at least 1, got %d", cfg.Matches)
	case cfg.Deadline <= 0:
		return cli.Usagef("--deadline must be positive, got %s", cfg.Deadline)
	case len(cfg.Params) > 0 && len(cfg.Games) != 1:
		return cli.Usagef("--param sets the parameters of one game: give exactly one --game with it")
	}
	if len(cfg.Params) > 0 {
		if _, err := games.ParseParams(cfg.Games[0], cfg.Params); err != nil {
			return cli.Usagef("--param: %v", err)
		}
	}
	for _, g := range cfg.Games {
		if _, err := deps.Games.Lookup(g); err != nil {
			return cli.Usagef("--game %s: %v; see `parley games`", g, err)
		}
	}
	fmt.Fprintf(deps.Out, "agent-check %s: deadline %s, %d matches per seat, seed %d\n", cfg.Addr, cfg.Deadline, cfg.Matches, cfg.Seed)
	start := time.Now()
	checks, err := Run(ctx, deps.Games, cfg)
	failed := Print(deps.Out, checks)
	if errors.Is(err, agentconn.ErrBadAddress) {
		return cli.Usagef("%v", err)
	} else if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("agent-check: %d of %d checks failed", failed, len(checks))
	}
	fmt.Fprintf(deps.Out, "all %d checks passed in %s\n", len(checks), time.Since(start).Round(time.Millisecond))
	return nil
}

// Print writes one line per check, with its problems indented below, and returns how many
// failed.
func Print(w io.Writer, checks []Check) int {
	width := 0
	for _, c := range checks {
		width = max(width, len(c.Name))
	}
	failed := 0
	for _, c := range checks {
		verdict := "PASS"
		if !c.Passed {
			verdict = "FAIL"
			failed++
		}
		fmt.Fprintf(w, "%s  %-*s  %s\n", verdict, width, c.Name, c.Detail)
		for i, p := range c.Problems {
			if i == maxProblems {
				fmt.Fprintf(w, "      ... and %d more\n", len(c.Problems)-maxProblems)
				break
			}
			fmt.Fprintf(w, "      %s\n", p)
		}
	}
	return failed
}
