package games

import (
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// ReadFile reads a file named in a game's parameters. Hosts pass os.ReadFile (or a reader
// confined to a directory); rules never read files themselves.
type ReadFile func(name string) ([]byte, error)

// Loader is implemented by games whose parameters may name files: a game given as data in a
// user's file, a corpus of set-ups to draw from. The program that starts a match (`parley
// play`) calls Load with the parsed parameters, the match seed and a ReadFile before Resolve;
// Load returns parameters that hold the files' content (and say where it came from), so that
// the rules stay pure and the record is self-contained. Parameters that name no file come back
// unchanged. A host that does not call Load (the referee's gRPC API) gets an error from
// Resolve for parameters that still name a file.
type Loader interface {
	Load(params *matchv1.GameParams, seed uint64, read ReadFile) (*matchv1.GameParams, error)
}
