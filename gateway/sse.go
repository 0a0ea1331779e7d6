package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	"github.com/parley-arena/parley/referee/record"
)

// sseRetry is the reconnection delay the streams suggest to EventSource, in milliseconds.
const sseRetry = 3000

// sseWriter writes server-sent events. Headers go out with the first event, so an error found
// before that can still be a plain JSON error with its status.
type sseWriter struct {
	mu      sync.Mutex // keep-alive comments come from another goroutine
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
	last    time.Time // of the last write
}

func newSSE(w http.ResponseWriter) *sseWriter {
	return &sseWriter{w: w, rc: http.NewResponseController(w)}
}

func (s *sseWriter) begin() error {
	if s.started {
		return nil
	}
	s.started = true
	h := s.w.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	s.w.WriteHeader(http.StatusOK)
	if _, err := fmt.Fprintf(s.w, "retry: %d\n\n", sseRetry); err != nil {
		return err
	}
	return s.rc.Flush()
}

// event writes one event; data must be one line (compact JSON is).
func (s *sseWriter) event(name, id string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = time.Now()
	if err := s.begin(); err != nil {
		return err
	}
	var b bytes.Buffer
	if id != "" {
		fmt.Fprintf(&b, "id: %s\n", id)
	}
	fmt.Fprintf(&b, "event: %s\ndata: %s\n\n", name, data)
	if _, err := s.w.Write(b.Bytes()); err != nil {
		return err
	}
	return s.rc.Flush()
}

func (s *sseWriter) comment(text string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = time.Now()
	if err := s.begin(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.w, ": %s\n\n", text); err != nil {
		return err
	}
	return s.rc.Flush()
}

// keepAlive writes a keep-alive comment whenever every has passed without a write, once the
// stream has begun, until the returned function is called.
func (s *sseWriter) keepAlive(every time.Duration) (stop func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(every / 2)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				s.mu.Lock()
				idle := s.started && time.Since(s.last) >= every
				s.mu.Unlock()
				if idle && s.comment("keep-alive") != nil {
					return
				}
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// fail ends a stream with an error: a JSON error with its status when nothing was sent yet,
// else an `error` event.
func (s *sseWriter) fail(err error) {
	s.mu.Lock()
	started := s.started
	s.mu.Unlock()
	if !started {
		writeErr(s.w, err)
		return
	}
	data, _ := json.Marshal(WireError{Code: connect.CodeOf(err).String(), Message: errMessage(err)})
	_ = s.event("error", "", data)
}

// compactJSON is protojson on one line.
func compactJSON(m proto.Message) ([]byte, error) {
	raw, err := protojson.Marshal(m)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// openStream takes a stream slot for the request's client, writing 429 when it has too many.
func (g *Gateway) openStream(w http.ResponseWriter, r *http.Request) (release func(), ok bool) {
	slot, ok := g.streams.acquire(clientAddr(r.RemoteAddr))
	if !ok {
		WriteError(w, connect.CodeResourceExhausted, g.streams.tooMany())
		return nil, false
	}
	closed := g.streamOpened(r.Pattern)
	return func() { closed(); slot() }, true
}

// matchEvents is GET /api/v1/matches/{id}/events: the match's record, redacted for the viewer,
// from its start (or from_seq, or after Last-Event-ID), then live to match_ended.
func (g *Gateway) matchEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	viewer, err := g.viewerOf(r, id)
	if err != nil {
		writeErr(w, err)
		return
	}
	from := uint64(1)
	if raw := r.URL.Query().Get("from_seq"); raw != "" {
		if from, err = strconv.ParseUint(raw, 10, 64); err != nil {
			WriteError(w, connect.CodeInvalidArgument, fmt.Sprintf("from_seq must be a sequence number, got %q", raw))
			return
		}
	}
	if raw := r.Header.Get("Last-Event-ID"); raw != "" {
		if last, err := strconv.ParseUint(raw, 10, 64); err == nil {
			from = max(from, last+1)
		}
	}
	release, ok := g.openStream(w, r)
	if !ok {
		return
	}
	defer release()
	sse := newSSE(w)
	stop := sse.keepAlive(g.cfg.KeepAlive)
	var last uint64
	err = g.follow(r.Context(), id, viewer, from, func(ev *eventsv1.MatchEvent) error {
		data, err := compactJSON(ev)
		if err != nil {
			return connect.NewError(connect.CodeInternal, err)
		}
		last = ev.GetSeq()
		return sse.event("match_event", strconv.FormatUint(ev.GetSeq(), 10), data)
	}, func(w *refereev1.Waiting) error {
		data, err := compactJSON(w)
		if err != nil {
			return connect.NewError(connect.CodeInternal, err)
		}
		return sse.event("waiting", "", data)
	})
	stop()
	switch {
	case err == nil:
		data, _ := json.Marshal(map[string]string{"matchId": id, "lastSeq": strconv.FormatUint(last, 10), "reason": "match_ended"})
		_ = sse.event("end", "", data)
	case r.Context().Err() != nil:
		// The viewer left.
	default:
		sse.fail(err)
	}
}

// matchRecord is GET /api/v1/matches/{id}/record: the record so far, redacted for the viewer,
// as JSON lines.
func (g *Gateway) matchRecord(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	viewer, err := g.viewerOf(r, id)
	if err != nil {
		writeErr(w, err)
		return
	}
	events, _, err := g.readMatch(r.Context(), id, viewer)
	if err != nil {
		writeErr(w, err)
		return
	}
	var b bytes.Buffer
	for _, ev := range events {
		line, err := record.Marshal(ev)
		if err != nil {
			writeErr(w, connect.NewError(connect.CodeInternal, err))
			return
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	w.Header().Set("Content-Type", "application/jsonl; charset=utf-8")
	_, _ = w.Write(b.Bytes())
}

// standingsEvents is GET /api/v1/tournaments/{id}/standings: the tournament's standings now,
// then again each time one of its matches ends, until the last has.
func (g *Gateway) standingsEvents(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if g.cfg.Tournaments == nil {
		writeErr(w, errNoTournaments)
		return
	}
	ctx := r.Context()
	get := func() (*analyticsv1.Standings, error) {
		resp, err := g.cfg.Tournaments.GetTournament(ctx, &tournamentv1.GetTournamentRequest{TournamentId: id, StandingsOnly: true})
		if err != nil {
			return nil, fromGRPC(err)
		}
		return resp.GetStandings(), nil
	}
	st, err := get()
	if err != nil {
		writeErr(w, err)
		return
	}
	release, ok := g.openStream(w, r)
	if !ok {
		return
	}
	defer release()
	sse := newSSE(w)
	stop := sse.keepAlive(g.cfg.KeepAlive)
	defer stop()
	tick := time.NewTicker(g.cfg.StandingsEvery)
	defer tick.Stop()
	first := true
	var sent uint32
	var sentPending bool
	for {
		if first || st.GetEnded() != sent || st.GetPending() != sentPending {
			first = false
			sent, sentPending = st.GetEnded(), st.GetPending()
			data, err := compactJSON(st)
			if err != nil {
				sse.fail(connect.NewError(connect.CodeInternal, err))
				return
			}
			if err := sse.event("standings", strconv.FormatUint(uint64(sent), 10), data); err != nil {
				return
			}
		}
		if st.GetComplete() && !st.GetPending() {
			data, _ := json.Marshal(map[string]string{"tournamentId": id, "reason": "complete"})
			_ = sse.event("end", "", data)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if st, err = get(); err != nil {
			if ctx.Err() == nil {
				sse.fail(err)
			}
			return
		}
	}
}

// viewerOf reads who looks at a match: a spectator, or with ?seat=K and that seat's token
// (Authorization: Bearer TOKEN, or ?token=TOKEN) the player of seat K.
func (g *Gateway) viewerOf(r *http.Request, matchID string) (record.Viewer, error) {
	q := r.URL.Query()
	raw := q.Get("seat")
	if raw == "" {
		return record.Spectator, nil
	}
	seat, err := strconv.ParseInt(raw, 10, 32)
	if err != nil || seat < 0 {
		return record.Spectator, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("seat must be a seat index (0, 1, ...), got %q", raw))
	}
	token := q.Get("token")
	if auth := r.Header.Get("Authorization"); token == "" && auth != "" {
		token, _ = strings.CutPrefix(auth, "Bearer ")
	}
	if token == "" || g.cfg.Seats == nil || !g.cfg.Seats.AuthorizeSeat(r.Context(), matchID, int32(seat), token) {
		return record.Spectator, connect.NewError(connect.CodePermissionDenied,
			fmt.Errorf("the view of seat %d of match %s needs that seat's token", seat, matchID))
	}
	return record.SeatViewer(int32(seat)), nil
}
