package matrix_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/parley-arena/parley/agents/sdk/sdktest"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/gametest"
	"github.com/parley-arena/parley/referee/games/matrix"
	"github.com/parley-arena/parley/referee/match"
)

// spy chooses option pick(round) in each round (flip: the other option at round flipRound),
// talks a little, and keeps every observation it gets.
type spy struct {
	seat      int32
	flipRound int32
	mu        sync.Mutex
	seen      []*agentv1.Observation
}

func (s *spy) Act(_ context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	s.mu.Lock()
	s.seen = append(s.seen, proto.CloneOf(obs))
	s.mu.Unlock()
	round := obs.GetMatrix().GetRound()
	if obs.GetPhase() == matrix.PhaseTalk {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}},
			Messages: []*gamev1.Message{{Text: fmt.Sprintf("seat %d, round %d: I will pick well", s.seat, round)}}}, nil
	}
	opts := obs.GetChoices()
	i := int(round+s.seat) % len(opts)
	if round == s.flipRound {
		i = (i + 1) % len(opts)
	}
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: opts[i].GetId()}}}}, nil
}

func (s *spy) observations() []*agentv1.Observation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seen
}

// playSpies plays a whole match through the runner (both seats asked in parallel when they
// choose) and returns each seat's observations; flip[s] is the round in which seat s picks
// the other option (0: none).
func playSpies(t *testing.T, kvs []string, flip [2]int32) [2][]*agentv1.Observation {
	t.Helper()
	spies := [2]*spy{{seat: 0, flipRound: flip[0]}, {seat: 1, flipRound: flip[1]}}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := match.NewRunner(nil).Run(ctx, match.Spec{
		ID: "hidden", Game: matrix.New(), Params: gametest.Resolve(t, matrix.New(), params(t, kvs...)), Seed: 1,
		Agents: []agentv1.AgentServiceClient{sdktest.Client(t, spies[0]), sdktest.Client(t, spies[1])},
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(10 * time.Second)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome.GetCause() != matchv1.EndCause_END_CAUSE_COMPLETED || len(res.Outcome.GetFaultedSeats()) > 0 {
		t.Fatalf("outcome %v", res.Outcome)
	}
	var out [2][]*agentv1.Observation
	for s, sp := range spies {
		for _, o := range sp.observations() {
			o.Deadline = nil // the only field that depends on the wall clock
			out[s] = append(out[s], o)
		}
	}
	return out
}

// TestPendingChoiceHiddenInMatches plays whole matches through the runner and checks, for
// every round and seat, that the seat's observation when it chooses shows nothing of the
// other's choice of that round: no such move in its history, no result for the round, and —
// the strong form — exactly the same observations up to its choice when the other seat
// chooses differently in that round.
func TestPendingChoiceHiddenInMatches(t *testing.T) {
	scenarios := [][]string{
		{"game=prisoners_dilemma", "talk_rounds=1"},
		{"game=rock_paper_scissors", "rounds=3"},
		{"game=battle_of_the_sexes", "rounds=2", "talk_rounds=1", "talk_opener=1", "neutral_labels=true"},
		{"game=duopoly", "rounds=2", "show_history=false"},
	}
	for _, kvs := range scenarios {
		t.Run(kvs[0], func(t *testing.T) {
			base := playSpies(t, kvs, [2]int32{})
			rounds := base[0][len(base[0])-1].GetMatrix().GetRounds()
			for seat := range int32(2) {
				other := 1 - seat
				var choiceObs []*agentv1.Observation
				for _, o := range base[seat] {
					if o.GetPhase() == matrix.PhaseChoice {
						choiceObs = append(choiceObs, o)
					}
				}
				if int32(len(choiceObs)) != rounds {
					t.Fatalf("seat %d chose %d times in %d rounds", seat, len(choiceObs), rounds)
				}
				for r, o := range choiceObs {
					if o.GetMatrix().OwnChoice != nil || len(o.GetMatrix().GetResults()) != r {
						t.Errorf("seat %d, round %d: view %v", seat, r+1, o.GetMatrix())
					}
					for _, h := range o.GetHistory() {
						if h.GetTurn() == o.GetTurn() && h.GetSeat() == other && h.GetMove().GetChoose() != nil {
							t.Errorf("seat %d, round %d: its history shows the other's choice %v", seat, r+1, h)
						}
					}
				}
				// The other seat picks differently in each round in turn.
				for r := int32(1); r <= rounds; r++ {
					var flip [2]int32
					flip[other] = r
					alt := playSpies(t, kvs, flip)
					n := 0
					for n < len(base[seat]) && !(base[seat][n].GetPhase() == matrix.PhaseChoice && base[seat][n].GetMatrix().GetRound() == r) {
						n++
					}
					for k := 0; k <= n && k < len(base[seat]); k++ {
						if k >= len(alt[seat]) || !proto.Equal(base[seat][k], alt[seat][k]) {
							t.Fatalf("seat %d's observation %d (round %d's choice or before) depends on the other seat's pending choice", seat, k+1, r)
						}
					}
				}
			}
		})
	}
}
