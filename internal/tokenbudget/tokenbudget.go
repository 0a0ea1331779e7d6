// Package tokenbudget turns the token budgets a person gives (per match, per tournament) into
// the budget each match is run with (matchv1.Limits.token_budget).
//
// A tournament's budget is split evenly over its matches, before any is played: every match
// may spend at most its share (or the per-match budget, when that is smaller). So the total
// can never pass the tournament's budget, and no match's conditions depend on what the
// others spent or on the order referees happened to run them in, which keeps each match
// reproducible on its own. The price is that a share a match leaves unspent is not passed on.
package tokenbudget

import (
	"errors"
	"fmt"
)

// ErrBudget is wrapped by errors about budgets.
var ErrBudget = errors.New("token budget")

// PerMatch is the token budget of each of matches matches given a per-match budget and a
// tournament budget (0 for none of either). 0 means no budget. A tournament budget too small
// to give every match a token is an error.
func PerMatch(perMatch, tournament int64, matches int) (int64, error) {
	switch {
	case perMatch < 0 || tournament < 0:
		return 0, fmt.Errorf("%w: a budget must be 0 (none) or more", ErrBudget)
	case tournament == 0:
		return perMatch, nil
	case matches < 1:
		return perMatch, nil
	}
	share := tournament / int64(matches)
	if share < 1 {
		return 0, fmt.Errorf("%w: %d tokens cannot be shared among %d matches", ErrBudget, tournament, matches)
	}
	if perMatch > 0 {
		return min(perMatch, share), nil
	}
	return share, nil
}
