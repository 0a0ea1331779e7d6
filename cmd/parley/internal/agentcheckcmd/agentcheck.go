// Package agentcheckcmd is `parley agent-check`: the conformance check a team runs against its
// own bot before submitting it. The checks are referee/agenttest's; this command opens the bot
// (served on an address, or dialling out to a gateway), prints the report and sets the exit
// status.
package agentcheckcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/agenttest"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/teams/botlink"
	"github.com/parley-arena/parley/teams/registry"
)

// options are the command's flags.
type options struct {
	agenttest.Config
	// Gateway and Token reach a dial-out bot (bot:TEAM/NAME) through the gateway it is
	// connected to.
	Gateway, Token string
}

// NewCmd returns the agent-check command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	opts := options{}
	cmd := &cobra.Command{
		Use:   "agent-check ADDR [--game G]...",
		Short: "Check that a bot speaks the agent protocol correctly before it enters a competition",
		Long: `Check the bot at ADDR the way a referee would use it, and print a PASS or FAIL line per
check. ADDR is grpc://host:port for a bot that serves, or bot:TEAM/NAME for a registered bot
that dials out, checked through the gateway it is connected to (--gateway, with the team's
--token): the gateway relays the checker's calls over the bot's link, to the token's own team's
bots only.

  health          the standard gRPC health service answers SERVING (for a dial-out bot: the
                  gateway sees its link connected)
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
                  (through a gateway, the relay's time is included)

The exit status is 1 when any check fails.`,
		Example: `  parley agent-check grpc://127.0.0.1:50061
  parley agent-check grpc://127.0.0.1:50061 --game ultimatum --matches 5 --deadline 2s
  parley agent-check grpc://127.0.0.1:50061 --game ultimatum --param total=10 --param max_turns=3
  PARLEY_TOKEN=pt_... parley agent-check bot:acme/steady --gateway http://127.0.0.1:8080`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Addr = args[0]
			return run(cmd.Context(), deps, opts)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&opts.Games, "game", nil, "a game to check (repeatable; default: every game the bot claims)")
	fs.IntVar(&opts.Matches, "matches", 3, "matches per seat per game for the legal-replies check")
	fs.Uint64Var(&opts.Seed, "seed", 1, "seed of the matches")
	fs.DurationVar(&opts.Deadline, "deadline", match.DefaultMoveTimeout, "time the bot has for each answer (the referee's move timeout)")
	fs.StringArrayVarP(&opts.Params, "param", "p", nil, "game parameter key=value for the one --game (repeatable; see parley games; default: the game's defaults)")
	fs.StringVar(&opts.Opponent, "opponent", "", "agent in the other seats (default: each built-in agent that plays the game, in turn, and builtin:random, seeded)")
	fs.StringVar(&opts.Gateway, "gateway", "", "for a dial-out bot (bot:TEAM/NAME): URL of the gateway it is connected to, e.g. http://127.0.0.1:8080")
	fs.StringVar(&opts.Token, "token", "", "for a dial-out bot: the team token (better from the environment than on the command line)")
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, opts options) error {
	switch {
	case opts.Matches < 1:
		return cli.Usagef("--matches must be at least 1, got %d", opts.Matches)
	case opts.Deadline <= 0:
		return cli.Usagef("--deadline must be positive, got %s", opts.Deadline)
	case len(opts.Params) > 0 && len(opts.Games) != 1:
		return cli.Usagef("--param sets the parameters of one game: give exactly one --game with it")
	}
	if len(opts.Params) > 0 {
		if _, err := games.ParseParams(opts.Games[0], opts.Params); err != nil {
			return cli.Usagef("--param: %v", err)
		}
	}
	for _, g := range opts.Games {
		if _, err := deps.Games.Lookup(g); err != nil {
			return cli.Usagef("--game %s: %v; see `parley games`", g, err)
		}
	}
	agents := deps.Resolver()
	bot, err := openBot(ctx, agents, opts)
	if err != nil {
		return err
	}
	defer bot.Close()
	cfg := opts.Config
	cfg.Open, cfg.Opponents = opener(agents), builtinOpponents

	through := ""
	if opts.Gateway != "" {
		through = ", through the gateway at " + opts.Gateway
	}
	fmt.Fprintf(deps.Out, "agent-check %s%s: deadline %s, %d matches per seat, seed %d\n", cfg.Addr, through, cfg.Deadline, cfg.Matches, cfg.Seed)
	start := time.Now()
	checks, err := agenttest.Run(ctx, deps.Games, bot, cfg)
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

// openBot connects to the bot under check: a dial-out bot through the gateway's relay, any
// other address as a referee opens it.
func openBot(ctx context.Context, agents *agentconn.Resolver, opts options) (*agenttest.Conn, error) {
	if !strings.HasPrefix(opts.Addr, registry.AddressPrefix) {
		if opts.Gateway != "" {
			return nil, cli.Usagef("--gateway is for a bot that dials out (bot:TEAM/NAME); check %s directly", opts.Addr)
		}
		c, err := agents.Open(ctx, opts.Addr)
		if errors.Is(err, agentconn.ErrBadAddress) || errors.Is(err, agentconn.ErrNotServed) {
			return nil, cli.Usagef("%v", err)
		} else if err != nil {
			return nil, err
		}
		return &agenttest.Conn{Client: c.Client, Health: healthpb.NewHealthClient(c.ClientConn()), Close: c.Close}, nil
	}
	team, name, version, err := registry.ParseAddress(opts.Addr)
	switch {
	case err != nil:
		return nil, cli.Usagef("%v", err)
	case version != "":
		return nil, cli.Usagef("%s: agent-check checks the bot connected now, whatever its version; give bot:%s/%s", opts.Addr, team, name)
	case opts.Gateway == "" || opts.Token == "":
		return nil, cli.Usagef("%s dials out: give --gateway URL (the gateway it is connected to) and the team's --token (or $%s)", opts.Addr, cli.EnvName("token"))
	}
	conn, err := botlink.DialRelay(opts.Gateway, opts.Token, team+"/"+name)
	if err != nil {
		return nil, cli.Usagef("--gateway: %v", err)
	}
	client, stop := agentconn.NewClient(agentv1.NewAgentServiceClient(conn))
	return &agenttest.Conn{Client: client, Health: healthpb.NewHealthClient(conn), Link: opts.Gateway, Close: func() error {
		stop()
		return conn.Close()
	}}, nil
}

// opener opens opponents' addresses with agents, as a referee would; builtin:random is seeded
// with the seed it is given.
func opener(agents *agentconn.Resolver) func(ctx context.Context, addr string, seed uint64) (*agenttest.Conn, error) {
	return func(ctx context.Context, addr string, seed uint64) (*agenttest.Conn, error) {
		if addr == "builtin:random" {
			addr = fmt.Sprintf("builtin:random?seed=%d", seed)
		}
		c, err := agents.Open(ctx, addr)
		if err != nil {
			return nil, err
		}
		return &agenttest.Conn{Client: c.Client, Close: c.Close}, nil
	}
}

// builtinOpponents are every built-in agent that says it plays game, then builtin:random
// (which plays any).
func builtinOpponents(game string) []string {
	var out []string
	for _, e := range builtin.Catalog() {
		a, err := e.New(nil)
		if err != nil {
			continue // needs settings (a language model's address)
		}
		if d, ok := a.(sdk.Describer); ok && slices.Contains(d.Describe().GetGames(), game) {
			out = append(out, "builtin:"+e.Name)
		}
		if cl, ok := a.(io.Closer); ok {
			cl.Close()
		}
	}
	return append(out, "builtin:random")
}

// Print writes one line per check, with its problems indented below, and returns how many
// failed.
func Print(w io.Writer, checks []agenttest.Check) int {
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
			if i == agenttest.MaxProblems {
				fmt.Fprintf(w, "      ... and %d more\n", len(c.Problems)-agenttest.MaxProblems)
				break
			}
			fmt.Fprintf(w, "      %s\n", p)
		}
	}
	return failed
}
