package concession_test

import (
	"testing"

	"github.com/parley-arena/parley/agents/concession"
)

func TestAt(t *testing.T) {
	tests := []struct {
		curve concession.Curve
		k, n  int
		want  float64
	}{
		{concession.Linear, 0, 5, 0},
		{concession.Linear, 2, 5, 0.5},
		{concession.Linear, 4, 5, 1},
		{concession.Linear, 7, 5, 1}, // past the last proposal it stays at the target
		{concession.Linear, 0, 1, 0}, // a single proposal is the opening
		{concession.Boulware, 2, 5, 0.125},
		{concession.Boulware, 3, 5, 0.421875},
		{concession.Boulware, 4, 5, 1},
	}
	for _, tc := range tests {
		if got := tc.curve.At(tc.k, tc.n); got != tc.want {
			t.Errorf("%s.At(%d, %d) = %g, want %g", tc.curve, tc.k, tc.n, got, tc.want)
		}
	}
	if err := concession.Curve("steep").Validate(); err == nil {
		t.Error("an unknown curve is accepted")
	}
}
