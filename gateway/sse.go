package gateway

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/referee/record"
)

// sseRetry is the reconnection delay the streams suggest to EventSource, in milliseconds.
const sseRetry = 3000

// sseWriter writes server-sent events. Headers go out with the first event, so an error found
// before that can still be a plain JSON error with its status.
type sseWriter struct {
	w       http.ResponseWriter
	rc      *http.ResponseController
	started bool
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
	if err := s.begin(); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(s.w, ": %s\n\n", text); err != nil {
		return err
	}
	return s.rc.Flush()
}

// fail ends a stream with an error: a JSON error with its status when nothing was sent yet,
// else an `error` event.
func (s *sseWriter) fail(err error) {
	if !s.started {
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
	var last uint64
	err = g.follow(r.Context(), id, viewer, from,
		func(ev *eventsv1.MatchEvent) error {
			data, err := compactJSON(ev)
			if err != nil {
				return connect.NewError(connect.CodeInternal, err)
			}
			last = ev.GetSeq()
			return sse.event("match_event", strconv.FormatUint(ev.GetSeq(), 10), data)
		},
		func() error { return sse.comment("keep-alive") })
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
	events, err := g.readMatch(r.Context(), id, viewer)
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
	t, err := g.tracker.get(r.Context(), id)
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
	ctx := r.Context()
	var sent uint32
	first := true
	for {
		// Looked up again each time: a tournament dropped from the tracker meanwhile is
		// tracked anew.
		if t, err = g.tracker.get(ctx, id); err != nil {
			sse.fail(err)
			return
		}
		changed := t.changes()
		st, err := t.standings(ctx)
		if err != nil {
			if ctx.Err() == nil {
				sse.fail(err)
			}
			return
		}
		if first || st.GetEnded() != sent {
			first = false
			sent = st.GetEnded()
			data, err := compactJSON(st)
			if err != nil {
				sse.fail(connect.NewError(connect.CodeInternal, err))
				return
			}
			if err := sse.event("standings", strconv.FormatUint(uint64(sent), 10), data); err != nil {
				return
			}
		}
		if st.GetComplete() {
			data, _ := json.Marshal(map[string]string{"tournamentId": id, "reason": "complete"})
			_ = sse.event("end", "", data)
			return
		}
		if err := waitChange(r, changed, g.cfg.KeepAlive, sse); err != nil {
			return
		}
	}
}

// waitChange waits for changed to close, writing keep-alive comments meanwhile; it returns an
// error when the viewer left.
func waitChange(r *http.Request, changed <-chan struct{}, keepAlive time.Duration, sse *sseWriter) error {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		select {
		case <-changed:
			return nil
		case <-r.Context().Done():
			return r.Context().Err()
		case <-tick.C:
			if err := sse.comment("keep-alive"); err != nil {
				return err
			}
		}
	}
}
