package imports

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Match is one game read, audited and written as a match's events.
type Match struct {
	// ID is the match's id; Tournament the tournament it belongs to.
	ID, Tournament string
	// Game is the game as the Format read it; Audit Parley's reading of it.
	Game  *Game
	Audit *eventsv1.ImportAudit
	// Events is the match's record, MatchStarted first and MatchEnded last.
	Events []*eventsv1.MatchEvent
}

// Labels are the seats' labels, in seat order.
func (m *Match) Labels() []string {
	out := make([]string, len(m.Game.Seats))
	for i, s := range m.Game.Seats {
		out[i] = s.Label()
	}
	return out
}

// Record writes g as the events of match id in tournament, as a referee records a match it
// plays: MatchStarted (with the provenance of file and g.Source), one ActionTaken per answer, and
// MatchEnded with the outcome the platform logged (void with its cause for a void game) and
// audit. params are g's params resolved by game. The answers are copied into the events.
func Record(id, tournament, study string, f File, g *Game, game games.Game, params *matchv1.GameParams, audit *eventsv1.ImportAudit) ([]*eventsv1.MatchEvent, error) {
	info := game.Info()
	names, roles := games.Seats(game, params)
	if len(names) != len(g.Seats) {
		return nil, fmt.Errorf("%s has %d seats, the log %d", info.GetName(), len(names), len(g.Seats))
	}
	seats := make([]*gamev1.SeatInfo, len(names))
	for i, s := range g.Seats {
		seats[i] = &gamev1.SeatInfo{
			Seat: int32(i), Name: names[i], Role: roles[i], Label: s.Label(),
			Agent: &gamev1.AgentInfo{Name: s.Model, Author: "imported from the published runs of " + study, Description: s.Description},
		}
	}
	var events []*eventsv1.MatchEvent
	add := func(turn int32, ev *eventsv1.MatchEvent) {
		ev.MatchId, ev.Seq, ev.Turn = id, uint64(len(events)+1), turn
		events = append(events, ev)
	}
	add(0, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
		Game: info.GetName(), RulesVersion: info.GetRulesVersion(), Params: params, Seed: g.Seed, Seats: seats,
		TournamentId: tournament,
		Imported: &eventsv1.ImportSource{
			Study: study, SourceFile: f.Path, Sha256: f.SHA256, Repository: g.Source.Repository, Commit: g.Source.Commit,
			OriginalId: g.Source.OriginalID, Format: g.Source.Format,
		},
	}}})
	for i, t := range g.Turns {
		action := &agentv1.Action{
			Move:             proto.CloneOf(t.Played.GetMove()),
			PrivateReasoning: clipText(t.Answer, games.MaxTextBytes-len(clipMark)),
			Usage:            &agentv1.Usage{Model: g.Seats[t.Seat].Model, RawOutputs: []string{t.Answer}, Style: g.Style},
		}
		for _, m := range t.Played.GetMessages() {
			action.Messages = append(action.Messages, proto.CloneOf(m))
		}
		add(int32(i+1), &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{
			Seat: t.Seat, Action: action, Attempt: 1,
		}}})
	}
	outcome := proto.CloneOf(g.Outcome)
	if g.Void != "" {
		outcome = &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_VOID, Summary: "Void: " + g.Void}
	}
	add(int32(len(g.Turns)), &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{
		Outcome: outcome, ImportAudit: audit,
	}}})
	return events, nil
}
