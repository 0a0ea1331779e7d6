// Package playcmd is `parley play`: one match between agents, printed as it happens.
package playcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/localplay"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

type options struct {
	game    string
	agents  []string
	params  []string
	seed    uint64
	seedSet bool
	matchID string
	matches int
	run     localplay.Options
}

// NewCmd returns the play command. runF, when non-nil, replaces the run step (for tests of
// flag handling).
func NewCmd(deps *cli.Deps, runF func(context.Context, *options) error) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "play GAME --agent A --agent B [flags]",
		Short: "Play one match (or --matches N) between agents and print its transcript",
		Long: `Play one match of GAME with one agent per seat, in seat order; with --matches N, N matches
one after the other with seeds --seed, --seed+1, ..., followed by the game's metrics over them
when its family prints them (deliberation does, after a single match too).

An agent is builtin:NAME (a built-in Go agent started as a gRPC server on loopback for the
match, optionally with settings: builtin:fair?open=0.7), grpc://host:port (a running agent) or
human[:NAME] (you, in a web browser: the seat's page is served on --human-listen and its URL
printed to stderr; each move then has 5 minutes unless --move-timeout says otherwise).
Events go to NATS JetStream: an embedded server by default, or --nats URL.

Parameters that name files (a game file with --param file=..., a corpus with --param
corpus=...) are read here; the record holds their content, so it replays without them.

The same seed and deterministic agents give the same --json output, byte for byte; language-model
agents replaying a match from their reply cache give the same record but for each action's usage
(how the replies were got), and a replay of a replay is the same byte for byte.`,
		Example: `  parley play ultimatum --agent builtin:fair --agent builtin:random --seed 7
  parley play ultimatum --agent builtin:fair --agent grpc://127.0.0.1:50061 --param total=10 --param max_turns=3 --json
  parley play ultimatum --agent builtin:fair --agent human     # you play P2 in your browser
  parley play matrix --agent builtin:equilibrium --agent builtin:random --param file=my-game.yaml --param talk_rounds=2
  parley play deliberation --param game=game1 --matches 10 --seed 1 \
      --agent builtin:cooperative --agent builtin:cooperative --agent builtin:cooperative \
      --agent builtin:cooperative --agent builtin:cooperative --agent builtin:greedy`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.game = args[0]
			o.seedSet = cmd.Flags().Changed("seed")
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return run(cmd.Context(), deps, o)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&o.agents, "agent", nil, "agent for the next seat: builtin:NAME[?key=value&...], grpc://host:port or human[:NAME] (repeat once per seat)")
	cli.ParamsFlag(fs, &o.params, "")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the match's randomness (default: a random seed, printed)")
	fs.StringVar(&o.matchID, "match-id", "", "id of the match (default: GAME-SEED-HASH, derived from the game, parameters, seed and agents)")
	fs.IntVar(&o.matches, "matches", 1, "matches to play one after the other, with seeds --seed, --seed+1, ...; games with metrics print them over all matches at the end")
	o.run.Bind(fs)
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	if _, err := launch.LookupGame(deps.Games, o.game); err != nil {
		return cli.Usagef("%v", err)
	}
	if err := o.run.Validate(); err != nil {
		return err
	}
	switch {
	case o.matches < 1:
		return cli.Usagef("--matches must be at least 1, got %d", o.matches)
	case o.matches > 1 && o.run.RecordPath != "":
		return cli.Usagef("--record writes one match; with --matches, every record is on NATS (--nats) or printed with --json")
	}
	params, err := games.ParseParams(o.game, o.params)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if !o.seedSet {
		o.seed = launch.FreshSeed()
	}
	var records [][]*eventsv1.MatchEvent
	session := localplay.NewSession(deps, &o.run)
	defer session.Close()
	for i := range o.matches {
		id := o.matchID
		if id != "" && o.matches > 1 {
			id = fmt.Sprintf("%s-%d", id, i+1)
		}
		if i > 0 && !o.run.JSON {
			fmt.Fprintln(deps.Out)
		}
		res, err := session.Play(ctx, launch.Request{
			Game: o.game, Params: params, Seed: o.seed + uint64(i), SeedGiven: true, Agents: o.agents, MatchID: id,
		})
		if err != nil {
			return err
		}
		records = append(records, res.Events)
	}
	if o.run.JSON {
		return nil // the output is the event record alone
	}
	return report(deps.Out, o.game, records)
}

// reporter is a metrics family that prints its metrics over a set of matches for people.
type reporter interface {
	metrics.Family
	Report(w io.Writer, perMatch [][]metrics.Value) error
}

// report prints the metrics of the matches played, when the game's family can.
func report(w io.Writer, game string, records [][]*eventsv1.MatchEvent) error {
	f, ok := standard.New().Lookup(game)
	r, can := f.(reporter)
	if !ok || !can {
		return nil
	}
	var perMatch [][]metrics.Value
	for _, events := range records {
		vs, err := r.Match(events)
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		perMatch = append(perMatch, vs)
	}
	fmt.Fprintln(w)
	return r.Report(w, perMatch)
}
