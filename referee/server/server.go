// Package server is the referee's gRPC API (parley.referee.v1.RefereeService): the game
// catalogue; StartMatch, which prepares a match the one way every door does (package launch)
// and puts it into the work queue any referee worker takes (package queue); and the records of
// matches, read from JetStream: GetMatch, StreamMatchEvents, ListMatches. It shows the whole
// record: it is the organiser's API, behind the gateway, which redacts what it shows.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/budget"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/referee/queue"
)

// Defaults of Config.
const (
	DefaultStartGrace = 10 * time.Second
	// readTimeout bounds reading a whole record for one request.
	readTimeout = 30 * time.Second
)

// Config is what a Server needs.
type Config struct {
	// Matches prepares the matches StartMatch is asked for. Required.
	Matches *launch.Preparer
	// Bus holds the records and the work queue. Required.
	Bus *bus.Bus
	// Logger (nil: discard).
	Logger *slog.Logger
	// StartGrace is how long StreamMatchEvents waits for a match that has not started and is
	// not queued (0: DefaultStartGrace).
	StartGrace time.Duration
}

// Server implements RefereeService. Make one with New; Close it.
type Server struct {
	refereev1.UnimplementedRefereeServiceServer

	cfg    Config
	logger *slog.Logger
	index  *matchIndex
	live   *liveNews
	unsub  func() error // ends the keeping of live news

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ refereev1.RefereeServiceServer = (*Server)(nil)

// New returns a Server; it reads the listing of every match stored so far (bounded by ctx) and
// keeps it up to date until Close.
func New(ctx context.Context, cfg Config) (*Server, error) {
	switch {
	case cfg.Matches == nil:
		return nil, errors.New("server: no match preparer")
	case cfg.Bus == nil:
		return nil, errors.New("server: no NATS connection")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.StartGrace <= 0 {
		cfg.StartGrace = DefaultStartGrace
	}
	if err := queue.EnsureStreams(ctx, cfg.Bus.JetStream()); err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	bg, cancel := context.WithCancel(context.Background())
	s := &Server{cfg: cfg, logger: cfg.Logger, cancel: cancel}
	s.index = newMatchIndex(cfg.Bus.JetStream(), cfg.Logger, cfg.Matches.Budgets)
	if err := s.index.start(ctx, bg, &s.wg); err != nil {
		cancel()
		s.wg.Wait()
		return nil, fmt.Errorf("server: match index: %w", err)
	}
	s.live = newLiveNews()
	sub, err := s.live.listen(cfg.Bus.Conn())
	if err != nil {
		cancel()
		s.wg.Wait()
		return nil, fmt.Errorf("server: live news: %w", err)
	}
	s.unsub = sub.Unsubscribe
	return s, nil
}

// Close stops following the match stream.
func (s *Server) Close() {
	_ = s.unsub()
	s.cancel()
	s.wg.Wait()
}

// ListGames returns the catalogue.
func (s *Server) ListGames(context.Context, *refereev1.ListGamesRequest) (*refereev1.ListGamesResponse, error) {
	resp := &refereev1.ListGamesResponse{}
	for _, g := range s.cfg.Matches.Games.Games() {
		resp.Games = append(resp.Games, g.Info())
	}
	return resp, nil
}

// StartMatch prepares the match and puts it into the work queue; a referee worker plays it
// (and plays it again if its referee dies). It answers as soon as the match is queued.
// CancelMatch cancels a match queued or running, for its owner or the organiser: the
// cancellation is recorded, and the worker that plays or takes the match ends it void.
func (s *Server) CancelMatch(ctx context.Context, req *refereev1.CancelMatchRequest) (*refereev1.CancelMatchResponse, error) {
	if err := bus.ValidMatchID(req.GetMatchId()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	js := s.cfg.Bus.JetStream()
	queued, ok, err := queue.Request(ctx, js, req.GetMatchId())
	switch {
	case err != nil:
		return nil, status.Error(codes.Unavailable, err.Error())
	case !ok:
		return nil, status.Errorf(codes.NotFound, "no match %q waits or plays: it was never asked for, or has ended", req.GetMatchId())
	}
	by, ok := policy.FromIncoming(ctx).Cancels(queued.GetOwner())
	if !ok {
		return nil, status.Errorf(codes.PermissionDenied, "only who asked for match %s, or the organiser, may cancel it", req.GetMatchId())
	}
	if err := queue.Cancel(ctx, js, &queuev1.Cancelled{MatchId: req.GetMatchId(), By: by}); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	s.logger.Info("match cancelled", "match_id", req.GetMatchId(), "by", by)
	return &refereev1.CancelMatchResponse{}, nil
}

func (s *Server) StartMatch(ctx context.Context, req *refereev1.StartMatchRequest) (*refereev1.StartMatchResponse, error) {
	if id := req.GetMatchId(); id != "" {
		if err := bus.ValidMatchID(id); err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
	}
	caller := policy.FromIncoming(ctx)
	if req.GetMatchId() != "" && caller.Role != policy.Organiser {
		// Ids are the organiser's to choose: a chosen id could take one a tournament will
		// schedule, and stand in for its match.
		return nil, status.Error(codes.InvalidArgument, "match_id: only the organiser chooses match ids; leave it empty and the referee names the match")
	}
	m, err := s.cfg.Matches.Prepare(ctx, launch.Request{
		Game: req.GetGame(), Params: req.GetParams(), Seed: req.GetSeed(), SeedGiven: req.GetSeed() != 0,
		Agents: req.GetAgents(), Labels: req.GetLabels(), Limits: req.GetLimits(), MatchID: req.GetMatchId(),
		RevealPrivate: req.GetRevealPrivate(), Caller: caller,
	})
	switch {
	case errors.Is(err, budget.ErrExhausted):
		return nil, status.Error(codes.ResourceExhausted, err.Error())
	case err != nil:
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	resp, err := s.enqueue(ctx, caller, m)
	if err != nil {
		m.Release()
		return nil, err
	}
	s.logger.Info("match requested", "match_id", m.ID, "game", req.GetGame())
	return resp, nil
}

// enqueue puts a prepared match into the work queue.
func (s *Server) enqueue(ctx context.Context, caller policy.Caller, m *launch.Match) (*refereev1.StartMatchResponse, error) {
	// A match is accepted only while it can be stored: never a 200 for a record that cannot be.
	if err := s.cfg.Bus.Ready(); err != nil {
		return nil, status.Errorf(codes.Unavailable, "%v; try again shortly", err)
	}
	js := s.cfg.Bus.JetStream()
	// Past the policy's max_queued, callers other than the organiser wait their turn.
	if pol := s.cfg.Matches.Policy; pol != nil && pol.MaxQueued > 0 && caller.Role != policy.Organiser {
		n, err := queue.Waiting(ctx, js)
		switch {
		case err != nil:
			return nil, status.Error(codes.Unavailable, err.Error())
		case n >= pol.MaxQueued:
			return nil, status.Errorf(codes.ResourceExhausted, "the work queue holds %d matches waiting, as many as max_queued allows; try again later", n)
		}
	}
	switch taken, err := queue.Taken(ctx, js, m.ID); {
	case err != nil:
		return nil, status.Error(codes.Unavailable, err.Error())
	case taken:
		return nil, status.Errorf(codes.AlreadyExists, "match %q already exists", m.ID)
	}
	// Seats are reserved only for a request every check let through, so a refused one holds
	// none of the seats the hub can give.
	agents, links, err := s.reserveSeats(m.Agents)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	m.Agents = agents
	if err := queue.Enqueue(ctx, js, m.Request()); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	return &refereev1.StartMatchResponse{MatchId: m.ID, Seed: m.Seed, SeatLinks: links}, nil
}

// reserveSeats reserves a seat for each person asked for without one ("human", "human:NAME")
// and returns the addresses that open those seats, and each seat's page (nil when no seat
// was reserved). The match may be played by any worker of the process that serves the seats.
func (s *Server) reserveSeats(addrs []string) ([]string, []string, error) {
	r, ok := s.cfg.Matches.Agents.Humans.(agentconn.Reserver)
	if !ok {
		return addrs, nil, nil // Prepare says whether human seats are served here
	}
	out := slices.Clone(addrs)
	var links []string
	for i, a := range addrs {
		if !agentconn.IsHuman(a) || strings.Contains(a, "ticket=") {
			continue
		}
		seat, link, err := r.Reserve(a)
		if err != nil {
			return nil, nil, err
		}
		if links == nil {
			links = make([]string, len(addrs))
		}
		out[i], links[i] = seat, link
	}
	return out, links, nil
}

// GetMatch returns a match's record so far.
func (s *Server) GetMatch(ctx context.Context, req *refereev1.GetMatchRequest) (*refereev1.GetMatchResponse, error) {
	id := req.GetMatchId()
	if err := bus.ValidMatchID(id); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	events, err := bus.ReadMatch(ctx, s.cfg.Bus.JetStream(), id)
	switch {
	case err != nil:
		return nil, status.Error(codes.Unavailable, err.Error())
	case len(events) == 0:
		return nil, status.Errorf(codes.NotFound, "no match %q", id)
	}
	return &refereev1.GetMatchResponse{Events: events, Ended: events[len(events)-1].GetMatchEnded() != nil}, nil
}

// StreamMatchEvents sends the record from from_seq on and follows it to the end.
func (s *Server) StreamMatchEvents(req *refereev1.StreamMatchEventsRequest, stream refereev1.RefereeService_StreamMatchEventsServer) error {
	return s.follow(stream.Context(), req.GetMatchId(), max(req.GetFromSeq(), 1), func(resp *refereev1.StreamMatchEventsResponse) error {
		return stream.Send(resp)
	})
}

// ListMatches lists the matches of the match stream, newest first.
func (s *Server) ListMatches(_ context.Context, req *refereev1.ListMatchesRequest) (*refereev1.ListMatchesResponse, error) {
	resp, err := s.index.list(req)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return resp, nil
}

// ListAgents lists the built-in agents the referee serves.
func (s *Server) ListAgents(context.Context, *refereev1.ListAgentsRequest) (*refereev1.ListAgentsResponse, error) {
	resp := &refereev1.ListAgentsResponse{}
	if l, ok := s.cfg.Matches.Agents.Builtins.(agentconn.Lister); ok {
		resp.Agents = l.List()
	}
	return resp, nil
}

// ParseParams reads parameters given as text, as `parley play --param` does.
func (s *Server) ParseParams(_ context.Context, req *refereev1.ParseParamsRequest) (*refereev1.ParseParamsResponse, error) {
	if _, err := s.cfg.Matches.Games.Lookup(req.GetGame()); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	kvs := make([]string, 0, len(req.GetParams()))
	for k, v := range req.GetParams() {
		kvs = append(kvs, k+"="+v)
	}
	slices.Sort(kvs)
	gp, err := games.ParseParams(req.GetGame(), kvs)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return &refereev1.ParseParamsResponse{Params: gp}, nil
}
