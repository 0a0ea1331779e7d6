package games_test

import (
	"strings"
	"testing"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// namedGame is a game that only has a name.
type namedGame string

func (g namedGame) Info() *gamev1.GameInfo { return &gamev1.GameInfo{Name: string(g)} }
func (g namedGame) Resolve(p *matchv1.GameParams) (*matchv1.GameParams, error) {
	return p, nil
}
func (g namedGame) NewState(*matchv1.GameParams, uint64) (games.State, error) { return nil, nil }

func gameNames(gs []games.Game) []string {
	out := make([]string, len(gs))
	for i, g := range gs {
		out[i] = g.Info().GetName()
	}
	return out
}

func TestNewRegistry(t *testing.T) {
	tests := []struct {
		name    string
		games   []games.Game
		want    []string // sorted names
		wantErr string
	}{
		{name: "none", games: nil, want: []string{}},
		{name: "one", games: []games.Game{namedGame("ultimatum")}, want: []string{"ultimatum"}},
		{name: "sorted by name", games: []games.Game{namedGame("ultimatum"), namedGame("coalition"), namedGame("matrix"), namedGame("deal")},
			want: []string{"coalition", "deal", "matrix", "ultimatum"}},
		{name: "duplicate names", games: []games.Game{namedGame("a"), namedGame("b"), namedGame("a")}, wantErr: `two games named "a"`},
		{name: "empty name", games: []games.Game{namedGame("a"), namedGame("")}, wantErr: "a game has no name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := games.NewRegistry(tc.games...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("NewRegistry error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewRegistry: %v", err)
			}
			if got := gameNames(r.Games()); strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("Games() = %q, want %q", got, tc.want)
			}
			for _, n := range tc.want {
				g, err := r.Lookup(n)
				if err != nil || g.Info().GetName() != n {
					t.Errorf("Lookup(%q) = %v, %v", n, g, err)
				}
			}
		})
	}
}

func TestRegistryLookupUnknown(t *testing.T) {
	r, err := games.NewRegistry(namedGame("ultimatum"), namedGame("coalition"), namedGame("deal"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		lookup string
	}{
		{"unknown", "chess"},
		{"empty", ""},
		{"case matters", "Ultimatum"},
		{"prefix", "ult"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := r.Lookup(tc.lookup)
			if err == nil {
				t.Fatalf("Lookup(%q) = %v, want an error", tc.lookup, g)
			}
			want := `unknown game "` + tc.lookup + `" (known: coalition, deal, ultimatum)`
			if err.Error() != want {
				t.Errorf("Lookup(%q) error = %q, want %q", tc.lookup, err, want)
			}
		})
	}
}
