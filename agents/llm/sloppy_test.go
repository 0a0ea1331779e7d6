package llm_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/llm/llmtest"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/families"
)

// TestSloppyModelEveryGame plays every game in both styles (each seat in each style) against
// two careless models behind a flaky server: one whose replies are unusable half the time, one
// never usable. Every match must end, not void; the agent must never send an illegal move
// (no refusal, no fault); and no fallback may end a game while a move that keeps it going
// was legal (a fallback never accepts, and rejects only when nothing else is legal).
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
					if out.GetCause() == matchv1.EndCause_END_CAUSE_VOID || out.GetCause() == matchv1.EndCause_END_CAUSE_AGENT_FAULT {
						t.Fatalf("outcome %v", out)
					}
					legal := map[[2]int32][]gamev1.MoveKind{}
					for _, r := range recs {
						for _, o := range r.observations() {
							legal[[2]int32{o.GetSeat(), o.GetTurn()}] = o.GetLegalMoves()
						}
					}
					fallbacks := 0
					for _, ev := range res.Events {
						if ev.GetActionRefused() != nil || ev.GetAgentFault() != nil {
							t.Errorf("turn %d: %v", ev.GetTurn(), ev)
						}
						a := ev.GetActionTaken()
						if a == nil || !a.GetAction().GetUsage().GetFallback() {
							continue
						}
						fallbacks++
						if a.GetAction().GetUsage().GetFallbackCause() != agentv1.FallbackCause_FALLBACK_CAUSE_AGENT {
							t.Errorf("turn %d: fallback cause %s", ev.GetTurn(), a.GetAction().GetUsage().GetFallbackCause())
						}
						if strings.Contains(a.GetAction().GetPrivateReasoning(), "the model's own move") {
							continue // the model chose the move; only its messages were unusable
						}
						moves := legal[[2]int32{a.GetSeat(), ev.GetTurn()}]
						switch a.GetAction().GetMove().GetKind().(type) {
						case *gamev1.Move_Accept:
							t.Errorf("turn %d: a fallback accepted", ev.GetTurn())
						case *gamev1.Move_Reject:
							if slices.ContainsFunc(moves, func(k gamev1.MoveKind) bool {
								return k != gamev1.MoveKind_MOVE_KIND_ACCEPT && k != gamev1.MoveKind_MOVE_KIND_REJECT
							}) {
								t.Errorf("turn %d: a fallback rejected while %v were legal", ev.GetTurn(), moves)
							}
						}
					}
					if p.profile.Unusable == 1 && fallbacks == 0 {
						t.Error("a model that never answers usably caused no fallback")
					}
				})
			}
		}
	}
}
