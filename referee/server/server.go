// Package server is the referee's gRPC API (parley.referee.v1.RefereeService): list games,
// start matches that run in the background, read and follow their records. Every event also
// goes to the Recorder given (NATS JetStream in production).
package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/match"
)

// Server implements RefereeService.
type Server struct {
	refereev1.UnimplementedRefereeServiceServer

	games    *games.Registry
	recorder match.Recorder
	validID  func(string) error
	logger   *slog.Logger
	store    *store
	opts     []match.Option // for every match's runner

	ctx    context.Context // parent of every match; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

var _ refereev1.RefereeServiceServer = (*Server)(nil)

// New returns a Server running matches of reg, recording every event to rec (which may be
// nil) after the server's own store. validID checks match ids given by clients (nil: any
// non-empty id). opts are added to every match's runner (e.g. match.WithObserver).
func New(reg *games.Registry, rec match.Recorder, validID func(string) error, logger *slog.Logger, opts ...match.Option) *Server {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if validID == nil {
		validID = func(id string) error {
			if id == "" {
				return errors.New("match id is empty")
			}
			return nil
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{games: reg, recorder: rec, validID: validID, logger: logger, store: newStore(), opts: opts, ctx: ctx, cancel: cancel}
}

// Close cancels the matches still running (they end void) and waits for them.
func (s *Server) Close() {
	s.cancel()
	s.wg.Wait()
}

// Wait waits until every match started so far has ended.
func (s *Server) Wait() { s.wg.Wait() }

// ListGames returns the catalogue.
func (s *Server) ListGames(context.Context, *refereev1.ListGamesRequest) (*refereev1.ListGamesResponse, error) {
	resp := &refereev1.ListGamesResponse{}
	for _, g := range s.games.Games() {
		resp.Games = append(resp.Games, g.Info())
	}
	return resp, nil
}

// StartMatch validates the request, connects the agents and runs the match in the background.
func (s *Server) StartMatch(ctx context.Context, req *refereev1.StartMatchRequest) (*refereev1.StartMatchResponse, error) {
	game, err := s.games.Lookup(req.GetGame())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	resolved, err := game.Resolve(req.GetParams())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	seats, _ := games.Seats(game, resolved)
	if len(req.GetAgents()) != len(seats) {
		return nil, status.Errorf(codes.InvalidArgument, "%s needs %d agents, one per seat (%s); got %d", game.Info().GetName(), len(seats), strings.Join(seats, ", "), len(req.GetAgents()))
	}
	if n := len(req.GetLabels()); n > 0 && n != len(seats) {
		return nil, status.Errorf(codes.InvalidArgument, "labels name the agents of the seats: give %d (one per seat) or none; got %d", len(seats), n)
	}
	id := req.GetMatchId()
	if id == "" {
		id = NewMatchID(game.Info().GetName())
	} else if err := s.validID(id); err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	conns, err := agentconn.OpenAll(ctx, req.GetAgents())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if !s.store.create(id) {
		agentconn.CloseAll(conns)
		return nil, status.Errorf(codes.AlreadyExists, "match %q already exists", id)
	}
	clients := make([]agentv1.AgentServiceClient, len(conns))
	for i, c := range conns {
		clients[i] = c.Client
	}
	spec := match.Spec{
		ID: id, Game: game, Params: req.GetParams(), Seed: req.GetSeed(), Agents: clients, Limits: req.GetLimits(),
		Labels: agentconn.Labels(conns, req.GetLabels()), RevealPrivate: req.GetRevealPrivate(),
	}
	rec := match.RecorderFunc(func(ctx context.Context, ev *eventsv1.MatchEvent) error {
		s.store.append(ev)
		if s.recorder == nil {
			return nil
		}
		return s.recorder.Record(ctx, ev)
	})
	runner := match.NewRunner(rec, append([]match.Option{match.WithLogger(s.logger)}, s.opts...)...)
	s.wg.Go(func() {
		defer agentconn.CloseAll(conns)
		defer s.store.end(id)
		if _, err := runner.Run(s.ctx, spec); err != nil {
			s.logger.Error("match failed", "match_id", id, "err", err)
		}
	})
	return &refereev1.StartMatchResponse{MatchId: id}, nil
}

// NewMatchID returns a fresh match id for a match of game: "GAME-" and 16 random hex digits.
func NewMatchID(game string) string {
	var b [8]byte
	rand.Read(b[:])
	return fmt.Sprintf("%s-%s", game, hex.EncodeToString(b[:]))
}

// GetMatch returns a match's record so far.
func (s *Server) GetMatch(_ context.Context, req *refereev1.GetMatchRequest) (*refereev1.GetMatchResponse, error) {
	events, ended, _, ok := s.store.since(req.GetMatchId(), 0)
	if !ok {
		return nil, status.Errorf(codes.NotFound, "no match %q", req.GetMatchId())
	}
	return &refereev1.GetMatchResponse{Events: events, Ended: ended}, nil
}

// StreamMatchEvents sends the record from from_seq on and follows it to the end.
func (s *Server) StreamMatchEvents(req *refereev1.StreamMatchEventsRequest, stream refereev1.RefereeService_StreamMatchEventsServer) error {
	next := int(max(req.GetFromSeq(), 1) - 1)
	for {
		events, ended, changed, ok := s.store.since(req.GetMatchId(), next)
		if !ok {
			return status.Errorf(codes.NotFound, "no match %q", req.GetMatchId())
		}
		for _, ev := range events {
			if err := stream.Send(&refereev1.StreamMatchEventsResponse{Event: ev}); err != nil {
				return err
			}
		}
		next += len(events)
		if ended && len(events) == 0 {
			return nil
		}
		if len(events) > 0 {
			continue // re-read: the match may have ended meanwhile
		}
		select {
		case <-changed:
		case <-stream.Context().Done():
			return status.FromContextError(stream.Context().Err()).Err()
		}
	}
}

// ListMatches lists the matches this referee ran since it started, newest first.
func (s *Server) ListMatches(_ context.Context, req *refereev1.ListMatchesRequest) (*refereev1.ListMatchesResponse, error) {
	size, err := PageSize(req.GetPageSize())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	all := s.store.summaries()
	var keep []*refereev1.MatchSummary
	for _, m := range all {
		if Selects(req, m) {
			keep = append(keep, m)
		}
	}
	page, next, err := Page(keep, req.GetPageToken(), size)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	return &refereev1.ListMatchesResponse{Matches: page, NextPageToken: next}, nil
}

// Page sizes of ListMatches.
const (
	DefaultPageSize = 50
	MaxPageSize     = 500
)

// PageSize reads ListMatchesRequest.page_size: 0 means DefaultPageSize, at most MaxPageSize.
func PageSize(n int32) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("page_size must be 0 or more, got %d", n)
	case n == 0:
		return DefaultPageSize, nil
	default:
		return min(int(n), MaxPageSize), nil
	}
}

// Selects reports whether a ListMatches request selects m.
func Selects(req *refereev1.ListMatchesRequest, m *refereev1.MatchSummary) bool {
	return (req.GetState() == refereev1.MatchState_MATCH_STATE_UNSPECIFIED || req.GetState() == m.GetState()) &&
		(req.GetGame() == "" || req.GetGame() == m.GetGame()) &&
		(req.GetTournamentId() == "" || req.GetTournamentId() == m.GetTournamentId())
}

// Page returns the page of ms (newest first) after the match named by token (a match id; empty:
// from the start), at most size of them, and the token of the next page.
func Page(ms []*refereev1.MatchSummary, token string, size int) ([]*refereev1.MatchSummary, string, error) {
	from := 0
	if token != "" {
		i := slices.IndexFunc(ms, func(m *refereev1.MatchSummary) bool { return m.GetMatchId() == token })
		if i < 0 {
			return nil, "", fmt.Errorf("page_token %q is not a match of this listing", token)
		}
		from = i + 1
	}
	to := min(from+size, len(ms))
	next := ""
	if to < len(ms) {
		next = ms[to-1].GetMatchId()
	}
	return ms[from:to], next, nil
}
