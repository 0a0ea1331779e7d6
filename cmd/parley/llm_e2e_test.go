package main

// End-to-end tests of the language-model agent: `parley play` with builtin:llm seats and
// `parley agent llm`, against a fake chat-completions server started in the test (there is no
// internet here), whose autoplayer answers legally from the prompts.

import (
	"context"
	"net/url"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/llm/llmtest"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/families"
)

const (
	llmKey    = "sk-e2e-never-print-me"
	llmSecret = "SECRET-REASONING"
	llmPublic = "PUBLIC-HELLO"
)

// llmAgentSpec is a builtin:llm address on srv with extra settings.
func llmAgentSpec(srv *llmtest.Server, extra ...string) string {
	q := url.Values{"model": {"fake-model"}, "base_url": {srv.URL}}
	for _, kv := range extra {
		k, v, _ := strings.Cut(kv, "=")
		q.Set(k, v)
	}
	return "builtin:llm?" + q.Encode()
}

func autoplayServer(t *testing.T) *llmtest.Server {
	return llmtest.New(t, llmtest.Autoplay{Secret: llmSecret, Public: llmPublic}.Responder())
}

// TestLLMPlayEveryGame plays every registered game with LLM agents in every seat (styles
// alternating) through `parley play --json`, and checks the record: the model's moves only,
// usage summed per seat in match_ended, raw outputs and private reasoning only in the seat's
// own action_taken, and the API key nowhere but the Authorization header.
func TestLLMPlayEveryGame(t *testing.T) {
	t.Parallel()
	for _, g := range families.New().Games() {
		name := g.Info().GetName()
		seats := g.Info().GetSeats()
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			srv := autoplayServer(t)
			args := []string{"play", name, "--seed", "3", "--json"}
			cache := t.TempDir()
			for i := range seats {
				args = append(args, "--agent", llmAgentSpec(srv, "style="+[]string{"tagged", "json"}[i%2], "cache="+cache, "reasoning=cot"))
			}
			r := mustRun(t, []string{"OPENAI_API_KEY=" + llmKey}, args...)
			evs := decodeRecord(t, r.stdout)
			_, ended := checkRecord(t, evs, len(seats))
			if strings.Contains(r.stdout+r.stderr, llmKey) {
				t.Fatal("the API key appears in the output")
			}
			for _, req := range srv.Requests() {
				if req.Authorization != "Bearer "+llmKey {
					t.Fatalf("Authorization %q", req.Authorization)
				}
			}
			calls := make([]int32, len(seats))
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			for i, ev := range evs {
				if ev.GetAgentFault() != nil || ev.GetActionRefused() != nil {
					t.Errorf("fault or refusal: %v", ev)
				}
				taken := ev.GetActionTaken()
				if taken != nil {
					u := taken.GetAction().GetUsage()
					if u.GetCalls() != 1 || u.GetFallback() || len(u.GetRawOutputs()) != 1 || !strings.Contains(u.GetRawOutputs()[0], llmSecret) {
						t.Errorf("seat %d: usage %v", taken.GetSeat(), u)
					}
					calls[taken.GetSeat()] += u.GetCalls()
				}
				// Private text of a seat appears only in that seat's own action_taken.
				for s, seat := range seats {
					if strings.Contains(lines[i], llmSecret+" "+seat) && (taken == nil || int(taken.GetSeat()) != s) {
						t.Errorf("seat %s's private text in event %d: %s", seat, i+1, lines[i])
					}
				}
			}
			for _, su := range ended.GetUsage() {
				tot := su.GetTotal()
				if tot.GetCalls() != calls[su.GetSeat()] || tot.GetModel() != "fake-model" || tot.GetPromptTokens() == 0 || len(tot.GetRawOutputs()) != 0 {
					t.Errorf("match_ended usage of seat %d: %v, want %d calls", su.GetSeat(), tot, calls[su.GetSeat()])
				}
			}
			if len(ended.GetUsage()) != len(seats) {
				t.Errorf("match_ended usage %v, want one per seat", ended.GetUsage())
			}
		})
	}
}

// recordingAgent accepts whatever it can and keeps every observation it receives.
type recordingAgent struct {
	mu   sync.Mutex
	seen []*agentv1.Observation
}

func (r *recordingAgent) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	r.mu.Lock()
	r.seen = append(r.seen, proto.CloneOf(obs))
	r.mu.Unlock()
	for _, k := range obs.GetLegalMoves() {
		if k == gamev1.MoveKind_MOVE_KIND_ACCEPT {
			return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}}, nil
		}
	}
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}, nil
}

// TestLLMPrivateNeverReachesOpponent: an opponent that records what it is sent never sees the
// LLM seat's private reasoning, plan, raw output or usage, though it hears its message.
func TestLLMPrivateNeverReachesOpponent(t *testing.T) {
	t.Parallel()
	srv := autoplayServer(t)
	opponent := &recordingAgent{}
	r := mustRun(t, nil, "play", "ultimatum", "--seed", "9", "--json",
		"--agent", llmAgentSpec(srv, "no_cache=true", "reasoning=cot"), "--agent", sdktest.Addr(t, opponent))
	evs := decodeRecord(t, r.stdout)
	checkRecord(t, evs, 2)
	opponent.mu.Lock()
	defer opponent.mu.Unlock()
	if len(opponent.seen) == 0 {
		t.Fatal("the opponent was never asked")
	}
	heard := false
	for _, obs := range opponent.seen {
		text := prototext.Format(obs)
		if strings.Contains(text, llmSecret) || strings.Contains(text, "raw_outputs") || strings.Contains(text, "usage") || strings.Contains(text, "<reasoning>") {
			t.Errorf("the opponent observed private data:\n%s", text)
		}
		heard = heard || strings.Contains(text, llmPublic+" P1")
	}
	if !heard {
		t.Error("the opponent never heard the LLM's public message")
	}
	// The record does keep it, in the LLM seat's own action.
	if !strings.Contains(r.stdout, llmSecret+" P1") {
		t.Error("the record lacks the LLM seat's private reasoning")
	}
}

// TestLLMReplayFromCache: re-running a recorded match with the same seed and agents replays it
// from the reply cache: the same moves, messages, reasoning and raw outputs, no model call; and
// a replay of the replay is identical byte for byte.
func TestLLMReplayFromCache(t *testing.T) {
	t.Parallel()
	srv := autoplayServer(t)
	cache := t.TempDir()
	args := []string{"play", "ultimatum", "--seed", "5", "--json", "--param", "max_turns=4",
		"--agent", llmAgentSpec(srv, "cache="+cache, "temperature=0.7"),
		"--agent", llmAgentSpec(srv, "cache="+cache, "temperature=0.7", "style=json")}
	first := decodeRecord(t, mustRun(t, nil, args...).stdout)
	calls := srv.Count()
	if calls == 0 {
		t.Fatal("the model was never called")
	}
	secondOut := mustRun(t, nil, args...).stdout
	second := decodeRecord(t, secondOut)
	if srv.Count() != calls {
		t.Fatalf("the replay called the model %d times", srv.Count()-calls)
	}
	if len(first) != len(second) {
		t.Fatalf("%d events, then %d", len(first), len(second))
	}
	hits := 0
	for i := range first {
		a, b := withoutUsage(first[i]), withoutUsage(second[i])
		if !proto.Equal(a, b) {
			t.Errorf("event %d differs:\n%v\n%v", i+1, a, b)
		}
		if ta, tb := first[i].GetActionTaken(), second[i].GetActionTaken(); ta != nil {
			ua, ub := ta.GetAction().GetUsage(), tb.GetAction().GetUsage()
			if strings.Join(ua.GetRawOutputs(), "|") != strings.Join(ub.GetRawOutputs(), "|") || ub.GetCalls() != 0 || ub.GetCacheHits() != ua.GetCalls() {
				t.Errorf("usage %v, then %v", ua, ub)
			}
			hits += int(ub.GetCacheHits())
		}
	}
	if hits != calls {
		t.Errorf("%d cache hits, want %d", hits, calls)
	}
	if third := mustRun(t, nil, args...).stdout; third != secondOut {
		t.Errorf("a replay of the replay differs:\n%s\n%s", secondOut, third)
	}
}

// withoutUsage copies ev with the usage (which says how replies were got) cleared.
func withoutUsage(ev *eventsv1.MatchEvent) *eventsv1.MatchEvent {
	ev = proto.CloneOf(ev)
	if a := ev.GetActionTaken(); a != nil {
		a.GetAction().Usage = nil
	}
	if e := ev.GetMatchEnded(); e != nil {
		e.Usage = nil
	}
	return ev
}

// TestLLMAgentCommand serves `parley agent llm` as its own process, plays a match against it,
// and checks the key it reads from the named variable reaches the server and no output.
func TestLLMAgentCommand(t *testing.T) {
	// Not parallel: the child inherits the key through this process's environment.
	t.Setenv("MY_LLM_KEY", llmKey)
	srv := autoplayServer(t)
	agent := startProc(t, "", parleyBin, "agent", "llm", "--listen", "127.0.0.1:0", "--base-url", srv.URL,
		"--model", "fake-model", "--no-cache", "--style", "json", "--persona", "cunning", "--api-key-env", "MY_LLM_KEY", "--verbose")
	addr := agent.waitLine("agent llm listening on ")
	r := mustRun(t, nil, "play", "ultimatum", "--seed", "2", "--json", "--agent", "grpc://"+addr, "--agent", "builtin:fair")
	evs := decodeRecord(t, r.stdout)
	started, ended := checkRecord(t, evs, 2)
	if got := started.GetSeats()[0].GetAgent().GetName(); got != "llm:fake-model" {
		t.Errorf("seat 0 is %q", got)
	}
	if u := ended.GetUsage(); len(u) != 1 || u[0].GetSeat() != 0 || u[0].GetTotal().GetCalls() == 0 {
		t.Errorf("match_ended usage %v", u)
	}
	if code, _ := agent.interrupt(); code != 0 {
		t.Errorf("agent exited with %d\n%s", code, agent.output())
	}
	reqs := srv.Requests()
	if len(reqs) == 0 || reqs[0].Authorization != "Bearer "+llmKey || !strings.Contains(reqs[0].System(), "cunning") || reqs[0].ResponseFormat != "json_schema" {
		t.Errorf("requests %+v", reqs)
	}
	if out := agent.output() + r.stdout + r.stderr; strings.Contains(out, llmKey) {
		t.Errorf("the key appears in the output:\n%s", out)
	}
	if strings.Contains(prototext.Format(started), "cunning") {
		t.Error("the persona reached the record")
	}
}

// TestLLMUsageErrors: a missing flag or a key in an agent address is a usage error that does
// not repeat the key.
func TestLLMUsageErrors(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"no base URL":      {"agent", "llm", "--model", "m"},
		"no model":         {"agent", "llm", "--base-url", "http://127.0.0.1:1/v1"},
		"unknown persona":  {"agent", "llm", "--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--persona", "grumpy", "--no-cache"},
		"key in address":   {"play", "ultimatum", "--agent", "builtin:llm?model=m&base_url=http://127.0.0.1:1/v1&api_key=" + llmKey, "--agent", "builtin:fair"},
		"no model setting": {"play", "ultimatum", "--agent", "builtin:llm?base_url=http://127.0.0.1:1/v1", "--agent", "builtin:fair"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := runParley(t, nil, args...)
			if r.code != 2 || strings.Contains(r.stdout+r.stderr, llmKey) {
				t.Errorf("want exit status 2 without the key:\n%s", r)
			}
		})
	}
}
