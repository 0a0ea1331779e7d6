package tokenbudget

import (
	"errors"
	"testing"
)

func TestPerMatch(t *testing.T) {
	for _, tc := range []struct {
		perMatch, tournament int64
		matches              int
		want                 int64
		err                  bool
	}{
		{0, 0, 10, 0, false},
		{500, 0, 10, 500, false},
		{0, 1000, 10, 100, false},
		{50, 1000, 10, 50, false},
		{500, 1000, 10, 100, false},
		{0, 1001, 10, 100, false}, // the remainder is never handed out
		{0, 5, 10, 0, true},
		{-1, 0, 1, 0, true},
	} {
		got, err := PerMatch(tc.perMatch, tc.tournament, tc.matches)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("PerMatch(%d, %d, %d) = %d, %v; want %d, error %v", tc.perMatch, tc.tournament, tc.matches, got, err, tc.want, tc.err)
		}
		if err != nil && !errors.Is(err, ErrBudget) {
			t.Errorf("error %v is not ErrBudget", err)
		}
		// The shares never add up to more than the tournament's budget.
		if tc.tournament > 0 && err == nil && got*int64(tc.matches) > tc.tournament {
			t.Errorf("%d matches of %d exceed %d", tc.matches, got, tc.tournament)
		}
	}
}
