package gateway

import (
	"context"
	"fmt"
	"strings"

	"connectrpc.com/connect"
	"google.golang.org/grpc"

	"github.com/parley-arena/parley/agents/human"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/gen/go/parley/referee/v1/refereev1connect"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/record"
	"github.com/parley-arena/parley/referee/server"
	"github.com/parley-arena/parley/services/tournament"
)

// refereeService implements parley.referee.v1.RefereeService for the web: ListGames goes to
// the referee; StartMatch puts the match into the referee work queue; GetMatch,
// StreamMatchEvents and ListMatches are answered from the match stream, every record redacted
// for spectators.
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

// StartMatch checks the request as the referee would, names the match and puts it into the
// work queue that tournament matches go through, so that any referee worker plays it and a
// match whose referee dies is closed void and played again. It answers at once; the match
// starts when a worker takes it.
func (s *refereeService) StartMatch(ctx context.Context, req *connect.Request[refereev1.StartMatchRequest]) (*connect.Response[refereev1.StartMatchResponse], error) {
	g, m := s.g, req.Msg
	if err := g.checkAgents(m.GetAgents()...); err != nil {
		return nil, err
	}
	game, err := g.cfg.Games.Lookup(m.GetGame())
	if err != nil {
		return nil, invalid("%v", err)
	}
	params, err := game.Resolve(m.GetParams())
	if err != nil {
		return nil, invalid("%v", err)
	}
	seats, _ := games.Seats(game, params)
	if len(m.GetAgents()) != len(seats) {
		return nil, invalid("%s needs %d agents, one per seat (%s); got %d", game.Info().GetName(), len(seats), strings.Join(seats, ", "), len(m.GetAgents()))
	}
	if n := len(m.GetLabels()); n > 0 && n != len(seats) {
		return nil, invalid("labels name the agents of the seats: give %d (one per seat) or none; got %d", len(seats), n)
	}
	id := m.GetMatchId()
	if id == "" {
		id = server.NewMatchID(game.Info().GetName())
	} else if err := bus.ValidMatchID(id); err != nil {
		return nil, invalid("%v", err)
	}
	labels, err := g.checkSeats(ctx, m.GetAgents(), m.GetLabels())
	if err != nil {
		return nil, err
	}
	js := g.cfg.Bus.JetStream()
	switch taken, err := tournament.Requested(ctx, js, id); {
	case err != nil:
		return nil, connect.NewError(connect.CodeUnavailable, err)
	case taken:
		return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("match %q already exists", id))
	}
	if err := tournament.PublishRequest(ctx, js, &tournamentv1.MatchRequest{
		MatchId: id, Game: m.GetGame(), Params: m.GetParams(), Seed: m.GetSeed(), Agents: m.GetAgents(),
		Limits: m.GetLimits(), Labels: labels, RevealPrivate: m.GetRevealPrivate(),
	}); err != nil {
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	g.log.Info("match requested", "match_id", id, "game", m.GetGame(), "client", req.Peer().Addr)
	return connect.NewResponse(&refereev1.StartMatchResponse{MatchId: id}), nil
}

// SeatChecker is a SeatAuthorizer that also seats people (human.Hub): StartMatch asks it
// whether a human agent address can be seated, without using up its ticket.
type SeatChecker interface {
	Check(spec string) error
}

// checkSeats checks that every agent address of a match opens, as the worker taking the
// match will open it, and returns the labels to record: each given one, or a registered bot's
// own. Human seats are checked with Config.Seats, the hub of this process, where `parley up`'s
// worker seats them.
func (g *Gateway) checkSeats(ctx context.Context, addrs, given []string) ([]string, error) {
	ctx, cancel := context.WithTimeout(g.withBots(ctx), agentCheckTimeout)
	defer cancel()
	labels := make([]string, len(addrs))
	labelled := false
	for i, a := range addrs {
		if i < len(given) {
			labels[i] = given[i]
		}
		if human.IsAddress(a) {
			hub, ok := g.cfg.Seats.(SeatChecker)
			if !ok {
				return nil, invalid("agent %s: %v", a, human.ErrNotServed)
			}
			if err := hub.Check(a); err != nil {
				return nil, invalid("%v", err)
			}
		} else {
			label, err := probeAgent(ctx, a)
			if err != nil {
				return nil, err
			}
			if labels[i] == "" {
				labels[i] = label
			}
		}
		labelled = labelled || labels[i] != ""
	}
	if !labelled {
		return nil, nil
	}
	return labels, nil
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
