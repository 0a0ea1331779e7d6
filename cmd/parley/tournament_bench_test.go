package main

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/root"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/families"
)

// BenchmarkTournament runs `parley tournament` in process, wired as the binary is (one host
// for the built-in agents, one connection pool), over b.N ultimatum matches (rounded up to
// even: two ordered pairs) between two instant built-in agents, every match requested
// through the work queue and recorded in JetStream, then `parley report` on its records. ns/op
// is the tournament command's time per match, tables included; readback-ns/match is the
// report's, which reads every record back. For the 20,000-match tournament:
//
//	go test -run '^$' -bench Tournament -benchtime 20000x ./cmd/parley
func BenchmarkTournament(b *testing.B) {
	perPair := (b.N + 1) / 2
	matches := 2 * perPair
	store := filepath.Join(b.TempDir(), "nats")
	host := sdk.NewHost()
	defer host.Close()
	pool := agentconn.NewPool()
	defer pool.Close()
	run := func(args ...string) string {
		b.Helper()
		var stdout, stderr bytes.Buffer
		deps := &cli.Deps{Out: &stdout, Err: &stderr, Games: families.New(), Builtins: builtin.Agents{Host: host},
			Pool: pool, Getenv: func(string) string { return "" }}
		cmd := root.NewCmd(deps)
		cmd.SetArgs(args)
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if err := cmd.ExecuteContext(ctx); err != nil {
			b.Fatalf("parley %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}
	b.ResetTimer()
	out := run("tournament", "--game", "ultimatum", "--agent", "builtin:fair", "--agent", "tough=builtin:fair?open=0.7&target=0.55",
		"--games-per-pair", strconv.Itoa(perPair), "--concurrency", "64", "--seed", "1", "--id", "bench", "--store-dir", store, "--quiet")
	b.StopTimer()
	if want := fmt.Sprintf("Tournament bench: ultimatum, %d matches", matches); !strings.Contains(out, want) {
		b.Fatalf("the tables do not say %q:\n%s", want, out)
	}
	tournament := b.Elapsed()
	start := time.Now()
	rep := run("report", "--tournament", "bench", "--store-dir", store, "--format", "csv", "--out", filepath.Join(b.TempDir(), "report"))
	readBack := time.Since(start)
	if !strings.Contains(rep, "matches.csv") {
		b.Fatalf("the report lists no matches.csv:\n%s", rep)
	}
	b.ReportMetric(float64(tournament.Nanoseconds())/float64(matches), "ns/match")
	b.ReportMetric(float64(readBack.Nanoseconds())/float64(matches), "readback-ns/match")
}
