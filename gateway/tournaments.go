package gateway

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/gen/go/parley/tournament/v1/tournamentv1connect"
)

// tournamentService passes parley.tournament.v1.TournamentService to the tournament service.
// What it returns is public already: schedules without seeds or private parameters, and
// standings derived from the public parts of the records.
type tournamentService struct {
	tournamentv1connect.UnimplementedTournamentServiceHandler
	g *Gateway
}

var _ tournamentv1connect.TournamentServiceHandler = (*tournamentService)(nil)

var errNoTournaments = connect.NewError(connect.CodeUnavailable, errors.New("this gateway has no tournament service"))

func (s *tournamentService) client() (tournamentv1.TournamentServiceClient, error) {
	if s.g.cfg.Tournaments == nil {
		return nil, errNoTournaments
	}
	return s.g.cfg.Tournaments, nil
}

// StartTournament asks the tournament service to start the tournament.
func (s *tournamentService) StartTournament(ctx context.Context, req *connect.Request[tournamentv1.StartTournamentRequest]) (*connect.Response[tournamentv1.StartTournamentResponse], error) {
	c, err := s.client()
	if err != nil {
		return nil, err
	}
	ctx, err = s.g.starting(ctx, req.Header(), req.Peer().Addr)
	if err != nil {
		return nil, err
	}
	resp, err := c.StartTournament(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}

// CancelTournament asks the tournament service to cancel the tournament, for its owner or
// the organiser.
func (s *tournamentService) CancelTournament(ctx context.Context, req *connect.Request[tournamentv1.CancelTournamentRequest]) (*connect.Response[tournamentv1.CancelTournamentResponse], error) {
	c, err := s.client()
	if err != nil {
		return nil, err
	}
	ctx, err = s.g.calling(ctx, req.Header(), req.Peer().Addr)
	if err != nil {
		return nil, err
	}
	resp, err := c.CancelTournament(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}

// GetTournament returns a tournament's schedule and standings.
func (s *tournamentService) GetTournament(ctx context.Context, req *connect.Request[tournamentv1.GetTournamentRequest]) (*connect.Response[tournamentv1.GetTournamentResponse], error) {
	c, err := s.client()
	if err != nil {
		return nil, err
	}
	resp, err := c.GetTournament(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}

// ListTournaments lists the stored tournaments, newest first.
func (s *tournamentService) ListTournaments(ctx context.Context, req *connect.Request[tournamentv1.ListTournamentsRequest]) (*connect.Response[tournamentv1.ListTournamentsResponse], error) {
	c, err := s.client()
	if err != nil {
		return nil, err
	}
	resp, err := c.ListTournaments(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}
