package equilibrium_test

import (
	"context"
	"errors"
	"math/big"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/equilibrium"
	"github.com/parley-arena/parley/agents/random"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/gamefile"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/matrix"
	"github.com/parley-arena/parley/referee/games/sequential"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/services/analytics/metrics"
	matrixmetrics "github.com/parley-arena/parley/services/analytics/metrics/matrix"
	seqmetrics "github.com/parley-arena/parley/services/analytics/metrics/sequential"
)

func serve(t testing.TB, a sdk.Agent) agentv1.AgentServiceClient {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := sdk.NewServer(a)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(lis) }()
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		srv.Stop()
		if err := <-done; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
			t.Errorf("serve: %v", err)
		}
	})
	return agentv1.NewAgentServiceClient(conn)
}

// TestPlanMatrix: the pick among several equilibria, and the reasons given.
func TestPlanMatrix(t *testing.T) {
	cases := []struct{ game, want, why string }{
		{"prisoners_dilemma", "defect/defect", "it is the only one"},
		{"stag_hunt", "stag/stag", "it dominates the others"},
		// (opera, opera) and (football, football) both total 3 and differ by 1: the first.
		{"battle_of_the_sexes", "opera/opera", "several remain"},
		// (split, steal) and (steal, split) both total 100 and differ by 100: the first.
		{"golden_balls", "split/steal", "several remain"},
		{"duopoly", "q3/q3", "only one"},
		// Three equilibria, each one volunteer: all total 5 and spread 1, so the first in
		// row-major order (the first player's action changing slowest): Ann volunteers.
		{"volunteer_dilemma", "volunteer/wait/wait", "several remain"},
	}
	for _, tc := range cases {
		f, err := gamefile.Shipped(tc.game)
		if err != nil {
			t.Fatal(err)
		}
		scale, _ := gamefile.Scale(nil, f.Table.GetScaleDefault())
		m, err := gamefile.MatrixOf(f.Table, scale)
		if err != nil {
			t.Fatal(err)
		}
		var labels [][]string
		for _, acts := range gamefile.TableActions(f.Table) {
			var ids []string
			for _, a := range acts {
				ids = append(ids, a.GetId())
			}
			labels = append(labels, ids)
		}
		plan, err := equilibrium.PlanMatrix(m, labels)
		if err != nil {
			t.Fatal(err)
		}
		var picked []string
		for p, a := range plan.Profile {
			picked = append(picked, labels[p][a])
		}
		got := strings.Join(picked, "/")
		if got != tc.want || !strings.Contains(plan.Why, tc.why) {
			t.Errorf("%s: plays %s (%s), want %s (%s)", tc.game, got, plan.Why, tc.want, tc.why)
		}
	}
	f, _ := gamefile.Shipped("rock_paper_scissors")
	m, _ := gamefile.MatrixOf(f.Table, big.NewRat(1, 1))
	plan, err := equilibrium.PlanMatrix(m, [][]string{{"r", "p", "s"}, {"r", "p", "s"}})
	if err != nil || plan.Mixed == nil || plan.Mixed.RowMix[0].Cmp(big.NewRat(1, 3)) != 0 {
		t.Errorf("RPS plan %+v %v", plan, err)
	}
	// Ann and Ben play matching pennies (Ann wins on a match) whatever Cat does, so no
	// profile is stable; Cat gets 0 from c and 1 from d. Worst cases: 0 for both of Ann's and
	// of Ben's actions (the first is kept), 0 for c and 1 for d: the plan is a, a, d.
	one, zero := big.NewRat(1, 1), new(big.Rat)
	cells := []equilibria.Payoffs{
		{one, zero, zero}, {one, zero, one}, // (a, a, c), (a, a, d)
		{zero, one, zero}, {zero, one, one}, // (a, b, c), (a, b, d)
		{zero, one, zero}, {zero, one, one}, // (b, a, c), (b, a, d)
		{one, zero, zero}, {one, zero, one}, // (b, b, c), (b, b, d)
	}
	m3, err := equilibria.NewGame([]int{2, 2, 2}, cells)
	if err != nil {
		t.Fatal(err)
	}
	if len(equilibria.PureNash(m3)) != 0 {
		t.Fatal("the three-player example has a pure equilibrium")
	}
	plan, err = equilibrium.PlanMatrix(m3, [][]string{{"a", "b"}, {"a", "b"}, {"c", "d"}})
	if err != nil || plan.Safest == nil || plan.Safest[0] != 0 || plan.Safest[1] != 0 || plan.Safest[2] != 1 || !strings.Contains(plan.Why, "not computed") {
		t.Errorf("three players without a pure equilibrium: %+v %v", plan, err)
	}
}

// TestSelfPlay: two equilibrium agents play every shipped game (with talk, one of them under
// neutral labels) to a Pareto-optimal equilibrium, or the subgame-perfect path.
func TestSelfPlay(t *testing.T) {
	a := equilibrium.New()
	clients := []agentv1.AgentServiceClient{serve(t, a), serve(t, a), serve(t, a)}
	reg, err := metrics.NewRegistry(matrixmetrics.New(), seqmetrics.New())
	if err != nil {
		t.Fatal(err)
	}
	run := func(g games.Game, kvs ...string) metrics.Row {
		t.Helper()
		gp, err := games.ParseParams(g.Info().GetName(), kvs)
		if err != nil {
			t.Fatal(err)
		}
		gp = gametest.Resolve(t, g, gp)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		seats, _ := games.Seats(g, gp)
		res, err := match.NewRunner(nil).Run(ctx, match.Spec{ID: "eq", Game: g, Params: gp, Seed: 1, Agents: clients[:len(seats)],
			Limits: &matchv1.Limits{MoveTimeout: durationpb.New(10 * time.Second)}})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Outcome.GetFaultedSeats()) > 0 {
			t.Fatalf("%v: %v", kvs, res.Outcome)
		}
		row, err := metrics.NewRow(res.Events, reg)
		if err != nil {
			t.Fatal(err)
		}
		return row
	}
	for _, name := range gamefile.Library(gamefile.KindMatrix) {
		kvs := []string{"game=" + name, "talk_rounds=1"}
		if name == "stag_hunt" {
			kvs = append(kvs, "neutral_labels=true")
		}
		row := run(matrix.New(), kvs...)
		eq, _ := row.Value("equilibrium", metrics.WholeMatch)
		po, _ := row.Value("po_equilibrium", metrics.WholeMatch)
		if name == "rock_paper_scissors" {
			continue // no pure equilibrium: a mixed strategy, any profile
		}
		if eq != 1 || po != 1 {
			t.Errorf("%s: equilibrium %v, Pareto-optimal equilibrium %v", name, eq, po)
		}
	}
	for _, name := range gamefile.Library(gamefile.KindTree) {
		row := run(sequential.New(), "game="+name, "talk_rounds=1")
		if eq, _ := row.Value("equilibrium", metrics.WholeMatch); eq != 1 {
			t.Errorf("%s: not the subgame-perfect path: %v", name, row.Values)
		}
	}
}

// TestPlaysEveryShippedGameLegally: the equilibrium agent and the random agent, mixed in every
// seat order, play every shipped game (two and three players, with talk) without a refused
// move, at the rules' level.
func TestPlaysEveryShippedGameLegally(t *testing.T) {
	type actor interface {
		Act(context.Context, *agentv1.Observation) (*agentv1.Action, error)
	}
	for _, g := range []games.Game{matrix.New(), sequential.New()} {
		kind := gamefile.KindMatrix
		if g.Info().GetName() == sequential.Name {
			kind = gamefile.KindTree
		}
		for _, name := range gamefile.Library(kind) {
			for mask := range 8 {
				gp, err := games.ParseParams(g.Info().GetName(), []string{"game=" + name, "talk_rounds=1"})
				if err != nil {
					t.Fatal(err)
				}
				seats, _ := games.Seats(g, gp)
				st, err := games.Start(g, gp, uint64(mask))
				if err != nil {
					t.Fatal(err)
				}
				agents := make([]actor, len(seats))
				for s := range agents {
					agents[s] = equilibrium.New()
					if mask&(1<<s) != 0 {
						agents[s] = random.New(uint64(mask*10 + s))
					}
				}
				for steps := 0; len(st.ToMove()) > 0; steps++ {
					if steps > 1000 {
						t.Fatalf("%s: no end", name)
					}
					seat := st.ToMove()[0]
					obs := st.Observe(seat)
					obs.MatchId, obs.Attempt = "legal", 1
					act, err := agents[seat].Act(context.Background(), obs)
					if err != nil {
						t.Fatalf("%s seat %d: %v", name, seat, err)
					}
					if _, err := st.Apply(seat, act); err != nil {
						t.Fatalf("%s seat %d (mask %d): %v refused: %v", name, seat, mask, act, err)
					}
				}
				if out := st.Outcome(); len(out.GetPayoffs()) != len(seats) {
					t.Fatalf("%s: outcome %v", name, out)
				}
			}
		}
	}
}
