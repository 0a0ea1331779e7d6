package analyzecmd

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	dondv1 "github.com/parley-arena/parley/gen/go/parley/games/dealornodeal/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/dealornodeal/corpus"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/services/analytics/metrics"
	dondmetrics "github.com/parley-arena/parley/services/analytics/metrics/dealornodeal"
)

// dondOptions are the flags of `analyze dond`.
type dondOptions struct {
	data      string
	hardest   int
	seedLines bool
	requireEF bool
	write     string
	play      []string
	maxTurns  int32
	timeout   time.Duration
}

// newDondCmd returns `analyze dond`. runF, when non-nil, replaces the run step.
func newDondCmd(deps *cli.Deps, runF func(context.Context, *dondOptions) error) *cobra.Command {
	o := &dondOptions{}
	cmd := &cobra.Command{
		Use:   "dond --data FILE [--hardest N] [--require-ef] [--write OUT] [--play A,B ...]",
		Short: "Deal or No Deal: Human and Best rows over corpus datapoints, and agents' rows",
		Long: `Read a Deal-or-No-Deal corpus file (tagged split files such as test.txt, the raw data.txt,
selfplay.txt, or a selection written with --write), pair the two sides of each dialogue and
de-duplicate (see referee/games/dealornodeal/corpus), and print for the selected datapoints the
Human row (from each dialogue's recorded outcome) and the Best row (the envy-free allocation with
the largest total), with the spec's metrics: turns, rounds, agreement rate, each player's mean
score, PO rate, EF rate and mean total. A datapoint's Alice is the kept line's YOU.

--hardest N keeps the N hardest datapoints the way seed 004 chose its 50: repeated set-ups, pools
with all counts even and "easy" set-ups dropped, then the first N in file order within the
smallest value distance that holds N. With --seed-lines datapoints come from every other line of
the file, as the seed took them (instead of one per dialogue). --require-ef leaves out
datapoints without any envy-free allocation (the seed's tables do); the count left out is
printed either way. --write writes the selected datapoints in the tagged format, for
--data or for ` + "`parley play dealornodeal --param corpus=FILE`" + `.

--play A,B plays one match per datapoint between agent A (Alice) and agent B (Bob), built-in or
gRPC, in process without NATS, and adds their row, with the belief-estimation metrics of any
seat whose agent records its belief (the bayes agent). Repeat it for several pairings.`,
		Example: `  parley analyze dond --data data/dealornodeal/test.txt --hardest 50 --seed-lines --require-ef
  parley analyze dond --data data/dealornodeal/sampled_50_deal_no_deal.txt --require-ef \
      --play builtin:bayes,builtin:bayes --play builtin:bayes,builtin:dondgreedy
  parley analyze dond --data data/dealornodeal/test.txt --hardest 50 --write hardest.txt`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.data == "" {
				return cli.Usagef("--data FILE is required")
			}
			if o.hardest < 0 {
				return cli.Usagef("--hardest must be positive, got %d", o.hardest)
			}
			for _, p := range o.play {
				if len(strings.Split(p, ",")) != 2 {
					return cli.Usagef("--play takes two agents separated by a comma, got %q", p)
				}
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runDond(cmd.Context(), deps, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.data, "data", "", "corpus file (format A, B or C; see the long help)")
	fs.IntVar(&o.hardest, "hardest", 0, "keep the N hardest datapoints, as seed 004 chose them (0: all)")
	fs.BoolVar(&o.seedLines, "seed-lines", false, "take datapoints from lines 1, 3, 5, ... as seed 004 did, instead of one per dialogue")
	fs.BoolVar(&o.requireEF, "require-ef", false, "leave out datapoints that have no envy-free allocation")
	fs.StringVar(&o.write, "write", "", "write the selected datapoints to this file, in the tagged format")
	fs.StringArrayVar(&o.play, "play", nil, "play each datapoint between two agents A,B (Alice, Bob) and add their row (repeatable)")
	fs.Int32Var(&o.maxTurns, "max-turns", dealornodeal.DefaultMaxTurns(), "turn limit of the matches --play runs")
	fs.DurationVar(&o.timeout, "move-timeout", 10*time.Second, "time an agent has for each answer in --play matches")
	return cmd
}

func runDond(ctx context.Context, deps *cli.Deps, o *dondOptions) error {
	out := deps.Out
	data, err := os.ReadFile(o.data)
	if err != nil {
		return cli.Usagef("--data: %v", err)
	}
	c, err := corpus.Parse(filepath.Base(o.data), data)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	st := c.Stats()
	fmt.Fprintf(out, "Corpus %s, %s: %d lines, %d dialogues", c.Name, c.Format, st.Lines, st.Dialogues)
	if c.Format != corpus.FormatContexts {
		fmt.Fprintf(out, " (%d seen from both sides, %d from one side only); outcomes of the dialogues: %d deal, %d disagree, %d no agreement, %d disconnect.\n",
			st.BothSides, st.OneSide, st.Deal, st.Disagree, st.NoAgreement, st.Disconnect)
		fmt.Fprintln(out, "Pairing: a line is matched with the earliest earlier unmatched line that mirrors it (same counts, swapped values, same text with YOU/THEM swapped); each pair is one dialogue, kept as its first line (Alice = that line's YOU).")
	} else {
		fmt.Fprintln(out, " (set-ups only: lines 1-2, 3-4, ... are the two players; no human outcome).")
	}
	points := c.Datapoints()
	what := "one datapoint per dialogue"
	if o.seedLines {
		points, what = c.OddLines(), "datapoints from lines 1, 3, 5, ..."
	}
	if o.hardest > 0 {
		sel, k, rest := corpus.Hardest(points, o.hardest)
		fmt.Fprintf(out, "Selection: %d %s; %d left after the seed's filters; the %d hardest: the first in file order with value distance at most %d.\n",
			len(points), what, rest, len(sel), k)
		points = sel
	} else {
		fmt.Fprintf(out, "Selection: all %d (%s).\n", len(points), what)
	}
	var kept []corpus.Datapoint
	noEF := 0
	for _, p := range points {
		if !p.Game.HasEF() {
			noEF++
			if o.requireEF {
				continue
			}
		}
		kept = append(kept, p)
	}
	if o.requireEF {
		fmt.Fprintf(out, "Without any envy-free allocation: %d, left out (--require-ef); %d datapoints remain.\n", noEF, len(kept))
	} else {
		fmt.Fprintf(out, "Without any envy-free allocation: %d (kept; they have no Best; --require-ef leaves them out).\n", noEF)
	}
	if o.write != "" {
		var lines []*corpus.Line
		for _, p := range kept {
			lines = append(lines, p.Line)
		}
		if err := os.WriteFile(o.write, corpus.Lines(lines), 0o644); err != nil {
			return fmt.Errorf("--write: %w", err)
		}
		fmt.Fprintf(out, "Wrote %d datapoints to %s.\n", len(kept), o.write)
	}
	if len(kept) == 0 {
		return nil
	}
	type row struct {
		name string
		s    dondmetrics.Summary
	}
	var rows []row
	if c.Format != corpus.FormatContexts {
		var human [][]metrics.Value
		for _, p := range kept {
			human = append(human, dondmetrics.HumanValues(p))
		}
		rows = append(rows, row{"Human", dondmetrics.Summarize(human)})
	}
	var best [][]metrics.Value
	for _, p := range kept {
		if v, ok := dondmetrics.BestValues(p.Game); ok {
			best = append(best, v)
		}
	}
	rows = append(rows, row{"Best", dondmetrics.Summarize(best)})
	for _, pair := range o.play {
		agents := strings.Split(pair, ",")
		s, err := playDond(ctx, deps, kept, agents, o)
		if err != nil {
			return err
		}
		rows = append(rows, row{strings.Join(shortNames(agents), " vs "), s})
	}
	fmt.Fprintln(out)
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "row\tn\tturns\trounds\tagreement\tAlice score\tBob score\tPO\tEF\ttotal\t")
	for _, r := range rows {
		s := r.s
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.name, s.N, num(s.Turns, 1), num(s.Rounds, 1), num(s.Agreement, 2),
			num(s.Score[0], 2), num(s.Score[1], 2), num(s.PO, 2), num(s.EF, 2), num(s.Total, 2))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	est := false
	for _, r := range rows {
		for seat := range 2 {
			est = est || !math.IsNaN(r.s.Precision[seat])
		}
	}
	if !est {
		return nil
	}
	fmt.Fprintln(out, "\nBelief estimation (means over matches; the indistinguishable set counts vectors without any EF allocation as inside):")
	tw = tabwriter.NewWriter(out, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "row\tseat\tprecision\trecall\treduction\tind. precision\tind. recall\tmean |V|\t")
	for _, r := range rows {
		for seat, name := range []string{"Alice", "Bob"} {
			s := r.s
			if math.IsNaN(s.Precision[seat]) {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.name, name, num(s.Precision[seat], 2), num(s.Recall[seat], 3), num(s.Reduction[seat], 3),
				num(s.IndPrecision[seat], 2), num(s.IndRecall[seat], 2), num(s.Support[seat], 1))
		}
	}
	return tw.Flush()
}

func num(x float64, prec int) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf("%.*f", prec, x)
}

// shortNames drops "builtin:" from agent addresses for the row's name.
func shortNames(agents []string) []string {
	out := make([]string, len(agents))
	for i, a := range agents {
		out[i] = strings.TrimPrefix(a, "builtin:")
	}
	return out
}

// playDond plays one match per datapoint between the two agents and summarizes their rows.
func playDond(ctx context.Context, deps *cli.Deps, points []corpus.Datapoint, agents []string, o *dondOptions) (dondmetrics.Summary, error) {
	resolver := deps.Resolver()
	check := &launch.Preparer{Games: deps.Games, Agents: resolver}
	if _, err := check.CheckAgents(ctx, dealornodeal.Name, agents); err != nil {
		return dondmetrics.Summary{}, cli.Usagef("--play: %v", err)
	}
	prep := &launch.Preparer{Games: deps.Games, Agents: resolver, NoProbe: true}
	player := &launch.Player{Agents: resolver}
	reg, err := metrics.NewRegistry(dondmetrics.New())
	if err != nil {
		return dondmetrics.Summary{}, err
	}
	var rows [][]metrics.Value
	for i, p := range points {
		params := &matchv1.GameParams{Family: &matchv1.GameParams_Dealornodeal{Dealornodeal: &dondv1.Params{
			Items:       corpus.Items[:],
			Counts:      int64s(p.Game.Counts),
			AliceValues: int64s(p.Game.Values[0]),
			BobValues:   int64s(p.Game.Values[1]),
			MaxTurns:    proto.Int32(o.maxTurns),
			Source:      proto.String(p.Source),
		}}}
		m, err := prep.Prepare(ctx, launch.Request{
			MatchID: fmt.Sprintf("dond-analysis-%d", i+1), Game: dealornodeal.Name, Params: params,
			Seed: uint64(i + 1), SeedGiven: true, Agents: agents,
			Limits: &matchv1.Limits{MoveTimeout: durationpb.New(o.timeout)},
		})
		if err != nil {
			return dondmetrics.Summary{}, fmt.Errorf("--play %s: datapoint %s: %w", strings.Join(agents, ","), p.Source, err)
		}
		res, err := player.Play(ctx, m, nil, launch.PlayOptions{})
		if err != nil {
			return dondmetrics.Summary{}, fmt.Errorf("--play %s: datapoint %s: %w", strings.Join(agents, ","), p.Source, err)
		}
		row, err := metrics.NewRow(res.Events, reg)
		if err != nil {
			return dondmetrics.Summary{}, err
		}
		rows = append(rows, row.Values)
	}
	return dondmetrics.Summarize(rows), nil
}

func int64s(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}
