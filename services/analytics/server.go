package analytics

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/ratings"
)

// Server limits.
const (
	// MaxBootstrap bounds GetLeaderboardRequest.bootstrap_samples.
	MaxBootstrap = 5000
	// exportChunk is the size of each ExportRows message.
	exportChunk = 64 << 10
)

// Server serves parley.analytics.v1.AnalyticsService from a Store.
type Server struct {
	analyticsv1.UnimplementedAnalyticsServiceServer
	store *Store
}

var _ analyticsv1.AnalyticsServiceServer = (*Server)(nil)

// NewServer returns the gRPC service over store.
func NewServer(store *Store) *Server { return &Server{store: store} }

func filterOf(f *analyticsv1.MatchFilter) Filter {
	return Filter{TournamentID: f.GetTournamentId(), Game: f.GetGame(), Agent: f.GetAgent(), ExcludeVoid: f.GetExcludeVoid()}
}

// ListMatches lists finished matches, one page at a time.
func (s *Server) ListMatches(ctx context.Context, req *analyticsv1.ListMatchesRequest) (*analyticsv1.ListMatchesResponse, error) {
	if req.GetPageSize() < 0 {
		return nil, status.Errorf(codes.InvalidArgument, "page_size must be 0 or more, got %d", req.GetPageSize())
	}
	ms, next, err := s.store.Matches(ctx, filterOf(req.GetFilter()), Page{Size: int(req.GetPageSize()), Token: req.GetPageToken()})
	if err != nil {
		return nil, grpcError(err)
	}
	resp := &analyticsv1.ListMatchesResponse{NextPageToken: next}
	for _, m := range ms {
		resp.Matches = append(resp.Matches, summaryProto(m))
	}
	return resp, nil
}

// GetMatch returns one finished match with its metrics.
func (s *Server) GetMatch(ctx context.Context, req *analyticsv1.GetMatchRequest) (*analyticsv1.GetMatchResponse, error) {
	if req.GetMatchId() == "" {
		return nil, status.Error(codes.InvalidArgument, "match_id is required")
	}
	row, err := s.store.Row(ctx, req.GetMatchId())
	if err != nil {
		return nil, grpcError(err)
	}
	info, err := s.store.Match(ctx, req.GetMatchId())
	if err != nil {
		return nil, grpcError(err)
	}
	return &analyticsv1.GetMatchResponse{Match: rowProto(row, info)}, nil
}

// GetLeaderboard rates one game's agents.
func (s *Server) GetLeaderboard(ctx context.Context, req *analyticsv1.GetLeaderboardRequest) (*analyticsv1.GetLeaderboardResponse, error) {
	f := filterOf(req.GetFilter())
	if f.Game == "" {
		return nil, status.Error(codes.InvalidArgument, "filter.game is required: a leaderboard is per game")
	}
	n := req.GetBootstrapSamples()
	switch {
	case n < 0:
		return nil, status.Errorf(codes.InvalidArgument, "bootstrap_samples must be 0 or more, got %d", n)
	case n == 0:
		n = ratings.DefaultBootstrap
	}
	opts := ratings.DefaultOptions()
	opts.Bootstrap = int(min(n, MaxBootstrap))
	if req.GetSeed() != 0 {
		opts.Seed = req.GetSeed()
	}
	lb, err := s.store.Leaderboard(ctx, f, opts)
	if err != nil {
		return nil, grpcError(err)
	}
	return &analyticsv1.GetLeaderboardResponse{
		Game: lb.Game, Matches: int32(lb.Matches), VoidMatches: int32(lb.Void), Entries: entriesProto(lb), MinMatches: MinRatedMatches,
		Method: fmt.Sprintf("Bradley-Terry by MM over pairwise results by payoff (ties half), a prior of %g virtual tied game(s) per agent vs a 1500 reference, %d bootstrap samples over matches (seed %d), %.0f%% percentile intervals; void matches left out; ranked by the interval's lower end, agents with fewer than %d rated matches listed apart as provisional",
			opts.Prior, opts.Bootstrap, opts.Seed, 100*opts.Level, MinRatedMatches),
	}, nil
}

// GetUsage sums language-model usage per model.
func (s *Server) GetUsage(ctx context.Context, req *analyticsv1.GetUsageRequest) (*analyticsv1.GetUsageResponse, error) {
	us, err := s.store.Usage(ctx, filterOf(req.GetFilter()))
	if err != nil {
		return nil, grpcError(err)
	}
	resp := &analyticsv1.GetUsageResponse{}
	for _, u := range us {
		resp.Models = append(resp.Models, &analyticsv1.ModelUsage{
			Model: u.Model, Matches: int32(u.Matches), Seats: int32(u.Seats),
			PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, Retries: u.Retries,
			FormatFailures: u.FormatFailures, Calls: u.Calls, CacheHits: u.CacheHits, Fallbacks: int32(u.Fallbacks),
			FormatFailureRate: u.FormatFailureRate, RetryRate: u.RetryRate, LatencyMs: u.LatencyMS,
			FallbackActions: u.FallbackActions, BudgetFallbacks: u.BudgetFallbacks, CachedTokens: u.CachedTokens,
			CostMicrodollars: u.CostMicrodollars,
		})
	}
	return resp, nil
}

// ExportRows streams the rows as a file.
func (s *Server) ExportRows(req *analyticsv1.ExportRowsRequest, stream analyticsv1.AnalyticsService_ExportRowsServer) error {
	format, contentType := CSV, "text/csv"
	switch req.GetFormat() {
	case analyticsv1.ExportFormat_EXPORT_FORMAT_UNSPECIFIED, analyticsv1.ExportFormat_EXPORT_FORMAT_CSV:
	case analyticsv1.ExportFormat_EXPORT_FORMAT_JSONL:
		format, contentType = JSONL, "application/jsonl"
	default:
		return status.Errorf(codes.InvalidArgument, "unknown format %v", req.GetFormat())
	}
	var buf bytes.Buffer
	if err := s.store.Export(stream.Context(), &buf, filterOf(req.GetFilter()), format); err != nil {
		return grpcError(err)
	}
	data := buf.Bytes()
	first := true
	for first || len(data) > 0 {
		n := min(len(data), exportChunk)
		msg := &analyticsv1.ExportRowsResponse{Data: data[:n]}
		if first {
			msg.ContentType = contentType
			first = false
		}
		if err := stream.Send(msg); err != nil {
			return err
		}
		data = data[n:]
	}
	return nil
}

// GetStatus counts what the database holds.
func (s *Server) GetStatus(ctx context.Context, _ *analyticsv1.GetStatusRequest) (*analyticsv1.GetStatusResponse, error) {
	st, err := s.store.Status(ctx)
	if err != nil {
		return nil, grpcError(err)
	}
	return &analyticsv1.GetStatusResponse{Events: st.Events, MatchesSeen: st.MatchesSeen, Matches: st.Matches, VoidMatches: st.Void, Errors: st.Errors}, nil
}

// grpcError maps the store's errors to gRPC status codes, once, at the edge.
func grpcError(err error) error {
	switch {
	case errors.Is(err, ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.Is(err, ErrBadPageToken), errors.Is(err, ErrNoGame):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	return status.Error(codes.Internal, err.Error())
}

func seatProto(s metrics.SeatResult) *analyticsv1.SeatResult {
	return &analyticsv1.SeatResult{Seat: s.Seat, Name: s.Name, Agent: s.Agent, AgentVersion: s.AgentVersion,
		AgentKey: s.AgentKey(), Payoff: s.Payoff, Faulted: s.Faulted, Label: s.Label}
}

func summaryProto(m MatchInfo) *analyticsv1.MatchSummary {
	out := &analyticsv1.MatchSummary{MatchId: m.MatchID, TournamentId: m.TournamentID, Game: m.Game, Cause: m.Cause,
		Agreement: m.Agreement, Void: m.Void, Turns: m.Turns, Events: int32(m.Events), Summary: m.Summary, Error: m.Error}
	for _, s := range m.Seats {
		out.Seats = append(out.Seats, seatProto(s))
	}
	return out
}

func rowProto(r metrics.Row, info MatchInfo) *analyticsv1.MatchRow {
	out := &analyticsv1.MatchRow{Summary: summaryProto(info), RulesVersion: r.RulesVersion, Seed: r.Seed}
	for _, v := range r.Values {
		mv := &analyticsv1.MetricValue{Name: v.Name, Value: v.Value}
		if v.Seat != metrics.WholeMatch {
			mv.Seat = proto.Int32(v.Seat)
		}
		out.Values = append(out.Values, mv)
	}
	for _, u := range r.Usage {
		c := proto.CloneOf(u)
		c.GetTotal().RawOutputs = nil // never leave the record
		out.Usage = append(out.Usage, c)
	}
	return out
}

// GetStandings returns how a tournament stands.
func (s *Server) GetStandings(ctx context.Context, req *analyticsv1.GetStandingsRequest) (*analyticsv1.GetStandingsResponse, error) {
	st, err := s.store.CachedStandings(ctx, req.GetTournamentId())
	if err != nil {
		return nil, grpcError(err)
	}
	return &analyticsv1.GetStandingsResponse{Standings: st}, nil
}
