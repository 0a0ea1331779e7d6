package registry

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
)

// Service is what teams may do with their bots, for one authenticated team at a time: the
// logic behind parley.registry.v1.RegistryService, whose requests the gateway authenticates
// and hands over with the caller's team. Its errors are gRPC statuses.
type Service struct {
	// Store is the registry. Required.
	Store *Store
	// Game checks a game name (nil: any name).
	Game func(name string) error
	// Connected tells whether a dial-out bot's link is up (nil: never).
	Connected func(ctx context.Context, team, name string) bool
}

// Authenticate returns the team a token belongs to: Unauthenticated when it belongs to none.
func (s *Service) Authenticate(ctx context.Context, token string) (string, error) {
	team, err := s.Store.Authenticate(ctx, token)
	if errors.Is(err, ErrBadToken) {
		return "", status.Error(codes.Unauthenticated, "the team token is not valid (revoked, or mistyped)")
	}
	return team, statusOf(err)
}

// Revoked returns a channel closed when the team is revoked.
func (s *Service) Revoked(ctx context.Context, team string) (<-chan struct{}, error) {
	ch, err := s.Store.Revoked(ctx, team)
	return ch, statusOf(err)
}

// statusOf maps the registry's errors to gRPC statuses.
func statusOf(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	code := codes.Unavailable
	switch {
	case errors.Is(err, ErrInvalid):
		code = codes.InvalidArgument
	case errors.Is(err, ErrExists):
		code = codes.AlreadyExists
	case errors.Is(err, ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, ErrForbidden):
		code = codes.PermissionDenied
	case errors.Is(err, ErrBadToken):
		code = codes.Unauthenticated
	}
	return status.Error(code, err.Error())
}

// OwnBot reads a bot name as the caller may give it ("name", "team/name" or "bot:team/name")
// and refuses, with PermissionDenied, one of another team.
func OwnBot(team, given string) (string, error) {
	rest := strings.TrimPrefix(given, AddressPrefix)
	if owner, name, ok := strings.Cut(rest, "/"); ok {
		if owner != team {
			return "", status.Errorf(codes.PermissionDenied, "bot %q belongs to team %q; team %q may change only its own bots", given, owner, team)
		}
		rest = name
	}
	if err := ValidName("bot", rest); err != nil {
		return "", status.Error(codes.InvalidArgument, err.Error())
	}
	return rest, nil
}

func (s *Service) checkGames(names []string) error {
	if s.Game == nil {
		return nil
	}
	for _, n := range names {
		if err := s.Game(n); err != nil {
			return status.Error(codes.InvalidArgument, err.Error())
		}
	}
	return nil
}

// Register registers a bot of team.
func (s *Service) Register(ctx context.Context, team string, req *registryv1.RegisterBotRequest) (*registryv1.Bot, error) {
	name, err := OwnBot(team, req.GetName())
	if err != nil {
		return nil, err
	}
	if err := s.checkGames(req.GetGames()); err != nil {
		return nil, err
	}
	b, err := s.Store.Register(ctx, team, &registryv1.RegisterBotRequest{Name: name, Version: req.GetVersion(), Games: req.GetGames(), Endpoint: req.GetEndpoint()})
	return b, statusOf(err)
}

// Update changes a bot of team (and brings a retired one back).
func (s *Service) Update(ctx context.Context, team string, req *registryv1.UpdateBotRequest) (*registryv1.Bot, error) {
	name, err := OwnBot(team, req.GetName())
	if err != nil {
		return nil, err
	}
	if err := s.checkGames(req.GetGames()); err != nil {
		return nil, err
	}
	if req.GetAnyGame() && len(req.GetGames()) > 0 {
		return nil, status.Error(codes.InvalidArgument, "registry: any_game and games together: give one or the other")
	}
	b, err := s.Store.Update(ctx, team, name, func(b *registryv1.Bot) error {
		if req.Version != nil {
			b.Version = req.GetVersion()
		}
		if len(req.GetGames()) > 0 || req.GetAnyGame() {
			b.Games = req.GetGames()
		}
		if req.Endpoint != nil {
			b.Endpoint = req.GetEndpoint()
		}
		b.Retired = false
		return nil
	})
	return b, statusOf(err)
}

// Retire retires a bot of team.
func (s *Service) Retire(ctx context.Context, team, given string) (*registryv1.Bot, error) {
	name, err := OwnBot(team, given)
	if err != nil {
		return nil, err
	}
	b, err := s.Store.Update(ctx, team, name, func(b *registryv1.Bot) error {
		b.Retired = true
		return nil
	})
	return b, statusOf(err)
}

// List lists the bots of the caller's own team, with their endpoints; asking for another
// team's is PermissionDenied (where a team serves its bots is its business).
func (s *Service) List(ctx context.Context, caller, team string, retired bool) ([]*registryv1.Bot, error) {
	if team != "" && team != caller {
		return nil, status.Errorf(codes.PermissionDenied, "team %q may list only its own bots, not team %q's (everyone's active bots are at GET /api/v1/bots, without endpoints)", caller, team)
	}
	bots, err := s.Store.Bots(ctx, caller, retired)
	if err != nil {
		return nil, statusOf(err)
	}
	s.markConnected(ctx, bots)
	return bots, nil
}

// Public lists the active bots of the teams there are, as anyone may see them to enter them in
// a match: where a bot is served is the organiser's business, so endpoints are left out.
func (s *Service) Public(ctx context.Context) ([]*registryv1.Bot, error) {
	teams, err := s.Store.Teams(ctx)
	if err != nil {
		return nil, statusOf(err)
	}
	current := map[string]bool{}
	for _, t := range teams {
		current[t.Name] = true
	}
	all, err := s.Store.Bots(ctx, "", false)
	if err != nil {
		return nil, statusOf(err)
	}
	var bots []*registryv1.Bot
	for _, b := range all {
		if current[b.GetTeam()] {
			bots = append(bots, b)
		}
	}
	s.markConnected(ctx, bots)
	for _, b := range bots {
		b.Endpoint = ""
	}
	return bots, nil
}

// markConnected fills in Connected of the active dial-out bots (a second at most).
func (s *Service) markConnected(ctx context.Context, bots []*registryv1.Bot) {
	if s.Connected == nil {
		return
	}
	var wg sync.WaitGroup
	pctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	for _, b := range bots {
		if b.GetEndpoint() == EndpointDialOut && !b.GetRetired() {
			wg.Go(func() { b.Connected = s.Connected(pctx, b.GetTeam(), b.GetName()) })
		}
	}
	wg.Wait()
}

// Bot returns a registered bot of team, for the team's own link.
func (s *Service) Bot(ctx context.Context, team, name string) (*registryv1.Bot, error) {
	b, err := s.Store.Bot(ctx, team, name)
	return b, statusOf(err)
}
