package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

	"connectrpc.com/connect"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	"github.com/parley-arena/parley/gen/go/parley/analytics/v1/analyticsv1connect"
)

// analyticsService passes parley.analytics.v1.AnalyticsService to the analytics service. What
// it returns is public already: derived from the public parts of the records.
type analyticsService struct {
	analyticsv1connect.UnimplementedAnalyticsServiceHandler
	g *Gateway
}

var _ analyticsv1connect.AnalyticsServiceHandler = (*analyticsService)(nil)

var errNoAnalytics = connect.NewError(connect.CodeUnavailable, errors.New("this gateway has no analytics service (--analytics)"))

func (s *analyticsService) client() (analyticsv1.AnalyticsServiceClient, error) {
	if s.g.cfg.Analytics == nil {
		return nil, errNoAnalytics
	}
	return s.g.cfg.Analytics, nil
}

// unary passes one unary call on.
func unary[Req, Resp any](ctx context.Context, s *analyticsService, req *connect.Request[Req],
	call func(analyticsv1.AnalyticsServiceClient, context.Context, *Req) (*Resp, error)) (*connect.Response[Resp], error) {
	c, err := s.client()
	if err != nil {
		return nil, err
	}
	resp, err := call(c, ctx, req.Msg)
	if err != nil {
		return nil, fromGRPC(err)
	}
	return connect.NewResponse(resp), nil
}

func (s *analyticsService) ListMatches(ctx context.Context, req *connect.Request[analyticsv1.ListMatchesRequest]) (*connect.Response[analyticsv1.ListMatchesResponse], error) {
	return unary(ctx, s, req, func(c analyticsv1.AnalyticsServiceClient, ctx context.Context, r *analyticsv1.ListMatchesRequest) (*analyticsv1.ListMatchesResponse, error) {
		return c.ListMatches(ctx, r)
	})
}

func (s *analyticsService) GetMatch(ctx context.Context, req *connect.Request[analyticsv1.GetMatchRequest]) (*connect.Response[analyticsv1.GetMatchResponse], error) {
	return unary(ctx, s, req, func(c analyticsv1.AnalyticsServiceClient, ctx context.Context, r *analyticsv1.GetMatchRequest) (*analyticsv1.GetMatchResponse, error) {
		return c.GetMatch(ctx, r)
	})
}

func (s *analyticsService) GetLeaderboard(ctx context.Context, req *connect.Request[analyticsv1.GetLeaderboardRequest]) (*connect.Response[analyticsv1.GetLeaderboardResponse], error) {
	if pol := s.g.cfg.Policy; pol != nil && req.Msg.GetBootstrapSamples() > 0 {
		caller, err := s.g.callers.of(ctx, req.Header(), clientAddr(req.Peer().Addr))
		if err != nil {
			return nil, err
		}
		if err := pol.Bootstrap(caller, req.Msg.GetBootstrapSamples()); err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, err)
		}
	}
	return unary(ctx, s, req, func(c analyticsv1.AnalyticsServiceClient, ctx context.Context, r *analyticsv1.GetLeaderboardRequest) (*analyticsv1.GetLeaderboardResponse, error) {
		return c.GetLeaderboard(ctx, r)
	})
}

func (s *analyticsService) GetUsage(ctx context.Context, req *connect.Request[analyticsv1.GetUsageRequest]) (*connect.Response[analyticsv1.GetUsageResponse], error) {
	return unary(ctx, s, req, func(c analyticsv1.AnalyticsServiceClient, ctx context.Context, r *analyticsv1.GetUsageRequest) (*analyticsv1.GetUsageResponse, error) {
		return c.GetUsage(ctx, r)
	})
}

func (s *analyticsService) GetStatus(ctx context.Context, req *connect.Request[analyticsv1.GetStatusRequest]) (*connect.Response[analyticsv1.GetStatusResponse], error) {
	return unary(ctx, s, req, func(c analyticsv1.AnalyticsServiceClient, ctx context.Context, r *analyticsv1.GetStatusRequest) (*analyticsv1.GetStatusResponse, error) {
		return c.GetStatus(ctx, r)
	})
}

// ExportRows passes the export stream on, chunk by chunk.
func (s *analyticsService) ExportRows(ctx context.Context, req *connect.Request[analyticsv1.ExportRowsRequest], stream *connect.ServerStream[analyticsv1.ExportRowsResponse]) error {
	return s.exportTo(ctx, req.Msg, func(chunk *analyticsv1.ExportRowsResponse) error { return stream.Send(chunk) })
}

func (s *analyticsService) exportTo(ctx context.Context, req *analyticsv1.ExportRowsRequest, send func(*analyticsv1.ExportRowsResponse) error) error {
	c, err := s.client()
	if err != nil {
		return err
	}
	st, err := c.ExportRows(ctx, req)
	if err != nil {
		return fromGRPC(err)
	}
	for {
		chunk, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fromGRPC(err)
		}
		if err := send(chunk); err != nil {
			return err
		}
	}
}

// export is GET /api/v1/exports/{matches.csv|matches.jsonl}: the finished matches with every
// metric, as a file. Query: game, tournament_id, agent, exclude_void=true.
func (g *Gateway) export(w http.ResponseWriter, r *http.Request) {
	format := map[string]analyticsv1.ExportFormat{
		"matches.csv":   analyticsv1.ExportFormat_EXPORT_FORMAT_CSV,
		"matches.jsonl": analyticsv1.ExportFormat_EXPORT_FORMAT_JSONL,
	}
	file := r.PathValue("file")
	f, ok := format[file]
	if !ok {
		WriteError(w, connect.CodeNotFound, fmt.Sprintf("no export %q: matches.csv or matches.jsonl", file))
		return
	}
	q := r.URL.Query()
	excludeVoid := false
	if raw := q.Get("exclude_void"); raw != "" {
		var err error
		if excludeVoid, err = strconv.ParseBool(raw); err != nil {
			WriteError(w, connect.CodeInvalidArgument, fmt.Sprintf("exclude_void must be true or false, got %q", raw))
			return
		}
	}
	req := &analyticsv1.ExportRowsRequest{Format: f, Filter: &analyticsv1.MatchFilter{
		Game: q.Get("game"), TournamentId: q.Get("tournament_id"), Agent: q.Get("agent"), ExcludeVoid: excludeVoid,
	}}
	svc := &analyticsService{g: g}
	started := false
	err := svc.exportTo(r.Context(), req, func(chunk *analyticsv1.ExportRowsResponse) error {
		if !started {
			started = true
			ct := chunk.GetContentType()
			if ct == "" {
				ct = "application/octet-stream"
			}
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Content-Disposition", `attachment; filename="`+file+`"`)
		}
		_, err := w.Write(chunk.GetData())
		return err
	})
	if err != nil && !started {
		writeErr(w, err)
	}
}
