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
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/gamefile"
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
		var labels [2][]string
		for _, a := range f.Table.GetRows() {
			labels[0] = append(labels[0], a.GetId())
		}
		for _, a := range f.Table.GetCols() {
			labels[1] = append(labels[1], a.GetId())
		}
		plan, err := equilibrium.PlanMatrix(m, labels)
		if err != nil {
			t.Fatal(err)
		}
		got := labels[0][plan.Profile.Row] + "/" + labels[1][plan.Profile.Col]
		if got != tc.want || !strings.Contains(plan.Why, tc.why) {
			t.Errorf("%s: plays %s (%s), want %s (%s)", tc.game, got, plan.Why, tc.want, tc.why)
		}
	}
	f, _ := gamefile.Shipped("rock_paper_scissors")
	m, _ := gamefile.MatrixOf(f.Table, big.NewRat(1, 1))
	plan, err := equilibrium.PlanMatrix(m, [2][]string{{"r", "p", "s"}, {"r", "p", "s"}})
	if err != nil || plan.Mixed == nil || plan.Mixed.RowMix[0].Cmp(big.NewRat(1, 3)) != 0 {
		t.Errorf("RPS plan %+v %v", plan, err)
	}
}

// TestSelfPlay: two equilibrium agents play every shipped game (with talk, one of them under
// neutral labels) to a Pareto-optimal equilibrium, or the subgame-perfect path.
func TestSelfPlay(t *testing.T) {
	a := equilibrium.New()
	clients := []agentv1.AgentServiceClient{serve(t, a), serve(t, a)}
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
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := match.NewRunner(nil).Run(ctx, match.Spec{ID: "eq", Game: g, Params: gp, Seed: 1, Agents: clients,
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
