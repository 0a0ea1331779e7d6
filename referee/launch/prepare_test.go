package launch_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
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
