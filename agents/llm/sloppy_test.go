package llm_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/llm/llmtest"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/families"
)

// TestSloppyModelEveryGame plays every game in both styles (each seat in each style) against
// two careless models behind a flaky server: one whose replies are unusable half the time, one
// never usable. No match may be void (the server's errors are retried); the agent must never
// send an illegal move (no refusal, no fault event); every fallback is the game's default move,
// recorded as such, never an acceptance; and no fallback decides a game: a match a fallback
// ended is an agent fault, and a model that never answers usably reaches no agreement.
func TestSloppyModelEveryGame(t *testing.T) {
	reg := families.New()
	profiles := []struct {
		name    string
		profile llmtest.Sloppy
	}{
		{"sloppy", llmtest.Sloppy{Unusable: 0.5, ServerErrors: 0.15}},
		{"hopeless", llmtest.Sloppy{Unusable: 1, ServerErrors: 0.15}},
	}
	for _, g := range reg.Games() {
		name := g.Info().GetName()
		for _, p := range profiles {
			for flip := range 2 {
				t.Run(fmt.Sprintf("%s/%s/%d", name, p.name, flip), func(t *testing.T) {
					t.Parallel()
					game, err := reg.Lookup(name)
					if err != nil {
						t.Fatal(err)
					}
					srv := llmtest.New(t, p.profile.Responder())
					seats := game.Info().GetSeats()
					recs := make([]*recording, len(seats))
					agents := make([]sdk.Agent, len(seats))
					for i := range seats {
						style := []string{"tagged", "json"}[(i+flip)%2]
						recs[i] = &recording{agent: newAgent(t, llm.Config{BaseURL: srv.URL, Style: style})}
						agents[i] = recs[i]
					}
					res := playMatch(t, game, uint64(11+flip), 10*time.Second, agents...)
					out := res.Outcome
					if out.GetCause() == matchv1.EndCause_END_CAUSE_VOID {
						t.Fatalf("outcome %v", out)
					}
					if p.profile.Unusable == 1 && out.GetAgreement() {
						t.Errorf("a model that never answered usably reached an agreement: %v", out)
					}
					fallbacks := 0
					var last *eventsv1.ActionTaken
					for _, ev := range res.Events {
						if ev.GetActionRefused() != nil || ev.GetAgentFault() != nil {
							t.Errorf("turn %d: %v", ev.GetTurn(), ev)
						}
						a := ev.GetActionTaken()
						if a == nil {
							continue
						}
						last = a
						if !a.GetAction().GetUsage().GetFallback() {
							continue
						}
						fallbacks++
						if a.GetAction().GetUsage().GetFallbackCause() != agentv1.FallbackCause_FALLBACK_CAUSE_AGENT {
							t.Errorf("turn %d: fallback cause %s", ev.GetTurn(), a.GetAction().GetUsage().GetFallbackCause())
						}
						if a.GetDefaultReason() == "" || a.GetAction().GetMove().GetAccept() != nil {
							t.Errorf("turn %d: a fallback not played as the game's default: %v", ev.GetTurn(), a)
						}
					}
					if last.GetAction().GetUsage().GetFallback() && out.GetCause() != matchv1.EndCause_END_CAUSE_AGENT_FAULT {
						t.Errorf("a fallback ended the match as %v, not as an agent fault", out)
					}
					if p.profile.Unusable == 1 && fallbacks == 0 {
						t.Error("a model that never answers usably caused no fallback")
					}
				})
			}
		}
	}
}
