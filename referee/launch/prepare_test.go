package launch_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/policy"
)

// brittle is a game whose rules panic while resolving parameters.
type brittle struct{ games.Game }

func (brittle) Info() *gamev1.GameInfo {
	return &gamev1.GameInfo{Name: "brittle", Seats: []string{"P1", "P2"}}
}

func (brittle) Resolve(*matchv1.GameParams) (*matchv1.GameParams, error) {
	panic("brittle: resolve failed")
}

// A panic in the rules while a request is prepared is a refusal that names it, from every
// door: the server that was asked keeps serving.
func TestPrepareRefusesRulesThatPanic(t *testing.T) {
	reg, err := games.NewRegistry(brittle{})
	if err != nil {
		t.Fatal(err)
	}
	prep := &launch.Preparer{Games: reg, Agents: &agentconn.Resolver{}, NoProbe: true}
	_, err = prep.Prepare(context.Background(), launch.Request{Game: "brittle", Agents: []string{"builtin:a", "builtin:b"}})
	if !errors.Is(err, launch.ErrInvalid) || !strings.Contains(err.Error(), "brittle: resolve failed") {
		t.Fatalf("Prepare = %v, want ErrInvalid naming the panic", err)
	}
}

// A queued request is reopened as it was prepared: the same parameters, seed, agents, labels,
// limits and time bound, under the id it is recorded as.
func TestReopenKeepsThePreparedMatch(t *testing.T) {
	prep := &launch.Preparer{Games: families.New()}
	params, err := games.ParseParams("ultimatum", []string{"total=40", "max_turns=3"})
	if err != nil {
		t.Fatal(err)
	}
	m, err := prep.Setup(launch.Request{
		Game: "ultimatum", Params: params, Agents: []string{"builtin:fair", "builtin:spe"}, Labels: []string{"a", "b"},
		Seed: 9, SeedGiven: true, MatchID: "m-1", TournamentID: "t",
	})
	if err != nil {
		t.Fatal(err)
	}
	back, err := launch.Reopen(families.New(), m.Request(), "m-1-r1")
	if err != nil {
		t.Fatal(err)
	}
	if back.ID != "m-1-r1" || back.Seed != 9 || back.TournamentID != "t" || strings.Join(back.Labels, ",") != "a,b" ||
		strings.Join(back.Agents, ",") != "builtin:fair,builtin:spe" || strings.Join(back.Seats, ",") != strings.Join(m.Seats, ",") {
		t.Errorf("reopened %+v, prepared %+v", back, m)
	}
	if got := back.Params.GetUltimatum(); got.GetTotal() != 40 || got.GetMaxTurns() != 3 {
		t.Errorf("reopened params %v, want total 40 and max_turns 3 as prepared", back.Params)
	}
	if back.Limits.GetMoveTimeout().AsDuration() != m.Limits.GetMoveTimeout().AsDuration() {
		t.Errorf("reopened limits %v, prepared %v", back.Limits, m.Limits)
	}
	// A request that does not fill its game's seats is refused, not played.
	req := m.Request()
	req.Agents = req.Agents[:1]
	if _, err := launch.Reopen(families.New(), req, "m-2"); !errors.Is(err, launch.ErrInvalid) {
		t.Errorf("Reopen with one agent for two seats = %v, want ErrInvalid", err)
	}
}

// people seats anyone at any human address; Prepare never opens them.
type people struct{}

func (people) Open(context.Context, string) (*agentconn.Local, error) {
	return nil, errors.New("not opened in these tests")
}
func (people) Check(string) error { return nil }

// TestHumanMoveTime: a match with a person in a seat gets the time for people whenever its
// request sets no move timeout — the policy's, else the default — and what the request sets
// otherwise; a match of programs gets the runner's default.
func TestHumanMoveTime(t *testing.T) {
	organiser := policy.Default()
	organiser.HumanMoveTimeout = 7 * time.Minute
	for _, tc := range []struct {
		name   string
		policy *policy.Policy
		agents []string
		limits *matchv1.Limits
		want   time.Duration
	}{
		{"a person, no policy", nil, []string{"human:ann", "human"}, nil, 2 * time.Minute},
		{"a person, the policy's time", &organiser, []string{"human:ann", "human"}, &matchv1.Limits{}, 7 * time.Minute},
		{"a person, a time asked for", &organiser, []string{"human:ann", "human"}, &matchv1.Limits{MoveTimeout: durationpb.New(30 * time.Second)}, 30 * time.Second},
		{"no person", &organiser, []string{"builtin:fair", "builtin:fair"}, nil, match.DefaultMoveTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &launch.Preparer{Games: families.New(), Agents: &agentconn.Resolver{Humans: people{}, Builtins: people{}}, NoProbe: true, Policy: tc.policy}
			m, err := p.Prepare(context.Background(), launch.Request{Game: "ultimatum", Agents: tc.agents, Limits: tc.limits, Caller: policy.Caller{Role: policy.Organiser}})
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Limits.GetMoveTimeout().AsDuration(); got != tc.want {
				t.Errorf("move timeout %s, want %s", got, tc.want)
			}
		})
	}
}
