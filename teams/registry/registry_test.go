package registry_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/teams/registry"
)

func open(t *testing.T) (*registry.Store, *bus.Bus) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	s, err := registry.Open(ctx, b.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

func TestTeamsKeepOnlyTokenHashes(t *testing.T) {
	s, b := open(t)
	ctx := context.Background()
	if teams, err := s.Teams(ctx); err != nil || len(teams) != 0 {
		t.Fatalf("empty registry: %v %v", teams, err)
	}
	red, err := s.AddTeam(ctx, "red")
	if err != nil {
		t.Fatal(err)
	}
	blue, err := s.AddTeam(ctx, "blue")
	if err != nil {
		t.Fatal(err)
	}
	if red == blue || len(red) < 40 {
		t.Fatalf("tokens %q %q", red, blue)
	}
	if _, err := s.AddTeam(ctx, "red"); !errors.Is(err, registry.ErrExists) {
		t.Errorf("second red: %v", err)
	}
	if _, err := s.AddTeam(ctx, "Red Team"); !errors.Is(err, registry.ErrInvalid) {
		t.Errorf("bad name: %v", err)
	}
	// What is stored says nothing of the token itself.
	kv, err := b.JetStream().KeyValue(ctx, natsname.TeamsBucket)
	if err != nil {
		t.Fatal(err)
	}
	e, err := kv.Get(ctx, "red")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(e.Value()), red) || strings.Contains(string(e.Value()), strings.TrimPrefix(red, "pt_")) {
		t.Fatalf("the token is stored: %s", e.Value())
	}
	for token, want := range map[string]string{red: "red", blue: "blue"} {
		if got, err := s.Authenticate(ctx, token); err != nil || got != want {
			t.Errorf("authenticate %s: %q %v", want, got, err)
		}
	}
	for _, bad := range []string{"", red + "x", red[:len(red)-1], "pt_", strings.ToUpper(red)} {
		if _, err := s.Authenticate(ctx, bad); !errors.Is(err, registry.ErrBadToken) {
			t.Errorf("authenticate %q: %v", bad, err)
		}
	}
	if err := s.RevokeTeam(ctx, "red"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, red); !errors.Is(err, registry.ErrBadToken) {
		t.Errorf("revoked token: %v", err)
	}
	if err := s.RevokeTeam(ctx, "red"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("revoke twice: %v", err)
	}

	// The index from token hash to team holds no token, forgets a revoked team, and cannot
	// vouch for a token on its own: the team's own stored hash must match too.
	tokens, err := b.JetStream().KeyValue(ctx, natsname.TokensBucket)
	if err != nil {
		t.Fatal(err)
	}
	hashOf := func(token string) string { sum := sha256.Sum256([]byte(token)); return hex.EncodeToString(sum[:]) }
	if _, err := tokens.Get(ctx, hashOf(red)); err == nil {
		t.Error("the revoked team's token is still indexed")
	}
	if e, err := tokens.Get(ctx, hashOf(blue)); err != nil || string(e.Value()) != "blue" || strings.Contains(string(e.Value()), blue) {
		t.Errorf("blue's index entry: %v", err)
	}
	forged := "pt_" + strings.Repeat("A", 43)
	if _, err := tokens.Put(ctx, hashOf(forged), []byte("blue")); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Authenticate(ctx, forged); !errors.Is(err, registry.ErrBadToken) {
		t.Errorf("a token indexed to blue but not blue's: %q %v", got, err)
	}
}

func TestBotsRegisterUpdateRetire(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	b, err := s.Register(ctx, "red", &registryv1.RegisterBotRequest{Name: "alpha", Version: "1", Games: []string{"ultimatum"}, Endpoint: "dialout"})
	if err != nil || b.GetAddress() != "bot:red/alpha" || registry.Label(b) != "red/alpha@1" {
		t.Fatalf("register: %v %v", b, err)
	}
	if _, err := s.Register(ctx, "red", &registryv1.RegisterBotRequest{Name: "alpha", Version: "2", Games: []string{"ultimatum"}, Endpoint: "dialout"}); !errors.Is(err, registry.ErrExists) {
		t.Errorf("register twice: %v", err)
	}
	if _, err := s.Update(ctx, "red", "alpha", func(b *registryv1.Bot) error { b.Retired = true; return nil }); err != nil {
		t.Fatal(err)
	}
	// A retired name may be registered again.
	if _, err := s.Register(ctx, "red", &registryv1.RegisterBotRequest{Name: "alpha", Version: "3", Games: []string{"ultimatum"}, Endpoint: "grpc://10.0.0.1:50051"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Register(ctx, "blue", &registryv1.RegisterBotRequest{Name: "alpha", Version: "1", Games: []string{"ultimatum"}, Endpoint: "dialout"}); err != nil {
		t.Fatal(err)
	}
	all, err := s.Bots(ctx, "", false)
	if err != nil || len(all) != 2 || all[0].GetTeam() != "blue" || all[1].GetVersion() != "3" {
		t.Fatalf("bots: %v %v", all, err)
	}
	reds, err := s.Bots(ctx, "red", true)
	if err != nil || len(reds) != 1 {
		t.Fatalf("red's bots: %v %v", reds, err)
	}
	for _, ep := range []string{"grpc://", "grpc://host", "http://x:1", "grpc://:80", "dial-out", "grpc://h:99999"} {
		if err := registry.CheckEndpoint(ep); !errors.Is(err, registry.ErrInvalid) {
			t.Errorf("endpoint %q accepted", ep)
		}
	}
	if _, err := s.Update(ctx, "red", "nobody", func(*registryv1.Bot) error { return nil }); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("update a missing bot: %v", err)
	}
}

// A bot registered with no games plays any game, as an empty AgentInfo.games says; an update
// names games, or goes back to any game, never both at once; unknown games are refused.
func TestNoGamesMeansAny(t *testing.T) {
	s, _ := open(t)
	ctx := context.Background()
	known := map[string]bool{"ultimatum": true, "matrix": true}
	svc := &registry.Service{Store: s, Game: func(name string) error {
		if !known[name] {
			return errors.New("no game " + name)
		}
		return nil
	}}
	b, err := svc.Register(ctx, "red", &registryv1.RegisterBotRequest{Name: "anything", Version: "1", Endpoint: "dialout"})
	if err != nil || len(b.GetGames()) != 0 {
		t.Fatalf("register with no games: %v %v", b, err)
	}
	if _, err := svc.Register(ctx, "red", &registryv1.RegisterBotRequest{Name: "chess", Version: "1", Games: []string{"chess"}, Endpoint: "dialout"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("register for an unknown game: %v", err)
	}
	b, err = svc.Update(ctx, "red", &registryv1.UpdateBotRequest{Name: "anything", Games: []string{"matrix"}})
	if err != nil || !slices.Equal(b.GetGames(), []string{"matrix"}) {
		t.Fatalf("update to matrix: %v %v", b, err)
	}
	if _, err := svc.Update(ctx, "red", &registryv1.UpdateBotRequest{Name: "anything", Games: []string{"ultimatum"}, AnyGame: true}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("games and any_game together: %v", err)
	}
	version := "2"
	b, err = svc.Update(ctx, "red", &registryv1.UpdateBotRequest{Name: "anything", Version: &version})
	if err != nil || !slices.Equal(b.GetGames(), []string{"matrix"}) {
		t.Fatalf("an update that names no games keeps them: %v %v", b, err)
	}
	b, err = svc.Update(ctx, "red", &registryv1.UpdateBotRequest{Name: "anything", AnyGame: true})
	if err != nil || len(b.GetGames()) != 0 {
		t.Fatalf("update to any game: %v %v", b, err)
	}
	if stored, err := s.Bot(ctx, "red", "anything"); err != nil || len(stored.GetGames()) != 0 || stored.GetVersion() != "2" {
		t.Errorf("stored: %v %v", stored, err)
	}
}
