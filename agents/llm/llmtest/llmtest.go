// Package llmtest is a fake OpenAI-compatible chat-completions server for tests: a real HTTP
// server on a loopback port whose replies a test scripts, with per-request latency, error
// statuses (429, 5xx), stalls, malformed bodies and a count of requests in flight.
//
//	srv := llmtest.New(t, llmtest.Sequence(llmtest.Text("<move>accept</move>")))
//	agent, _ := llm.New(llm.Config{BaseURL: srv.URL, Model: "fake"})
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Request is one chat-completion request the server received.
type Request struct {
	Model       string
	Messages    []Message
	Temperature *float64
	MaxTokens   int
	// MaxCompletionTokens is the newer name of the cap.
	MaxCompletionTokens int
	Seed                *int
	// ResponseFormat is the requested format's type ("json_schema", "json_object", "text"),
	// empty when none was asked for; Schema is the JSON schema sent with json_schema.
	ResponseFormat string
	Schema         json.RawMessage
	// Authorization is the request's Authorization header.
	Authorization string
	// Seq numbers the requests from 1, in arrival order.
	Seq int
}

// Message is one chat message of a request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// System is the content of the request's first system message.
func (r Request) System() string {
	for _, m := range r.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

// Last is the content of the request's last message.
func (r Request) Last() string {
	if len(r.Messages) == 0 {
		return ""
	}
	return r.Messages[len(r.Messages)-1].Content
}

// Text is every message's content, joined.
func (r Request) Text() string {
	parts := make([]string, len(r.Messages))
	for i, m := range r.Messages {
		parts[i] = m.Content
	}
	return strings.Join(parts, "\n")
}

// Reply is what the server answers to one request.
type Reply struct {
	// Content is the completion's text (status 200).
	Content string
	// Status, when not 0 or 200, answers with that HTTP status and an error body.
	Status int
	// RetryAfter sets the Retry-After header (with an error status).
	RetryAfter string
	// Body, when set, is sent as the body instead of a completion (e.g. malformed JSON).
	Body string
	// Delay is waited before answering (on top of the server's latency).
	Delay time.Duration
	// Stall never answers: the request hangs until the client gives up or the server closes.
	Stall bool
	// PromptTokens and CompletionTokens are reported in usage; 0 counts words.
	PromptTokens, CompletionTokens int
	// Model is the model the completion names; empty: the requested one.
	Model string
}

// Text is a 200 reply with content s.
func Text(s string) Reply { return Reply{Content: s} }

// Status is an error reply with HTTP status code.
func Status(code int) Reply { return Reply{Status: code} }

// Responder computes the reply to a request. It may be called concurrently.
type Responder func(Request) Reply

// Sequence answers the i-th request with the i-th reply and repeats the last one after that.
func Sequence(replies ...Reply) Responder {
	var mu sync.Mutex
	i := 0
	return func(Request) Reply {
		mu.Lock()
		defer mu.Unlock()
		if len(replies) == 0 {
			return Reply{Status: http.StatusInternalServerError, Body: `{"error":{"message":"no scripted reply","type":"server_error"}}`}
		}
		r := replies[min(i, len(replies)-1)]
		i++
		return r
	}
}

// Server is the fake API. URL is its base URL (ending in /v1), for Config.BaseURL.
type Server struct {
	URL string

	respond        Responder
	latency        time.Duration
	rejectFormats  []string
	apiKey         string
	srv            *httptest.Server
	closing        chan struct{}
	closeOnce      sync.Once
	mu             sync.Mutex
	requests       []Request
	inFlight, peak int
}

// Option configures a Server.
type Option func(*Server)

// WithLatency delays every answer by d.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithoutResponseFormats makes the server refuse, with 400, requests whose response_format
// type is one of types (as servers that do not support structured outputs do).
func WithoutResponseFormats(types ...string) Option {
	return func(s *Server) { s.rejectFormats = append(s.rejectFormats, types...) }
}

// WithAPIKey makes the server refuse, with 401, requests without "Bearer key".
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// New starts a server answering with respond; it is closed when the test ends.
func New(tb testing.TB, respond Responder, opts ...Option) *Server {
	tb.Helper()
	s := &Server{respond: respond, closing: make(chan struct{})}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.handle)
	mux.HandleFunc("GET /v1/models", s.models)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server, releasing stalled requests.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.closing)
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
}

// Requests returns the requests received so far, in arrival order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Count is the number of requests received so far.
func (s *Server) Count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.requests)
}

// InFlight is the number of requests being answered now.
func (s *Server) InFlight() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.inFlight
}

// MaxConcurrent is the largest number of requests that were in flight at once.
func (s *Server) MaxConcurrent() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peak
}

type wireRequest struct {
	Model               string    `json:"model"`
	Messages            []Message `json:"messages"`
	Temperature         *float64  `json:"temperature"`
	MaxTokens           int       `json:"max_tokens"`
	MaxCompletionTokens int       `json:"max_completion_tokens"`
	Seed                *int      `json:"seed"`
	ResponseFormat      *struct {
		Type       string `json:"type"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
	} `json:"response_format"`
}

// models answers GET /v1/models with one model, "fake-model".
func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model","owned_by":"parley"}]}`)
}

// authorized answers 401 and returns false when the server wants a key the request lacks.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.apiKey == "" || r.Header.Get("Authorization") == "Bearer "+s.apiKey {
		return true
	}
	writeError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided")
	return false
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(w, r) {
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request_error", "body is not JSON: "+err.Error())
		return
	}
	req := Request{Model: wr.Model, Messages: wr.Messages, Temperature: wr.Temperature, MaxTokens: wr.MaxTokens,
		MaxCompletionTokens: wr.MaxCompletionTokens, Seed: wr.Seed, Authorization: r.Header.Get("Authorization")}
	if wr.ResponseFormat != nil {
		req.ResponseFormat = wr.ResponseFormat.Type
		if wr.ResponseFormat.JSONSchema != nil {
			req.Schema = wr.ResponseFormat.JSONSchema.Schema
		}
	}
	s.mu.Lock()
	req.Seq = len(s.requests) + 1
	s.requests = append(s.requests, req)
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()

	if slices.Contains(s.rejectFormats, req.ResponseFormat) {
		writeError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("response_format %q is not supported", req.ResponseFormat))
		return
	}
	reply := s.respond(req)
	if !s.wait(r, s.latency+reply.Delay) {
		return
	}
	if reply.Stall {
		select {
		case <-r.Context().Done():
		case <-s.closing:
		}
		return
	}
	switch {
	case reply.Body != "":
		w.Header().Set("Content-Type", "application/json")
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		w.WriteHeader(max(reply.Status, http.StatusOK))
		io.WriteString(w, reply.Body)
	case reply.Status != 0 && reply.Status != http.StatusOK:
		if reply.RetryAfter != "" {
			w.Header().Set("Retry-After", reply.RetryAfter)
		}
		kind := "server_error"
		if reply.Status == http.StatusTooManyRequests {
			kind = "rate_limit_exceeded"
		}
		writeError(w, reply.Status, kind, http.StatusText(reply.Status))
	default:
		model := reply.Model
		if model == "" {
			model = req.Model
		}
		pt, ct := reply.PromptTokens, reply.CompletionTokens
		if pt == 0 {
			pt = len(strings.Fields(req.Text()))
		}
		if ct == 0 {
			ct = len(strings.Fields(reply.Content))
		}
		resp := map[string]any{
			"id": fmt.Sprintf("chatcmpl-%d", req.Seq), "object": "chat.completion", "created": 0, "model": model,
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": reply.Content}}},
			"usage": map[string]int{"prompt_tokens": pt, "completion_tokens": ct, "total_tokens": pt + ct},
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}
}

// wait waits d unless the request or the server ends first.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
	case <-s.closing:
	}
	return false
}

func writeError(w http.ResponseWriter, status int, kind, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": kind}})
}

// Unbounded is the completion a maximal model reports for a request that sets no cap.
const Unbounded = 4096

// AtMaximum answers as respond does, but reports every completion as long as the request
// allows (its max_tokens or max_completion_tokens, Unbounded when it sets neither): a model
// that always writes to the cap, the worst case of every budget.
func AtMaximum(respond Responder) Responder {
	return func(r Request) Reply {
		reply := respond(r)
		if reply.Status == 0 || reply.Status == http.StatusOK {
			reply.CompletionTokens = Unbounded
			if c := max(r.MaxTokens, r.MaxCompletionTokens); c > 0 {
				reply.CompletionTokens = c
			}
		}
		return reply
	}
}
