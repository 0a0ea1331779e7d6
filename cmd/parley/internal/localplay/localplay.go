// Package localplay is what `parley play` and `parley replay` share: connect the agents, start or
// join NATS, run one match and write its record where the flags say.
package localplay

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/human"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/gateway/web"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/record"
	"github.com/parley-arena/parley/teams/botlink"
)

// Options are the flags shared by play and replay.
type Options struct {
	NATS          string
	MoveTimeout   time.Duration
	Retries       int
	MaxReplyBytes int
	// TokenBudget is the match's shared token budget (matchv1.Limits.token_budget); 0: none.
	TokenBudget int64
	JSON        bool
	RecordPath  string
	ShowPrivate bool
	Timestamps  bool
	Verbose     bool
	// HumanListen is where the page of human seats is served (--agent human).
	HumanListen string
	// AllowBotDial lets registered bots (bot:TEAM/NAME) with a grpc:// endpoint be dialled.
	AllowBotDial bool

	moveTimeoutFlag *pflag.Flag // to tell a --move-timeout given from the default
}

// Bind adds the flags to fs.
func (o *Options) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&o.NATS, "nats", "", "NATS server URL (nats://host:port); empty starts an embedded server for this run")
	fs.DurationVar(&o.MoveTimeout, "move-timeout", match.DefaultMoveTimeout, "time an agent has for each answer")
	fs.IntVar(&o.Retries, "retries", match.DefaultMaxRetries, "refused actions an agent may replace per move before its default move is applied")
	fs.IntVar(&o.MaxReplyBytes, "max-reply-bytes", match.DefaultMaxReplyBytes, "largest agent reply accepted, in bytes")
	fs.Int64Var(&o.TokenBudget, "token-budget", 0, "tokens the match's language-model seats may spend together (0: no budget); once spent, each plays its fallback")
	fs.BoolVar(&o.JSON, "json", false, "print the match's events as JSON lines instead of a transcript")
	fs.StringVar(&o.RecordPath, "record", "", "also write the match's events as JSON lines to this file")
	fs.BoolVar(&o.ShowPrivate, "show-private", false, "show private reasoning and notes in the transcript")
	fs.BoolVar(&o.Timestamps, "timestamps", false, "stamp events with the wall-clock time (records then differ run to run)")
	fs.BoolVar(&o.Verbose, "verbose", false, "log what the referee does to stderr")
	fs.StringVar(&o.HumanListen, "human-listen", "127.0.0.1:0", "address of the web page where a person plays a human seat (--agent human)")
	fs.BoolVar(&o.AllowBotDial, "allow-bot-dial", false, "let registered bots (bot:TEAM/NAME) whose endpoint is a grpc:// address their team gave be dialled (such an address may point into your own network)")
	o.moveTimeoutFlag = fs.Lookup("move-timeout")
	o.moveTimeoutFlag.Usage += fmt.Sprintf(" (%s with a human seat)", launch.DefaultHumanMoveTimeout)
}

// Validate checks the option values.
func (o *Options) Validate() error {
	if err := cli.CheckLimits(o.MoveTimeout, o.Retries, o.MaxReplyBytes); err != nil {
		return err
	}
	if o.TokenBudget < 0 {
		return cli.Usagef("--token-budget must be 0 (none) or more, got %d", o.TokenBudget)
	}
	return nil
}

// Run prepares the match the one way every door does (launch.Preparer: files read here), runs
// it, and writes its record to stdout (transcript or JSON), the record file and NATS. Agent
// failures are part of the result, not errors. A request without a match id gets
// GAME-SEED-HASH (DefaultMatchID) so the same invocation gives the same record.
func Play(ctx context.Context, deps *cli.Deps, o *Options, req launch.Request) (*match.Result, error) {
	s := NewSession(deps, o)
	defer s.Close()
	return s.Play(ctx, req)
}

// Session runs matches one after another, as Run runs one, with what they share set up once,
// by the first: the agents' resolver and the page of human seats, the NATS server (an embedded
// one is started once, not per match) and the settler of the records. Later matches of the same
// agents are not probed again: the first one checked them.
type Session struct {
	deps   *cli.Deps
	o      *Options
	logger *slog.Logger
	agents *agentconn.Resolver

	humanBase string
	bus       *bus.Bus
	settler   *bus.MatchSettler
	probed    []string // the agents the last match checked
	closers   []func() // run by Close, last first
}

// NewSession returns a session with nothing set up yet; Close it when done.
func NewSession(deps *cli.Deps, o *Options) *Session {
	level := slog.LevelWarn
	if o.Verbose {
		level = slog.LevelDebug
	}
	return &Session{deps: deps, o: o, logger: deps.Logger(level), agents: deps.Resolver()}
}

// Close stops what the session started: NATS, the page of human seats.
func (s *Session) Close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// Run runs one match of the session (see the package's Run).
func (s *Session) Play(ctx context.Context, req launch.Request) (*match.Result, error) {
	if req.MatchID != "" {
		if err := bus.ValidMatchID(req.MatchID); err != nil {
			return nil, cli.Usagef("%v", err)
		}
	}
	deps, o, agents := s.deps, s.o, s.agents

	// Human seats are seated in a hub of this session's own, served on a local web page.
	hasHuman := slices.ContainsFunc(req.Agents, agentconn.IsHuman)
	if hasHuman && agents.Humans == nil {
		hub := human.NewHub(human.WithLogger(s.logger))
		agents.Humans = hub.Agents()
		base, stop, err := serveHumans(o.HumanListen, hub)
		if err != nil {
			return nil, err
		}
		// Closed after the matches, whose agents close with them: the seats are closed first,
		// and their pages are told the match is over.
		s.closers = append(s.closers, stop)
		s.humanBase = base
	}

	// Registered bots are found in the registry on NATS, so NATS comes first when one plays.
	if slices.ContainsFunc(req.Agents, func(a string) bool { return strings.HasPrefix(a, agentconn.BotPrefix) }) && agents.Bots == nil {
		if err := s.openBus(ctx); err != nil {
			return nil, err
		}
		var err error
		if agents.Bots, err = botlink.OpenDirectory(ctx, s.bus); err != nil {
			return nil, fmt.Errorf("nats: %w", err)
		}
		agents.AllowBotDial = o.AllowBotDial
	}

	// Agents first: a mistyped or unreachable agent is reported before a NATS server is
	// started or dialled.
	req.Limits = &matchv1.Limits{
		MaxRetries:    proto.Int32(int32(o.Retries)),
		MaxReplyBytes: int32(o.MaxReplyBytes),
		TokenBudget:   o.TokenBudget,
	}
	if o.moveTimeoutFlag == nil || o.moveTimeoutFlag.Changed {
		// Left unset, the preparer gives a match with a person in it the time for people.
		req.Limits.MoveTimeout = durationpb.New(o.MoveTimeout)
	}
	prep := &launch.Preparer{Games: deps.Games, Agents: agents, ReadFile: os.ReadFile, ProbeTimeout: min(o.MoveTimeout, 10*time.Second),
		NoProbe: slices.Equal(s.probed, req.Agents) && !hasHuman}
	m, err := prep.Prepare(ctx, req)
	var seats *launch.SeatsError
	switch {
	case errors.As(err, &seats):
		return nil, cli.Usagef("%s needs %d agents, one per seat (%s), given with --agent; got %d", seats.Game, len(seats.Seats), strings.Join(seats.Seats, ", "), seats.Got)
	case errors.Is(err, launch.ErrUnreachable):
		return nil, err // the address may be right and its agent down
	case err != nil:
		return nil, cli.Usagef("%v", err)
	}
	s.probed = slices.Clone(req.Agents)
	if req.MatchID == "" {
		m.ID = DefaultMatchID(m.Game.Info().GetName(), m.Seed, m.Params, m.Agents)
	}

	if err := s.openBus(ctx); err != nil {
		return nil, err
	}
	if exists, err := bus.MatchExists(ctx, s.bus, m.ID); err != nil {
		return nil, fmt.Errorf("nats: %w", err)
	} else if exists {
		return nil, cli.Usagef("match %q is already recorded on %s; choose another --match-id or --seed", m.ID, s.bus.URL())
	}
	// The record file is created only now, so a run refused above leaves an existing file alone.
	var recorders []match.Recorder
	if o.RecordPath != "" {
		f, err := os.Create(o.RecordPath)
		if err != nil {
			return nil, fmt.Errorf("--record: %w", err)
		}
		defer f.Close()
		recorders = append(recorders, record.NewWriter(f))
	}
	// Stored as a referee worker stores a match: few messages, its ending only once the rest is.
	recorders = append(recorders, s.settler)

	if o.JSON {
		recorders = append(recorders, record.NewWriter(deps.Out))
	} else {
		recorders = append(recorders, record.NewTranscriptWriter(deps.Out, record.TranscriptOptions{ShowPrivate: o.ShowPrivate, Games: deps.Games}))
	}
	player := &launch.Player{Agents: agents, Options: []match.Option{match.WithTimestamps(o.Timestamps), match.WithLogger(s.logger)}}
	res, err := player.Play(ctx, m, match.Tee(recorders...), launch.PlayOptions{Opened: func(conns []*agentconn.Conn) {
		if hasHuman {
			announceHumans(deps, s.humanBase, conns, m)
		}
	}})
	if err != nil {
		if errors.Is(err, match.ErrBadSpec) || errors.Is(err, agentconn.ErrBadAddress) {
			return nil, cli.Usagef("%v", err)
		}
		return nil, err
	}
	flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := s.settler.Settle(flushCtx, m.ID); err != nil {
		return res, fmt.Errorf("nats: events of match %s not all stored: %w", m.ID, err)
	}
	return res, nil
}

// openBus starts or dials NATS, once.
func (s *Session) openBus(ctx context.Context) error {
	if s.bus != nil {
		return nil
	}
	b, err := bus.Open(ctx, bus.Config{URL: s.o.NATS}, s.logger)
	if err != nil {
		return fmt.Errorf("nats: %w", err)
	}
	s.bus, s.settler = b, bus.NewPublisher(b).SettleEachMatch()
	s.closers = append(s.closers, func() { b.Close() })
	return nil
}

// DefaultMatchID derives a match id from what defines the match, so the same invocation gives
// the same record.
func DefaultMatchID(game string, seed uint64, params proto.Message, agents []string) string {
	h := fnv.New32a()
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(params)
	h.Write(b)
	for _, a := range agents {
		h.Write([]byte{0})
		h.Write([]byte(a))
	}
	return fmt.Sprintf("%s-%d-%08x", game, seed, h.Sum32())
}

// serveHumans serves the seat page and the seats' API on addr until stop, and returns the
// page's base URL.
func serveHumans(addr string, hub *human.Hub) (base string, stop func(), err error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, cli.Usagef("--human-listen: %v", err)
	}
	mux := http.NewServeMux()
	hub.Mount(mux)
	mux.Handle("/", web.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(lis)

	host, port, _ := net.SplitHostPort(lis.Addr().String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), func() {
		// Streams end once their seat is closed; give them a moment to send the outcome.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
	}, nil
}

// announceHumans tells the person where each human seat is played.
func announceHumans(deps *cli.Deps, base string, conns []*agentconn.Conn, m *launch.Match) {
	for i, c := range conns {
		if c.Seat == nil {
			continue
		}
		name := fmt.Sprintf("seat %d", i)
		if i < len(m.Seats) {
			name = m.Seats[i]
		}
		fmt.Fprintf(deps.Err, "%s is yours: open %s%s (%s per move)\n", name, base, c.Seat.Path(), m.Limits.GetMoveTimeout().AsDuration())
	}
}
