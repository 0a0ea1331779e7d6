// Package tournamentcmd is `parley tournament`: N matches for every seat assignment of the
// agents, requested through the NATS work queue that referee workers share, followed to the
// end, then summed up in tables.
package tournamentcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/tokenbudget"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/referee/tournament"
	"github.com/parley-arena/parley/services/analytics"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
	"github.com/parley-arena/parley/services/analytics/report"
	"github.com/parley-arena/parley/services/analytics/tables"
	"github.com/parley-arena/parley/teams/botlink"
)

type options struct {
	game           string
	agents         []string
	params         []string
	gamesPerPair   int
	concurrency    int
	seed           uint64
	seedSet        bool
	id             string
	bus            cli.BusFlags
	allowBotDial   bool
	workers        int
	selfPlay       bool
	maxAssignments int
	moveTimeout    time.Duration
	retries        int
	maxReplyBytes  int
	tokenBudget    int64
	totalBudget    int64
	reportDir      string
	quiet          bool
	verbose        bool
	endpointFails  int

	flags *pflag.FlagSet // the command line as given, for the resume hint
}

// NewCmd returns the tournament command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "tournament --game GAME --agent A --agent B [--agent C ...] [flags]",
		Short: "Play N matches for every ordered pair (every seat assignment) of agents and print the tables",
		Long: `Play a tournament: --games-per-pair matches for every seat assignment of the agents. In a
two-player game that is every ordered pair of distinct agents, so both seat orders; in a game
of more seats every ordered choice of distinct agents (a seeded sample of --max-assignments
when there are more). --self-play also lets an agent hold several seats (the diagonal of the
pair tables, needed for a meta-game file).

An agent is builtin:NAME[?k=v&...] or grpc://host:port, optionally labelled LABEL=ADDRESS
(the label names it in the tables; default: the address without "builtin:").

Every match is a request in a NATS JetStream work queue (PARLEY_REQUESTS) that any referee
worker takes; at most --concurrency are outstanding at a time. Without --nats an embedded
server is started and --workers local workers run the matches in this process; with --nats,
the workers of every 'parley referee' on that server share the work (--workers 0 leaves it all
to them). Match k of every seat assignment has the same seed, derived from --seed.

A line per finished match goes to stderr; the tables go to stdout at the end. The records
stay on the NATS server: 'parley report --tournament ID' writes figures and files from them
(with --nats, or --store-dir for the embedded server).`,
		Example: `  parley tournament --game ultimatum --agent builtin:fair --agent builtin:random --games-per-pair 5
  parley tournament --game buysell --agent builtin:concede --agent boulware='builtin:concede?curve=boulware' \
      --games-per-pair 10 --param draw=true --self-play --report out/
  parley tournament --game coalition --agent builtin:coalition --agent builtin:random --agent 'builtin:coalition?basis=shapley' \
      --nats nats://127.0.0.1:4222 --workers 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.seedSet = cmd.Flags().Changed("seed")
			o.flags = cmd.Flags()
			return run(cmd.Context(), deps, o)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&o.game, "game", "", "`GAME` to play ('parley games' lists them)")
	fs.StringArrayVar(&o.agents, "agent", nil, "an agent: [LABEL=]builtin:NAME[?k=v] or [LABEL=]grpc://host:port (repeat, at least as many as seats unless --self-play)")
	cli.ParamsFlag(fs, &o.params, "")
	fs.IntVar(&o.gamesPerPair, "games-per-pair", 10, "matches per ordered pair (per seat assignment)")
	fs.IntVar(&o.concurrency, "concurrency", tournament.DefaultConcurrency, "most matches requested and not yet ended at once")
	fs.Uint64Var(&o.seed, "seed", 0, "seed the match seeds derive from (default: random, printed)")
	fs.StringVar(&o.id, "id", "", "tournament id (default: GAME-SEED-RANDOM); an id already stored resumes that tournament")
	fs.BoolVar(&o.allowBotDial, "allow-bot-dial", false, "let the local workers dial registered bots (bot:TEAM/NAME) whose endpoint is a grpc:// address their team gave (it may point into your own network)")
	o.bus.Bind(fs, "NATS server URL; empty starts an embedded server for this run",
		"where the embedded NATS server keeps its data, so 'parley report' can read it later (default: a temporary directory)")
	fs.IntVar(&o.workers, "workers", -1, "referee workers to run in this process (default: --concurrency; 0: rely on 'parley referee' workers on --nats)")
	fs.BoolVar(&o.selfPlay, "self-play", false, "also play matches in which one agent holds several seats")
	fs.IntVar(&o.maxAssignments, "max-assignments", tournament.DefaultMaxAssignments, "most seat assignments played; more are sampled with the seed")
	fs.DurationVar(&o.moveTimeout, "move-timeout", match.DefaultMoveTimeout, "time an agent has for each answer")
	fs.IntVar(&o.retries, "retries", match.DefaultMaxRetries, "refused actions an agent may replace per move before its default move is applied")
	fs.IntVar(&o.maxReplyBytes, "max-reply-bytes", match.DefaultMaxReplyBytes, "largest agent reply accepted, in bytes")
	fs.Int64Var(&o.tokenBudget, "token-budget", 0, "tokens the language-model seats of one match may spend together (0: no budget)")
	fs.Int64Var(&o.totalBudget, "tournament-token-budget", 0, "tokens the whole tournament may spend, split evenly over its matches before any is played (0: no budget)")
	fs.StringVar(&o.reportDir, "report", "", "also write the full report (HTML, Markdown, CSV, JSON lines, figures) into this directory")
	fs.IntVar(&o.endpointFails, "max-endpoint-failures", tournament.DefaultMaxEndpointFailures, "stop, naming the command that resumes, after this many matches in a row voided by a language model's endpoint (429s, 5xx or broken connections past the agent's retries); the resumed tournament plays them again (0: never stop)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no line per finished match on stderr")
	fs.BoolVar(&o.verbose, "verbose", false, "log what the referee workers do to stderr")
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	switch {
	case o.game == "":
		return cli.Usagef("--game is required; see `parley games`")
	case o.gamesPerPair < 1:
		return cli.Usagef("--games-per-pair must be at least 1, got %d", o.gamesPerPair)
	case o.concurrency < 1:
		return cli.Usagef("--concurrency must be at least 1, got %d", o.concurrency)
	case o.endpointFails < 0:
		return cli.Usagef("--max-endpoint-failures must be 0 (never stop) or more, got %d", o.endpointFails)
	}
	if err := o.bus.Check(); err != nil {
		return err
	}
	if err := cli.CheckLimits(o.moveTimeout, o.retries, o.maxReplyBytes); err != nil {
		return err
	}
	if o.workers < 0 {
		o.workers = o.concurrency
	}
	if o.workers == 0 && o.bus.Embedded() {
		return cli.Usagef("--workers 0 needs --nats: with the embedded server nobody else could run the matches")
	}
	params, err := games.ParseParams(o.game, o.params)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if !o.seedSet {
		o.seed = launch.FreshSeed()
	}
	logger := deps.Logger(slogLevel(o.verbose))
	agents := deps.Resolver()
	// Registered bots are found in the registry on NATS, so NATS comes first when one plays;
	// the local workers open them the same way.
	var b *bus.Bus
	if slices.ContainsFunc(o.agents, func(a string) bool { return strings.Contains(a, agentconn.BotPrefix) }) {
		if b, err = o.bus.Open(ctx, bus.Config{}, logger); err != nil {
			return err
		}
		defer b.Close()
		if agents.Bots, err = botlink.OpenDirectory(ctx, b); err != nil {
			return fmt.Errorf("nats: %w", err)
		}
		agents.AllowBotDial = o.allowBotDial
	}
	entrants, err := parseAgents(o.agents)
	if err != nil {
		return err
	}
	// Prepared the one way every door does, as the organiser; files the parameters name are
	// read here, and again per match seed when requested (a corpus draws from it).
	prep := &launch.Preparer{Games: deps.Games, Agents: agents, ReadFile: os.ReadFile}
	spec, err := tournament.Prepare(ctx, prep, &tournamentv1.StartTournamentRequest{
		Game: o.game, Params: params, Entrants: entrants, GamesPerAssignment: uint32(o.gamesPerPair),
		Seed: o.seed, TournamentId: o.id, SelfPlay: o.selfPlay, MaxAssignments: uint32(o.maxAssignments),
		Limits: &matchv1.Limits{
			MoveTimeout:   durationpb.New(o.moveTimeout),
			MaxRetries:    proto.Int32(int32(o.retries)),
			MaxReplyBytes: int32(o.maxReplyBytes),
		},
	}, policy.Caller{Role: policy.Organiser, Client: "cli"})
	if err != nil {
		return cli.Usagef("%v", strings.TrimPrefix(err.Error(), launch.ErrInvalid.Error()+": "))
	}
	if spec.GetLimits().TokenBudget, err = tokenbudget.PerMatch(o.tokenBudget, o.totalBudget, len(spec.GetMatches())); err != nil {
		return cli.Usagef("%v", err)
	}
	game, err := deps.Games.Lookup(spec.GetGame())
	if err != nil {
		return err
	}
	seats, _ := games.Seats(game, spec.GetParams())

	if b == nil {
		if b, err = o.bus.Open(ctx, bus.Config{}, logger); err != nil {
			return err
		}
		defer b.Close()
	}

	where := "an embedded NATS server"
	if b.URL() != "" {
		where = b.URL()
	}
	fmt.Fprintf(deps.Err, "tournament %s: %s, %d agents, %d seat assignments (of %d), %d matches, seed %d, on %s\n",
		spec.GetTournamentId(), o.game, len(spec.GetEntrants()), len(spec.GetMatches())/o.gamesPerPair, spec.GetAssignmentsPossible(),
		len(spec.GetMatches()), o.seed, where)

	if o.workers > 0 {
		stop := roles.RunWorkers(ctx, roles.WorkersConfig{
			Bus: b, Games: deps.Games, Agents: agents, Concurrency: o.workers, Name: "local",
			Options: []match.Option{match.WithLogger(logger)}, Logger: logger,
		})
		defer stop()
	} else {
		fmt.Fprintf(deps.Err, "waiting for 'parley referee' workers on %s to take the requests\n", where)
	}

	labels := make([]string, len(spec.GetEntrants()))
	for i, e := range spec.GetEntrants() {
		labels[i] = e.GetLabel()
	}
	progress := func(p tournament.Progress) {
		if o.quiet {
			return
		}
		var who []string
		for i, e := range p.Match.GetEntrants() {
			who = append(who, fmt.Sprintf("%s (%s)", labels[e], seatName(seats, i)))
		}
		line := fmt.Sprintf("[%*d/%d] %s  %s: %s", digits(p.Total), p.Done, p.Total, p.RecordedAs, strings.Join(who, " vs "), summary(p.Outcome))
		fmt.Fprintln(deps.Err, line)
	}
	if err := tournament.Hold(ctx, b, spec, tournament.HoldConfig{
		Concurrency: o.concurrency, Matches: prep, Progress: progress,
		Params:    func(uint64) (*matchv1.GameParams, error) { return params, nil },
		Endpoints: &tournament.EndpointStreak{Max: o.endpointFails}, ReplayProviderVoids: true, AgentIdentity: llm.Identity,
	}); err != nil {
		resume := cli.ResumeCommand(o.flags, []string{"parley", "tournament"}, spec.GetTournamentId(), o.seed)
		if errors.Is(err, tournament.ErrEndpointFailing) {
			return fmt.Errorf("%w; once it answers, resume with: %s", err, resume)
		}
		if ctx.Err() != nil && o.bus.Kept() {
			fmt.Fprintf(deps.Err, "stopped; resume with:\n  %s\n", resume)
		}
		return err
	}

	rows, label, err := analytics.TournamentRows(ctx, b.JetStream(), spec, standard.New())
	if err != nil {
		return err
	}
	opts := tables.Options{Agent: label}
	var sections []report.Section
	for _, g := range tables.Build(rows, opts) {
		sections = append(sections, report.Sections(g)...)
	}
	fmt.Fprintf(deps.Out, "Tournament %s: %s, %d matches, seed %d\n\n", spec.GetTournamentId(), o.game, len(rows), o.seed)
	if err := report.WriteText(deps.Out, sections); err != nil {
		return err
	}
	if o.reportDir != "" {
		res, err := report.Write(o.reportDir, report.Input{
			Title: "Tournament " + spec.GetTournamentId(), Intro: Intro(spec), ID: spec.GetTournamentId(), Rows: rows, Options: opts,
		}, report.Formats)
		if err != nil {
			return err
		}
		fmt.Fprintf(deps.Err, "report: %d files in %s\n", len(res.Files), o.reportDir)
	}
	if o.bus.Kept() {
		fmt.Fprintf(deps.Err, "report: parley report --tournament %s %s --out DIR\n", spec.GetTournamentId(), o.bus.Flag())
	}
	return nil
}

// Intro is the lines that open a tournament's report.
func Intro(spec *tournamentv1.TournamentSpec) []string {
	var agents []string
	for _, e := range spec.GetEntrants() {
		agents = append(agents, fmt.Sprintf("%s = %s", e.GetLabel(), e.GetAddress()))
	}
	lines := []string{
		fmt.Sprintf("Game %s; %d matches per seat assignment; seed %d; self-play %v.", spec.GetGame(), spec.GetGamesPerAssignment(), spec.GetSeed(), spec.GetSelfPlay()),
		"Agents: " + strings.Join(agents, "; ") + ".",
	}
	if n := uint64(len(spec.GetMatches())) / uint64(max(spec.GetGamesPerAssignment(), 1)); n < spec.GetAssignmentsPossible() {
		lines = append(lines, fmt.Sprintf("A seeded sample of %d of the %d seat assignments was played.", n, spec.GetAssignmentsPossible()))
	}
	return lines
}

// parseAgents reads [LABEL=]ADDRESS arguments.
func parseAgents(args []string) ([]*tournamentv1.Entrant, error) {
	if len(args) == 0 {
		return nil, cli.Usagef("give the agents with --agent (at least two)")
	}
	var out []*tournamentv1.Entrant
	for _, a := range args {
		label, addr := "", a
		if i := strings.Index(a, "="); i > 0 && !strings.Contains(a[:i], ":") {
			label, addr = a[:i], a[i+1:]
		}
		out = append(out, &tournamentv1.Entrant{Label: label, Address: addr})
	}
	return out, nil
}

func seatName(seats []string, i int) string {
	if i < len(seats) {
		return seats[i]
	}
	return fmt.Sprintf("seat %d", i)
}

func summary(out *matchv1.Outcome) string {
	cause := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(out.GetCause().String(), "END_CAUSE_"), "_", " "))
	if out.GetCause() == matchv1.EndCause_END_CAUSE_VOID {
		return out.GetSummary()
	}
	var pays []string
	for _, p := range out.GetPayoffs() {
		pays = append(pays, fmt.Sprintf("%g", p))
	}
	return fmt.Sprintf("%s, payoffs %s", cause, strings.Join(pays, " / "))
}

func digits(n int) int { return len(fmt.Sprint(n)) }

func slogLevel(verbose bool) slog.Level {
	if verbose {
		return slog.LevelDebug
	}
	return slog.LevelWarn
}
