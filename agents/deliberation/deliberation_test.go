package deliberation_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	agent "github.com/parley-arena/parley/agents/deliberation"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	rules "github.com/parley-arena/parley/referee/games/deliberation"
	"google.golang.org/protobuf/proto"
)

func resolved(t testing.TB, game string) *matchv1.GameParams {
	t.Helper()
	p, err := rules.New().Resolve(&matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{Game: proto.String(game)}}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func newAgent(t testing.TB, cfg agent.Config) *agent.Agent {
	t.Helper()
	a, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// result is how one match ended.
type result struct {
	passed, unanimous bool
	refused           int
}

// playMatch plays a match between agents (one per seat) directly on the rules.
func playMatch(t testing.TB, p *matchv1.GameParams, seed uint64, agents []*agent.Agent) (result, games.State) {
	t.Helper()
	st, err := games.Start(rules.New(), p, seed)
	if err != nil {
		t.Fatal(err)
	}
	var res result
	for steps := 0; len(st.ToMove()) > 0; steps++ {
		if steps > 1000 {
			t.Fatal("match does not end")
		}
		seat := st.ToMove()[0]
		a, err := agents[seat].Act(context.Background(), st.Observe(seat))
		if err != nil {
			t.Fatalf("seat %d: %v", seat, err)
		}
		events, err := st.Apply(seat, a)
		if err != nil {
			t.Fatalf("seat %d's action %v refused: %v", seat, a, err)
		}
		for _, ev := range events {
			if r := ev.GetProposalResolved(); r != nil {
				res.passed = r.GetAccepted()
				res.unanimous = r.GetAccepted() && len(r.GetRejectedBy()) == 0
			}
		}
	}
	return res, st
}

// setting is one assignment of roles to seats.
type setting struct {
	name string
	cfgs func(n int) []agent.Config
}

func all(role agent.Role) func(int) []agent.Config {
	return func(n int) []agent.Config {
		out := make([]agent.Config, n)
		for i := range out {
			out[i] = agent.Config{Role: role}
		}
		return out
	}
}

// with is every seat cooperative but the given ones.
func with(seats map[int]agent.Config) func(int) []agent.Config {
	return func(n int) []agent.Config {
		out := all(agent.Cooperative)(n)
		for s, c := range seats {
			out[s] = c
		}
		return out
	}
}

// settings are those the package documentation reports on: seat 5 is the adversary (the
// Environmental League in base), seat 4 its target (the Local Labour Union in base).
func settings(target string) []setting {
	return []setting{
		{"cooperative", all(agent.Cooperative)},
		{"p1 greedy", with(map[int]agent.Config{0: {Role: agent.Greedy}})},
		{"all greedy", all(agent.Greedy)},
		{"untargeted adversary", with(map[int]agent.Config{5: {Role: agent.Adversarial}})},
		{"targeted adversary", with(map[int]agent.Config{5: {Role: agent.Adversarial, Target: target}})},
	}
}

// targets names seat 4 of each shipped game.
var targets = map[string]string{"base": "union", "game1": "community", "game2": "ngo", "game3": "france"}

// TestRates plays every setting on every shipped game over a range of seeds and logs how often
// the final deal passes (5-way) and passes unanimously (6-way). Set PARLEY_DELIBERATION_SEEDS to
// play more seeds (the package documentation quotes 100).
func TestRates(t *testing.T) {
	seeds := 10
	if raceEnabled || testing.Short() {
		seeds = 2
	}
	if v := os.Getenv("PARLEY_DELIBERATION_SEEDS"); v != "" {
		seeds, _ = strconv.Atoi(v)
	}
	var report strings.Builder
	for _, game := range rules.ShippedNames() {
		p := resolved(t, game)
		for _, set := range settings(targets[game]) {
			cfgs := set.cfgs(6)
			agents := make([]*agent.Agent, len(cfgs))
			for i, c := range cfgs {
				agents[i] = newAgent(t, c)
			}
			var five, six int
			for seed := range uint64(seeds) {
				res, _ := playMatch(t, p, seed+1, agents)
				if res.passed {
					five++
				}
				if res.unanimous {
					six++
				}
			}
			fmt.Fprintf(&report, "%-6s %-21s 5-way %3d/%d  6-way %3d/%d\n", game, set.name, five, seeds, six, seeds)
		}
	}
	t.Logf("\n%s", report.String())
}

// TestConfig checks the settings' validation and the agents' descriptions.
func TestConfig(t *testing.T) {
	bad := []struct {
		cfg  agent.Config
		want string
	}{
		{agent.Config{Role: "mediator"}, "role must be cooperative, greedy or adversarial"},
		{agent.Config{Belief: 1.5}, "belief must be above 0 and at most 1"},
		{agent.Config{Role: agent.Greedy, Floor: -0.1}, "floor must be from 0 to 1"},
		{agent.Config{Role: agent.Cooperative, Target: "union"}, "only an adversary takes a target"},
	}
	for _, tc := range bad {
		if _, err := agent.New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.cfg, err, tc.want)
		}
	}
	for _, role := range agent.Roles() {
		info := newAgent(t, agent.Config{Role: role}).Describe()
		if info.GetName() != string(role) || info.GetDescription() == "" || info.GetGames()[0] != rules.Name {
			t.Errorf("Describe(%s) = %v", role, info)
		}
	}
}

// TestErrors: another game's observation, and a target that is no party, are errors.
func TestErrors(t *testing.T) {
	a := newAgent(t, agent.Config{})
	if _, err := a.Act(context.Background(), &agentv1.Observation{Game: "ultimatum"}); err == nil {
		t.Error("played another game")
	}
	st, err := rules.New().NewState(resolved(t, "base"), 1)
	if err != nil {
		t.Fatal(err)
	}
	adv := newAgent(t, agent.Config{Role: agent.Adversarial, Target: "nobody"})
	if _, err := adv.Act(context.Background(), st.Observe(0)); err == nil || !strings.Contains(err.Error(), `target "nobody" is no other party`) {
		t.Errorf("unknown target: %v", err)
	}
}

// TestNoNumbersInPublic: the agents' messages never state a number of their own sheet (the
// rule-based leak judge's test would flag none), and the same observation gives the same
// action.
func TestNoNumbersInPublic(t *testing.T) {
	for _, game := range rules.ShippedNames() {
		p := resolved(t, game)
		s, _ := rules.NewSetup(p)
		agents := []*agent.Agent{
			newAgent(t, agent.Config{Role: agent.Greedy}), newAgent(t, agent.Config{}), newAgent(t, agent.Config{}),
			newAgent(t, agent.Config{}), newAgent(t, agent.Config{Role: agent.Adversarial, Target: "p2"}), newAgent(t, agent.Config{Role: agent.Adversarial}),
		}
		_, st := playMatch(t, p, 9, agents)
		for _, stmt := range st.Observe(0).GetDeliberation().GetStatements() {
			text := stmt.GetText()
			var names []string // option names and ids, longest first ("250 ha" before "50 ha")
			for _, is := range s.Issues {
				for k, o := range is.Options {
					names = append(names, is.OptionID(k), o)
				}
			}
			slices.SortFunc(names, func(a, b string) int { return len(b) - len(a) })
			for _, n := range names {
				text = strings.ReplaceAll(text, n, "")
			}
			if strings.ContainsAny(text, "0123456789") {
				t.Errorf("%s: turn %d: a number in %q", game, stmt.GetTurn(), stmt.GetText())
			}
		}
	}
	st, _ := rules.New().NewState(resolved(t, "game1"), 4)
	obs := st.Observe(0)
	a := newAgent(t, agent.Config{})
	x, _ := a.Act(context.Background(), obs)
	y, _ := a.Act(context.Background(), obs)
	if !proto.Equal(x, y) {
		t.Error("the same observation gave two actions")
	}
}
