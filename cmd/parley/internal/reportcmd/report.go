// Package reportcmd is `parley report`: a tournament's tables, figures, raw rows and meta-game
// file, read from its records on NATS JetStream.
package reportcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/tournamentcmd"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
	"github.com/parley-arena/parley/services/analytics/report"
	"github.com/parley-arena/parley/services/analytics/tables"
)

type options struct {
	tournament string
	formats    []string
	out        string
	bus        cli.BusFlags
	metaGame   string
}

// NewCmd returns the report command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "report --tournament ID [--format md|html|csv|jsonl] [--out DIR] [--nats URL]",
		Short: "Write a tournament's tables, figures and per-match rows",
		Long: `Write the report of a tournament played with 'parley tournament', read from its records on
NATS JetStream (--nats, or --store-dir for the data of an embedded server).

Into --out go the figures, always, as SVG and PNG: the win-rate and mean-payoff heat maps of
each two-player game (rows: P2's agent, columns: P1's) and the per-match trajectory plot
where the game's metrics record a path (buyer/seller prices). Then, per --format:
  md     report.md: tables and figures
  html   report.html: the same as a page that opens offline (figures are files beside it)
  csv    matches.csv, one line per match for pandas or R, and one CSV per table
  jsonl  matches.jsonl, one JSON object per match, and tables.jsonl
For a two-player game whose every ordered pair was played, self-play included, the payoff
table between the agents is also written as a matrix-game file (GAME-metagame.yaml, the
format of the matrix games), so the equilibrium analysis can say which variant to send.`,
		Example: `  parley report --tournament buysell-7-a1b2c3 --nats nats://127.0.0.1:4222 --out report/
  parley report --tournament T --store-dir nats-data --format md,csv --out report/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return run(cmd.Context(), deps, o) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.tournament, "tournament", "", "id of the tournament")
	fs.StringSliceVar(&o.formats, "format", []string{"html"}, "formats to write: "+strings.Join(report.Formats, ", ")+" (comma-separated or repeated)")
	fs.StringVar(&o.out, "out", "report", "directory to write into (created if needed)")
	o.bus.Needed = true
	o.bus.Bind(fs, "NATS server URL holding the records", "data directory of an embedded NATS server holding the records (as given to 'parley tournament --store-dir')")
	fs.StringVar(&o.metaGame, "meta-game", "", "also write the meta-game file to this path")
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	switch {
	case o.tournament == "":
		return cli.Usagef("--tournament is required")
	}
	if err := o.bus.Check(); err != nil {
		return err
	}
	for _, f := range o.formats {
		if !contains(report.Formats, f) {
			return cli.Usagef("--format %q: want one of %s", f, strings.Join(report.Formats, ", "))
		}
	}
	b, err := o.bus.Open(ctx, bus.Config{}, deps.Logger(slogWarn))
	if err != nil {
		return err
	}
	defer b.Close()
	spec, err := tournament.LoadSpec(ctx, b.JetStream(), o.tournament)
	if errors.Is(err, tournament.ErrNotFound) || errors.Is(err, tournament.ErrInvalidID) {
		return cli.Usagef("%v", err)
	}
	if err != nil {
		return err
	}
	res, err := Write(ctx, b.JetStream(), spec, o.out, o.formats)
	if err != nil {
		return err
	}
	if o.metaGame != "" {
		if err := writeMetaGame(o.metaGame, res.Games, spec.GetTournamentId()); err != nil {
			return err
		}
		res.Files = append(res.Files, o.metaGame)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(deps.Err, "note: %s\n", n)
	}
	for _, f := range res.Files {
		fmt.Fprintln(deps.Out, f)
	}
	return nil
}

// Write writes the report of the tournament spec, read from its records in js, into dir in
// formats.
func Write(ctx context.Context, js jetstream.JetStream, spec *tournamentv1.TournamentSpec, dir string, formats []string) (*report.Result, error) {
	rows, label, err := analytics.TournamentRows(ctx, js, spec, standard.New())
	if err != nil {
		return nil, err
	}
	intro := tournamentcmd.Intro(spec)
	if n := len(spec.GetMatches()); len(rows) < n {
		intro = append(intro, fmt.Sprintf("%d of %d scheduled matches have ended so far.", len(rows), n))
	}
	return report.Write(dir, report.Input{
		Title: "Tournament " + spec.GetTournamentId(), Intro: intro, ID: spec.GetTournamentId(), Rows: rows,
		Options: tables.Options{Agent: label},
	}, formats)
}

func writeMetaGame(path string, games []*tables.Game, id string) error {
	for _, g := range games {
		m, err := tables.MetaGameOf(g)
		if err != nil {
			return fmt.Errorf("--meta-game: %w", err)
		}
		return writeFile(path, report.MetaGameYAML(m, id))
	}
	return fmt.Errorf("--meta-game: the tournament has no ended matches")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

const slogWarn = slog.LevelWarn

func writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("--meta-game: %w", err)
	}
	return nil
}
