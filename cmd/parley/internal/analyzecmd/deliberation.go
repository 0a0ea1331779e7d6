package analyzecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/referee/games/deliberation/dealspace"
)

// deliberationOptions are the flags of `analyze deliberation`.
type deliberationOptions struct {
	params []string
	json   string
}

// bonusParam is the analysis option given with --param, beside the game's own parameters.
const bonusParam = "bonus_unanimity"

// newDeliberationCmd returns `analyze deliberation`. runF, when non-nil, replaces the run step
// (for tests of flag handling).
func newDeliberationCmd(deps *cli.Deps, runF func(context.Context, *deliberationOptions) error) *cobra.Command {
	o := &deliberationOptions{}
	cmd := &cobra.Command{
		Use:   "deliberation [--param game=G] [--param bonus_unanimity=ge|gt] [--json FILE]",
		Short: "Deal space of a deliberation game: acceptable deals, Pareto fronts, scores and inequality",
		Long: `Enumerate every complete deal of a deliberation game and apply its vote rule, without agents.

Prints the number of deals; the acceptable ones (those that pass) and how many of them are
unanimous; the Pareto front among the acceptable deals, on score vectors where a passing deal
scores every party its deal score (p1 plus its bonus when the bonus applies) and a failing one
every party its threshold; the Pareto front over all deals on raw scores (no threshold rule, no
bonus); and min / mean / max over the acceptable deals of the mean party score and of the Gini
coefficient; then the front's deals. --json writes the front (both fronts) to a file for plots.

The game is given by the parameters of ` + "`parley play deliberation`" + ` (game=base|game1|game2|game3 or
a folder; quorum, vetoes, p1_bonus, parties, issues, ...). bonus_unanimity=ge (default) grants
the bonus when every party says yes; gt only when every party other than p1 is strictly above
its threshold (acceptance still uses >=), as the reproduction paper's table was made.`,
		Example: `  parley analyze deliberation
  parley analyze deliberation --param game=game2 --param bonus_unanimity=gt
  parley analyze deliberation --param game=data/deliberation/base --json front.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runDeliberation(deps, o)
		},
	}
	cli.ParamsFlag(cmd.Flags(), &o.params, ", or bonus_unanimity=ge|gt")
	cmd.Flags().StringVar(&o.json, "json", "", "also write the Pareto fronts as JSON to this file")
	return cmd
}

func runDeliberation(deps *cli.Deps, o *deliberationOptions) error {
	rule := deliberation.BonusGE
	var kvs []string
	for _, kv := range o.params {
		key, value, _ := strings.Cut(kv, "=")
		if strings.TrimSpace(key) != bonusParam {
			kvs = append(kvs, kv)
			continue
		}
		switch strings.TrimSpace(value) {
		case "ge":
			rule = deliberation.BonusGE
		case "gt":
			rule = deliberation.BonusGT
		default:
			return cli.Usagef("parameter %s=%q: want ge or gt", bonusParam, value)
		}
	}
	game, err := deps.Games.Lookup(deliberation.Name)
	if err != nil {
		return err
	}
	gp, err := games.ParseParams(deliberation.Name, kvs)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	// A game folder (game=PATH) is read here, never by the rules.
	if l, ok := game.(games.Loader); ok {
		if gp, err = l.Load(gp, 0, os.ReadFile); err != nil {
			return cli.Usagef("%v", err)
		}
	}
	resolved, err := game.Resolve(gp)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	s, err := deliberation.NewSetup(resolved)
	if err != nil {
		return err
	}
	a, err := dealspace.Analyze(s, rule)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if o.json != "" {
		if err := writeFrontJSON(o.json, a); err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	return writeDeliberation(deps.Out, a)
}

// writeDeliberation prints the analysis.
func writeDeliberation(out io.Writer, a *dealspace.Analysis) error {
	s := a.Setup
	rule := "ge: when every party says yes"
	if a.Rule == deliberation.BonusGT {
		rule = "gt: when every party but p1 is strictly above its threshold"
	}
	vetoes := "none"
	if len(s.Vetoes) > 0 {
		var names []string
		for _, v := range s.Vetoes {
			names = append(names, s.Parties[v].Name)
		}
		vetoes = strings.Join(names, ", ")
	}
	tw := tabwriter.NewWriter(out, 2, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "Deliberation deal space: %s (game %s), %d parties, %d issues\n", s.Title, s.Game, s.N(), len(s.Issues))
	fmt.Fprintf(tw, "Vote rule: quorum %d of %d, vetoes %s; p1 bonus %d (%s)\n\n", s.Quorum, s.N(), vetoes, s.Bonus, rule)
	pct := func(k, n int) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(n))
	}
	fmt.Fprintf(tw, "All deals\t%d\n", a.Deals)
	fmt.Fprintf(tw, "Acceptable deals (pass the vote)\t%d / %d\t%s\n", a.Acceptable, a.Deals, pct(a.Acceptable, a.Deals))
	fmt.Fprintf(tw, "Unanimous deals\t%d / %d acceptable\t%s\n", a.Unanimous, a.Acceptable, pct(a.Unanimous, a.Acceptable))
	fmt.Fprintf(tw, "Pareto front among acceptable deals\t%d / %d acceptable\t%s\n", len(a.Front), a.Acceptable, pct(len(a.Front), a.Acceptable))
	same := "the same deals"
	if !a.FrontAllAcceptable {
		same = "differs: some failing deal is not dominated"
	}
	fmt.Fprintf(tw, "  front over all deals (failing deal = thresholds)\t%d\t%s\n", a.FrontAll, same)
	fmt.Fprintf(tw, "Raw-score Pareto front over all deals\t%d / %d\t%s\n", len(a.RawFront), a.Deals, pct(len(a.RawFront), a.Deals))
	fmt.Fprintf(tw, "Mean party score over acceptable deals\tmin %.2f\tmean %.2f\tmax %.2f\n", a.MeanScore.Min, a.MeanScore.Mean, a.MeanScore.Max)
	fmt.Fprintf(tw, "Gini over acceptable deals\tmin %.3f\tmean %.3f\tmax %.3f\n\n", a.Gini.Min, a.Gini.Mean, a.Gini.Max)
	fmt.Fprintf(tw, "Pareto front among acceptable deals (%d)\n", len(a.Front))
	header := []string{"  deal"}
	for _, p := range s.Parties {
		header = append(header, p.Name)
	}
	header = append(header, "mean", "gini", "votes")
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, p := range a.Front {
		row := []string{"  " + s.DealString(p.Deal)}
		for _, x := range p.Scores {
			row = append(row, fmt.Sprint(x))
		}
		votes := fmt.Sprintf("%d of %d", s.Vote(p.Deal).YesCount, s.N())
		if p.Unanimous {
			votes = "unanimous"
		}
		row = append(row, fmt.Sprintf("%.2f", p.Mean), fmt.Sprintf("%.3f", p.Gini), votes)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// frontJSON is the --json file: the game and both fronts.
type frontJSON struct {
	Game       string      `json:"game"`
	Title      string      `json:"title"`
	Parties    []string    `json:"parties"`
	Rule       string      `json:"bonus_unanimity"`
	Deals      int         `json:"deals"`
	Acceptable int         `json:"acceptable"`
	Unanimous  int         `json:"unanimous"`
	Front      []pointJSON `json:"front"`
	RawFront   []pointJSON `json:"raw_front"`
}

type pointJSON struct {
	Deal      string   `json:"deal"`
	Options   []string `json:"options"`
	Scores    []int    `json:"scores"`
	Mean      float64  `json:"mean"`
	Gini      float64  `json:"gini"`
	Passed    bool     `json:"passed"`
	Unanimous bool     `json:"unanimous"`
}

func writeFrontJSON(path string, a *dealspace.Analysis) error {
	s := a.Setup
	doc := frontJSON{Game: s.Game, Title: s.Title, Parties: s.Names(), Rule: "ge", Deals: a.Deals, Acceptable: a.Acceptable, Unanimous: a.Unanimous,
		Front: []pointJSON{}, RawFront: []pointJSON{}}
	if a.Rule == deliberation.BonusGT {
		doc.Rule = "gt"
	}
	point := func(p dealspace.Point) pointJSON {
		out := pointJSON{Deal: s.DealString(p.Deal), Scores: p.Scores, Mean: p.Mean, Gini: p.Gini, Passed: p.Passed, Unanimous: p.Unanimous}
		for i, k := range p.Deal {
			out.Options = append(out.Options, s.Issues[i].Options[k])
		}
		return out
	}
	for _, p := range a.Front {
		doc.Front = append(doc.Front, point(p))
	}
	for _, p := range a.RawFront {
		doc.RawFront = append(doc.RawFront, point(p))
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
