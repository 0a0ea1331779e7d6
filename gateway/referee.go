package gateway

import (
	"context"
	"errors"
	"io"

	"connectrpc.com/connect"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/gen/go/parley/referee/v1/refereev1connect"
	"github.com/parley-arena/parley/referee/record"
)

// refereeService implements parley.referee.v1.RefereeService for the web: every call goes to
// the referee; what it returns of a match is redacted for spectators.
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

// StartMatch asks the referee to start the match: it checks the request as every door does,
// and puts the match into the work queue any referee worker takes.
func (s *refereeService) StartMatch(ctx context.Context, req *connect.Request[refereev1.StartMatchRequest]) (*connect.Response[refereev1.StartMatchResponse], error) {
	ctx, err := s.g.starting(ctx, req.Header(), req.Peer().Addr)
	if err != nil {
		return nil, err
	}
	resp, err := s.g.cfg.Referee.StartMatch(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	s.g.log.Info("match requested", "match_id", resp.GetMatchId(), "game", req.Msg.GetGame(), "client", req.Peer().Addr)
	return connect.NewResponse(resp), nil
}

// CancelMatch asks the referee to cancel a match queued or running, for its owner or the
// organiser.
func (s *refereeService) CancelMatch(ctx context.Context, req *connect.Request[refereev1.CancelMatchRequest]) (*connect.Response[refereev1.CancelMatchResponse], error) {
	ctx, err := s.g.calling(ctx, req.Header(), req.Peer().Addr)
	if err != nil {
		return nil, err
	}
	resp, err := s.g.cfg.Referee.CancelMatch(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}

// GetMatch returns a match's record so far, as a spectator sees it.
func (s *refereeService) GetMatch(ctx context.Context, req *connect.Request[refereev1.GetMatchRequest]) (*connect.Response[refereev1.GetMatchResponse], error) {
	events, ended, err := s.g.readMatch(ctx, req.Msg.GetMatchId(), record.Spectator)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&refereev1.GetMatchResponse{Events: events, Ended: ended}), nil
}

// StreamMatchEvents follows a match as a spectator sees it, to its end.
func (s *refereeService) StreamMatchEvents(ctx context.Context, req *connect.Request[refereev1.StreamMatchEventsRequest], stream *connect.ServerStream[refereev1.StreamMatchEventsResponse]) error {
	return s.g.follow(ctx, req.Msg.GetMatchId(), record.Spectator, req.Msg.GetFromSeq(), func(ev *eventsv1.MatchEvent) error {
		return stream.Send(&refereev1.StreamMatchEventsResponse{Event: ev})
	}, func(w *refereev1.Waiting) error {
		return stream.Send(&refereev1.StreamMatchEventsResponse{Waiting: w})
	})
}

// ListMatches lists the matches, newest first.
func (s *refereeService) ListMatches(ctx context.Context, req *connect.Request[refereev1.ListMatchesRequest]) (*connect.Response[refereev1.ListMatchesResponse], error) {
	resp, err := s.g.cfg.Referee.ListMatches(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}

// readMatch reads a match's record so far, redacted for viewer.
func (g *Gateway) readMatch(ctx context.Context, id string, viewer record.Viewer) ([]*eventsv1.MatchEvent, bool, error) {
	resp, err := g.cfg.Referee.GetMatch(ctx, &refereev1.GetMatchRequest{MatchId: id})
	if err != nil {
		return nil, false, fromGRPC(err)
	}
	return record.RedactAll(resp.GetEvents(), viewer), resp.GetEnded(), nil
}

// follow follows match id's record from seq from on (0: the start), calling send with each
// event redacted for viewer, to match_ended, and waiting with each live news of a seat asked
// to move (public to every viewer).
func (g *Gateway) follow(ctx context.Context, id string, viewer record.Viewer, from uint64, send func(*eventsv1.MatchEvent) error, waiting func(*refereev1.Waiting) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// From the start whatever from says: whether the match reveals its private parts is in its
	// first event.
	stream, err := g.cfg.Referee.StreamMatchEvents(ctx, &refereev1.StreamMatchEventsRequest{MatchId: id})
	if err != nil {
		return fromGRPC(err)
	}
	reveal := false
	for {
		resp, err := stream.Recv()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return fromGRPC(err)
		}
		if w := resp.GetWaiting(); w != nil {
			if err := waiting(w); err != nil {
				return err
			}
			continue
		}
		ev := resp.GetEvent()
		if s := ev.GetMatchStarted(); s != nil {
			reveal = s.GetRevealPrivate()
		}
		if ev.GetSeq() < from {
			continue
		}
		if err := send(record.Redact(ev, viewer, reveal)); err != nil {
			return err
		}
	}
}

// ListAgents lists the referee's built-in agents.
func (s *refereeService) ListAgents(ctx context.Context, req *connect.Request[refereev1.ListAgentsRequest]) (*connect.Response[refereev1.ListAgentsResponse], error) {
	resp, err := s.g.cfg.Referee.ListAgents(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}

// ParseParams reads parameters given as text, as the referee does for `parley play`.
func (s *refereeService) ParseParams(ctx context.Context, req *connect.Request[refereev1.ParseParamsRequest]) (*connect.Response[refereev1.ParseParamsResponse], error) {
	resp, err := s.g.cfg.Referee.ParseParams(ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}
