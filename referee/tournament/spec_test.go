package tournament

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/policy"
)

// TestStoreLargeSpec stores the schedule of a tournament as large as the default policy
// allows (max_tournament_matches) on a NATS server of the default payload limit: no stored
// message holds more than a part of it, LoadSpec gives it back whole, storing it again finds
// it, and a listing reads its size from the stored spec alone.
func TestStoreLargeSpec(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	js := b.JetStream()
	most := policy.Default().MaxTournamentMatches
	// Three entrants, every ordered pair: 6 assignments, and games enough to reach the bound,
	// under an id like those `parley tournament` makes up (GAME-SEED-RANDOM).
	const id = "ultimatum-8419281704117238117-3fa91c"
	spec, err := Plan(PlanConfig{ID: id, Game: "ultimatum", Seats: 2, Entrants: entrants(3), GamesPerAssignment: most / 6, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(spec.GetMatches()); n > most || n < most-6 {
		t.Fatalf("planned %d matches, want just under %d", n, most)
	}
	if size := proto.Size(spec); size < 1<<20 {
		t.Fatalf("the schedule is %d bytes: too small to show anything (a NATS server carries 1 MiB)", size)
	}
	if fresh, err := StoreSpec(ctx, js, spec); err != nil || !fresh {
		t.Fatalf("StoreSpec: fresh %v, %v", fresh, err)
	}
	got, err := LoadSpec(ctx, js, id)
	if err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(got, spec) {
		t.Fatalf("LoadSpec gave %d matches back, not the %d stored, or other settings", len(got.GetMatches()), len(spec.GetMatches()))
	}
	if fresh, err := StoreSpec(ctx, js, proto.CloneOf(spec)); err != nil || fresh {
		t.Fatalf("StoreSpec again: fresh %v, %v; want it found stored", fresh, err)
	}

	// Every stored message is small, whatever the schedule's size.
	stream, err := js.Stream(ctx, natsname.TournamentStream)
	if err != nil {
		t.Fatal(err)
	}
	info, err := stream.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stored := 0
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq; seq++ {
		msg, err := stream.GetMsg(ctx, seq)
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		stored++
		if len(msg.Data) > 64<<10 {
			t.Errorf("%s holds %d bytes", msg.Subject, len(msg.Data))
		}
	}
	if stored < 2 {
		t.Errorf("%d messages stored for a schedule of %d bytes", stored, proto.Size(spec))
	}

	// A listing reads the spec alone and still counts every match.
	list, err := (&Service{cfg: ServiceConfig{Bus: b}}).ListTournaments(ctx, &tournamentv1.ListTournamentsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if ts := list.GetTournaments(); len(ts) != 1 || int(ts[0].GetMatches()) != len(spec.GetMatches()) {
		t.Errorf("listed %v, want one tournament of %d matches", ts, len(spec.GetMatches()))
	}
}

// TestSpecMismatchSaysWhy: a tournament id asked for again with other settings is refused,
// naming each setting that differs with the stored value and the one asked for.
func TestSpecMismatchSaysWhy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	plan := func(seed uint64, games int) *tournamentv1.TournamentSpec {
		spec, err := Plan(PlanConfig{ID: "cup", Game: "ultimatum", Seats: 2, Entrants: entrants(3), GamesPerAssignment: games, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return spec
	}
	if _, err := StoreSpec(ctx, b.JetStream(), plan(7, 2)); err != nil {
		t.Fatal(err)
	}
	_, err = StoreSpec(ctx, b.JetStream(), plan(12, 3))
	if !errors.Is(err, ErrSpecMismatch) {
		t.Fatalf("StoreSpec with another seed and games: %v, want ErrSpecMismatch", err)
	}
	for _, want := range []string{"seed 7 (asked: 12)", "games_per_assignment 2 (asked: 3)", "another schedule (12 matches; asked: 18)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
}
