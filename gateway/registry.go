package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"

	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/gen/go/parley/registry/v1/registryv1connect"
	"github.com/parley-arena/parley/referee/policy"
)

// Defaults of Config's per-token rate limit.
const (
	DefaultTokenRate  = 5 // requests per second
	DefaultTokenBurst = 20
)

var errNoTeams = connect.NewError(connect.CodeUnavailable, errors.New("this gateway has no bot registry"))

// teamAuth checks team tokens and applies the per-token rate limit.
type teamAuth struct {
	callers *callers
	perTeam *keyedLimiter // by team: a team has one token
	limit   float64       // requests a second, for the refusal
	burst   int
}

// authenticate returns the team whose bearer token h carries: Unauthenticated (401) without a
// valid one, ResourceExhausted (429) over the team's rate.
func (a *teamAuth) authenticate(ctx context.Context, h http.Header, peer string) (string, error) {
	if a.callers.teams == nil {
		return "", errNoTeams
	}
	caller, err := a.callers.of(ctx, h, clientAddr(peer))
	switch {
	case err != nil:
		return "", err
	case caller.Role != policy.Team:
		return "", a.callers.failed(caller.Client, connect.NewError(connect.CodeUnauthenticated,
			errors.New("give the team token: header \"Authorization: Bearer TOKEN\" (from `parley admin team add`)")))
	}
	team := caller.Team
	if !a.perTeam.allow(team) {
		return "", connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("team %s: more than %g requests a second (burst %d); slow down", team, a.limit, a.burst))
	}
	return team, nil
}

// registryService is RegistryService: a team changes its own bots only.
type registryService struct {
	registryv1connect.UnimplementedRegistryServiceHandler
	g *Gateway
}

var _ registryv1connect.RegistryServiceHandler = (*registryService)(nil)

// asTeam authenticates the request's team token and calls f with the team.
func asTeam[Req, Resp any](ctx context.Context, g *Gateway, req *connect.Request[Req], f func(team string) (*Resp, error)) (*connect.Response[Resp], error) {
	team, err := g.auth.authenticate(ctx, req.Header(), req.Peer().Addr)
	if err != nil {
		return nil, err
	}
	resp, err := f(team)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}

func (s *registryService) RegisterBot(ctx context.Context, req *connect.Request[registryv1.RegisterBotRequest]) (*connect.Response[registryv1.RegisterBotResponse], error) {
	return asTeam(ctx, s.g, req, func(team string) (*registryv1.RegisterBotResponse, error) {
		b, err := s.g.cfg.Teams.Register(ctx, team, req.Msg)
		if err != nil {
			return nil, err
		}
		s.g.log.Info("bot registered", "team", team, "bot", b.GetName(), "version", b.GetVersion(), "endpoint", b.GetEndpoint())
		return &registryv1.RegisterBotResponse{Bot: b}, nil
	})
}

func (s *registryService) UpdateBot(ctx context.Context, req *connect.Request[registryv1.UpdateBotRequest]) (*connect.Response[registryv1.UpdateBotResponse], error) {
	return asTeam(ctx, s.g, req, func(team string) (*registryv1.UpdateBotResponse, error) {
		b, err := s.g.cfg.Teams.Update(ctx, team, req.Msg)
		if err != nil {
			return nil, err
		}
		s.g.log.Info("bot updated", "team", team, "bot", b.GetName(), "version", b.GetVersion(), "endpoint", b.GetEndpoint())
		return &registryv1.UpdateBotResponse{Bot: b}, nil
	})
}

func (s *registryService) RetireBot(ctx context.Context, req *connect.Request[registryv1.RetireBotRequest]) (*connect.Response[registryv1.RetireBotResponse], error) {
	return asTeam(ctx, s.g, req, func(team string) (*registryv1.RetireBotResponse, error) {
		b, err := s.g.cfg.Teams.Retire(ctx, team, req.Msg.GetName())
		if err != nil {
			return nil, err
		}
		s.g.log.Info("bot retired", "team", team, "bot", b.GetName())
		return &registryv1.RetireBotResponse{Bot: b}, nil
	})
}

func (s *registryService) ListBots(ctx context.Context, req *connect.Request[registryv1.ListBotsRequest]) (*connect.Response[registryv1.ListBotsResponse], error) {
	return asTeam(ctx, s.g, req, func(team string) (*registryv1.ListBotsResponse, error) {
		bots, err := s.g.cfg.Teams.List(ctx, team, req.Msg.GetTeam(), req.Msg.GetIncludeRetired())
		if err != nil {
			return nil, err
		}
		return &registryv1.ListBotsResponse{Bots: bots}, nil
	})
}

// publicBots is GET /api/v1/bots: the active bots of the teams there are, as anyone may see
// them to enter them in a match (the web page's forms), without their endpoints.
func (g *Gateway) publicBots(w http.ResponseWriter, r *http.Request) {
	if g.cfg.Teams == nil {
		writeErr(w, errNoTeams)
		return
	}
	bots, err := g.cfg.Teams.Public(r.Context())
	if err != nil {
		writeErr(w, fromGRPC(err))
		return
	}
	data, err := protojson.Marshal(&registryv1.ListBotsResponse{Bots: bots})
	if err != nil {
		writeErr(w, connect.NewError(connect.CodeInternal, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}
