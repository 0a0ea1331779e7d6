package analytics

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// serve serves s over an in-memory listener and returns a client.
func serve(t *testing.T, s *Store) analyticsv1.AnalyticsServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	analyticsv1.RegisterAnalyticsServiceServer(srv, NewServer(s))
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return analyticsv1.NewAnalyticsServiceClient(conn)
}

func TestServer(t *testing.T) {
	ctx := context.Background()
	s := openTestStore(t)
	var all []Delivered
	for i, id := range []string{"m1", "m2", "m3"} {
		all = append(all, delivered(ultimatumRecord(id, "t1", "a", "b", int64(30+10*i), matchv1.EndCause_END_CAUSE_AGREEMENT)...)...)
	}
	all = append(all, delivered(ultimatumRecord("m4", "t1", "b", "a", 0, matchv1.EndCause_END_CAUSE_VOID)...)...)
	if _, err := s.Ingest(ctx, standard.New(), all); err != nil {
		t.Fatal(err)
	}
	c := serve(t, s)

	var ids []string
	token := ""
	for {
		resp, err := c.ListMatches(ctx, &analyticsv1.ListMatchesRequest{Filter: &analyticsv1.MatchFilter{TournamentId: "t1"}, PageSize: 3, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range resp.GetMatches() {
			ids = append(ids, m.GetMatchId())
		}
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	if strings.Join(ids, ",") != "m1,m2,m3,m4" {
		t.Errorf("listed %v", ids)
	}
	if _, err := c.ListMatches(ctx, &analyticsv1.ListMatchesRequest{PageToken: "nope"}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("bad page token: %v", err)
	}

	got, err := c.GetMatch(ctx, &analyticsv1.GetMatchRequest{MatchId: "m2"})
	if err != nil {
		t.Fatal(err)
	}
	m := got.GetMatch()
	if m.GetSummary().GetGame() != "ultimatum" || m.GetSeed() != 7 || len(m.GetSummary().GetSeats()) != 2 ||
		m.GetSummary().GetSeats()[0].GetAgentKey() != "a@1" || m.GetSummary().GetSeats()[1].GetPayoff() != 40 {
		t.Errorf("GetMatch: %v", m)
	}
	var opening, whole bool
	for _, v := range m.GetValues() {
		if v.GetName() == "opening_proposal" && v.Seat != nil && v.GetSeat() == 0 && v.GetValue() == 40 {
			opening = true
		}
		if v.GetName() == "agreement" && v.Seat == nil && v.GetValue() == 1 {
			whole = true
		}
	}
	if !opening || !whole {
		t.Errorf("values: %v", m.GetValues())
	}
	if len(m.GetUsage()) != 1 || len(m.GetUsage()[0].GetTotal().GetRawOutputs()) != 0 || m.GetUsage()[0].GetTotal().GetPromptTokens() != 100 {
		t.Errorf("usage (raw outputs must be stripped): %v", m.GetUsage())
	}
	if _, err := c.GetMatch(ctx, &analyticsv1.GetMatchRequest{MatchId: "nope"}); status.Code(err) != codes.NotFound {
		t.Errorf("unknown match: %v", err)
	}

	lb, err := c.GetLeaderboard(ctx, &analyticsv1.GetLeaderboardRequest{Filter: &analyticsv1.MatchFilter{Game: "ultimatum"}, BootstrapSamples: 50})
	if err != nil {
		t.Fatal(err)
	}
	// a kept 70, 60, 50 of 100 as P1: two wins and a tie.
	if lb.GetMatches() != 3 || lb.GetVoidMatches() != 1 || len(lb.GetEntries()) != 2 || lb.GetEntries()[0].GetAgent() != "a@1" ||
		lb.GetEntries()[0].GetWins() != 2 || lb.GetEntries()[0].GetTies() != 1 || lb.GetEntries()[0].GetMeanPayoff() != 60 || lb.GetMethod() == "" {
		t.Errorf("leaderboard %v", lb)
	}
	if e := lb.GetEntries()[0]; !(e.GetRatingLow() <= e.GetRating() && e.GetRating() <= e.GetRatingHigh()) {
		t.Errorf("interval %v", e)
	}
	if _, err := c.GetLeaderboard(ctx, &analyticsv1.GetLeaderboardRequest{}); status.Code(err) != codes.InvalidArgument {
		t.Errorf("leaderboard without a game: %v", err)
	}

	usage, err := c.GetUsage(ctx, &analyticsv1.GetUsageRequest{Filter: &analyticsv1.MatchFilter{ExcludeVoid: true}})
	if err != nil {
		t.Fatal(err)
	}
	if len(usage.GetModels()) != 1 || usage.GetModels()[0].GetMatches() != 3 || usage.GetModels()[0].GetFormatFailureRate() != 0.25 {
		t.Errorf("usage %v", usage)
	}

	stream, err := c.ExportRows(ctx, &analyticsv1.ExportRowsRequest{Format: analyticsv1.ExportFormat_EXPORT_FORMAT_JSONL})
	if err != nil {
		t.Fatal(err)
	}
	var file bytes.Buffer
	var contentType string
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if chunk.GetContentType() != "" {
			contentType = chunk.GetContentType()
		}
		file.Write(chunk.GetData())
	}
	if contentType != "application/jsonl" || strings.Count(file.String(), "\n") != 4 || !strings.Contains(file.String(), `"match_id":"m4"`) {
		t.Errorf("export (%s):\n%s", contentType, file.String())
	}

	st, err := c.GetStatus(ctx, &analyticsv1.GetStatusRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetMatches() != 4 || st.GetVoidMatches() != 1 || st.GetEvents() != 16 {
		t.Errorf("status %v", st)
	}
}
