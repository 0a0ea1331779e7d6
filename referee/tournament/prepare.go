package tournament

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/policy"
)

// DefaultGamesPerAssignment is StartTournamentRequest.games_per_assignment when unset.
const DefaultGamesPerAssignment = 10

// Prepare checks a tournament request and plans it, the one way every door does (the
// TournamentService, `parley tournament`, `parley reproduce`): the caller's standing under the
// preparer's policy, the limits and each entrant's address as every match of it will be
// checked (launch.Preparer.Admit), the parameters resolved once with the tournament's seed, the
// entrants (reachable, claiming the game, labels unique and allowed), the id (a fresh one unless
// given) and the schedule, whose size the policy bounds. Each match is then prepared from the
// plan when it is requested (Run). Errors wrap launch.ErrInvalid and read as one line.
func Prepare(ctx context.Context, prep *launch.Preparer, req *tournamentv1.StartTournamentRequest, caller policy.Caller) (*tournamentv1.TournamentSpec, error) {
	n := int(req.GetGamesPerAssignment())
	if n == 0 {
		n = DefaultGamesPerAssignment
	}
	pol := prep.Policy
	if pol != nil {
		if err := pol.StartTournament(caller, 0, n, int(req.GetConcurrency())); err != nil {
			return nil, invalid(err)
		}
	}
	addrs := make([]string, len(req.GetEntrants()))
	for i, e := range req.GetEntrants() {
		addrs[i] = e.GetAddress()
	}
	if err := prep.Admit(caller, req.GetLimits(), addrs); err != nil {
		return nil, invalid(err)
	}
	seed := req.GetSeed()
	if seed == 0 {
		seed = launch.FreshSeed() | 1
	}
	game, params, err := prep.Params(req.GetGame(), req.GetParams(), seed)
	if err != nil {
		return nil, err
	}
	name := game.Info().GetName()
	entrants, err := checkEntrants(ctx, prep, caller, name, req.GetEntrants(), req.GetRevealPrivate())
	if err != nil {
		return nil, err
	}
	id := req.GetTournamentId()
	if id == "" {
		var b [3]byte
		_, _ = rand.Read(b[:])
		id = fmt.Sprintf("%s-%d-%s", name, seed, hex.EncodeToString(b[:]))
	}
	seats, _ := games.Seats(game, params)
	spec, err := Plan(PlanConfig{
		ID: id, Game: name, Params: params, Seats: len(seats), Entrants: entrants,
		GamesPerAssignment: n, Seed: seed, SelfPlay: req.GetSelfPlay(), MaxAssignments: int(req.GetMaxAssignments()),
		Limits: req.GetLimits(), RevealPrivate: req.GetRevealPrivate(),
	})
	if err != nil {
		return nil, invalid(err)
	}
	spec.Owner = caller.Owner()
	if pol != nil {
		if err := pol.StartTournament(caller, len(spec.GetMatches()), n, int(req.GetConcurrency())); err != nil {
			return nil, invalid(err)
		}
	}
	return spec, nil
}

// HoldBudget holds a prepared tournament's cost on the caller's budgets (prep.Budgets): all its
// matches, and the seats for people those it runs at once (concurrency, 0: the default) hold
// open. undo gives the hold back for a tournament refused after all; otherwise the matches
// give it back as they end, and the service the rest when it stops requesting them. A
// refusal wraps budget.ErrExhausted.
func HoldBudget(prep *launch.Preparer, caller policy.Caller, spec *tournamentv1.TournamentSpec, concurrency int) (undo func(), err error) {
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	if pol := prep.Policy; pol != nil && pol.MaxConcurrency > 0 {
		concurrency = min(concurrency, pol.MaxConcurrency)
	}
	seats := 0
	for _, m := range spec.GetMatches() {
		n := 0
		for _, e := range m.GetEntrants() {
			if int(e) < len(spec.GetEntrants()) && agentconn.IsHuman(spec.GetEntrants()[e].GetAddress()) {
				n++
			}
		}
		seats = max(seats, n)
	}
	matches := len(spec.GetMatches())
	undo, err = prep.Budgets.HoldTournament(caller, spec.GetTournamentId(), matches, seats*min(matches, concurrency))
	if err != nil {
		return nil, invalid(err)
	}
	return undo, nil
}

func invalid(err error) error { return fmt.Errorf("%w: %w", launch.ErrInvalid, err) }

// checkEntrants fills in default labels, checks that labels are unique and that every address
// may play the game, as every match of it is checked.
func checkEntrants(ctx context.Context, prep *launch.Preparer, caller policy.Caller, game string, in []*tournamentv1.Entrant, reveal bool) ([]*tournamentv1.Entrant, error) {
	if len(in) == 0 {
		return nil, invalid(fmt.Errorf("give the agents taking part (entrants)"))
	}
	ctx, cancel := context.WithTimeout(ctx, agentCheckTimeout)
	defer cancel()
	addrs := make([]string, len(in))
	labels := make([]string, len(in))
	for i, e := range in {
		addrs[i], labels[i] = e.GetAddress(), e.GetLabel()
	}
	registered, err := prep.CheckAgents(ctx, game, addrs)
	if err != nil {
		return nil, err
	}
	if reveal && prep.Policy != nil {
		if err := prep.Policy.Reveal(caller, addrs, registered); err != nil {
			return nil, invalid(err)
		}
	}
	labels, err = prep.CheckLabels(caller, labels, registered)
	if err != nil {
		return nil, invalid(err)
	}
	checked := make([]*tournamentv1.Entrant, len(in))
	for i, e := range in {
		checked[i] = &tournamentv1.Entrant{Label: labels[i], Address: e.GetAddress()}
	}
	return Entrants(checked, registered)
}
