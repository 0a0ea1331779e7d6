package match_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/match"
)

// countingObserver counts what it is told, by kind and agent.
type countingObserver struct {
	mu     sync.Mutex
	counts map[string]int
	agents []string
}

func (o *countingObserver) add(format string, args ...any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.counts == nil {
		o.counts = map[string]int{}
	}
	o.counts[fmt.Sprintf(format, args...)]++
}

func (o *countingObserver) get(key string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.counts[key]
}

func (o *countingObserver) MatchStarted(m match.ObservedMatch) {
	o.mu.Lock()
	o.agents = m.Agents
	o.mu.Unlock()
	o.add("started %s", m.Game)
}

func (o *countingObserver) MatchEnded(m match.ObservedMatch, out *matchv1.Outcome, _ time.Duration) {
	o.add("ended %s %s", m.Game, out.GetCause())
}

func (o *countingObserver) AgentAsked(m match.ObservedMatch, seat, turn, attempt int32, deadline time.Time) {
	if deadline.IsZero() {
		o.add("asked %s with no deadline", m.Agent(seat))
	}
	o.add("asked %s turn %d attempt %d", m.Agent(seat), turn, attempt)
}

func (o *countingObserver) AgentCalled(m match.ObservedMatch, seat int32, _ time.Duration, f eventsv1.FaultKind) {
	o.add("called %s %s", m.Agent(seat), f)
}

func (o *countingObserver) ActionTaken(m match.ObservedMatch, seat int32, defaulted bool) {
	o.add("taken %s %v", m.Agent(seat), defaulted)
}

func (o *countingObserver) ActionRefused(m match.ObservedMatch, seat int32) {
	o.add("refused %s", m.Agent(seat))
}

func (o *countingObserver) AgentFaulted(m match.ObservedMatch, seat int32, k eventsv1.FaultKind) {
	o.add("fault %s %s", m.Agent(seat), k)
}

func TestObserver(t *testing.T) {
	// P1 sends one empty action (refused), then proposes; P2 never answers (a timeout, and the
	// game's default move ends the match).
	first := true
	var mu sync.Mutex
	p1 := sdktest.Client(t, sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		mu.Lock()
		defer mu.Unlock()
		if first {
			first = false
			return &agentv1.Action{}, nil
		}
		return propose(50), nil
	}))
	p2 := sdktest.Client(t, sdk.AgentFunc(stall))
	obs := &countingObserver{}
	spec := ultimatumSpec("observed", p1, p2)
	spec.Limits = withTimeout(shortTimeout)
	spec.Labels = []string{"first", ""}
	res := run(t, spec, match.WithObserver(obs))

	if got := res.Events[0].GetMatchStarted().GetSeats()[0].GetLabel(); got != "first" {
		t.Errorf("seat 0 label %q, want first", got)
	}
	p2Key := obs.agents[1]
	if obs.agents[0] != "first" || p2Key == "" || p2Key == "first" {
		t.Errorf("observed agents %q, want the label of seat 0 and a name for seat 1", obs.agents)
	}
	cause := res.Outcome.GetCause()
	for key, want := range map[string]int{
		"started ultimatum":                       1,
		"ended ultimatum " + cause.String():       1,
		"refused first":                           1,
		"called first FAULT_KIND_UNSPECIFIED":     2,
		"taken first false":                       1,
		"called " + p2Key + " FAULT_KIND_TIMEOUT": 1,
		"fault " + p2Key + " FAULT_KIND_TIMEOUT":  1,
		"taken " + p2Key + " true":                1,
		// Each call is announced before it is made: P1 on turn 1 twice (its first action
		// was refused), then P2, who never answers, on turn 2.
		"asked first turn 1 attempt 1":         1,
		"asked first turn 1 attempt 2":         1,
		"asked " + p2Key + " turn 2 attempt 1": 1,
		"asked first with no deadline":         0,
		"asked " + p2Key + " with no deadline": 0,
	} {
		if got := obs.get(key); got != want {
			t.Errorf("%q observed %d times, want %d (all: %v)", key, got, want, obs.counts)
		}
	}
}
