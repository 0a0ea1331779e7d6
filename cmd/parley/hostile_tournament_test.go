package main

import (
	"context"
	"flag"
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/hostile"
	"github.com/parley-arena/parley/cmd/parley/internal/roles"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/tournament"
)

// hostileMatches is the size of TestHostileTournament: about 90 in CI, 1,000 for the report
// (go test -run TestHostileTournament -hostile-matches 1000 ./cmd/parley).
var hostileMatches = flag.Int("hostile-matches", 90, "matches of TestHostileTournament")

// TestHostileTournament plays a tournament in which 3 of 10 entrants are hostile (a bot that
// crashes, one that floods public messages, one that floods its notes) against 7 honest
// built-in agents, through the work queue as in production: every match ends once with a
// stated cause, and no honest agent is ever faulted.
func TestHostileTournament(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var entrants []*tournamentv1.Entrant
	honest := map[string]bool{}
	for _, a := range []string{"fair", "fair?open=0.7", "fair?open=0.9&floor=0.3", "spe", "random?seed=1", "random?seed=2", "fixed"} {
		label := fmt.Sprintf("honest-%d", len(entrants))
		entrants = append(entrants, &tournamentv1.Entrant{Label: label, Address: "builtin:" + a})
		honest[label] = true
	}
	for _, kind := range []hostile.Kind{hostile.Crash, hostile.MessageFlood, hostile.NoteFlood} {
		bot, err := hostile.Start(kind)
		if err != nil {
			t.Fatal(err)
		}
		defer bot.Close()
		entrants = append(entrants, &tournamentv1.Entrant{Label: string(kind), Address: bot.Address()})
	}
	games := max(1, *hostileMatches/90)
	reg := families.New()
	prep := &launch.Preparer{Games: reg}
	_, params, err := prep.Params("ultimatum", nil, 11)
	if err != nil {
		t.Fatal(err)
	}
	spec, err := tournament.Plan(tournament.PlanConfig{
		ID: "hostile", Game: "ultimatum", Params: params, Seats: 2, Entrants: entrants, GamesPerAssignment: games, Seed: 11,
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(time.Minute)}, // no hostile kind here waits for a timeout
	})
	if err != nil {
		t.Fatal(err)
	}
	stop := roles.RunWorkers(ctx, roles.WorkersConfig{
		Bus: b, Games: reg, Agents: roles.Resolver(builtin.Agents{}, nil, false, nil), Concurrency: 8, Name: "hostile",
	})
	defer stop()
	started := time.Now()
	if err := tournament.Hold(ctx, b, spec, tournament.HoldConfig{Concurrency: 8, Matches: prep}); err != nil {
		t.Fatal(err)
	}
	took := time.Since(started)
	records, err := tournament.LoadRecords(ctx, b.JetStream(), spec)
	if err != nil {
		t.Fatal(err)
	}
	causes := map[matchv1.EndCause]int{}
	counted := 0
	for _, r := range records {
		n := len(r.Events)
		end := r.Events[n-1].GetMatchEnded()
		if end == nil || end.GetOutcome().GetSummary() == "" {
			t.Errorf("match %s ended without a stated cause", r.MatchID)
			continue
		}
		if r.Interrupted {
			continue
		}
		counted++
		causes[end.GetOutcome().GetCause()]++
		for _, s := range end.GetOutcome().GetFaultedSeats() {
			if label := spec.GetEntrants()[r.Scheduled.GetEntrants()[s]].GetLabel(); honest[label] {
				t.Errorf("match %s: the honest %s was faulted: %s", r.MatchID, label, end.GetOutcome().GetSummary())
			}
		}
	}
	if counted != len(spec.GetMatches()) {
		t.Errorf("%d scheduled matches, %d counted", len(spec.GetMatches()), counted)
	}
	t.Logf("%d matches with 3 hostile entrants of 10 in %s (%.1f ms a match); ends by cause: %v",
		counted, took.Round(time.Millisecond), float64(took.Milliseconds())/float64(max(counted, 1)), causes)
}
