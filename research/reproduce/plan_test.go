package reproduce

import (
	"testing"
	"time"

	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/research/studies"
)

// TestMoveTimeoutReachesEverySetUp: every set-up's tournament gives its models the move
// timeout asked for, and without one the hosted-model default (not the referee's 10 s).
func TestMoveTimeoutReachesEverySetUp(t *testing.T) {
	study, err := studies.Load("negotiationarena")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		asked, want time.Duration
	}{{0, 2 * time.Minute}, {90 * time.Second, 90 * time.Second}} {
		p, err := NewPlan(study, Options{Models: []string{"m"}, BaseURL: "http://127.0.0.1:1/v1", NoCache: true, Games: 1, ID: "t", MoveTimeout: tc.asked}, families.New())
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Runs) == 0 {
			t.Fatal("no set-up planned")
		}
		for _, r := range p.Runs {
			if got := r.Spec.GetLimits().GetMoveTimeout().AsDuration(); got != tc.want {
				t.Errorf("asked %s: %s moves have %s; want %s", tc.asked, r.Spec.GetTournamentId(), got, tc.want)
			}
		}
	}
}
