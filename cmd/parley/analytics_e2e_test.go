package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	"github.com/parley-arena/parley/internal/natstest"
)

// TestAnalyticsServe runs `parley analytics` against an external NATS server while `parley
// play` publishes matches, queries it over gRPC, stops it, plays on, restarts it on the same
// database and checks that it caught up without counting anything twice.
func TestAnalyticsServe(t *testing.T) {
	t.Parallel()
	url := natstest.Start(t).URL
	db := filepath.Join(t.TempDir(), "analytics.db")
	start := func() (*proc, analyticsv1.AnalyticsServiceClient) {
		p := startProc(t, "", parleyBin, "analytics", "--nats", url, "--db", db, "--listen", "127.0.0.1:0")
		addr, _, _ := strings.Cut(p.waitLine("analytics listening on "), ",")
		return p, analyticsv1.NewAnalyticsServiceClient(dialGRPC(t, addr))
	}
	play := func(game, seed string, agents ...string) {
		args := []string{"play", game, "--seed", seed, "--nats", url, "--json"}
		for _, a := range agents {
			args = append(args, "--agent", a)
		}
		mustRun(t, nil, args...)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*waitTimeout)
	defer cancel()
	waitMatches := func(c analyticsv1.AnalyticsServiceClient, n int64) {
		t.Helper()
		deadline := time.Now().Add(waitTimeout)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			st, err := c.GetStatus(ctx, &analyticsv1.GetStatusRequest{})
			if err == nil && st.GetMatches() == n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("analytics has %v matches (err %v), want %d", st, err, n)
			}
			<-tick.C
		}
	}

	play("ultimatum", "1", "builtin:fair", "builtin:random") // before the service starts
	svc, client := start()
	play("ultimatum", "2", "builtin:spe", "builtin:fair")
	waitMatches(client, 2)

	lb, err := client.GetLeaderboard(ctx, &analyticsv1.GetLeaderboardRequest{Filter: &analyticsv1.MatchFilter{Game: "ultimatum"}})
	if err != nil {
		t.Fatalf("GetLeaderboard: %v\n%s", err, svc.output())
	}
	if lb.GetMatches() != 2 || len(lb.GetEntries()) < 2 {
		t.Errorf("leaderboard %v", lb)
	}
	if code, _ := svc.interrupt(); code != 0 {
		t.Fatalf("analytics exited with status %d after SIGINT\n%s", code, svc.output())
	}

	play("buysell", "3", "builtin:concede", "builtin:random") // while it is down
	svc, client = start()
	waitMatches(client, 3)

	resp, err := client.ListMatches(ctx, &analyticsv1.ListMatchesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	games := map[string]int{}
	for _, m := range resp.GetMatches() {
		games[m.GetGame()]++
	}
	if games["ultimatum"] != 2 || games["buysell"] != 1 {
		t.Errorf("listed %v", resp.GetMatches())
	}
	stream, err := client.ExportRows(ctx, &analyticsv1.ExportRowsRequest{Filter: &analyticsv1.MatchFilter{Game: "buysell"}})
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		file.Write(chunk.GetData())
	}
	table, err := csv.NewReader(&file).ReadAll()
	if err != nil || len(table) != 2 || !strings.Contains(strings.Join(table[0], ","), "first_price") {
		t.Errorf("buysell export (%v):\n%s", err, file.String())
	}
	if code, _ := svc.interrupt(); code != 0 {
		t.Fatalf("analytics exited with status %d after SIGINT\n%s", code, svc.output())
	}
}
