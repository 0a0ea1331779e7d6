package gateway

import (
	"context"

	"connectrpc.com/connect"
	"google.golang.org/grpc"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/gen/go/parley/referee/v1/refereev1connect"
	"github.com/parley-arena/parley/referee/record"
)

// refereeService implements parley.referee.v1.RefereeService for the web: ListGames and
// StartMatch go to the referee; GetMatch, StreamMatchEvents and ListMatches are answered from
// the match stream, every record redacted for spectators.
type refereeService struct {
	refereev1connect.UnimplementedRefereeServiceHandler
	g *Gateway
}

var _ refereev1connect.RefereeServiceHandler = (*refereeService)(nil)

// ListGames returns the referee's catalogue.
func (s *refereeService) ListGames(ctx context.Context, req *connect.Request[refereev1.ListGamesRequest]) (*connect.Response[refereev1.ListGamesResponse], error) {
	resp, err := s.g.cfg.Referee.ListGames(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}

// StartMatch asks the referee to start a match.
func (s *refereeService) StartMatch(ctx context.Context, req *connect.Request[refereev1.StartMatchRequest]) (*connect.Response[refereev1.StartMatchResponse], error) {
	if err := s.g.checkAgents(ctx, req.Msg.GetAgents()...); err != nil {
		return nil, err
	}
	// An in-process referee opens registered bots through this gateway's registry.
	resp, err := s.g.cfg.Referee.StartMatch(s.g.withBots(ctx), req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	s.g.log.Info("match started", "match_id", resp.GetMatchId(), "game", req.Msg.GetGame(), "client", req.Peer().Addr)
	return connect.NewResponse(resp), nil
}

// GetMatch returns a match's record so far, as a spectator sees it.
func (s *refereeService) GetMatch(ctx context.Context, req *connect.Request[refereev1.GetMatchRequest]) (*connect.Response[refereev1.GetMatchResponse], error) {
	events, err := s.g.readMatch(ctx, req.Msg.GetMatchId(), record.Spectator)
	if err != nil {
		return nil, err
	}
	ended := events[len(events)-1].GetMatchEnded() != nil
	return connect.NewResponse(&refereev1.GetMatchResponse{Events: events, Ended: ended}), nil
}

// StreamMatchEvents follows a match as a spectator sees it, to its end.
func (s *refereeService) StreamMatchEvents(ctx context.Context, req *connect.Request[refereev1.StreamMatchEventsRequest], stream *connect.ServerStream[refereev1.StreamMatchEventsResponse]) error {
	return s.g.follow(ctx, req.Msg.GetMatchId(), record.Spectator, max(req.Msg.GetFromSeq(), 1),
		func(ev *eventsv1.MatchEvent) error {
			return stream.Send(&refereev1.StreamMatchEventsResponse{Event: ev})
		},
		func() error { return nil })
}

// ListMatches lists the matches of the match stream, newest first.
func (s *refereeService) ListMatches(_ context.Context, req *connect.Request[refereev1.ListMatchesRequest]) (*connect.Response[refereev1.ListMatchesResponse], error) {
	resp, err := s.g.index.list(req.Msg)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	return connect.NewResponse(resp), nil
}

// NewRefereeClient adapts a gRPC client of the referee to Referee.
func NewRefereeClient(conn grpc.ClientConnInterface) Referee {
	return grpcReferee{c: refereev1.NewRefereeServiceClient(conn)}
}

type grpcReferee struct {
	c refereev1.RefereeServiceClient
}

func (r grpcReferee) ListGames(ctx context.Context, req *refereev1.ListGamesRequest) (*refereev1.ListGamesResponse, error) {
	return r.c.ListGames(ctx, req)
}

func (r grpcReferee) StartMatch(ctx context.Context, req *refereev1.StartMatchRequest) (*refereev1.StartMatchResponse, error) {
	return r.c.StartMatch(ctx, req)
}
