package llm_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/llm/llmtest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/referee/match"
)

// BenchmarkConcurrentMatches plays many ultimatum matches at once, every seat served by one
// LLM agent process (one Agent behind one gRPC server) against a fake model with a fixed
// latency, and reports how close the wall time comes to the ideal: model calls x latency /
// the agent's concurrency limit. "efficiency" is ideal/wall (1 is perfect). Sleeps overrun on
// busy or virtual machines, so "utilisation" also reports the share of the endpoint's slots
// kept busy: the calls' measured latencies (Usage.latency) / (wall x concurrency).
func BenchmarkConcurrentMatches(b *testing.B) {
	for _, bc := range []struct {
		matches, concurrency int
		latency              time.Duration
	}{
		{matches: 16, concurrency: 4, latency: 5 * time.Millisecond},
		{matches: 32, concurrency: 8, latency: 20 * time.Millisecond},
		{matches: 32, concurrency: 8, latency: 5 * time.Millisecond},
		{matches: 64, concurrency: 16, latency: 5 * time.Millisecond},
	} {
		b.Run(fmt.Sprintf("matches=%d/concurrency=%d/latency=%s", bc.matches, bc.concurrency, bc.latency), func(b *testing.B) {
			// Both players propose until the last turn, where P2 accepts: 8 calls per match.
			srv := llmtest.New(b, llmtest.Autoplay{Prefer: []string{"propose", "accept"}}.Responder(), llmtest.WithLatency(bc.latency))
			agent := newAgent(b, llm.Config{BaseURL: srv.URL, Concurrency: bc.concurrency})
			client := serve(b, agent)
			params := gametest.Resolve(b, ultimatum.New(), &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{MaxTurns: proto.Int32(8)}}})
			runner := match.NewRunner(nil)
			var wall, busy time.Duration
			var mu sync.Mutex
			calls := 0
			round := 0
			for b.Loop() {
				round++
				before := srv.Count()
				start := time.Now()
				var wg sync.WaitGroup
				for m := 0; m < bc.matches; m++ {
					wg.Go(func() {
						res, err := runner.Run(context.Background(), match.Spec{
							ID: fmt.Sprintf("bench-%d-%d", round, m), Game: ultimatum.New(), Params: params, Seed: uint64(m),
							Agents: []agentv1.AgentServiceClient{client, client},
							Limits: &matchv1.Limits{MoveTimeout: durationpb.New(time.Minute)},
						})
						if err != nil {
							b.Errorf("match: %v", err)
						} else if len(res.Outcome.GetFaultedSeats()) > 0 {
							b.Errorf("match: %v", res.Outcome)
						} else {
							mu.Lock()
							for _, su := range res.Events[len(res.Events)-1].GetMatchEnded().GetUsage() {
								busy += su.GetTotal().GetLatency().AsDuration()
							}
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				wall += time.Since(start)
				calls += srv.Count() - before
			}
			ideal := time.Duration(calls) * bc.latency / time.Duration(bc.concurrency)
			b.ReportMetric(float64(calls)/float64(round), "calls/op")
			b.ReportMetric(float64(ideal.Microseconds())/1000/float64(round), "ideal-ms/op")
			b.ReportMetric(float64(wall.Microseconds())/1000/float64(round), "wall-ms/op")
			b.ReportMetric(float64(ideal)/float64(wall), "efficiency")
			b.ReportMetric(float64(busy)/float64(wall*time.Duration(bc.concurrency)), "utilisation")
			if srv.MaxConcurrent() > bc.concurrency {
				b.Errorf("%d calls in flight at once, limit %d", srv.MaxConcurrent(), bc.concurrency)
			}
		})
	}
}
