package match_test

import (
	"bufio"
	"context"
	"os"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/hostile"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/ultimatum"
	"github.com/parley-arena/parley/referee/match"
)

// floodTurns is the length of the flood matches: long enough that an observation carrying
// the whole match would pass every transport's limit many times over.
const floodTurns = 4000

// BenchmarkFlood plays 4,000-turn ultimatum matches over loopback gRPC in which one or both
// seats flood the record with legal notes or public messages, and reports the heap's peak
// (sampled every few milliseconds), the process's peak RSS (VmHWM: run one case per process
// for a figure of that case alone, e.g. -bench 'Flood/notes$') and how many faults the other
// seat's honest agent was charged with, and the turns played (a match cut short by a fault
// plays fewer).
//
//	go test ./referee/match -run '^$' -bench 'Flood/notes$' -benchtime 1x
func BenchmarkFlood(b *testing.B) {
	cases := []struct {
		name  string
		seats [2]string // "fixed" is the honest builtin:fixed; anything else a hostile kind
	}{
		{name: "notes", seats: [2]string{string(hostile.NoteFlood), string(hostile.NoteFlood)}},
		{name: "messages", seats: [2]string{string(hostile.MessageFlood), "fixed"}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var clients []agentv1.AgentServiceClient
			honest := -1
			for seat, who := range tc.seats {
				addr := "builtin:fixed?offer=1"
				if who == "fixed" {
					honest = seat
				} else {
					bot, err := hostile.Start(hostile.Kind(who))
					if err != nil {
						b.Fatal(err)
					}
					b.Cleanup(bot.Close)
					addr = bot.Address()
				}
				clients = append(clients, openConn(b, addr).Client)
			}
			var peak atomic.Uint64
			stop := sampleHeap(&peak)
			defer stop()
			b.ResetTimer()
			faults, turns := 0, 0
			for i := 0; b.Loop(); i++ {
				res, err := match.NewRunner(nil).Run(context.Background(), match.Spec{
					ID:     "flood-" + strconv.Itoa(i),
					Game:   ultimatum.New(),
					Params: floodParams(b),
					Agents: clients,
					Limits: &matchv1.Limits{MoveTimeout: durationpb.New(time.Minute)},
				})
				if err != nil {
					b.Fatal(err)
				}
				for _, ev := range res.Events {
					if f := ev.GetAgentFault(); f != nil && int(f.GetSeat()) == honest {
						faults++
						b.Logf("honest seat faulted on turn %d: %s", ev.GetTurn(), f.GetDetail())
					}
				}
				turns += int(res.Events[len(res.Events)-1].GetTurn())
			}
			b.StopTimer()
			stop()
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-heap-MiB")
			b.ReportMetric(float64(peakRSS())/(1<<10), "peak-RSS-MiB")
			b.ReportMetric(float64(faults)/float64(b.N), "honest-faults/op")
			b.ReportMetric(float64(turns)/float64(b.N), "turns/op")
		})
	}
}

func floodParams(t testing.TB) *matchv1.GameParams {
	return gametest.Resolve(t, ultimatum.New(), &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{
		Total: proto.Int64(100), MaxTurns: proto.Int32(floodTurns),
	}}})
}

// sampleHeap keeps the largest live heap seen in peak until the returned function is called.
func sampleHeap(peak *atomic.Uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	var once sync.Once
	return func() { once.Do(func() { close(done); wg.Wait() }) }
}

// peakRSS returns the process's peak resident set in KiB (0 where /proc is missing).
func peakRSS() int {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}
