package metrics

import (
	"fmt"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// SeatResult is one seat's part in a finished match.
type SeatResult struct {
	// Seat index.
	Seat int32
	// Name of the seat in the game, e.g. "P1".
	Name string
	// Agent is the agent's name and AgentVersion its version, as it described itself.
	Agent, AgentVersion string
	// Payoff of the seat (0 in a void match).
	Payoff float64
	// Faulted is set when the seat's agent faulted at least once.
	Faulted bool
	// Label is the name the organiser gave the agent (SeatInfo.label); empty when none.
	Label string
}

// AgentKey names the seat's agent in tables, ratings and standings: games.AgentKey, one name
// per agent.
func (s SeatResult) AgentKey() string { return games.AgentKey(s.Agent, s.AgentVersion, s.Label) }

// Row is one finished match as analytics keeps it: who played, how it ended, and its metrics.
type Row struct {
	MatchID, TournamentID, Game, RulesVersion string
	Seed                                      uint64
	Cause                                     matchv1.EndCause
	Agreement                                 bool
	// Turns is the turn of the last action (0 when nobody acted).
	Turns int32
	Seats []SeatResult
	// Values are the common values every game has (see NewRow) followed by the family's.
	Values []Value
	// Usage is each reporting seat's summed resource use.
	Usage []*eventsv1.SeatUsage
}

// Void reports whether the match is void: recorded, but left out of win rates and ratings.
func (r Row) Void() bool { return r.Cause == matchv1.EndCause_END_CAUSE_VOID }

// Fallbacks counts the match's moves that were not its agents' own: fallbacks the agents
// reported (Usage.fallbacks), plus one for each seat that faulted without reporting any (a
// default was played for it at least once).
func (r Row) Fallbacks() int {
	n := 0
	for _, s := range r.Seats {
		f := r.fallbacksOf(s.Seat)
		if f == 0 && s.Faulted {
			f = 1
		}
		n += f
	}
	return n
}

// fallbacksOf is the fallbacks seat reported (1 for an agent that only set the flag).
func (r Row) fallbacksOf(seat int32) int {
	for _, u := range r.Usage {
		if u.GetSeat() != seat {
			continue
		}
		if f := int(u.GetTotal().GetFallbacks()); f > 0 || !u.GetTotal().GetFallback() {
			return f
		}
		return 1
	}
	return 0
}

// EndedByFault reports whether a default move played for a failing agent ended the match.
func (r Row) EndedByFault() bool { return r.Cause == matchv1.EndCause_END_CAUSE_AGENT_FAULT }

// CutByBudget reports whether a token or cost budget cut the match short: void, with a budget
// fallback.
func (r Row) CutByBudget() bool {
	if !r.Void() {
		return false
	}
	for _, u := range r.Usage {
		if u.GetTotal().GetBudgetFallbacks() > 0 || u.GetTotal().GetFallbackCause() == agentv1.FallbackCause_FALLBACK_CAUSE_BUDGET {
			return true
		}
	}
	return false
}

// Value returns the named value of seat (or WholeMatch), if present.
func (r Row) Value(name string, seat int32) (float64, bool) {
	for _, v := range r.Values {
		if v.Name == name && v.Seat == seat {
			return v.Value, true
		}
	}
	return 0, false
}

// Names of the common values NewRow adds for every game.
const (
	// ValueAgreement is 1 when a deal was reached and executed (whole match).
	ValueAgreement = "agreement"
	// ValueTurns is the turn of the last action (whole match).
	ValueTurns = "turns"
	// ValuePayoff is each seat's payoff.
	ValuePayoff = "payoff"
	// ValueFaulted is 1 for a seat whose agent faulted.
	ValueFaulted = "faulted"
	// ValueRefused counts a seat's refused actions.
	ValueRefused = "refused_actions"
	// ValueMoves counts a seat's moves (actions taken, the defaults played for it included).
	ValueMoves = "moves"
)

// NewRow reads a finished match's record into a Row: the common values of every game, then
// the values of the game's family when reg has one (a nil reg adds none).
func NewRow(events []*eventsv1.MatchEvent, reg *Registry) (Row, error) {
	started, err := Started(events)
	if err != nil {
		return Row{}, err
	}
	ended, err := Ended(events)
	if err != nil {
		return Row{}, err
	}
	out := ended.GetOutcome()
	row := Row{
		MatchID:      events[0].GetMatchId(),
		TournamentID: started.GetTournamentId(),
		Game:         started.GetGame(),
		RulesVersion: started.GetRulesVersion(),
		Seed:         started.GetSeed(),
		Cause:        out.GetCause(),
		Agreement:    out.GetAgreement(),
		Usage:        ended.GetUsage(),
	}
	faulted := make(map[int32]bool)
	for _, s := range out.GetFaultedSeats() {
		faulted[s] = true
	}
	refused := make(map[int32]int)
	moves := make(map[int32]int)
	for _, ev := range events {
		if a := ev.GetActionTaken(); a != nil {
			row.Turns = ev.GetTurn()
			moves[a.GetSeat()]++
		}
		if r := ev.GetActionRefused(); r != nil {
			refused[r.GetSeat()]++
		}
	}
	for i, s := range started.GetSeats() {
		res := SeatResult{
			Seat: s.GetSeat(), Name: s.GetName(),
			Agent: s.GetAgent().GetName(), AgentVersion: s.GetAgent().GetVersion(),
			Faulted: faulted[s.GetSeat()], Label: s.GetLabel(),
		}
		if i < len(out.GetPayoffs()) {
			res.Payoff = out.GetPayoffs()[i]
		}
		row.Seats = append(row.Seats, res)
	}
	row.Values = append(row.Values,
		Value{Name: ValueAgreement, Seat: WholeMatch, Value: b2f(row.Agreement)},
		Value{Name: ValueTurns, Seat: WholeMatch, Value: float64(row.Turns)})
	for _, s := range row.Seats {
		row.Values = append(row.Values,
			Value{Name: ValuePayoff, Seat: s.Seat, Value: s.Payoff},
			Value{Name: ValueFaulted, Seat: s.Seat, Value: b2f(s.Faulted)},
			Value{Name: ValueRefused, Seat: s.Seat, Value: float64(refused[s.Seat])},
			Value{Name: ValueMoves, Seat: s.Seat, Value: float64(moves[s.Seat])})
	}
	if reg == nil || row.Void() {
		return row, nil
	}
	if fam, ok := reg.Lookup(row.Game); ok {
		vals, err := fam.Match(events)
		if err != nil {
			return Row{}, fmt.Errorf("metrics: %s match %s: %w", row.Game, row.MatchID, err)
		}
		row.Values = append(row.Values, vals...)
	}
	return row, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
