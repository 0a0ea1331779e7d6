// Package families lists every game family Parley ships. Adding a game family means adding it here.
package families

import (
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/referee/games/coalition"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/referee/games/matrix"
	"github.com/parley-arena/parley/referee/games/sequential"
	"github.com/parley-arena/parley/referee/games/trading"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// New returns a registry of every shipped game.
func New() *games.Registry {
	r, err := games.NewRegistry(
		buysell.New(),
		trading.New(),
		coalition.New(),
		deliberation.New(),
		ultimatum.New(),
		matrix.New(),
		sequential.New(),
		dealornodeal.New(),
	)
	if err != nil {
		panic(err) // the shipped games have unique names; a duplicate is a programming error
	}
	return r
}
