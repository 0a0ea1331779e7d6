// Package telemetry is Parley's Prometheus metrics: what matches do (the referee tells it through
// internal/stack.Observer; this package knows nothing of the runner), what the HTTP gateway
// serves, and how far behind the JetStream consumers are. Each process makes one Metrics with
// its own registry (no global state) and serves it on /metrics.
//
// Metrics (every name starts with parley_):
//
//	matches_started_total{game}                 matches whose MatchStarted was recorded
//	matches_running{game}                       started and not yet ended
//	matches_finished_total{game,cause}          ended, by end cause (cause "record_failed" when the record broke off)
//	match_duration_seconds{game}                from MatchStarted to MatchEnded
//	moves_total{game,agent}                     actions applied (the agent's own or a default move)
//	default_moves_total{game,agent}             of those, the game's default move standing in
//	move_latency_seconds{agent}                 time an agent took to answer one request
//	invalid_actions_total{game,agent}           actions the rules refused
//	agent_faults_total{game,agent,kind}         timeouts, crashes, malformed or oversized replies, retries exhausted
//	jetstream_consumer_pending_messages{stream,consumer}      messages not yet delivered (lag)
//	jetstream_consumer_ack_pending_messages{stream,consumer}  delivered, not yet acknowledged
//	jetstream_consumer_redelivered_messages{stream,consumer}  delivered more than once, not yet acknowledged
//	http_requests_total{route,method,code}      requests the gateway answered
//	http_request_duration_seconds{route,method} time to answer (to the end of a stream)
//	http_streams_open{route}                    live streams (server-sent events, server-streaming RPCs) open now
//
// plus the Go runtime's and the process's own (go_*, process_*). Agents are named as analytics
// rates them: the organiser's label, else name@version. Those names come from requests and
// from the agents themselves, so the first MaxAgentSeries of them get series of their own and
// every later one is counted under "other": a flood of made-up names cannot grow /metrics.
package telemetry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// lagTimeout bounds asking JetStream about one consumer during a scrape.
const lagTimeout = 2 * time.Second

// Metrics holds a process's metrics. Its methods are safe for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	matchesStarted  *prometheus.CounterVec
	matchesRunning  *prometheus.GaugeVec
	matchesFinished *prometheus.CounterVec
	matchDuration   *prometheus.HistogramVec
	moves           *prometheus.CounterVec
	defaultMoves    *prometheus.CounterVec
	moveLatency     *prometheus.HistogramVec
	invalid         *prometheus.CounterVec
	faults          *prometheus.CounterVec
	httpRequests    *prometheus.CounterVec
	httpDuration    *prometheus.HistogramVec
	streamsOpen     *prometheus.GaugeVec

	lag *lagCollector

	agentsMu sync.Mutex
	agents   map[string]bool // the agent names with series of their own
}

// MaxAgentSeries bounds the agent names with series of their own; OtherAgent stands for the
// rest.
const (
	MaxAgentSeries = 256
	OtherAgent     = "other"
)

// agent returns the agent label value of name: its own while fewer than MaxAgentSeries names
// have one, else OtherAgent.
func (m *Metrics) agent(name string) string {
	m.agentsMu.Lock()
	defer m.agentsMu.Unlock()
	if m.agents[name] {
		return name
	}
	if len(m.agents) >= MaxAgentSeries {
		return OtherAgent
	}
	m.agents[name] = true
	return name
}

// New returns a Metrics with every metric registered on a fresh registry, the Go runtime and
// process collectors included.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(), agents: map[string]bool{},
		matchesStarted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_matches_started_total", Help: "Matches whose MatchStarted was recorded.",
		}, []string{"game"}),
		matchesRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "parley_matches_running", Help: "Matches started and not yet ended.",
		}, []string{"game"}),
		matchesFinished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_matches_finished_total", Help: "Matches ended, by end cause.",
		}, []string{"game", "cause"}),
		matchDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "parley_match_duration_seconds", Help: "Time from MatchStarted to MatchEnded.",
			Buckets: prometheus.ExponentialBuckets(0.01, 4, 10),
		}, []string{"game"}),
		moves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_moves_total", Help: "Actions applied: the agent's own, or the game's default move.",
		}, []string{"game", "agent"}),
		defaultMoves: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_default_moves_total", Help: "Game default moves applied for agents that gave no usable answer.",
		}, []string{"game", "agent"}),
		moveLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "parley_move_latency_seconds", Help: "Time an agent took to answer one request (timeouts included).",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 11),
		}, []string{"agent"}),
		invalid: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_invalid_actions_total", Help: "Actions the rules refused.",
		}, []string{"game", "agent"}),
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_agent_faults_total", Help: "Agent faults by kind: timeout, unavailable, malformed, oversized, error, retries_exhausted.",
		}, []string{"game", "agent", "kind"}),
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "parley_http_requests_total", Help: "HTTP requests answered, by route, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "parley_http_request_duration_seconds", Help: "Time to answer an HTTP request (to the end of a stream).",
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 10),
		}, []string{"route", "method"}),
		streamsOpen: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "parley_http_streams_open", Help: "Live streams (server-sent events, server-streaming RPCs) open now.",
		}, []string{"route"}),
		lag: &lagCollector{
			pending: prometheus.NewDesc("parley_jetstream_consumer_pending_messages",
				"Messages of the stream the consumer has not yet been delivered (its lag).", []string{"stream", "consumer"}, nil),
			ackPending: prometheus.NewDesc("parley_jetstream_consumer_ack_pending_messages",
				"Messages delivered to the consumer and not yet acknowledged.", []string{"stream", "consumer"}, nil),
			redelivered: prometheus.NewDesc("parley_jetstream_consumer_redelivered_messages",
				"Messages delivered to the consumer more than once and not yet acknowledged.", []string{"stream", "consumer"}, nil),
		},
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.matchesStarted, m.matchesRunning, m.matchesFinished, m.matchDuration,
		m.moves, m.defaultMoves, m.moveLatency, m.invalid, m.faults,
		m.httpRequests, m.httpDuration, m.streamsOpen, m.lag,
	)
	return m
}

// Registry returns the registry, for tests and for adding a process's own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Serve serves /metrics on lis until ctx ends.
func (m *Metrics) Serve(ctx context.Context, lis net.Listener) error {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(lis); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// MatchStarted counts a match of game started.
func (m *Metrics) MatchStarted(game string) {
	m.matchesStarted.WithLabelValues(game).Inc()
	m.matchesRunning.WithLabelValues(game).Inc()
}

// MatchEnded counts a match of game ended with cause (nil: its record failed before its end),
// elapsed after its start.
func (m *Metrics) MatchEnded(game string, out *matchv1.Outcome, elapsed time.Duration) {
	m.matchesRunning.WithLabelValues(game).Dec()
	cause := "record_failed"
	if out != nil {
		cause = enumName(out.GetCause().String(), "END_CAUSE_")
		m.matchDuration.WithLabelValues(game).Observe(elapsed.Seconds())
	}
	m.matchesFinished.WithLabelValues(game, cause).Inc()
}

// AgentCalled observes how long agent took to answer one request.
func (m *Metrics) AgentCalled(agent string, latency time.Duration) {
	m.moveLatency.WithLabelValues(m.agent(agent)).Observe(latency.Seconds())
}

// ActionTaken counts a move of agent in game; defaulted when it was the game's default move.
func (m *Metrics) ActionTaken(game, agent string, defaulted bool) {
	agent = m.agent(agent)
	m.moves.WithLabelValues(game, agent).Inc()
	if defaulted {
		m.defaultMoves.WithLabelValues(game, agent).Inc()
	}
}

// ActionRefused counts an action of agent in game the rules refused.
func (m *Metrics) ActionRefused(game, agent string) {
	m.invalid.WithLabelValues(game, m.agent(agent)).Inc()
}

// AgentFaulted counts a fault of agent in game.
func (m *Metrics) AgentFaulted(game, agent string, kind eventsv1.FaultKind) {
	m.faults.WithLabelValues(game, m.agent(agent), enumName(kind.String(), "FAULT_KIND_")).Inc()
}

func enumName(s, prefix string) string { return strings.ToLower(strings.TrimPrefix(s, prefix)) }

// WatchConsumer adds a JetStream consumer whose lag every scrape reports (a consumer that does
// not exist yet is left out until it does).
func (m *Metrics) WatchConsumer(js jetstream.JetStream, stream, consumer string) {
	m.lag.mu.Lock()
	defer m.lag.mu.Unlock()
	m.lag.watched = append(m.lag.watched, watchedConsumer{js: js, stream: stream, consumer: consumer})
}

type watchedConsumer struct {
	js               jetstream.JetStream
	stream, consumer string
}

// lagCollector asks JetStream about the watched consumers at each scrape.
type lagCollector struct {
	pending, ackPending, redelivered *prometheus.Desc

	mu      sync.Mutex
	watched []watchedConsumer
}

func (c *lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.ackPending
	ch <- c.redelivered
}

func (c *lagCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	watched := append([]watchedConsumer(nil), c.watched...)
	c.mu.Unlock()
	for _, w := range watched {
		ctx, cancel := context.WithTimeout(context.Background(), lagTimeout)
		cons, err := w.js.Consumer(ctx, w.stream, w.consumer)
		var info *jetstream.ConsumerInfo
		if err == nil {
			info, err = cons.Info(ctx)
		}
		cancel()
		if err != nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(info.NumPending), w.stream, w.consumer)
		ch <- prometheus.MustNewConstMetric(c.ackPending, prometheus.GaugeValue, float64(info.NumAckPending), w.stream, w.consumer)
		ch <- prometheus.MustNewConstMetric(c.redelivered, prometheus.GaugeValue, float64(info.NumRedelivered), w.stream, w.consumer)
	}
}

// HTTP counts and times the requests next answers. Routes are the ServeMux patterns that
// matched ("unmatched" for none), so the labels stay few whatever the paths asked for.
func (m *Metrics) HTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &StatusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		m.httpRequests.WithLabelValues(route, r.Method, strconv.Itoa(sw.Status())).Inc()
		m.httpDuration.WithLabelValues(route, r.Method).Observe(time.Since(start).Seconds())
	})
}

// StreamOpened counts a live stream of route as open until the returned function is called.
func (m *Metrics) StreamOpened(route string) (closed func()) {
	g := m.streamsOpen.WithLabelValues(route)
	g.Inc()
	var once sync.Once
	return func() { once.Do(g.Dec) }
}

// StatusWriter remembers the status code written, for logs and metrics, and passes Flush on
// (streams need it).
type StatusWriter struct {
	http.ResponseWriter
	code int
}

// Status is the status code of the response: 200 when the handler wrote none (as net/http
// answers then).
func (w *StatusWriter) Status() int {
	if w.code == 0 {
		return http.StatusOK
	}
	return w.code
}

func (w *StatusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *StatusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer (Flush, deadlines, and the
// full-duplex HTTP/2 that gRPC needs).
func (w *StatusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush implements http.Flusher.
func (w *StatusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
