package match_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// TestUsageSummedPerSeat checks MatchEnded sums the usage every answer reported, refused answers
// included, per seat, and leaves out seats that reported none.
func TestUsageSummedPerSeat(t *testing.T) {
	var sentPrompt, sentCompletion int64
	var sentLatency time.Duration
	calls := 0
	metered := sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		calls++
		var action *agentv1.Action
		if calls == 1 {
			action = propose(1_000) // more than the total: refused, but its tokens were spent
		} else {
			a, err := patient(40)(ctx, obs)
			if err != nil {
				return nil, err
			}
			action = a
		}
		u := &agentv1.Usage{Model: "m-1", PromptTokens: int64(100 * calls), CompletionTokens: int64(10 * calls), Calls: 1, Latency: durationpb.New(time.Duration(calls) * time.Millisecond), RawOutputs: []string{"raw"}}
		if calls == 1 {
			u.FormatFailures = 1
		}
		sentPrompt += u.PromptTokens
		sentCompletion += u.CompletionTokens
		sentLatency += u.Latency.AsDuration()
		action.Usage = u
		return action, nil
	})
	res := run(t, ultimatumSpec("usage", sdktest.Client(t, metered), sdktest.Client(t, accepter(30))))
	ended := res.Events[len(res.Events)-1].GetMatchEnded()
	if len(ended.GetUsage()) != 1 || ended.GetUsage()[0].GetSeat() != 0 {
		t.Fatalf("usage = %v, want one entry, for seat 0", ended.GetUsage())
	}
	got := ended.GetUsage()[0].GetTotal()
	if got.GetPromptTokens() != sentPrompt || got.GetCompletionTokens() != sentCompletion || got.GetCalls() != int32(calls) ||
		got.GetFormatFailures() != 1 || got.GetLatency().AsDuration() != sentLatency || got.GetModel() != "m-1" {
		t.Errorf("total = %v; want prompt %d, completion %d, calls %d, 1 format failure, latency %s", got, sentPrompt, sentCompletion, calls, sentLatency)
	}
	if len(got.GetRawOutputs()) != 0 {
		t.Errorf("the total copies raw outputs %q; they stay with each action", got.GetRawOutputs())
	}
}
