package coalition_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	coalitionv1 "github.com/parley-arena/parley/gen/go/parley/games/coalition/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
	"github.com/parley-arena/parley/referee/games/gametest"
)

// params builds coalition GameParams from "key=value" strings, as --param does.
func params(t testing.TB, kvs ...string) *matchv1.GameParams {
	t.Helper()
	gp, err := games.ParseParams(coalition.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	if gp.GetCoalition() == nil {
		gp.Family = &matchv1.GameParams_Coalition{Coalition: &coalitionv1.Params{}}
	}
	return gp
}

func TestConformance(t *testing.T) {
	gametest.Run(t, coalition.New(),
		nil,
		params(t, "players=N,E,S,W", "values=N+E:60,S+W:40,N+S:50,E+W:50,N+E+S:90,N+E+W:80,N+S+W:80,E+S+W:70,N+E+S+W:100,W:5", "rounds=1", "max_proposals=3"),
		params(t, "rounds=0"),
		params(t, "max_proposals=1"),
		params(t, "players=Ann,Bob", "values=Ann+Bob:7", "rounds=1", "max_proposals=2", "unit=coins"),
	)
}

// Moves used by the tests.

func say(msgs ...*gamev1.Message) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, Messages: msgs}
}

func msg(text string, to ...int32) *gamev1.Message { return &gamev1.Message{To: to, Text: text} }

// offer attaches terms to a message.
func offer(m *gamev1.Message, shares ...*gamev1.SeatShare) *gamev1.Message {
	m.Proposal = split(shares...)
	return m
}

func split(shares ...*gamev1.SeatShare) *gamev1.Proposal {
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: shares}}}
}

// g is a share receiving x g.
func g(seat int32, x int64) *gamev1.SeatShare {
	return &gamev1.SeatShare{Seat: seat, Receives: map[string]int64{"g": x}}
}

func propose(shares ...*gamev1.SeatShare) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: split(shares...)}}}}
}

func accept(turn int32) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{ProposalTurn: turn}}}}
}

func reject() *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}
}

// step is one seat's action.
type step struct {
	seat   games.Seat
	action *agentv1.Action
}

// newState starts a match.
func newState(t testing.TB, p *matchv1.GameParams, seed uint64) games.State {
	t.Helper()
	st, err := games.Start(coalition.New(), p, seed)
	if err != nil {
		t.Fatalf("NewState: %v", err)
	}
	return st
}

// play applies steps, failing on refusal, and returns the events.
func play(t testing.TB, st games.State, steps ...step) []*eventsv1.MatchEvent {
	t.Helper()
	var evs []*eventsv1.MatchEvent
	for i, s := range steps {
		e, err := st.Apply(s.seat, s.action)
		if err != nil {
			t.Fatalf("step %d (seat %d, %v): %v", i+1, s.seat, s.action, err)
		}
		evs = append(evs, e...)
	}
	return evs
}

// skipTalk plays phase 1 with default messages.
func skipTalk(t testing.TB, st games.State) {
	t.Helper()
	for st.Observe(0).GetPhase() == coalition.PhaseTalk {
		for _, s := range st.ToMove() {
			if _, err := st.Apply(s, st.Default(s)); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// BenchmarkObserve measures an observation at the start of phase 2 of the default game, after
// three rounds of talk.
func BenchmarkObserve(b *testing.B) {
	st := newState(b, params(b), 1)
	skipTalk(b, st)
	seat := st.ToMove()[0]
	for b.Loop() {
		st.Observe(seat)
	}
}
