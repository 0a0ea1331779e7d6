package games

import (
	"fmt"
	"sort"
	"strings"
)

// Registry is a set of games by name.
type Registry struct {
	byName map[string]Game
	names  []string
}

// NewRegistry returns a registry of the given games. Names must be unique and non-empty.
func NewRegistry(gs ...Game) (*Registry, error) {
	r := &Registry{byName: make(map[string]Game, len(gs))}
	for _, g := range gs {
		name := g.Info().GetName()
		if name == "" {
			return nil, fmt.Errorf("games: a game has no name")
		}
		if _, dup := r.byName[name]; dup {
			return nil, fmt.Errorf("games: two games named %q", name)
		}
		r.byName[name] = g
		r.names = append(r.names, name)
	}
	sort.Strings(r.names)
	return r, nil
}

// Lookup returns the game with the given name, or an error listing the known names.
func (r *Registry) Lookup(name string) (Game, error) {
	if g, ok := r.byName[name]; ok {
		return g, nil
	}
	return nil, fmt.Errorf("unknown game %q (known: %s)", name, strings.Join(r.names, ", "))
}

// Games returns every game, sorted by name.
func (r *Registry) Games() []Game {
	out := make([]Game, len(r.names))
	for i, n := range r.names {
		out[i] = r.byName[n]
	}
	return out
}
