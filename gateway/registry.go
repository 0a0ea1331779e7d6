package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/time/rate"
	"google.golang.org/protobuf/encoding/protojson"

	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/services/botlink"
	"github.com/parley-arena/parley/services/registry"
)

// Defaults of Config's per-token rate limit.
const (
	DefaultTokenRate  = 5 // requests per second
	DefaultTokenBurst = 20
)

// teamAuth checks team tokens and applies the per-token rate limit.
type teamAuth struct {
	store *registry.Store
	limit rate.Limit
	burst int

	mu       sync.Mutex
	limiters map[string]*rate.Limiter // by team: a team has one token
}

// authenticate returns the team whose bearer token h carries: Unauthenticated (401) without a
// valid one, ResourceExhausted (429) over the team's rate.
func (a *teamAuth) authenticate(ctx context.Context, h http.Header) (string, error) {
	scheme, token, ok := strings.Cut(h.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", connect.NewError(connect.CodeUnauthenticated, errors.New("give the team token: header \"Authorization: Bearer TOKEN\" (from `parley admin team add`)"))
	}
	team, err := a.store.Authenticate(ctx, strings.TrimSpace(token))
	if errors.Is(err, registry.ErrBadToken) {
		return "", connect.NewError(connect.CodeUnauthenticated, errors.New("the team token is not valid (revoked, or mistyped)"))
	} else if err != nil {
		return "", connect.NewError(connect.CodeUnavailable, err)
	}
	a.mu.Lock()
	l, ok := a.limiters[team]
	if !ok {
		l = rate.NewLimiter(a.limit, a.burst)
		a.limiters[team] = l
	}
	a.mu.Unlock()
	if !l.Allow() {
		return "", connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("team %s: more than %g requests a second (burst %d); slow down", team, float64(a.limit), a.burst))
	}
	return team, nil
}

// registryService is RegistryService: a team changes its own bots only.
type registryService struct {
	g *Gateway
}

// registryError maps the registry's errors to RPC codes.
func registryError(err error) error {
	var ce *connect.Error
	switch {
	case errors.As(err, &ce):
		return err
	case errors.Is(err, registry.ErrInvalid):
		return connect.NewError(connect.CodeInvalidArgument, err)
	case errors.Is(err, registry.ErrExists):
		return connect.NewError(connect.CodeAlreadyExists, err)
	case errors.Is(err, registry.ErrNotFound):
		return connect.NewError(connect.CodeNotFound, err)
	default:
		return connect.NewError(connect.CodeUnavailable, err)
	}
}

// ownBot reads a bot name as the caller may give it ("name", "team/name" or "bot:team/name")
// and refuses, with PermissionDenied, one of another team.
func ownBot(team, given string) (string, error) {
	rest := strings.TrimPrefix(given, registry.AddressPrefix)
	if owner, name, ok := strings.Cut(rest, "/"); ok {
		if owner != team {
			return "", connect.NewError(connect.CodePermissionDenied, fmt.Errorf("bot %q belongs to team %q; team %q may change only its own bots", given, owner, team))
		}
		rest = name
	}
	if err := registry.ValidName("bot", rest); err != nil {
		return "", connect.NewError(connect.CodeInvalidArgument, err)
	}
	return rest, nil
}

func (s *registryService) RegisterBot(ctx context.Context, req *connect.Request[registryv1.RegisterBotRequest]) (*connect.Response[registryv1.RegisterBotResponse], error) {
	team, err := s.g.auth.authenticate(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	msg := req.Msg
	name, err := ownBot(team, msg.GetName())
	if err != nil {
		return nil, err
	}
	if err := s.checkGames(msg.GetGames()); err != nil {
		return nil, err
	}
	b, err := s.g.registry.Register(ctx, team, &registryv1.RegisterBotRequest{Name: name, Version: msg.GetVersion(), Games: msg.GetGames(), Endpoint: msg.GetEndpoint()})
	if err != nil {
		return nil, registryError(err)
	}
	s.g.log.Info("bot registered", "team", team, "bot", name, "version", b.GetVersion(), "endpoint", b.GetEndpoint())
	return connect.NewResponse(&registryv1.RegisterBotResponse{Bot: b}), nil
}

func (s *registryService) UpdateBot(ctx context.Context, req *connect.Request[registryv1.UpdateBotRequest]) (*connect.Response[registryv1.UpdateBotResponse], error) {
	team, err := s.g.auth.authenticate(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	msg := req.Msg
	name, err := ownBot(team, msg.GetName())
	if err != nil {
		return nil, err
	}
	if err := s.checkGames(msg.GetGames()); err != nil {
		return nil, err
	}
	b, err := s.g.registry.Update(ctx, team, name, func(b *registryv1.Bot) error {
		if msg.Version != nil {
			b.Version = msg.GetVersion()
		}
		if len(msg.GetGames()) > 0 {
			b.Games = msg.GetGames()
		}
		if msg.Endpoint != nil {
			b.Endpoint = msg.GetEndpoint()
		}
		b.Retired = false
		return nil
	})
	if err != nil {
		return nil, registryError(err)
	}
	s.g.log.Info("bot updated", "team", team, "bot", name, "version", b.GetVersion(), "endpoint", b.GetEndpoint())
	return connect.NewResponse(&registryv1.UpdateBotResponse{Bot: b}), nil
}

func (s *registryService) RetireBot(ctx context.Context, req *connect.Request[registryv1.RetireBotRequest]) (*connect.Response[registryv1.RetireBotResponse], error) {
	team, err := s.g.auth.authenticate(ctx, req.Header())
	if err != nil {
		return nil, err
	}
	name, err := ownBot(team, req.Msg.GetName())
	if err != nil {
		return nil, err
	}
	b, err := s.g.registry.Update(ctx, team, name, func(b *registryv1.Bot) error {
		b.Retired = true
		return nil
	})
	if err != nil {
		return nil, registryError(err)
	}
	s.g.log.Info("bot retired", "team", team, "bot", name)
	return connect.NewResponse(&registryv1.RetireBotResponse{Bot: b}), nil
}

func (s *registryService) ListBots(ctx context.Context, req *connect.Request[registryv1.ListBotsRequest]) (*connect.Response[registryv1.ListBotsResponse], error) {
	if _, err := s.g.auth.authenticate(ctx, req.Header()); err != nil {
		return nil, err
	}
	bots, err := s.g.registry.Bots(ctx, req.Msg.GetTeam(), req.Msg.GetIncludeRetired())
	if err != nil {
		return nil, registryError(err)
	}
	s.g.markConnected(ctx, bots)
	return connect.NewResponse(&registryv1.ListBotsResponse{Bots: bots}), nil
}

// markConnected fills in Connected of the active dial-out bots, asking over NATS whether a
// gateway holds each one's link (a second at most).
func (g *Gateway) markConnected(ctx context.Context, bots []*registryv1.Bot) {
	var wg sync.WaitGroup
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for _, b := range bots {
		if b.GetEndpoint() == registry.EndpointDialOut && !b.GetRetired() {
			wg.Go(func() { b.Connected = botlink.Connected(pctx, g.cfg.Bus.Conn(), b.GetTeam(), b.GetName()) })
		}
	}
	wg.Wait()
}

// publicBots is GET /api/v1/bots: the active bots of the teams there are, as anyone may see
// them to enter them in a match (the web page's forms). Where a bot is served is the
// organiser's business: endpoints are left out.
func (g *Gateway) publicBots(w http.ResponseWriter, r *http.Request) {
	teams, err := g.registry.Teams(r.Context())
	if err != nil {
		writeErr(w, connect.NewError(connect.CodeUnavailable, err))
		return
	}
	current := map[string]bool{}
	for _, t := range teams {
		current[t.Name] = true
	}
	all, err := g.registry.Bots(r.Context(), "", false)
	if err != nil {
		writeErr(w, connect.NewError(connect.CodeUnavailable, err))
		return
	}
	var bots []*registryv1.Bot
	for _, b := range all {
		if current[b.GetTeam()] {
			bots = append(bots, b)
		}
	}
	g.markConnected(r.Context(), bots)
	for _, b := range bots {
		b.Endpoint = ""
	}
	data, err := protojson.Marshal(&registryv1.ListBotsResponse{Bots: bots})
	if err != nil {
		writeErr(w, connect.NewError(connect.CodeInternal, err))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// checkGames refuses games the referee does not know.
func (s *registryService) checkGames(names []string) error {
	for _, n := range names {
		if _, err := s.g.cfg.Games.Lookup(n); err != nil {
			return invalid("%v", err)
		}
	}
	return nil
}
