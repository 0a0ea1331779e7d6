package telemetry_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/internal/telemetry"
)

func scrape(t *testing.T, m *telemetry.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	return string(body)
}

func TestObserverAndHTTP(t *testing.T) {
	m := telemetry.New()
	m.MatchStarted("ultimatum")
	m.AgentCalled("fair@1", 20*time.Millisecond)
	m.ActionTaken("ultimatum", "fair@1", false)
	m.ActionRefused("ultimatum", "tough")
	m.AgentCalled("tough", time.Second)
	m.AgentFaulted("ultimatum", "tough", eventsv1.FaultKind_FAULT_KIND_TIMEOUT)
	m.ActionTaken("ultimatum", "tough", true)
	m.MatchEnded("ultimatum", &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_AGENT_FAULT}, 2*time.Second)
	m.MatchStarted("ultimatum")
	m.MatchEnded("ultimatum", nil, 0) // its record failed

	mux := http.NewServeMux()
	mux.HandleFunc("GET /x/{id}", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := m.HTTP(mux)
	for _, path := range []string{"/x/1", "/x/2", "/nothing"} {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, path, nil))
	}
	done := m.StreamOpened("GET /x/{id}")
	done()
	done() // twice is once

	text := scrape(t, m)
	for _, want := range []string{
		`parley_matches_started_total{game="ultimatum"} 2`,
		`parley_matches_running{game="ultimatum"} 0`,
		`parley_matches_finished_total{cause="agent_fault",game="ultimatum"} 1`,
		`parley_matches_finished_total{cause="record_failed",game="ultimatum"} 1`,
		`parley_match_duration_seconds_count{game="ultimatum"} 1`,
		`parley_moves_total{agent="fair@1",game="ultimatum"} 1`,
		`parley_moves_total{agent="tough",game="ultimatum"} 1`,
		`parley_default_moves_total{agent="tough",game="ultimatum"} 1`,
		`parley_move_latency_seconds_count{agent="tough"} 1`,
		`parley_invalid_actions_total{agent="tough",game="ultimatum"} 1`,
		`parley_agent_faults_total{agent="tough",game="ultimatum",kind="timeout"} 1`,
		`parley_http_requests_total{code="418",method="GET",route="GET /x/{id}"} 2`,
		`parley_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
		`parley_http_streams_open{route="GET /x/{id}"} 0`,
		`process_cpu_seconds_total`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
}

func TestConsumerLag(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	js := b.JetStream()
	if _, err := js.CreateOrUpdateConsumer(ctx, natsname.MatchStream, jetstream.ConsumerConfig{Durable: "slow", AckPolicy: jetstream.AckExplicitPolicy}); err != nil {
		t.Fatal(err)
	}
	pub := bus.NewPublisher(b)
	for seq := uint64(1); seq <= 3; seq++ {
		ev := &eventsv1.MatchEvent{MatchId: "lag", Seq: seq, Payload: &eventsv1.MatchEvent_PhaseStarted{PhaseStarted: &eventsv1.PhaseStarted{Phase: "p"}}}
		if err := pub.Record(ctx, ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := pub.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	m := telemetry.New()
	m.WatchConsumer(js, natsname.MatchStream, "slow")
	m.WatchConsumer(js, natsname.MatchStream, "missing") // left out until it exists
	// The server counts a consumer's pending messages as it gets to them, not with the publish
	// acknowledgement: scrape until they are all counted.
	want := `parley_jetstream_consumer_pending_messages{consumer="slow",stream="PARLEY_MATCHES"} 3`
	text := scrape(t, m)
	for !strings.Contains(text, want) && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
		text = scrape(t, m)
	}
	if !strings.Contains(text, want) {
		t.Errorf("lag of the consumer missing:\n%s", text)
	}
	if strings.Contains(text, `consumer="missing"`) {
		t.Error("a consumer that does not exist is reported")
	}
}

// Attack 6: a flood of made-up agent names (labels from requests, names agents give
// themselves) grew /metrics to 280,507 agent series. Past MaxAgentSeries names the rest are
// counted together under "other", every move still counted.
func TestAgentSeriesBounded(t *testing.T) {
	m := telemetry.New()
	const names = 3 * telemetry.MaxAgentSeries
	for i := range names {
		agent := fmt.Sprintf("flood-%d", i)
		m.ActionTaken("ultimatum", agent, false)
		m.AgentCalled(agent, time.Millisecond)
	}
	series, other := 0, ""
	for line := range strings.Lines(scrape(t, m)) {
		if strings.HasPrefix(line, "parley_moves_total{") {
			series++
			if strings.Contains(line, `agent="other"`) {
				other = strings.TrimSpace(line)
			}
		}
	}
	if series != telemetry.MaxAgentSeries+1 {
		t.Errorf("%d moves_total series for %d agent names, want %d and one for the rest", series, names, telemetry.MaxAgentSeries)
	}
	want := fmt.Sprintf(`parley_moves_total{agent="other",game="ultimatum"} %d`, names-telemetry.MaxAgentSeries)
	if other != want {
		t.Errorf("the rest: %q, want %q", other, want)
	}
}
