// Package reproducecmd is `parley reproduce STUDY`: play a seed study's set-ups with the
// models given and print its tables in the paper's layout, the paper's numbers beside ours.
package reproducecmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/importcmd"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/research/imports/formats"
	"github.com/parley-arena/parley/research/reproduce"
	"github.com/parley-arena/parley/research/studies"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

type options struct {
	study    string
	r        reproduce.Options
	dryRun   bool
	bus      cli.BusFlags
	workers  int
	conc     int
	quiet    bool
	verbose  bool
	fromRuns []string
	// maxEndpointFailures stops the run after that many matches in a row voided by the model
	// endpoint (0: never).
	maxEndpointFailures int

	flags *pflag.FlagSet // the command line as given, for the resume command
}

// NewCmd returns the reproduce command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "reproduce STUDY [--model [SLOT=]MODEL ...] --base-url URL [flags]",
		Short: "Reproduce a seed study's tables (" + strings.Join(studies.Names(), ", ") + ") and print them beside the paper's",
		Long: `Play a seed study's published set-ups (games, parameters, seats, roles, personas, prompt
styles, matches per cell) with any OpenAI-compatible model(s), and print each of its tables in
the paper's layout with the paper's numbers beside ours. Studies: ` + strings.Join(studies.Names(), ", ") + `.

--model SLOT=MODEL puts a model in the place of one of the paper's models (the tables keep the
paper's names); plain --model MODEL values fill the paper's models in order; a single one plays
them all. Cells of a paper model without one are left empty. Tables that need no model (deal
spaces, the corpus's human dialogues and best allocations) print without --model.

Every set-up is a tournament in the NATS work queue (ID-<set-up>): stopped half-way, the same
command with the same --id resumes it, and replies come from the cache (--cache). After
--max-endpoint-failures matches in a row voided by the model endpoint (429s, 5xx, broken
connections) the run stops in one line naming the command that resumes it; the resumed run plays
the voided matches again, and may name another --base-url for the same models. --games N
plays at most N matches per cell; --table N picks tables; --dry-run prints the plan (matches,
model calls, estimated tokens and cost) and plays nothing. --token-budget caps each match,
--tournament-token-budget each set-up (split evenly over its matches). --move-timeout is each
model's time for an answer (default 2 minutes, fit for hosted models; the most is 30).`,
		Example: `  parley reproduce deliberation --table 4                       # the deal space: no model needed
  parley reproduce gametheory --dry-run --model gpt-4o --base-url https://api.openai.com/v1
  parley reproduce negotiationarena --model GPT-4=gpt-4o --model Claude-2.1=gpt-4o-mini \
      --base-url https://api.openai.com/v1 --games 5 --id na-small
  parley reproduce coalition --model GPT-4o=llama3.1 --model o3-mini=qwen2.5 --base-url http://localhost:11434/v1`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.study = args[0]
			o.flags = cmd.Flags()
			return run(cmd.Context(), deps, o)
		},
	}
	fs := cmd.Flags()
	fs.StringArrayVar(&o.r.Models, "model", nil, "[SLOT=]MODEL: a model in the place of one of the paper's (repeatable)")
	fs.StringVar(&o.r.BaseURL, "base-url", "", "base URL of the OpenAI-compatible API")
	fs.StringVar(&o.r.APIKeyEnv, "api-key-env", llm.DefaultAPIKeyEnv, "environment variable holding the API key")
	fs.StringVar(&o.r.CacheDir, "cache", "", "reply cache directory (default: parley/llm under the user's cache directory)")
	fs.BoolVar(&o.r.NoCache, "no-cache", false, "do not cache replies")
	fs.StringVar(&o.r.Prices, "prices", "", "price table (YAML: model: {prompt: USD per million tokens, completion: ...}); default: the shipped one")
	fs.BoolVar(&o.r.ExcludeFallbackGames, "exclude-fallback-games", false, "leave out of every cell the games in which a move was a fallback (the game's default played for a model whose answer could not be used); by default only the games a fallback ended are left out, and each cell says how many of its games had one")
	fs.IntVar(&o.r.Games, "games", 0, "at most this many matches per cell (0: the paper's number)")
	fs.StringArrayVar(&o.r.Tables, "table", nil, "a table to reproduce, e.g. 5, \"Table 5\", \"Figure 3a\" (repeatable; default: all)")
	fs.BoolVar(&o.dryRun, "dry-run", false, "print the plan (matches, model calls, tokens, cost) and play nothing")
	fs.Uint64Var(&o.r.Seed, "seed", 1, "seed the match seeds derive from (set-ups whose paper fixed its seeds keep them)")
	fs.StringVar(&o.r.ID, "id", "", "id of this reproduction (default STUDY-SEED); the same id resumes it")
	fs.DurationVar(&o.r.MoveTimeout, "move-timeout", reproduce.DefaultMoveTimeout, "time a model has for each answer (its HTTP calls included; a model that overruns it faults that move)")
	fs.Int64Var(&o.r.TokenBudget, "token-budget", 0, "tokens the language-model seats of one match may spend together (0: no budget)")
	fs.Int64Var(&o.r.TotalBudget, "tournament-token-budget", 0, "tokens each set-up may spend, split evenly over its matches (0: no budget)")
	fs.StringVar(&o.r.DondData, "dond-data", "", "folder of the Deal-or-No-Deal corpus (sampled_50_deal_no_deal.txt, test.txt), e.g. data/dealornodeal")
	o.bus.Bind(fs, "NATS server URL; empty starts an embedded server for this run",
		"where the embedded NATS server keeps its data, so a stopped run can resume (default: a temporary directory)")
	fs.IntVar(&o.workers, "workers", -1, "referee workers in this process (default: --concurrency; 0: rely on 'parley referee' workers on --nats)")
	fs.IntVar(&o.conc, "concurrency", tournament.DefaultConcurrency, "most matches requested and not yet ended at once")
	fs.IntVar(&o.maxEndpointFailures, "max-endpoint-failures", tournament.DefaultMaxEndpointFailures, "stop, naming the command that resumes, after this many matches in a row voided by the model endpoint (429s, 5xx or broken connections past the agent's retries); the resumed run plays them again (0: never stop)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no progress bar")
	fs.BoolVar(&o.verbose, "verbose", false, "log what the referee workers do to stderr")
	fs.StringArrayVar(&o.fromRuns, "from-runs", nil, "NAME or PATH (repeatable): fill the tables from the study's published runs in the store, the tournaments whose id is NAME or starts with NAME- (parley import STUDY), or the runs at PATH, imported first; no model is asked")
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	study, err := studies.Load(o.study)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	switch {
	case o.conc < 1:
		return cli.Usagef("--concurrency must be at least 1, got %d", o.conc)
	case o.maxEndpointFailures < 0:
		return cli.Usagef("--max-endpoint-failures must be 0 (never stop) or more, got %d", o.maxEndpointFailures)
	}
	if err := o.bus.Check(); err != nil {
		return err
	}
	if err := cli.CheckMoveTimeout(o.r.MoveTimeout); err != nil {
		return err
	}
	if len(o.fromRuns) > 0 {
		return fromRuns(ctx, deps, o, study)
	}
	if o.r.ID == "" {
		o.r.ID = fmt.Sprintf("%s-%d", study.Name, o.r.Seed)
	}
	if err := bus.ValidMatchID(o.r.ID); err != nil {
		return cli.Usagef("--id: %v", err)
	}
	if !o.r.NoCache && o.r.CacheDir == "" {
		if o.r.CacheDir, err = llm.DefaultCacheDir(); err != nil {
			return err
		}
	}
	plan, err := reproduce.NewPlan(study, o.r, deps.Games)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if o.dryRun {
		return plan.WriteDryRun(deps.Out)
	}
	plan.WriteHeader(deps.Out)
	res := studies.Results{}
	if len(plan.Runs) > 0 {
		if err := preflight(ctx, deps.Resolver(), plan); err != nil {
			return err
		}
		if res, err = play(ctx, deps, o, plan); err != nil {
			return err
		}
	}
	return plan.WriteTables(deps.Out, res)
}

// preflight opens every language-model agent of the plan once, so that a wrong endpoint or a
// missing key is told in one line before any match starts.
func preflight(ctx context.Context, agents *agentconn.Resolver, plan *reproduce.Plan) error {
	seen := map[string]bool{}
	for _, r := range plan.Runs {
		for _, e := range r.Spec.GetEntrants() {
			if seen[e.GetAddress()] {
				continue
			}
			seen[e.GetAddress()] = true
			if err := agents.Check(ctx, e.GetAddress()); err != nil {
				return cli.Usagef("%v", err)
			}
		}
	}
	return nil
}

// play runs the plan through the tournament machinery: NATS (embedded unless --nats) and
// referee workers in this process. It is the one place that knows how, so it can follow the
// tournament code wherever it moves.
func play(ctx context.Context, deps *cli.Deps, o *options, plan *reproduce.Plan) (studies.Results, error) {
	// A void match is told in its table's cell (and a run of them in one line that stops the
	// run), not in a warning each.
	level := slog.LevelError
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := deps.Logger(level)
	b, err := o.bus.Open(ctx, bus.Config{}, logger)
	if err != nil {
		return nil, err
	}
	defer b.Close()
	workers := o.workers
	if workers < 0 {
		workers = o.conc
	}
	if workers == 0 && o.bus.Embedded() {
		return nil, cli.Usagef("--workers 0 needs --nats: with the embedded server nobody else could run the matches")
	}
	if workers > 0 {
		stop := roles.RunWorkers(ctx, roles.WorkersConfig{
			Bus: b, Games: deps.Games, Agents: deps.Resolver(), Concurrency: workers, Name: "reproduce",
			Options: []match.Option{match.WithLogger(logger)}, Logger: logger,
		})
		defer stop()
	}
	matches, _, _, _ := plan.Totals()
	done := func() {}
	if !o.quiet {
		bar := progressbar.NewOptions(matches, progressbar.OptionSetWriter(deps.Err), progressbar.OptionSetDescription(plan.Study.Name),
			progressbar.OptionShowCount(), progressbar.OptionSetPredictTime(true), progressbar.OptionClearOnFinish(), progressbar.OptionThrottle(0))
		done = func() { bar.Add(1) }
		defer bar.Finish()
	}
	res, err := plan.Execute(ctx, reproduce.Tournaments{
		Bus: b, Concurrency: o.conc, Matches: &launch.Preparer{Games: deps.Games, Agents: deps.Resolver(), ReadFile: os.ReadFile},
		Endpoints: &tournament.EndpointStreak{Max: o.maxEndpointFailures},
	}, done)
	resume := cli.ResumeCommand(o.flags, []string{"parley", "reproduce", o.study}, o.r.ID, o.r.Seed)
	switch {
	case errors.Is(err, tournament.ErrEndpointFailing):
		// One line, the way back in it: the replies paid for are in the cache, the matches
		// ended in the store (when kept), and the resumed run plays the voided ones again.
		return nil, fmt.Errorf("%w; once it answers, resume with: %s", err, resume)
	case err != nil && ctx.Err() != nil && o.bus.Kept():
		fmt.Fprintf(deps.Err, "stopped; resume with:\n  %s\n", resume)
	}
	return res, err
}

// fromRuns prints the study's tables from its published runs as imported into the store.
func fromRuns(ctx context.Context, deps *cli.Deps, o *options, study *studies.Study) error {
	if len(o.r.Models) > 0 || o.dryRun {
		return cli.Usagef("--from-runs reads runs already played: no --model, no --dry-run")
	}
	b, err := o.bus.Open(ctx, bus.Config{}, deps.Logger(slog.LevelWarn))
	if err != nil {
		return err
	}
	defer b.Close()
	// A PATH is imported first (into the same store), and read back by its tournaments.
	var names []string
	for _, from := range o.fromRuns {
		if _, err := os.Stat(from); err != nil {
			names = append(names, from)
			continue
		}
		fs, ok := formats.Lookup(study.Name)
		if !ok {
			return cli.Usagef("--from-runs %s: parley cannot import the published runs of %s", from, study.Name)
		}
		sum, err := importcmd.Into(ctx, b, deps.Games, fs, importcmd.Options{}, []string{from})
		if err != nil {
			return err
		}
		fmt.Fprintf(deps.Out, "imported %s: %d new, %d already stored, %d refused\n", from, sum.Imported, sum.Stored, len(sum.Refused))
		for _, r := range sum.Refused {
			fmt.Fprintf(deps.Err, "refused: %s\n", r)
		}
		for _, t := range sum.Tournaments {
			names = append(names, t.ID)
		}
	}
	imp, err := reproduce.ReadImported(ctx, b.JetStream(), study, names, deps.Games, standard.New())
	if errors.Is(err, reproduce.ErrOptions) {
		return cli.Usagef("%v", err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(deps.Out, "%s: %s\n", study.Name, study.Title)
	imp.WriteSummary(deps.Out)
	return imp.WriteTables(deps.Out, o.r.Tables, studies.Options{ExcludeFallbackGames: o.r.ExcludeFallbackGames})
}
