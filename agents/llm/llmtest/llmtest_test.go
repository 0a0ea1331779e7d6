package llmtest_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/llm/llmtest"
)

func post(t *testing.T, ctx context.Context, url, body string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/chat/completions", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

const chat = `{"model": "m", "messages": [{"role": "system", "content": "You are P1, a player."}, {"role": "user", "content": "hello there"}], "temperature": 0.5, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}}`

func TestServer(t *testing.T) {
	srv := llmtest.New(t, llmtest.Sequence(
		llmtest.Text("hi"),
		llmtest.Reply{Status: http.StatusTooManyRequests, RetryAfter: "2"},
		llmtest.Reply{Body: "{broken"},
	))
	resp, body := post(t, context.Background(), srv.URL, chat)
	var completion struct {
		Model   string
		Choices []struct{ Message struct{ Content string } }
		Usage   struct{ PromptTokens, CompletionTokens int } `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &completion); err != nil || resp.StatusCode != 200 {
		t.Fatalf("%d %s: %v", resp.StatusCode, body, err)
	}
	if completion.Model != "m" || completion.Choices[0].Message.Content != "hi" {
		t.Errorf("completion %s", body)
	}
	resp, body = post(t, context.Background(), srv.URL, chat)
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" || !strings.Contains(body, "rate_limit") {
		t.Errorf("429: %d %v %s", resp.StatusCode, resp.Header, body)
	}
	if _, body = post(t, context.Background(), srv.URL, chat); body != "{broken" {
		t.Errorf("malformed body %q", body)
	}
	if _, body = post(t, context.Background(), srv.URL, chat); body != "{broken" {
		t.Errorf("the last reply does not repeat: %q", body)
	}
	reqs := srv.Requests()
	r := reqs[0]
	if len(reqs) != 4 || r.Seq != 1 || r.Model != "m" || r.System() != "You are P1, a player." || r.Last() != "hello there" ||
		*r.Temperature != 0.5 || r.ResponseFormat != "json_schema" || string(r.Schema) != `{"type": "object"}` || r.Authorization != "Bearer k" {
		t.Errorf("requests %+v", reqs)
	}
	if !srv.Contains("hello there") || srv.Contains("goodbye") {
		t.Error("Contains")
	}
}

func TestServerStallLatencyAndConcurrency(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	arrived := make(chan struct{}, 8)
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		arrived <- struct{}{}
		if r.Last() == "stall" {
			return llmtest.Reply{Stall: true}
		}
		<-release
		return llmtest.Text("ok")
	}, llmtest.WithLatency(time.Millisecond), llmtest.WithoutResponseFormats("json_object"))

	// A stalled request ends when the client gives up.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		_, body := post(t, ctx, srv.URL, `{"model": "m", "messages": [{"role": "user", "content": "stall"}]}`)
		done <- body
	}()
	<-arrived
	cancel()
	if body := <-done; !strings.Contains(body, "canceled") {
		t.Errorf("stalled request ended with %q", body)
	}
	// The client gave up; the server notices a moment later. Counted after that, the requests
	// below are the only ones in flight.
	for srv.InFlight() != 0 {
		time.Sleep(time.Millisecond)
	}

	// Three requests held at once are counted.
	var wg sync.WaitGroup
	for i := 0; i < 3; i++ {
		wg.Go(func() { post(t, context.Background(), srv.URL, `{"model": "m", "messages": []}`) })
	}
	for i := 0; i < 3; i++ {
		<-arrived
	}
	once.Do(func() { close(release) })
	wg.Wait()
	if got := srv.MaxConcurrent(); got != 3 {
		t.Errorf("MaxConcurrent = %d, want 3", got)
	}

	resp, body := post(t, context.Background(), srv.URL, `{"model": "m", "messages": [], "response_format": {"type": "json_object"}}`)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, "response_format") {
		t.Errorf("refused format: %d %s", resp.StatusCode, body)
	}
	if srv.Count() != 5 {
		t.Errorf("Count = %d", srv.Count())
	}
}

func TestAutoplay(t *testing.T) {
	prompt := `Briefing text.
- propose: not this one

Your moves now (turn 1 of 8); write exactly one:
- propose: <move>propose: P1 gives AMOUNT X, AMOUNT Y; P2 gives 1 Z</move>
- pass: <move>pass</move>

Amounts a proposal fills in (whole numbers):
- P1 gives X: from 0 to 25
- P1 gives Y: from 3 to 5
- P2 gives Z: from 1 to 1

With your move you must send exactly these messages, no more and no fewer:
- one to P2: <message to="P2">TEXT</message>

Answer now, in the format described.`
	req := llmtest.Request{Messages: []llmtest.Message{{Role: "system", Content: "You are P1 (the holder), a player"}, {Role: "user", Content: prompt}}}
	got := llmtest.Autoplay{Secret: "S", Public: "H"}.Reply(req)
	for _, want := range []string{"<reasoning>S P1</reasoning>", `<message to="P2">H P1 (to P2)</message>`, "<move>propose: P1 gives 1 X, 4 Y; P2 gives 1 Z</move>"} {
		if !strings.Contains(got, want) {
			t.Errorf("reply %q lacks %q", got, want)
		}
	}
	if got := (llmtest.Autoplay{Prefer: []string{"pass"}}).Reply(req); !strings.Contains(got, "<move>pass</move>") {
		t.Errorf("Prefer: %q", got)
	}
}
