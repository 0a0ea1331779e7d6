package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/llm/llmtest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/matchid"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// p2Turn2 is P2's observation on turn 2 of a 100-dollar ultimatum, P1 having offered 40:
// propose, accept or reject are legal.
func p2Turn2(t testing.TB) *agentv1.Observation {
	t.Helper()
	st, err := games.Start(ultimatum.New(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	offer := &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{{Seat: 0, Gives: map[string]int64{"Dollars": 40}}}}},
	}}}}}
	if _, err := st.Apply(0, offer); err != nil {
		t.Fatal(err)
	}
	obs := st.Observe(1)
	obs.MatchId = "m-1"
	obs.TimeLimit = durationpb.New(10 * time.Second)
	return obs
}

func act(t *testing.T, a *llm.Agent, obs *agentv1.Observation) *agentv1.Action {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	action, err := a.Act(ctx, obs)
	if err != nil {
		t.Fatalf("Act: %v", err)
	}
	return action
}

func kind(a *agentv1.Action) string {
	switch a.GetMove().GetKind().(type) {
	case *gamev1.Move_Propose:
		return "propose"
	case *gamev1.Move_Accept:
		return "accept"
	case *gamev1.Move_Reject:
		return "reject"
	case *gamev1.Move_Pass:
		return "pass"
	case *gamev1.Move_Say:
		return "say"
	case *gamev1.Move_Choose:
		return "choose"
	}
	return "none"
}

func offered(a *agentv1.Action) int64 {
	return a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[0].GetGives()["Dollars"]
}

// TestMalformedReplies: replies that cannot be used are corrected, up to the attempt limit,
// then the fallback is played and said so; every failure is counted.
func TestMalformedReplies(t *testing.T) {
	tests := []struct {
		name    string
		style   string
		replies []string
		// wantMove is the kind played; wantOffer the amount when it is a proposal.
		wantMove           string
		wantOffer          int64
		wantFailures       int32
		wantFallback       bool
		wantInCorrection   string // in the correction sent back after the first reply
		wantInReasoning    string
		wantStat           llm.FailureKind
		wantMessages       int
		wantRawOutputCount int
	}{
		{name: "missing tags, then right", replies: []string{"I accept your offer of 40.", "<move>accept</move>"},
			wantMove: "accept", wantFailures: 1, wantInCorrection: "<move>", wantInReasoning: "recovered", wantStat: llm.FailUnparsable},
		{name: "missing move, then right", replies: []string{"<reasoning>thinking</reasoning>", "<reasoning>ok</reasoning><move>accept</move>"},
			wantMove: "accept", wantFailures: 1, wantInCorrection: "no move", wantStat: llm.FailNoMove},
		{name: "illegal amount, then right", replies: []string{"<move>propose: P1 gives 150 Dollars</move>", "<move>propose: P1 gives 60 Dollars</move>"},
			wantMove: "propose", wantOffer: 60, wantFailures: 1, wantInCorrection: "from 0 to 100", wantStat: llm.FailBadTerms},
		{name: "illegal kind, then right", replies: []string{"<move>pass</move>", "<move>reject</move>"},
			wantMove: "reject", wantFailures: 1, wantInCorrection: "pass is not legal now", wantStat: llm.FailIllegalMove},
		{name: "wrong JSON, then right", style: "json", replies: []string{`{"move": {"kind": "accept"`, `{"move": {"kind": "accept"}}`},
			wantMove: "accept", wantFailures: 1, wantInCorrection: "JSON object", wantStat: llm.FailUnparsable},
		{name: "JSON with an illegal amount, then right", style: "json", replies: []string{`{"move": {"kind": "propose", "terms": {"P1 gives Dollars": -1}}}`, `{"move": {"kind": "propose", "terms": {"P1 gives Dollars": 55}}}`},
			wantMove: "propose", wantOffer: 55, wantFailures: 1, wantInCorrection: "negative", wantStat: llm.FailBadTerms},
		{name: "prose only, every time: no move of its own, the game's default stands in", replies: []string{"Let me think about it.", "Hmm, 40 is low.", "I would rather not say."},
			wantMove: "none", wantFailures: 3, wantFallback: true, wantInReasoning: "FALLBACK: the model gave no usable answer, so the game's default move stands in", wantStat: llm.FailFallback, wantRawOutputCount: 3},
		{name: "legal move, bad messages every time: not played as the model's", replies: []string{"<message to=\"P9\">hi</message><move>accept</move>"},
			wantMove: "none", wantFailures: 3, wantFallback: true, wantInReasoning: "FALLBACK", wantStat: llm.FailBadMessage, wantMessages: 0, wantRawOutputCount: 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			replies := make([]llmtest.Reply, len(tc.replies))
			for i, r := range tc.replies {
				replies[i] = llmtest.Text(r)
			}
			srv := llmtest.New(t, llmtest.Sequence(replies...))
			a := newAgent(t, llm.Config{BaseURL: srv.URL, Style: tc.style})
			action := act(t, a, p2Turn2(t))
			u := action.GetUsage()
			if got := kind(action); got != tc.wantMove {
				t.Errorf("move %s, want %s: %v", got, tc.wantMove, action)
			}
			if tc.wantOffer != 0 && offered(action) != tc.wantOffer {
				t.Errorf("offer %d, want %d", offered(action), tc.wantOffer)
			}
			if u.GetFormatFailures() != tc.wantFailures || u.GetFallback() != tc.wantFallback {
				t.Errorf("usage %v: want %d format failures, fallback %v", u, tc.wantFailures, tc.wantFallback)
			}
			calls := tc.wantFailures + 1
			if tc.wantFallback && u.GetFallbackCause() != agentv1.FallbackCause_FALLBACK_CAUSE_AGENT {
				t.Errorf("fallback cause %s, want the agent's own (its model's replies were unusable)", u.GetFallbackCause())
			}
			if !tc.wantFallback && u.GetFallbackCause() != agentv1.FallbackCause_FALLBACK_CAUSE_UNSPECIFIED {
				t.Errorf("fallback cause %s without a fallback", u.GetFallbackCause())
			}
			if tc.wantFallback {
				calls = tc.wantFailures
			}
			if u.GetCalls() != calls || u.GetRetries() != calls-1 || int32(len(u.GetRawOutputs())) != calls {
				t.Errorf("usage %v: want %d calls, %d retries, %d raw outputs", u, calls, calls-1, calls)
			}
			if tc.wantInCorrection != "" {
				reqs := srv.Requests()
				if len(reqs) < 2 || !strings.Contains(reqs[1].Last(), tc.wantInCorrection) {
					t.Errorf("correction %q lacks %q", reqs[len(reqs)-1].Last(), tc.wantInCorrection)
				}
				if len(reqs) >= 2 && reqs[1].Messages[2].Content != tc.replies[0] {
					t.Errorf("the correction does not carry the model's own reply back")
				}
			}
			if !strings.Contains(action.GetPrivateReasoning(), tc.wantInReasoning) {
				t.Errorf("private reasoning %q lacks %q", action.GetPrivateReasoning(), tc.wantInReasoning)
			}
			if len(action.GetMessages()) != tc.wantMessages {
				t.Errorf("messages %v, want %d", action.GetMessages(), tc.wantMessages)
			}
			if a.Stats()[tc.wantStat] == 0 {
				t.Errorf("stats %v do not count %s", a.Stats(), tc.wantStat)
			}
		})
	}
}

// TestFallbackSendsNoMove: with nothing usable the agent sends no move of its own, whatever is
// legal (accept included): its usage says fallback, with the cause, and the referee plays the
// game's default in its place (see referee/match). Its notes add no proposal.
func TestFallbackSendsNoMove(t *testing.T) {
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Text("no idea")))
	a := newAgent(t, llm.Config{BaseURL: srv.URL, Attempts: 1})
	two := []*gamev1.SeatInfo{{Seat: 0, Name: "P1"}, {Seat: 1, Name: "P2"}}
	for _, legal := range [][]gamev1.MoveKind{
		{gamev1.MoveKind_MOVE_KIND_ACCEPT, gamev1.MoveKind_MOVE_KIND_REJECT},
		{gamev1.MoveKind_MOVE_KIND_PASS},
		{gamev1.MoveKind_MOVE_KIND_CHOOSE},
	} {
		obs := &agentv1.Observation{Seats: two, LegalMoves: legal, Choices: []*gamev1.Option{{Id: "a"}},
			RequiredMessages: []*gamev1.MessageSlot{{To: []int32{1}}}}
		action := act(t, a, obs)
		u := action.GetUsage()
		if action.GetMove() != nil || len(action.GetMessages()) != 0 || !u.GetFallback() || u.GetFallbacks() != 1 ||
			u.GetFallbackCause() != agentv1.FallbackCause_FALLBACK_CAUSE_AGENT || action.GetPrivateNotes() != "" {
			t.Errorf("legal %v: fallback %v; want no move, no messages, fallback by the agent's own cause", legal, action)
		}
	}
}

// TestRetryableErrors: 429 and 5xx answers, broken bodies and a request timeout are retried
// with backoff, honouring Retry-After, and counted.
func TestRetryableErrors(t *testing.T) {
	accept := llmtest.Text("<move>accept</move>")
	tests := []struct {
		name     string
		replies  []llmtest.Reply
		timeout  time.Duration
		wantStat []llm.FailureKind
	}{
		{"429 then success", []llmtest.Reply{{Status: http.StatusTooManyRequests, RetryAfter: "0.001"}, accept}, 0, []llm.FailureKind{llm.FailRateLimited}},
		{"503, a broken body, then success", []llmtest.Reply{llmtest.Status(http.StatusServiceUnavailable), {Body: `{"choices": [`}, accept}, 0, []llm.FailureKind{llm.FailServerError, llm.FailBadResponse}},
		{"no choices then success", []llmtest.Reply{{Body: `{"id": "x", "choices": []}`}, accept}, 0, []llm.FailureKind{llm.FailBadResponse}},
		{"a stalled call times out, the next succeeds", []llmtest.Reply{{Stall: true}, accept}, 5 * time.Second, []llm.FailureKind{llm.FailTimeout}}, // time enough for the answer on a loaded machine
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.New(t, llmtest.Sequence(tc.replies...))
			a := newAgent(t, llm.Config{BaseURL: srv.URL, RequestTimeout: tc.timeout})
			action := act(t, a, p2Turn2(t))
			u := action.GetUsage()
			n := int32(len(tc.replies))
			// With a request timeout, a loaded machine may time out an answer too: the last
			// reply is then asked for again, and every call but the last counts as a timeout.
			calls := n
			if tc.timeout > 0 && u.GetCalls() > n {
				calls = u.GetCalls()
				if timeouts := a.Stats()[llm.FailTimeout]; timeouts != int64(calls-1) {
					t.Errorf("%d calls, %d timed out: want every call but the last timed out", calls, timeouts)
				}
			}
			if kind(action) != "accept" || u.GetCalls() != calls || u.GetRetries() != calls-1 || u.GetFallback() || u.GetFormatFailures() != 0 {
				t.Fatalf("action %v: want accept after %d calls", action, calls)
			}
			for _, k := range tc.wantStat {
				if a.Stats()[k] == 0 {
					t.Errorf("stats %v do not count %s", a.Stats(), k)
				}
			}
		})
	}
}

// TestNotRetried: a refusal such as 401 is not retried; the fallback is played at once.
func TestNotRetried(t *testing.T) {
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Status(http.StatusUnauthorized)))
	a := newAgent(t, llm.Config{BaseURL: srv.URL})
	action := act(t, a, p2Turn2(t))
	if !action.GetUsage().GetFallback() || action.GetUsage().GetCalls() != 1 || srv.Count() != 1 {
		t.Fatalf("action %v: want a fallback after one call", action)
	}
	if !strings.Contains(action.GetPrivateReasoning(), "http_error") {
		t.Errorf("reasoning %q does not say why", action.GetPrivateReasoning())
	}
}

// TestStalledServerDeadline: against a server that never answers, Act returns its fallback
// before the deadline the referee gave (both the context's and the observation's).
func TestStalledServerDeadline(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Reply{Stall: true}))
	a := newAgent(t, llm.Config{BaseURL: srv.URL})
	for _, tc := range []struct {
		name      string
		ctxLimit  time.Duration
		timeLimit time.Duration
	}{
		// The deadline leaves the agent a margin of 500 ms (a tenth) for its answer's way back,
		// room enough on a loaded machine; the other limit is far beyond it.
		{"context deadline", 5 * time.Second, 2 * time.Minute},
		{"observation time limit", 2 * time.Minute, 5 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs := p2Turn2(t)
			obs.TimeLimit = durationpb.New(tc.timeLimit)
			ctx, cancel := context.WithTimeout(context.Background(), tc.ctxLimit)
			defer cancel()
			start := time.Now()
			action, err := a.Act(ctx, obs)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("Act: %v", err)
			}
			if limit := min(tc.ctxLimit, tc.timeLimit); elapsed >= limit {
				t.Errorf("Act took %s, the deadline was %s", elapsed, limit)
			}
			if !action.GetUsage().GetFallback() || action.GetMove() != nil || action.GetUsage().GetFallbackCause() != agentv1.FallbackCause_FALLBACK_CAUSE_PROVIDER {
				t.Errorf("action %v: want the fallback (no move of its own), the provider's", action)
			}
			if !strings.Contains(action.GetUsage().GetFallbackDetail(), "time ran out") {
				t.Errorf("fallback detail %q does not say the time ran out", action.GetUsage().GetFallbackDetail())
			}
			if !strings.Contains(action.GetPrivateReasoning(), "time ran out") {
				t.Errorf("reasoning %q does not say the time ran out", action.GetPrivateReasoning())
			}
		})
	}
	if a.Stats()[llm.FailDeadline] == 0 {
		t.Errorf("stats %v do not count the deadline", a.Stats())
	}
}

// TestStalledServerInMatch: in a real match with a short move timeout, the stalled model never
// makes the agent late: its seat has fallbacks, not timeouts.
func TestStalledServerInMatch(t *testing.T) {
	t.Parallel()
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Reply{Stall: true}))
	res := playMatch(t, ultimatum.New(), 1, 10*time.Second, // a tenth of it is the agent's margin
		newAgent(t, llm.Config{BaseURL: srv.URL}), newAgent(t, llm.Config{BaseURL: srv.URL}))
	for _, ev := range res.Events {
		if f := ev.GetAgentFault(); f != nil {
			t.Errorf("agent fault: %v", f)
		}
		if a := ev.GetActionTaken(); a != nil {
			u := a.GetAction().GetUsage()
			if !u.GetFallback() || u.GetFallbackCause() != agentv1.FallbackCause_FALLBACK_CAUSE_PROVIDER {
				t.Errorf("action %v is no fallback blamed on the provider", a)
			}
		}
	}
	// A provider that never answers says nothing about the agent: the referee voids the match
	// after the first fallback instead of scoring it.
	if res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(res.Outcome.GetSummary(), "provider") {
		t.Errorf("outcome %v, want a void match blaming P1's model provider", res.Outcome)
	}
}

// TestCancelled: a cancelled request ends Act with the context's error.
func TestCancelled(t *testing.T) {
	arrived := make(chan struct{})
	var once sync.Once
	srv := llmtest.New(t, func(llmtest.Request) llmtest.Reply {
		once.Do(func() { close(arrived) })
		return llmtest.Reply{Stall: true}
	})
	a := newAgent(t, llm.Config{BaseURL: srv.URL})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := a.Act(ctx, p2Turn2(t))
		done <- err
	}()
	select {
	case <-arrived:
	case <-time.After(waitLimit):
		t.Fatal("the call never reached the server")
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Act: %v, want context.Canceled", err)
		}
	case <-time.After(waitLimit):
		t.Fatal("Act did not return")
	}
}

// TestConcurrencyLimit: many matches at once share one agent; it never has more calls in flight
// to the endpoint than its limit, and it does reach the limit.
func TestConcurrencyLimit(t *testing.T) {
	const limit, moves = 3, 12
	var mu sync.Mutex
	arrived := 0
	full := make(chan struct{})
	respond := func(llmtest.Request) llmtest.Reply {
		mu.Lock()
		arrived++
		if arrived == limit {
			close(full)
		}
		mu.Unlock()
		// The first calls wait until the limit's worth are in flight at once.
		select {
		case <-full:
		case <-time.After(waitLimit):
		}
		return llmtest.Text("<move>accept</move>")
	}
	srv := llmtest.New(t, respond)
	a := newAgent(t, llm.Config{BaseURL: srv.URL, Concurrency: limit})
	var wg sync.WaitGroup
	for i := 0; i < moves; i++ {
		wg.Go(func() {
			obs := p2Turn2(t)
			obs.MatchId = "m-" + string(rune('a'+i))
			if action, err := a.Act(context.Background(), obs); err != nil || kind(action) != "accept" {
				t.Errorf("Act: %v %v", action, err)
			}
		})
	}
	wg.Wait()
	if got := srv.MaxConcurrent(); got != limit {
		t.Errorf("at most %d calls were in flight at once, want exactly the limit %d", got, limit)
	}
	if srv.Count() != moves {
		t.Errorf("%d calls, want %d", srv.Count(), moves)
	}
}

// TestCache: a second agent on the same cache replays without calling the model; the key
// covers model, messages and sampling parameters; scope "match" adds the match id.
func TestCache(t *testing.T) {
	srv := llmtest.New(t, func(r llmtest.Request) llmtest.Reply {
		return llmtest.Text("<reasoning>call " + string(rune('0'+r.Seq)) + "</reasoning><move>propose: P1 gives 45 Dollars</move>")
	})
	dir := t.TempDir()
	temp := 0.7
	cfg := llm.Config{BaseURL: srv.URL, CacheDir: dir, Temperature: &temp}
	first := act(t, newAgent(t, cfg), p2Turn2(t))
	if first.GetUsage().GetCalls() != 1 || first.GetUsage().GetCacheHits() != 0 {
		t.Fatalf("first: %v", first.GetUsage())
	}
	again := act(t, newAgent(t, cfg), p2Turn2(t))
	if srv.Count() != 1 || again.GetUsage().GetCalls() != 0 || again.GetUsage().GetCacheHits() != 1 {
		t.Fatalf("replay called the model: %d requests, usage %v", srv.Count(), again.GetUsage())
	}
	if again.GetUsage().GetPromptTokens() != 0 || again.GetUsage().GetLatency().AsDuration() != 0 {
		t.Errorf("a cached reply costs nothing: %v", again.GetUsage())
	}
	strip := func(a *agentv1.Action) *agentv1.Action { a = proto.CloneOf(a); a.Usage = nil; return a }
	if !proto.Equal(strip(first), strip(again)) || !equalStrings(first.GetUsage().GetRawOutputs(), again.GetUsage().GetRawOutputs()) {
		t.Errorf("replay differs:\n%v\n%v", first, again)
	}
	// The cached reply counts against budgets at what it cost.
	if again.GetUsage().GetCachedTokens() != first.GetUsage().GetPromptTokens()+first.GetUsage().GetCompletionTokens() {
		t.Errorf("cached tokens %d, want the first call's %d", again.GetUsage().GetCachedTokens(), first.GetUsage().GetPromptTokens()+first.GetUsage().GetCompletionTokens())
	}
	otherMatch := func() *agentv1.Observation { o := p2Turn2(t); o.MatchId = "another-match"; return o }
	// Another temperature, model or match misses: by default the match id is in the key, so
	// the same prompt in another match samples afresh.
	other := 0.2
	for _, tc := range []struct {
		cfg llm.Config
		obs *agentv1.Observation
	}{
		{llm.Config{BaseURL: srv.URL, CacheDir: dir, Temperature: &other}, p2Turn2(t)},
		{llm.Config{BaseURL: srv.URL, CacheDir: dir, Temperature: &temp, Model: "other-model"}, p2Turn2(t)},
		{cfg, otherMatch()},
		{llm.Config{BaseURL: srv.URL, CacheDir: dir, Temperature: &temp, CacheScope: llm.CacheScopeGlobal}, p2Turn2(t)},
	} {
		before := srv.Count()
		act(t, newAgent(t, tc.cfg), tc.obs)
		if srv.Count() != before+1 {
			t.Errorf("config %v, match %s hit the cache", tc.cfg, tc.obs.GetMatchId())
		}
	}
	// Only with the global scope, asked for, does another match reuse a reply.
	before := srv.Count()
	act(t, newAgent(t, llm.Config{BaseURL: srv.URL, CacheDir: dir, Temperature: &temp, CacheScope: llm.CacheScopeGlobal}), otherMatch())
	if srv.Count() != before {
		t.Errorf("scope global: another match with the same prompt called the model again")
	}
	// Scoped by match, a rerun of the scheduled match (a run interrupted, or voided by its
	// provider, and played again under <id>-r<k>) replays what the earlier run was told, and
	// so does the same match resumed against another endpoint of the model; scoped globally,
	// another endpoint is another model.
	mirror := llmtest.New(t, func(llmtest.Request) llmtest.Reply { return llmtest.Text("<move>reject</move>") })
	rerun := func() *agentv1.Observation { o := p2Turn2(t); o.MatchId = matchid.Rerun(o.GetMatchId(), 2); return o }
	for name, tc := range map[string]struct {
		cfg llm.Config
		obs *agentv1.Observation
	}{
		"a rerun":               {cfg, rerun()},
		"another endpoint":      {llm.Config{BaseURL: mirror.URL, CacheDir: dir, Temperature: &temp}, p2Turn2(t)},
		"a rerun elsewhere":     {llm.Config{BaseURL: mirror.URL, CacheDir: dir, Temperature: &temp}, rerun()},
		"global, same endpoint": {llm.Config{BaseURL: srv.URL, CacheDir: dir, Temperature: &temp, CacheScope: llm.CacheScopeGlobal}, p2Turn2(t)},
	} {
		before := srv.Count()
		if got := act(t, newAgent(t, tc.cfg), tc.obs); got.GetUsage().GetCacheHits() != 1 || srv.Count() != before || mirror.Count() != 0 {
			t.Errorf("%s missed the cache: usage %v, %d calls to the endpoint, %d to another", name, got.GetUsage(), srv.Count()-before, mirror.Count())
		}
	}
	act(t, newAgent(t, llm.Config{BaseURL: mirror.URL, CacheDir: dir, Temperature: &temp, CacheScope: llm.CacheScopeGlobal}), p2Turn2(t))
	if mirror.Count() != 1 {
		t.Errorf("scope global: another endpoint reused a reply (%d calls)", mirror.Count())
	}
	c, err := llm.OpenCache(dir)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := c.Len(); err != nil || n != 6 {
		t.Errorf("cache holds %d entries (%v), want 6", n, err)
	}
}

func equalStrings(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

func TestCacheKeyHash(t *testing.T) {
	temp := 0.5
	base := llm.CacheKey{Version: 1, Model: "m", Messages: []llm.KeyMessage{{Role: "user", Content: "hi"}}, Temperature: &temp, MaxTokens: 400, Style: "tagged"}
	if base.Hash() != base.Hash() || len(base.Hash()) != 64 {
		t.Fatalf("hash %q is not a stable hex SHA-256", base.Hash())
	}
	seed := 3
	for name, change := range map[string]func(*llm.CacheKey){
		"model":       func(k *llm.CacheKey) { k.Model = "n" },
		"endpoint":    func(k *llm.CacheKey) { k.Endpoint = "http://other/v1" },
		"message":     func(k *llm.CacheKey) { k.Messages = []llm.KeyMessage{{Role: "user", Content: "hi!"}} },
		"role":        func(k *llm.CacheKey) { k.Messages = []llm.KeyMessage{{Role: "system", Content: "hi"}} },
		"temperature": func(k *llm.CacheKey) { k.Temperature = nil },
		"max tokens":  func(k *llm.CacheKey) { k.MaxTokens = 401 },
		"seed":        func(k *llm.CacheKey) { k.Seed = &seed },
		"style":       func(k *llm.CacheKey) { k.Style = "json" },
		"match":       func(k *llm.CacheKey) { k.Match = "m-1" },
	} {
		k := base
		change(&k)
		if k.Hash() == base.Hash() {
			t.Errorf("changing the %s keeps the hash", name)
		}
	}
}

// TestStructuredOutputs: the JSON style sends the move's schema; a server that refuses it gets
// a plain JSON object request, then none, and the agent remembers.
func TestStructuredOutputs(t *testing.T) {
	reply := llmtest.Text(`{"reasoning": "", "messages": [], "move": {"kind": "accept", "terms": null, "option": null}, "plan": null}`)
	srv := llmtest.New(t, llmtest.Sequence(reply), llmtest.WithoutResponseFormats("json_schema", "json_object"))
	a := newAgent(t, llm.Config{BaseURL: srv.URL, Style: "json"})
	action := act(t, a, p2Turn2(t))
	if kind(action) != "accept" || action.GetUsage().GetFallback() {
		t.Fatalf("action %v", action)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || reqs[0].ResponseFormat != "json_schema" || reqs[1].ResponseFormat != "json_object" || reqs[2].ResponseFormat != "" {
		t.Fatalf("response formats asked: %v", formats(reqs))
	}
	var schema struct {
		Properties struct {
			Move struct {
				Properties struct {
					Kind struct{ Enum []string } `json:"kind"`
				} `json:"properties"`
			} `json:"move"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(reqs[0].Schema, &schema); err != nil || strings.Join(schema.Properties.Move.Properties.Kind.Enum, ",") != "propose,accept,reject" {
		t.Errorf("schema %s (%v): want the legal kinds", reqs[0].Schema, err)
	}
	act(t, a, p2Turn2(t))
	if reqs := srv.Requests(); len(reqs) != 4 || reqs[3].ResponseFormat != "" {
		t.Errorf("the agent did not remember: %v", formats(srv.Requests()))
	}

	// A server that takes schemas gets them every time.
	srv2 := llmtest.New(t, llmtest.Sequence(reply))
	b := newAgent(t, llm.Config{BaseURL: srv2.URL, Style: "json"})
	act(t, b, p2Turn2(t))
	act(t, b, p2Turn2(t))
	if got := formats(srv2.Requests()); got != "json_schema,json_schema" {
		t.Errorf("formats %s", got)
	}
}

func formats(reqs []llmtest.Request) string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.ResponseFormat)
	}
	return strings.Join(out, ",")
}

// TestPrompts: personas, reasoning steps and styles shape the prompt; --prompt-dir overrides
// templates and adds personas; Describe reveals none of the agent-side choices.
func TestPrompts(t *testing.T) {
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Text("<move>accept</move>")))
	last := func() llmtest.Request { r := srv.Requests(); return r[len(r)-1] }

	a := newAgent(t, llm.Config{BaseURL: srv.URL, Persona: "cunning", Reasoning: "cot,backward-induction"})
	act(t, a, p2Turn2(t))
	sys := last().System()
	for _, want := range []string{"cunning", "restating", "several candidate", "plan section", "last decision", "<plan>", "You are P2"} {
		if !strings.Contains(sys, want) {
			t.Errorf("system prompt lacks %q:\n%s", want, sys)
		}
	}
	user := last().Last()
	for _, want := range []string{"You are P2 in a two-player bargaining game", "Turn 1: P1 proposes", "- accept: <move>accept</move>", "P1 gives Dollars: from 0 to 100"} {
		if !strings.Contains(user, want) {
			t.Errorf("user prompt lacks %q:\n%s", want, user)
		}
	}
	info := a.Describe()
	if strings.Contains(info.String(), "cunning") || strings.Contains(info.String(), "tagged") || !strings.Contains(info.GetDescription(), a.PromptHash()) {
		t.Errorf("Describe %v: want the prompt hash and no persona or style", info)
	}

	b := newAgent(t, llm.Config{BaseURL: srv.URL, Persona: "witty", Reasoning: "none", Style: "json"})
	act(t, b, p2Turn2(t))
	if sys := last().System(); !strings.Contains(sys, "witty") || strings.Contains(sys, "How to think") || !strings.Contains(sys, "one JSON object") {
		t.Errorf("system prompt:\n%s", sys)
	}

	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("system.tmpl", "CUSTOM for {{.Self.Name}}: {{.Persona}}\n{{.Format}}")
	write("personas/stoic.tmpl", "You are stoic.")
	c := newAgent(t, llm.Config{BaseURL: srv.URL, PromptDir: dir, Persona: "stoic"})
	act(t, c, p2Turn2(t))
	if sys := last().System(); !strings.HasPrefix(sys, "CUSTOM for P2: You are stoic.\nWrite your answer in sections") {
		t.Errorf("overridden system prompt:\n%s", sys)
	}
	if c.PromptHash() == a.PromptHash() {
		t.Error("overriding a template keeps the prompt hash")
	}

	personaFile := filepath.Join(t.TempDir(), "mine.txt")
	if err := os.WriteFile(personaFile, []byte("You speak like a pirate."), 0o644); err != nil {
		t.Fatal(err)
	}
	d := newAgent(t, llm.Config{BaseURL: srv.URL, Persona: personaFile})
	act(t, d, p2Turn2(t))
	if !strings.Contains(last().System(), "pirate") {
		t.Errorf("persona file not used:\n%s", last().System())
	}
	if d.PromptHash() != a.PromptHash() {
		t.Error("the chosen persona changes the prompt hash")
	}

	for name, cfg := range map[string]llm.Config{
		"unknown persona":    {Persona: "grumpy"},
		"unknown step":       {Reasoning: "cot,dream"},
		"unknown style":      {Style: "xml"},
		"broken template":    {PromptDir: brokenDir(t)},
		"no model":           {Model: "-"},
		"bad temperature":    {Temperature: ptr(3.0)},
		"bad cache scope":    {CacheScope: "sometimes"},
		"bad structured":     {Structured: "maybe"},
		"reasoning model T":  {Model: "o3-mini", Temperature: ptr(0.7)},
		"base URL no scheme": {BaseURL: "localhost:8080/v1"},
		"too many attempts":  {Attempts: llm.MaxAttempts + 1},
		"too many in flight": {Concurrency: llm.MaxConcurrency + 1},
		"too many tokens":    {MaxTokens: llm.MaxTokens + 1},
		"a day per call":     {RequestTimeout: 24 * time.Hour},
	} {
		if cfg.BaseURL == "" {
			cfg.BaseURL = srv.URL
		}
		if cfg.Model == "-" {
			cfg.Model = ""
		} else if cfg.Model == "" {
			cfg.Model = "m"
		}
		if _, err := llm.New(cfg); err == nil {
			t.Errorf("%s: New accepted %v", name, cfg)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func brokenDir(t *testing.T) string {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "turn.tmpl"), []byte("{{.Briefing"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReasoningModels: models that refuse max_tokens get max_completion_tokens.
func TestReasoningModels(t *testing.T) {
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Text("<move>accept</move>")))
	act(t, newAgent(t, llm.Config{BaseURL: srv.URL, Model: "o3-mini", MaxTokens: 300}), p2Turn2(t))
	act(t, newAgent(t, llm.Config{BaseURL: srv.URL, Model: "local-llama", MaxTokens: 300, Temperature: ptr(0.0)}), p2Turn2(t))
	reqs := srv.Requests()
	if reqs[0].MaxTokens != 0 || reqs[0].MaxCompletionTokens != 300 {
		t.Errorf("o3-mini: %+v", reqs[0])
	}
	if reqs[1].MaxTokens != 300 || reqs[1].Temperature == nil || *reqs[1].Temperature > 1e-6 {
		t.Errorf("local-llama: max_tokens %d temperature %v, want 300 and (almost) 0", reqs[1].MaxTokens, reqs[1].Temperature)
	}
}

// TestAPIKey: the key goes to the server as a bearer token and nowhere else: not in logs, the
// config's string, Describe or the action.
func TestAPIKey(t *testing.T) {
	const key = "sk-test-very-secret"
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Text("not an answer"), llmtest.Status(http.StatusInternalServerError), llmtest.Text("<move>accept</move>")))
	var logs bytes.Buffer
	cfg := llm.Config{BaseURL: srv.URL, Model: "m", APIKey: key, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	a := newAgent(t, cfg)
	cfg.Logger.Info("config", "cfg", cfg)
	action := act(t, a, p2Turn2(t))
	if got := srv.Requests()[0].Authorization; got != "Bearer "+key {
		t.Errorf("Authorization %q", got)
	}
	for what, text := range map[string]string{"logs": logs.String(), "config": cfg.String(), "describe": a.Describe().String(), "action": action.String()} {
		if strings.Contains(text, key) {
			t.Errorf("the key appears in the %s: %s", what, text)
		}
	}
	if !strings.Contains(logs.String(), "api_key_set=true") {
		t.Errorf("logs %s", logs.String())
	}
}

// TestRawOutputsBounded: raw replies are kept whole when small and cut, marked, to fit.
func TestRawOutputsBounded(t *testing.T) {
	long := "<reasoning>" + strings.Repeat("very long thoughts ", 400) + "</reasoning><move>accept</move>"
	srv := llmtest.New(t, llmtest.Sequence(llmtest.Text(long)))
	a := newAgent(t, llm.Config{BaseURL: srv.URL, MaxRawBytes: 1000})
	action := act(t, a, p2Turn2(t))
	raw := action.GetUsage().GetRawOutputs()
	if len(raw) != 1 || len(raw[0]) > 1000 || !strings.HasSuffix(raw[0], "[cut]") {
		t.Errorf("raw outputs %d bytes: %q", len(raw[0]), raw[0][max(0, len(raw[0])-40):])
	}
	if len(action.GetPrivateReasoning()) > 8<<10 {
		t.Errorf("reasoning of %d bytes", len(action.GetPrivateReasoning()))
	}
}

func TestConfigFromSettings(t *testing.T) {
	env := map[string]string{"OPENAI_API_KEY": "k1", "MY_KEY": "k2"}
	getenv := func(k string) string { return env[k] }
	q := func(s string) url.Values {
		v, err := url.ParseQuery(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	c, err := llm.ConfigFromSettings(q("model=m&base_url=http://h:8000/v1&style=json&persona=cunning&temperature=0.7&max_tokens=400&cache=/tmp/c&concurrency=2&attempts=4&request_timeout=30s&reasoning=cot&seed=5&cache_scope=match"), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "m" || c.BaseURL != "http://h:8000/v1" || c.Style != "json" || c.Persona != "cunning" || *c.Temperature != 0.7 || c.MaxTokens != 400 ||
		c.CacheDir != "/tmp/c" || c.Concurrency != 2 || c.Attempts != 4 || c.RequestTimeout != 30*time.Second || c.Reasoning != "cot" || *c.Seed != 5 ||
		c.CacheScope != "match" || c.APIKey != "k1" {
		t.Errorf("config %+v", c)
	}
	if c, _ := llm.ConfigFromSettings(q("model=m&base_url=http://h/v1&api_key_env=MY_KEY&no_cache=true"), getenv); c.APIKey != "k2" || c.CacheDir != "" {
		t.Errorf("api_key_env / no_cache: %+v", c)
	}
	if c, _ := llm.ConfigFromSettings(q("model=m&base_url=http://h/v1"), getenv); c.CacheDir == "" {
		t.Errorf("the cache is not on by default")
	}
	for _, bad := range []string{"api_key=sk-x", "model=m&colour=red", "temperature=warm", "max_tokens=-1", "no_cache=maybe", "request_timeout=soon"} {
		if _, err := llm.ConfigFromSettings(q(bad), getenv); err == nil {
			t.Errorf("%q accepted", bad)
		} else if strings.Contains(err.Error(), "sk-x") {
			t.Errorf("the error repeats the key: %v", err)
		}
	}
}
