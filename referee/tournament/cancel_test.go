package tournament

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/referee/queue"
)

// stuckAgent serves an agent that never answers a move (until the test ends) and tells acting
// of each move it is asked for.
func stuckAgent(t *testing.T, acting chan<- struct{}) string {
	t.Helper()
	fair, err := builtin.New("fair", nil)
	if err != nil {
		t.Fatal(err)
	}
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	gated := sdk.Gated(fair, never)
	agent := sdk.AgentFunc(func(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
		select {
		case acting <- struct{}{}:
		default:
		}
		return gated.Act(ctx, obs)
	})
	addr, stop, err := sdk.Background("127.0.0.1:0", agent, sdk.WithInfo(&gamev1.AgentInfo{Name: "stuck", Version: "1"}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return "grpc://" + addr
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: never", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Attack 2: a tournament whose matches hold every worker (an agent that never answers) could
// not be stopped. Its owner, and the organiser, can cancel it now, no one else: the matches
// running end void at once saying so, no more are requested, and the owner's budget comes back.
// A single match is cancelled the same way.
func TestOwnerCancels(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	pol := policy.Default()
	pol.Dial = []string{"127.0.0.1/32"}
	pol.MaxMoveTimeout = 10 * time.Minute
	pol.Budgets.Client.Matches = 40
	h := startHouse(ctx, t, &pol)
	h.work()
	acting := make(chan struct{}, 1)
	stuck := stuckAgent(t, acting)
	limits := &matchv1.Limits{MoveTimeout: durationpb.New(10 * time.Minute)}
	owner := as(ctx, spectator("10.0.0.1"))

	t.Run("tournament", func(t *testing.T) {
		resp, err := h.tournaments.StartTournament(owner, &tournamentv1.StartTournamentRequest{
			Game: "ultimatum", GamesPerAssignment: 20, Concurrency: 2, Limits: limits,
			Entrants: []*tournamentv1.Entrant{{Label: "stuck", Address: stuck}, {Label: "fair", Address: "builtin:fair"}},
		})
		if err != nil {
			t.Fatal(err)
		}
		id := resp.GetTournamentId()
		<-acting // a match is running, held by the agent that never answers
		_, err = h.referee.StartMatch(owner, oneMatch)
		wantExhausted(t, "a match past the 40 its tournament holds", err, "budgets.client.matches")

		for _, other := range []policy.Caller{spectator("10.0.0.2"), {Role: policy.Team, Team: "acme"}} {
			_, err := h.tournaments.CancelTournament(as(ctx, other), &tournamentv1.CancelTournamentRequest{TournamentId: id})
			if status.Code(err) != codes.PermissionDenied {
				t.Fatalf("%s cancelled another's tournament: %v", other.Owner(), err)
			}
		}
		got, err := h.tournaments.CancelTournament(owner, &tournamentv1.CancelTournamentRequest{TournamentId: id})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetMatchesLeft() != 40 {
			t.Errorf("matches left: %d, want 40 (none had ended)", got.GetMatchesLeft())
		}
		spec, err := h.tournaments.GetTournament(ctx, &tournamentv1.GetTournamentRequest{TournamentId: id})
		if err != nil {
			t.Fatal(err)
		}
		if spec.GetSpec().GetOwner() != "" {
			t.Errorf("the schedule tells its owner: %q", spec.GetSpec().GetOwner())
		}
		// The two requested (concurrency 2) end void, saying why, long before their move
		// timeout; the rest are never requested, or end void at once. Every request leaves
		// the work queue once its match is recorded.
		waitFor(ctx, t, "the work queue to empty", func() bool {
			n, err := queue.Waiting(ctx, h.bus.JetStream())
			return err == nil && n == 0
		})
		requested := 0
		for _, m := range spec.GetSpec().GetMatches() {
			rec, err := h.referee.GetMatch(ctx, &refereev1.GetMatchRequest{MatchId: m.GetMatchId()})
			if status.Code(err) == codes.NotFound {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			requested++
			waitFor(ctx, t, "the ending of "+m.GetMatchId(), func() bool {
				rec, err = h.referee.GetMatch(ctx, &refereev1.GetMatchRequest{MatchId: m.GetMatchId()})
				return err == nil && rec.GetEnded()
			})
			out := rec.GetEvents()[len(rec.GetEvents())-1].GetMatchEnded().GetOutcome()
			if out.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(out.GetSummary(), "its tournament was cancelled by its owner") ||
				out.GetRerunMatchId() != "" {
				t.Errorf("match %s ended %v %q (rerun %q), want void saying it was cancelled", m.GetMatchId(), out.GetCause(), out.GetSummary(), out.GetRerunMatchId())
			}
		}
		if requested < 2 || requested > 4 {
			t.Errorf("%d matches were requested, want the 2 running (and at most the 2 after them)", requested)
		}
		// What the tournament held comes back: the owner starts a match again.
		waitFor(ctx, t, "the budget after cancelling", func() bool {
			_, err := h.referee.StartMatch(owner, oneMatch)
			return err == nil
		})
	})

	t.Run("match", func(t *testing.T) {
		resp, err := h.referee.StartMatch(owner, &refereev1.StartMatchRequest{Game: "ultimatum", Agents: []string{stuck, "builtin:fair"}, Limits: limits})
		if err != nil {
			t.Fatal(err)
		}
		id := resp.GetMatchId()
		<-acting
		_, err = h.referee.CancelMatch(as(ctx, spectator("10.0.0.2")), &refereev1.CancelMatchRequest{MatchId: id})
		if status.Code(err) != codes.PermissionDenied {
			t.Fatalf("another address cancelled the match: %v", err)
		}
		if _, err := h.referee.CancelMatch(owner, &refereev1.CancelMatchRequest{MatchId: id}); err != nil {
			t.Fatal(err)
		}
		var rec *refereev1.GetMatchResponse
		waitFor(ctx, t, "the cancelled match's ending", func() bool {
			rec, err = h.referee.GetMatch(ctx, &refereev1.GetMatchRequest{MatchId: id})
			return err == nil && rec.GetEnded()
		})
		out := rec.GetEvents()[len(rec.GetEvents())-1].GetMatchEnded().GetOutcome()
		if out.GetCause() != matchv1.EndCause_END_CAUSE_VOID || !strings.Contains(out.GetSummary(), "the match was cancelled by its owner") {
			t.Errorf("ended %v %q, want void saying it was cancelled", out.GetCause(), out.GetSummary())
		}
		_, err = h.referee.CancelMatch(owner, &refereev1.CancelMatchRequest{MatchId: id})
		if status.Code(err) != codes.NotFound {
			t.Errorf("cancelling an ended match: %v, want NotFound", err)
		}
	})
}
