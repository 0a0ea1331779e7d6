package match

import (
	"time"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Observer is told what the matches of a Runner do, for metrics (internal/telemetry has a
// Prometheus one); the runner itself knows nothing of metrics. Methods are called from the
// goroutines of many matches at once, must be safe for concurrent use, and must not block.
type Observer interface {
	// MatchStarted is called once the match's MatchStarted is recorded.
	MatchStarted(m ObservedMatch)
	// MatchEnded is called once its MatchEnded is recorded, with the outcome and the time since
	// MatchStarted. A match whose record failed before its end gets a nil outcome.
	MatchEnded(m ObservedMatch, outcome *matchv1.Outcome, elapsed time.Duration)
	// AgentAsked is called as every request goes to a seat's agent: the turn and attempt it
	// is asked on, and when its time for the answer is up.
	AgentAsked(m ObservedMatch, seat, turn, attempt int32, deadline time.Time)
	// AgentCalled is called after every request to a seat's agent: how long the agent took,
	// and what went wrong (FAULT_KIND_UNSPECIFIED when it answered). Calls cut short because
	// the match was cancelled are not reported.
	AgentCalled(m ObservedMatch, seat int32, latency time.Duration, fault eventsv1.FaultKind)
	// ActionTaken is called for every action the rules applied; defaulted when it was the
	// game's default move standing in for the agent.
	ActionTaken(m ObservedMatch, seat int32, defaulted bool)
	// ActionRefused is called for every action the rules refused.
	ActionRefused(m ObservedMatch, seat int32)
	// AgentFaulted is called for every AgentFault recorded.
	AgentFaulted(m ObservedMatch, seat int32, kind eventsv1.FaultKind)
}

// ObservedMatch is what an Observer is told about a match.
type ObservedMatch struct {
	// ID and Game of the match.
	ID, Game string
	// Agents names each seat's agent, in seat order (AgentKey).
	Agents []string
}

// Agent returns the name of seat's agent, or "" for a seat out of range.
func (m ObservedMatch) Agent(seat int32) string {
	if seat < 0 || int(seat) >= len(m.Agents) {
		return ""
	}
	return m.Agents[seat]
}

// AgentKey names the agent in a seat the way analytics rates it (games.AgentKey), or
// "unknown" for a seat with neither a name nor a label.
func AgentKey(s *gamev1.SeatInfo) string {
	if s.GetLabel() == "" && s.GetAgent().GetName() == "" {
		return "unknown"
	}
	return games.AgentKey(s.GetAgent().GetName(), s.GetAgent().GetVersion(), s.GetLabel())
}

// nopObserver observes nothing.
type nopObserver struct{}

func (nopObserver) MatchStarted(ObservedMatch)                                          {}
func (nopObserver) MatchEnded(ObservedMatch, *matchv1.Outcome, time.Duration)           {}
func (nopObserver) AgentAsked(ObservedMatch, int32, int32, int32, time.Time)            {}
func (nopObserver) AgentCalled(ObservedMatch, int32, time.Duration, eventsv1.FaultKind) {}
func (nopObserver) ActionTaken(ObservedMatch, int32, bool)                              {}
func (nopObserver) ActionRefused(ObservedMatch, int32)                                  {}
func (nopObserver) AgentFaulted(ObservedMatch, int32, eventsv1.FaultKind)               {}
