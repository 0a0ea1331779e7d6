package llm_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/prototext"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/llm/llmtest"
	"github.com/parley-arena/parley/agents/sdk"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/families"
)

// TestFullMatchEveryGame plays a whole match of every registered game between LLM agents (the
// seats alternate the tagged and JSON styles, and the deliberation game's the study's own
// style too) against the fake server, whose autoplayer reads
// the prompts as a model would. Every move must be the model's (no refusal, fault or fallback),
// usage must be summed per seat in match_ended, raw outputs must stay in the seat's own
// actions, and no seat may ever observe another's private reasoning, plan or raw output.
func TestFullMatchEveryGame(t *testing.T) {
	reg := families.New()
	for _, g := range reg.Games() {
		name := g.Info().GetName()
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			game, err := reg.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			srv := llmtest.New(t, llmtest.Autoplay{Secret: "SECRET-REASONING", Public: "PUBLIC-HELLO"}.Responder())
			seats := game.Info().GetSeats()
			recs := make([]*recording, len(seats))
			agents := make([]sdk.Agent, len(seats))
			for i := range seats {
				styles := []string{"tagged", "json"}
				if name == "deliberation" {
					styles = append(styles, "deliberation")
				}
				style := styles[i%len(styles)]
				recs[i] = &recording{agent: newAgent(t, llm.Config{BaseURL: srv.URL, Style: style, Reasoning: "cot"})}
				agents[i] = recs[i]
			}
			res := playMatch(t, game, 7, 10*time.Second, agents...)
			out := res.Outcome
			if out.GetCause() == matchv1.EndCause_END_CAUSE_VOID || out.GetCause() == matchv1.EndCause_END_CAUSE_AGENT_FAULT || len(out.GetFaultedSeats()) > 0 {
				t.Fatalf("outcome %v\n%s", out, dump(res.Events))
			}
			calls := make([]int32, len(seats))
			var tokens = make([]int64, len(seats))
			for _, ev := range res.Events {
				if r := ev.GetActionRefused(); r != nil {
					t.Errorf("refused action of seat %d: %s", r.GetSeat(), r.GetRejection().GetMessage())
				}
				a := ev.GetActionTaken()
				if a == nil {
					continue
				}
				u := a.GetAction().GetUsage()
				if a.GetDefaultReason() != "" || u.GetFallback() || u.GetCalls() != 1 || len(u.GetRawOutputs()) != 1 || u.GetModel() != "fake-model" {
					t.Errorf("seat %d turn %d: default %q, usage %v", a.GetSeat(), ev.GetTurn(), a.GetDefaultReason(), u)
				}
				if !strings.Contains(a.GetAction().GetPrivateReasoning(), "SECRET-REASONING") {
					t.Errorf("seat %d turn %d: private reasoning %q lacks the model's", a.GetSeat(), ev.GetTurn(), a.GetAction().GetPrivateReasoning())
				}
				calls[a.GetSeat()] += u.GetCalls()
				tokens[a.GetSeat()] += u.GetPromptTokens() + u.GetCompletionTokens()
			}
			ended := res.Events[len(res.Events)-1].GetMatchEnded()
			for _, su := range ended.GetUsage() {
				tot := su.GetTotal()
				if tot.GetCalls() != calls[su.GetSeat()] || tot.GetPromptTokens()+tot.GetCompletionTokens() != tokens[su.GetSeat()] || len(tot.GetRawOutputs()) != 0 {
					t.Errorf("match_ended usage of seat %d = %v; want %d calls, %d tokens, no raw outputs", su.GetSeat(), tot, calls[su.GetSeat()], tokens[su.GetSeat()])
				}
			}
			for seat := range seats {
				if calls[seat] > 0 && !hasUsage(ended, int32(seat)) {
					t.Errorf("match_ended has no usage for seat %d", seat)
				}
			}
			checkNoLeak(t, recs, seats)
			if srv.Count() == 0 {
				t.Fatal("the model was never asked")
			}
		})
	}
}

func hasUsage(ended *eventsv1.MatchEnded, seat int32) bool {
	for _, su := range ended.GetUsage() {
		if su.GetSeat() == seat {
			return true
		}
	}
	return false
}

// checkNoLeak fails if a seat observed another seat's private reasoning or plan (the
// autoplayer writes "SECRET-REASONING NAME" in both) or usage.
func checkNoLeak(t *testing.T, recs []*recording, seats []string) {
	t.Helper()
	for i, r := range recs {
		obs := r.observations()
		if len(obs) == 0 {
			continue
		}
		for _, o := range obs {
			text := prototext.Format(o)
			for j, name := range seats {
				if j != i && strings.Contains(text, "SECRET-REASONING "+name) {
					t.Errorf("seat %d observed seat %d's private text:\n%s", i, j, text)
				}
			}
			if strings.Contains(text, "raw_outputs") || strings.Contains(text, "usage") {
				t.Errorf("seat %d observed usage:\n%s", i, text)
			}
		}
		// And the public part did get through: everyone heard somebody.
		if !strings.Contains(prototext.Format(obs[len(obs)-1]), "PUBLIC-HELLO") && len(obs) > 1 {
			t.Errorf("seat %d never heard a public message", i)
		}
	}
}

func dump(evs []*eventsv1.MatchEvent) string {
	var b strings.Builder
	for _, ev := range evs {
		fmt.Fprintln(&b, prototext.Format(ev))
	}
	return b.String()
}

// TestTradingAsksForWhatTheOtherHolds: in the resource exchange as NegotiationArena sets it up
// (P1 holds 25 X and 5 Y, P2 5 X and 25 Y), a model may ask P2 for more than one unit of what
// it cannot see P2 hold: the proposal reaches the referee, P2's model accepts, and the trade is
// carried out. (The bounds once said P2 could give at most 1, so the agent refused it itself.)
func TestTradingAsksForWhatTheOtherHolds(t *testing.T) {
	game, err := families.New().Lookup("trading")
	if err != nil {
		t.Fatal(err)
	}
	p1 := llmtest.New(t, llmtest.Sequence(llmtest.Text("<message>Let us trade.</message>\n<move>propose: P1 gives 1 X, 1 Y; P2 gives 5 X, 10 Y</move>")))
	p2 := llmtest.New(t, llmtest.Autoplay{Public: "deal"}.Responder())
	res := playMatch(t, game, 3, 10*time.Second,
		newAgent(t, llm.Config{BaseURL: p1.URL}), newAgent(t, llm.Config{BaseURL: p2.URL}))
	out := res.Outcome
	// P1 gives 2 resources and gets 15; P2 the other way round.
	if !out.GetAgreement() || fmt.Sprint(out.GetPayoffs()) != "[13 -13]" {
		t.Fatalf("outcome %v, want the trade carried out with gains 13 and -13\n%s", out, dump(res.Events))
	}
	for _, ev := range res.Events {
		if a := ev.GetActionTaken(); a != nil && (a.GetDefaultReason() != "" || a.GetAction().GetUsage().GetFormatFailures() > 0) {
			t.Errorf("turn %d: the model's move was not played as it wrote it: %v", ev.GetTurn(), a)
		}
	}
}
