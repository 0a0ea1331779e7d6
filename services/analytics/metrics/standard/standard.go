// Package standard lists the metrics of every game family Parley ships: the one place a new
// family is registered (one line in New, plus its import).
package standard

import (
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/bargaining"
	"github.com/parley-arena/parley/services/analytics/metrics/coalition"
	"github.com/parley-arena/parley/services/analytics/metrics/dealornodeal"
	"github.com/parley-arena/parley/services/analytics/metrics/deliberation"
	"github.com/parley-arena/parley/services/analytics/metrics/matrix"
	"github.com/parley-arena/parley/services/analytics/metrics/sequential"
)

// New returns a registry of every shipped family's metrics.
func New() *metrics.Registry {
	r, err := metrics.NewRegistry(
		bargaining.New(),
		coalition.New(),
		matrix.New(),
		sequential.New(),
		dealornodeal.New(),
		deliberation.New(),
	)
	if err != nil {
		panic(err) // each shipped game has one family; a duplicate is a programming error
	}
	return r
}
