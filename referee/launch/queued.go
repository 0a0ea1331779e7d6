package launch

import (
	"slices"

	"google.golang.org/protobuf/types/known/durationpb"

	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Request is the work-queue request of a prepared match: everything Reopen needs to play it
// as it was prepared.
func (m *Match) Request() *queuev1.MatchRequest {
	req := &queuev1.MatchRequest{
		MatchId: m.ID, TournamentId: m.TournamentID, Game: m.Game.Info().GetName(), Params: m.Params, Seed: m.Seed,
		Agents: m.Agents, Limits: m.Limits, Labels: m.Labels, RevealPrivate: m.RevealPrivate,
		MaxRecordBytes: m.MaxRecordBytes, Owner: m.Owner,
	}
	if m.MaxDuration > 0 {
		req.MaxDuration = durationpb.New(m.MaxDuration)
	}
	return req
}

// Reopen is the match a queued request holds, to be recorded under id (the request's own, or
// a rerun's). The request was prepared where it was asked for (Prepare, or a tournament's
// plan): nothing is resolved or checked against a policy again. The game must be one of reg;
// a request that does not fit its game's seats is an error wrapping ErrInvalid.
func Reopen(reg *games.Registry, req *queuev1.MatchRequest, id string) (*Match, error) {
	game, err := LookupGame(reg, req.GetGame())
	if err != nil {
		return nil, err
	}
	m := &Match{
		ID: id, Game: game, Params: req.GetParams(), Seed: req.GetSeed(), Agents: slices.Clone(req.GetAgents()),
		Limits: req.GetLimits(), TournamentID: req.GetTournamentId(), RevealPrivate: req.GetRevealPrivate(),
		MaxRecordBytes: req.GetMaxRecordBytes(), Owner: req.GetOwner(),
	}
	if len(req.GetLabels()) > 0 {
		m.Labels = slices.Clone(req.GetLabels())
	}
	if d := req.GetMaxDuration(); d.IsValid() {
		m.MaxDuration = d.AsDuration()
	}
	m.Seats, _ = games.Seats(game, m.Params)
	if len(m.Agents) != len(m.Seats) {
		return nil, &SeatsError{Game: req.GetGame(), Seats: m.Seats, Got: len(m.Agents)}
	}
	if n := len(m.Labels); n > 0 && n != len(m.Seats) {
		return nil, invalid("the request labels %d seats of %d", n, len(m.Seats))
	}
	return m, nil
}
