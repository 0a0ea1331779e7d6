package bayes_test

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/bayes"
	"github.com/parley-arena/parley/agents/dondgreedy"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	dondv1 "github.com/parley-arena/parley/gen/go/parley/games/dealornodeal/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/dealornodeal/corpus"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/services/analytics/metrics"
	dondmetrics "github.com/parley-arena/parley/services/analytics/metrics/dealornodeal"
)

// serve serves a over gRPC on a loopback port until the test ends.
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

// datapoints are the sample corpus's set-ups, plus the seed's hardest datapoints that have an
// envy-free allocation (data/dealornodeal; the first 12 under -short).
func datapoints(t *testing.T) []corpus.Datapoint {
	t.Helper()
	b, err := os.ReadFile("../../referee/games/dealornodeal/corpus/testdata/sample_tagged.txt")
	if err != nil {
		t.Fatal(err)
	}
	c, err := corpus.Parse("sample_tagged.txt", b)
	if err != nil {
		t.Fatal(err)
	}
	points := c.Datapoints()
	b, err = os.ReadFile(repodata.Path(t, "dealornodeal", "sampled_50_deal_no_deal.txt"))
	if err != nil {
		t.Fatal(err)
	}
	hard, err := corpus.Parse("sampled_50_deal_no_deal.txt", b)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range hard.Datapoints() {
		if !p.Game.HasEF() {
			continue
		}
		if testing.Short() && n == 12 {
			break
		}
		points = append(points, p)
		n++
	}
	return points
}

// play runs one match per datapoint between two agents over gRPC and returns each match's
// metric values from its record.
func play(t *testing.T, points []corpus.Datapoint, alice, bob sdk.Agent) [][]metrics.Value {
	t.Helper()
	clients := []agentv1.AgentServiceClient{serve(t, alice), serve(t, bob)}
	reg, err := metrics.NewRegistry(dondmetrics.New())
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]metrics.Value
	for i, p := range points {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		res, err := match.NewRunner(nil).Run(ctx, match.Spec{
			ID: "bayes-test", Game: dealornodeal.New(), Seed: uint64(i), Agents: clients,
			Params: gametest.Resolve(t, dealornodeal.New(), &matchv1.GameParams{Family: &matchv1.GameParams_Dealornodeal{Dealornodeal: &dondv1.Params{
				Counts: int64s(p.Game.Counts), AliceValues: int64s(p.Game.Values[0]), BobValues: int64s(p.Game.Values[1]),
				Source: proto.String(p.Source),
			}}}),
			Limits: &matchv1.Limits{MoveTimeout: durationpb.New(20 * time.Second)},
		})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if n := len(res.Outcome.GetFaultedSeats()); n > 0 {
			t.Fatalf("%s: faults %v", p.Source, res.Outcome)
		}
		row, err := metrics.NewRow(res.Events, reg)
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, row.Values)
	}
	return rows
}

func int64s(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

func value(vals []metrics.Value, name string, seat int32) (float64, bool) {
	for _, v := range vals {
		if v.Name == name && v.Seat == seat {
			return v.Value, true
		}
	}
	return 0, false
}

// TestBayesVsBayes: two bayes agents reach agreement on every datapoint, and the estimation
// metrics, computed from the belief supports in the record, are there for both seats and
// shrink the support.
func TestBayesVsBayes(t *testing.T) {
	points := datapoints(t)
	a, err := bayes.New(bayes.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	rows := play(t, points, a, a)
	for i, vals := range rows {
		if ag, _ := value(vals, metrics.ValueAgreement, metrics.WholeMatch); ag != 1 {
			t.Errorf("%s: no agreement", points[i].Source)
		}
		if ef, _ := value(vals, dondmetrics.ValueEF, metrics.WholeMatch); points[i].Game.HasEF() && ef != 1 {
			t.Errorf("%s: the deal is not envy-free", points[i].Source)
		}
		for seat := range int32(2) {
			if _, ok := value(vals, dondmetrics.ValueEstPrecision, seat); !ok {
				t.Errorf("%s: no estimation for seat %d", points[i].Source, seat)
			}
		}
	}
	s := dondmetrics.Summarize(rows)
	t.Logf("bayes vs bayes over %d datapoints: %+v", len(points), s)
	if s.Agreement != 1 || s.EF != 1 {
		t.Errorf("agreement %v, EF %v; want 1 and 1", s.Agreement, s.EF)
	}
	for seat := range 2 {
		if !(s.Reduction[seat] > 0.3) || !(s.Precision[seat] > 0.8) || !(s.IndPrecision[seat] >= s.Precision[seat]) {
			t.Errorf("seat %d estimation: precision %v, reduction %v, ind. precision %v", seat, s.Precision[seat], s.Reduction[seat], s.IndPrecision[seat])
		}
	}
}

// TestBayesVsGreedy: against the greedy agent, bayes still mostly agrees; only the bayes
// seat records a belief.
func TestBayesVsGreedy(t *testing.T) {
	points := datapoints(t)
	a, err := bayes.New(bayes.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	rows := play(t, points, a, dondgreedy.New())
	for _, vals := range rows {
		if _, ok := value(vals, dondmetrics.ValueEstPrecision, 1); ok {
			t.Fatal("the greedy seat has estimation values")
		}
	}
	s := dondmetrics.Summarize(rows)
	t.Logf("bayes vs greedy over %d datapoints: %+v", len(points), s)
	if !(s.Agreement >= 0.8) {
		t.Errorf("agreement %v", s.Agreement)
	}
}
