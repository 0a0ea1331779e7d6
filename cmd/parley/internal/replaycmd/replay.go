// Package replaycmd is `parley replay`: print a recorded match, or continue it from a turn
// with other agents (a counterfactual run).
package replaycmd

import (
	"context"
	"fmt"
	"hash/fnv"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/localplay"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/record"
)

type options struct {
	path     string
	fromTurn int32
	agents   []string
	matchID  string
	run      localplay.Options
}

// NewCmd returns the replay command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "replay FILE [--from-turn K --agent A --agent B ...]",
		Short: "Print a recorded match, or continue it from a turn with other agents",
		Long: `Without --from-turn, print the transcript of a match recorded with --record or --json.

With --from-turn K, replay the record's actions before turn K and let the given agents play on
from turn K: same game, parameters and seed, so the run is deterministic for the same agents.`,
		Example: `  parley replay match.jsonl
  parley replay match.jsonl --from-turn 3 --agent builtin:fair --agent builtin:random`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			return run(cmd.Context(), deps, o)
		},
	}
	fs := cmd.Flags()
	fs.Int32Var(&o.fromTurn, "from-turn", 0, "continue the match from this turn (1 = the very start) with --agent")
	fs.StringArrayVar(&o.agents, "agent", nil, "agent for the next seat when continuing (repeat once per seat)")
	fs.StringVar(&o.matchID, "match-id", "", "id of the continued match (default: the recorded id with the turn and a hash of the agents)")
	o.run.Bind(fs)
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	f, err := os.Open(o.path)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	events, err := record.Read(f)
	f.Close()
	if err != nil {
		return cli.Usagef("%s: %v", o.path, err)
	}
	if err := record.Validate(events); err != nil {
		return cli.Usagef("%s: %v", o.path, err)
	}
	if o.fromTurn == 0 {
		if len(o.agents) > 0 {
			return cli.Usagef("--agent needs --from-turn: say from which turn the new agents play")
		}
		if o.run.JSON {
			w := record.NewWriter(deps.Out)
			for _, ev := range events {
				if err := w.Record(ctx, ev); err != nil {
					return err
				}
			}
			return nil
		}
		return record.Transcript(deps.Out, events, record.TranscriptOptions{ShowPrivate: o.run.ShowPrivate, Games: deps.Games})
	}
	lastTurn := int32(1)
	for _, ev := range events {
		if ev.GetActionTaken() != nil {
			lastTurn = max(lastTurn, ev.GetTurn())
		}
	}
	if o.fromTurn < 1 || o.fromTurn > lastTurn {
		return cli.Usagef("--from-turn must be between 1 and %d, the last turn played in %s; got %d", lastTurn, o.path, o.fromTurn)
	}
	if err := o.run.Validate(); err != nil {
		return err
	}
	started := events[0].GetMatchStarted()
	game, err := deps.Games.Lookup(started.GetGame())
	if err != nil {
		return cli.Usagef("%s: %v", o.path, err)
	}
	if seats, _ := games.Seats(game, started.GetParams()); len(o.agents) != len(seats) {
		return cli.Usagef("continuing %s from turn %d needs %d agents, one per seat (%s), given with --agent; got %d",
			started.GetGame(), o.fromTurn, len(seats), strings.Join(seats, ", "), len(o.agents))
	}
	if v := game.Info().GetRulesVersion(); v != started.GetRulesVersion() {
		fmt.Fprintf(deps.Err, "warning: the record was made with %s rules version %s; this binary has version %s\n", started.GetGame(), started.GetRulesVersion(), v)
	}
	if o.matchID == "" {
		h := fnv.New32a()
		for _, a := range o.agents {
			h.Write([]byte(a))
			h.Write([]byte{0})
		}
		o.matchID = fmt.Sprintf("%s-t%d-%08x", events[0].GetMatchId(), o.fromTurn, h.Sum32())
	}
	_, err = localplay.Play(ctx, deps, &o.run, launch.Request{
		MatchID:   o.matchID,
		Game:      started.GetGame(),
		Params:    started.GetParams(),
		Seed:      started.GetSeed(),
		SeedGiven: true,
		Agents:    o.agents,
		Prefix:    events,
		FromTurn:  o.fromTurn,
	})
	return err
}
