package reproduce

import (
	"strings"
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

// TestHeaderNamesTheModelsUsed: the header lists the paper's models that the chosen tables'
// set-ups seat (each one an entrant of some set-up, every model entrant among them), and none
// for tables that need no model (deliberation's Table 4 listed ten models as "(none)").
func TestHeaderNamesTheModelsUsed(t *testing.T) {
	for _, tc := range []struct{ study, table string }{
		{"deliberation", "4"}, {"deliberation", "5"}, {"negotiationarena", "Figure 9 (text)"}, {"gametheory", "5"},
	} {
		study, err := studies.Load(tc.study)
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(study, Options{Models: []string{"m"}, BaseURL: "http://127.0.0.1:1/v1", NoCache: true, Games: 1, ID: "t", Tables: []string{tc.table}}, families.New())
		if err != nil {
			t.Fatal(err)
		}
		seated := map[string]bool{}
		for _, r := range p.Runs {
			for _, e := range r.Spec.GetEntrants() {
				if strings.HasPrefix(e.GetAddress(), "builtin:llm?") {
					seated[strings.SplitN(e.GetLabel(), "/", 2)[0]] = true
				}
			}
		}
		var b strings.Builder
		p.WriteHeader(&b)
		header := strings.Split(b.String(), "\n")[1]
		for _, s := range study.Slots {
			if listed := strings.Contains(header, s+" = "); listed != seated[s] {
				t.Errorf("%s %s: %s listed %v, seated %v: %s", tc.study, tc.table, s, listed, seated[s], header)
			}
		}
		if len(seated) == 0 && !strings.Contains(header, "none") {
			t.Errorf("%s %s needs no model, header %q", tc.study, tc.table, header)
		}
	}
}
