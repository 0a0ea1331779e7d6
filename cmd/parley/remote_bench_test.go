package main

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-arena/parley/referee/bench"
)

// BenchmarkRemoteMatches plays b.N ultimatum matches against two `parley agent` processes,
// as a user would: `parley play --matches N` one after another, and `parley tournament`
// (--games-per-pair N/2, its default concurrency). It reports the wall time per match
// (ns/match, the command's start and tables included), the CPU every process spent on it
// (cpu-ns/match: the command's and both agents') and their ratio (wall/cpu): matches that
// wait on nothing but each other's work come close to 1 on an idle machine.
//
//	go test -run '^$' -bench RemoteMatches -benchtime 200x ./cmd/parley
func BenchmarkRemoteMatches(b *testing.B) {
	var agents []string
	var pids []string
	for _, set := range [][]string{nil, {"--set", "open=0.7", "--set", "target=0.55"}} {
		p := startProc(b, "", parleyBin, append([]string{"agent", "fair", "--listen", "127.0.0.1:0"}, set...)...)
		agents = append(agents, "grpc://"+strings.TrimSpace(p.waitLine("agent fair listening on ")))
		pids = append(pids, strconv.Itoa(p.cmd.Process.Pid))
	}
	agentsCPU := func() (t time.Duration) {
		for _, pid := range pids {
			t += bench.CPUOf(pid)
		}
		return t
	}
	measure := func(b *testing.B, matches int, args ...string) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		cmd := exec.CommandContext(ctx, parleyBin, args...)
		cmd.Env = childEnv()
		cpu0 := agentsCPU()
		b.ResetTimer()
		out, err := cmd.CombinedOutput()
		b.StopTimer()
		if err != nil {
			b.Fatalf("parley %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		wall := b.Elapsed()
		cpu := agentsCPU() - cpu0 + cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		b.ReportMetric(float64(wall.Nanoseconds())/float64(matches), "ns/match")
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(matches), "cpu-ns/match")
		b.ReportMetric(wall.Seconds()/cpu.Seconds(), "wall/cpu")
	}
	b.Run("play", func(b *testing.B) {
		measure(b, b.N, "play", "ultimatum", "--matches", strconv.Itoa(b.N), "--agent", agents[0], "--agent", agents[1])
	})
	b.Run("tournament", func(b *testing.B) {
		perPair := (b.N + 1) / 2
		measure(b, 2*perPair, "tournament", "--game", "ultimatum", "--agent", agents[0], "--agent", agents[1],
			"--games-per-pair", strconv.Itoa(perPair), "--quiet")
	})
}
