// Package importcmd is `parley import STUDY PATH...`: store a study's published runs (the logs
// of games its models played on another platform) as Parley matches, one tournament per source
// folder, with Parley's own reading of every game beside the platform's.
package importcmd

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/formats"
)

// Options are what an import needs; reproduce --from-runs PATH imports with them too.
type Options struct {
	// Bus says where the store is: an external server or the embedded one's data (one of
	// them, or neither for a throw-away store).
	Bus cli.BusFlags
	// Prefix starts the tournaments' ids (default: the study's).
	Prefix string
	// Workers read files at once (0: one per CPU).
	Workers int
	// ParseReport adds the parse report to the summary.
	ParseReport bool
}

// NewCmd returns the import command, with one subcommand per study.
func NewCmd(deps *cli.Deps) *cobra.Command {
	var names []string
	cmd := &cobra.Command{
		Use:   "import STUDY PATH...",
		Short: "Store a study's published runs as matches: one tournament per source folder, Parley's reading beside the platform's",
		Long: `Read the logs of the games a study's models played on another platform and store each game as a
Parley match, recorded as a played match is, so that every view works on it: the match page,
the record, replay, analytics, ratings, 'parley report' and 'parley reproduce STUDY --from-runs'.

PATH is a folder (read recursively), a log file, or a .tar.gz of either; archive entries with
absolute paths or ".." steps are refused, and nothing is written but the store. The games of
one source folder make one tournament, named after the folder; ids come from the folder and
each file's sha256, so importing the same files again changes nothing.

Every answer is kept (the whole text as the seat's private reasoning, the public message as a
message, the move the platform played as the move), with the source file, its sha256 and the
study's commit. Parley re-reads every answer with its own parser and plays the game through its
own rules; where they read it otherwise than the platform, the record keeps the platform's
outcome (which the paper used) and a tagged disagreement with both readings. A game that
crashed, was cut short or broke its format is stored void with its cause; a file that cannot be
read is refused with one line, and the import goes on. It ends with counts: imported, already
stored, void, refused, disagreements by kind.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			return cli.Usagef("import: no study %q (studies: %s)", args[0], strings.Join(names, ", "))
		},
	}
	for _, s := range formats.All() {
		names = append(names, s.Name)
		cmd.AddCommand(newStudyCmd(deps, s))
	}
	return cmd
}

func newStudyCmd(deps *cli.Deps, s formats.Study) *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   s.Name + " PATH...",
		Short: "Import " + s.About,
		Example: fmt.Sprintf(`  parley import %s ../shared/data/transcripts/%s/%s --store-dir nats-data
  parley import %s runs/ --parse-report --store-dir nats-data`, s.Name, s.Name, s.Archive, s.Name),
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sum, err := Run(cmd.Context(), deps, s, *o, args)
			if err != nil {
				return err
			}
			return sum.Write(deps.Out, o.ParseReport)
		},
	}
	fs := cmd.Flags()
	o.Bus.Bind(fs, "NATS server URL; empty starts an embedded server for this run",
		"where the embedded NATS server keeps its data, so later commands can read the matches (default: a temporary directory)")
	fs.StringVar(&o.Prefix, "prefix", s.Prefix, "start of every tournament id")
	fs.IntVar(&o.Workers, "workers", 0, "files read at once (0: one per CPU)")
	fs.BoolVar(&o.ParseReport, "parse-report", false, "add the parse report: per model and prompt style, how often Parley's parser reads the move the platform did, with an example of each disagreement")
	return cmd
}

// Run opens the store and imports paths into it.
func Run(ctx context.Context, deps *cli.Deps, s formats.Study, o Options, paths []string) (*imports.Summary, error) {
	b, err := o.Bus.Open(ctx, bus.Config{}, deps.Logger(slog.LevelWarn))
	if err != nil {
		return nil, err
	}
	defer b.Close()
	return Into(ctx, b, deps.Games, s, o, paths)
}

// Into imports paths into the store b is connected to; the summary lists the files refused.
func Into(ctx context.Context, b *bus.Bus, reg *games.Registry, s formats.Study, o Options, paths []string) (*imports.Summary, error) {
	im := &imports.Importer{Format: s.Format, Games: reg, Prefix: o.Prefix, Workers: o.Workers}
	if im.Prefix == "" {
		im.Prefix = s.Prefix
	}
	return im.Import(ctx, b, paths)
}
