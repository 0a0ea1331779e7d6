package gamefile

import (
	"embed"
	"fmt"
	"path"
	"sort"
	"strings"
)

// library holds the shipped games, one file per game named NAME.yaml.
//
//go:embed library/*.yaml
var library embed.FS

// Library returns the names of the shipped games of kind (any kind when empty), sorted.
func Library(kind Kind) []string {
	entries, err := library.ReadDir("library")
	if err != nil {
		panic(err) // embedded at build time
	}
	var out []string
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".yaml")
		if kind != "" {
			f, err := Shipped(name)
			if err != nil || f.Kind != kind {
				continue
			}
		}
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// ShippedSource returns the file of the shipped game called name, as written.
func ShippedSource(name string) ([]byte, error) {
	if name == "" || strings.ContainsAny(name, "/\\.") {
		return nil, fmt.Errorf("no shipped game %q (shipped: %s)", name, strings.Join(Library(""), ", "))
	}
	b, err := library.ReadFile(path.Join("library", name+".yaml"))
	if err != nil {
		return nil, fmt.Errorf("no shipped game %q (shipped: %s)", name, strings.Join(Library(""), ", "))
	}
	return b, nil
}

// Shipped returns the shipped game called name.
func Shipped(name string) (*File, error) {
	b, err := ShippedSource(name)
	if err != nil {
		return nil, err
	}
	f, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("shipped game %s: %w", name, err)
	}
	return f, nil
}
