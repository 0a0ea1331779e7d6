package human

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// ServeHTTP serves the hub's API:
//
//	POST /api/v1/seats                  reserve a seat: {"name": "alice"} (optional) ->
//	                                    201 {"token", "agent", "url"}; start a match with the
//	                                    agent address, then open the url.
//	GET  /api/v1/seats/{token}          the seat's state: a live stream of server-sent events
//	                                    (event "seat", one JSON snapshot per change) when the
//	                                    request accepts text/event-stream, else one snapshot.
//	POST /api/v1/seats/{token}/action   answer the observation waiting: the body is an Action
//	                                    in protojson; ?turn=N&attempt=M (optional) guard
//	                                    against answering a stale observation. 202 when handed
//	                                    to the referee.
//
// A snapshot is {"state": "waiting"|"acting"|"ended", "name", "version", "now",
// "observation": Observation (protojson), "outcome": Outcome (protojson), "note"}. Errors are
// JSON {"code", "message"} with the fitting status: 404 for an unknown token, 400 for a body
// that is not one Action, 409 when nothing waits for an action or it answers another turn,
// 413 for a body over MaxActionBytes, 429 for too many streams of one seat.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.served.Store(true)
	h.handler.ServeHTTP(w, r)
}

// Mount adds the hub's routes (see ServeHTTP) to mux, e.g. the gateway's, and lets Open seat
// people from then on.
func (h *Hub) Mount(mux *http.ServeMux) {
	h.routes(mux)
	h.served.Store(true)
}

func (h *Hub) routes(mux *http.ServeMux) *http.ServeMux {
	mux.HandleFunc("POST /api/v1/seats", h.reserve)
	mux.HandleFunc("GET /api/v1/seats/{token}", h.get)
	mux.HandleFunc("POST /api/v1/seats/{token}/action", h.action)
	mux.HandleFunc("/api/v1/seats/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "not_found", "no such seat endpoint: "+r.Method+" "+r.URL.Path)
	})
	return mux
}

type errorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func writeError(w http.ResponseWriter, status int, code, msg string) {
	writeJSON(w, status, errorBody{Code: code, Message: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

type reserveRequest struct {
	Name string `json:"name"`
}

type reserveResponse struct {
	// Token is the seat's secret: keep it to play the seat.
	Token string `json:"token"`
	// Agent is the address to put in the match's agent list for the seat.
	Agent string `json:"agent"`
	// URL is the path of the seat's page.
	URL string `json:"url"`
}

func (h *Hub) reserve(w http.ResponseWriter, r *http.Request) {
	var req reserveRequest
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 4<<10))
	if err != nil {
		writeBodyError(w, err)
		return
	}
	if len(bytes.TrimSpace(body)) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeError(w, http.StatusBadRequest, "invalid_argument", "body: want {\"name\": \"...\"}: "+err.Error())
			return
		}
		if dec.More() {
			writeError(w, http.StatusBadRequest, "invalid_argument", "body: one JSON object only")
			return
		}
	}
	s, addr, err := h.Reserve(req.Name)
	switch {
	case errors.Is(err, ErrFull):
		writeError(w, http.StatusServiceUnavailable, "unavailable", err.Error())
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "invalid_argument", err.Error())
		return
	}
	h.logger.Info("human seat reserved", "agent", s.Describe().GetName())
	writeJSON(w, http.StatusCreated, reserveResponse{Token: s.Token(), Agent: addr, URL: s.Path()})
}

func writeBodyError(w http.ResponseWriter, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		writeError(w, http.StatusRequestEntityTooLarge, "resource_exhausted", fmt.Sprintf("body larger than %d bytes", tooBig.Limit))
		return
	}
	writeError(w, http.StatusBadRequest, "invalid_argument", "body: "+err.Error())
}

func (h *Hub) seatOf(w http.ResponseWriter, r *http.Request) (*Seat, bool) {
	s, ok := h.Seat(r.PathValue("token"))
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "no such seat: the link is wrong, or the seat's match ended long ago")
	}
	return s, ok
}

// snapshotJSON is the wire form of a Snapshot.
type snapshotJSON struct {
	State       State           `json:"state"`
	Name        string          `json:"name,omitempty"`
	Version     uint64          `json:"version"`
	Now         string          `json:"now"`
	Note        string          `json:"note,omitempty"`
	Observation json.RawMessage `json:"observation,omitempty"`
	Outcome     json.RawMessage `json:"outcome,omitempty"`
}

func (h *Hub) encode(snap Snapshot) ([]byte, error) {
	out := snapshotJSON{State: snap.State, Name: snap.Name, Version: snap.Version, Note: snap.Note,
		Now: h.now().UTC().Format(time.RFC3339Nano)}
	var err error
	if snap.Observation != nil {
		if out.Observation, err = protojson.Marshal(snap.Observation); err != nil {
			return nil, err
		}
	}
	if snap.Outcome != nil {
		if out.Outcome, err = protojson.Marshal(snap.Outcome); err != nil {
			return nil, err
		}
	}
	return json.Marshal(out)
}

func (h *Hub) get(w http.ResponseWriter, r *http.Request) {
	s, ok := h.seatOf(w, r)
	if !ok {
		return
	}
	if !strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		snap, _ := s.Snapshot()
		b, err := h.encode(snap)
		if err != nil {
			writeError(w, http.StatusInternalServerError, "internal", err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.Write(append(b, '\n'))
		return
	}
	h.stream(w, r, s)
}

// stream sends the seat's snapshot, then a new one at every change, until the match is over
// (after sending the final snapshot) or the client leaves.
func (h *Hub) stream(w http.ResponseWriter, r *http.Request, s *Seat) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		writeError(w, http.StatusInternalServerError, "internal", "streaming unsupported")
		return
	}
	s.mu.Lock()
	if s.streams >= h.maxStreams {
		s.mu.Unlock()
		writeError(w, http.StatusTooManyRequests, "resource_exhausted", fmt.Sprintf("at most %d live streams per seat", h.maxStreams))
		return
	}
	s.streams++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.streams--
		s.mu.Unlock()
	}()

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "retry: 2000\n\n")
	flusher.Flush()
	keep := time.NewTicker(h.keepAlive)
	defer keep.Stop()
	for {
		snap, changed := s.Snapshot()
		b, err := h.encode(snap)
		if err != nil {
			h.logger.Error("human seat: encode snapshot", "err", err)
			return
		}
		fmt.Fprintf(w, "id: %d\nevent: seat\ndata: %s\n\n", snap.Version, b)
		flusher.Flush()
		if snap.State == StateEnded && s.isClosed() {
			return
		}
		if !h.await(w, flusher, r, changed, keep.C) {
			return
		}
	}
}

// await waits for changed, sending keep-alive comments meanwhile; false when the client left.
func (h *Hub) await(w io.Writer, flusher http.Flusher, r *http.Request, changed <-chan struct{}, keep <-chan time.Time) bool {
	for {
		select {
		case <-changed:
			return true
		case <-r.Context().Done():
			return false
		case <-keep:
			fmt.Fprint(w, ": keep-alive\n\n")
			flusher.Flush()
		}
	}
}

func (s *Seat) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

type submitResponse struct {
	Status  string `json:"status"`
	Turn    int32  `json:"turn"`
	Attempt int32  `json:"attempt"`
}

func (h *Hub) action(w http.ResponseWriter, r *http.Request) {
	s, ok := h.seatOf(w, r)
	if !ok {
		return
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") {
		writeError(w, http.StatusUnsupportedMediaType, "invalid_argument", "body must be application/json (an Action in protojson)")
		return
	}
	var turn, attempt int64
	for name, dst := range map[string]*int64{"turn": &turn, "attempt": &attempt} {
		if v := r.URL.Query().Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 32)
			if err != nil || n < 0 {
				writeError(w, http.StatusBadRequest, "invalid_argument", fmt.Sprintf("?%s=%q: want a whole number", name, v))
				return
			}
			*dst = n
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxActionBytes))
	if err != nil {
		writeBodyError(w, err)
		return
	}
	a := &agentv1.Action{}
	if err := protojson.Unmarshal(body, a); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_argument", "body is not one Action in protojson: "+err.Error())
		return
	}
	if a.GetMove().GetKind() == nil {
		writeError(w, http.StatusBadRequest, "invalid_argument", "the action has no move: set exactly one of move.propose, accept, reject, pass, choose, say")
		return
	}
	a.Usage = nil // resource use is for programs to report; a person has none
	answered, err := s.Submit(a, int32(turn), int32(attempt))
	switch {
	case errors.Is(err, ErrClosed):
		writeError(w, http.StatusConflict, "failed_precondition", "the match is over")
	case errors.Is(err, ErrNotActing), errors.Is(err, ErrStale):
		writeError(w, http.StatusConflict, "failed_precondition", err.Error())
	case err != nil:
		writeError(w, http.StatusInternalServerError, "internal", err.Error())
	default:
		h.logger.Info("human seat acted", "match_id", answered.GetMatchId(), "seat", answered.GetSeat(), "turn", answered.GetTurn())
		writeJSON(w, http.StatusAccepted, submitResponse{Status: "submitted", Turn: answered.GetTurn(), Attempt: answered.GetAttempt()})
	}
}
