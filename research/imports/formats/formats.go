// Package formats lists the studies whose published runs Parley imports, each with its log
// format and the prefix of its tournaments' ids. Adding a study is adding its entry here.
package formats

import (
	"slices"

	"github.com/parley-arena/parley/research/imports"
	"github.com/parley-arena/parley/research/imports/deliberation"
	"github.com/parley-arena/parley/research/imports/negotiationarena"
)

// Study is one study's import.
type Study struct {
	// Name is the study's name, as research/studies has it; Prefix starts its tournaments' ids.
	Name, Prefix string
	// Format reads its logs.
	Format imports.Format
	// About says in a line what its published runs are, for --help.
	About string
	// Archive is the file of its runs under the shared transcripts' folder of the study, for
	// --help's example.
	Archive string
}

// All returns the studies, by name.
func All() []Study {
	return []Study{
		{Name: negotiationarena.Study, Prefix: "na", Format: negotiationarena.Format{},
			About:   "NegotiationArena's game_state.json logs (resource exchange, ultimatum, buyer/seller)",
			Archive: "section_one.tar.gz"},
		{Name: deliberation.Study, Prefix: "delib", Format: deliberation.Format{},
			About:   "LLM-Deliberation's history*.json runs, with their run and game folders (seed 003's reproduction)",
			Archive: "reproduction.tar.gz"},
	}
}

// Lookup returns the named study.
func Lookup(name string) (Study, bool) {
	all := All()
	i := slices.IndexFunc(all, func(s Study) bool { return s.Name == name })
	if i < 0 {
		return Study{}, false
	}
	return all[i], true
}
