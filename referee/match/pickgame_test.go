package match_test

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// pickGame is a tiny game for the runner's tests: each round both seats pick a digit at the
// same time (or one after the other, when sequential); nobody sees a pick before the round is
// complete; after the last round the higher total wins. It can be told to panic in one method.
type pickGame struct {
	rounds     int32
	sequential bool
	panicIn    string // "info", "resolve", "newstate", "apply", "observe", "tomove", "clone", "default" or "outcome"
	// hugeFrom, when set, is the first round whose briefing alone is over the observation's
	// budget.
	hugeFrom int32
}

func (g pickGame) Info() *gamev1.GameInfo {
	if g.panicIn == "info" {
		panic("pick: info failed")
	}
	return &gamev1.GameInfo{Name: "pick", RulesVersion: "test", Seats: []string{"A", "B"}}
}

func (g pickGame) Resolve(*matchv1.GameParams) (*matchv1.GameParams, error) {
	if g.panicIn == "resolve" {
		panic("pick: resolve failed")
	}
	return &matchv1.GameParams{}, nil
}

func (g pickGame) NewState(*matchv1.GameParams, uint64) (games.State, error) {
	if g.panicIn == "newstate" {
		panic("pick: newstate failed")
	}
	return &pickState{g: g, round: 1}, nil
}

type pickState struct {
	g       pickGame
	round   int32
	chosen  [2]bool
	moves   [2]*gamev1.Move // this round's picks, hidden until both are in
	picks   [2]int64
	totals  [2]int64
	history games.History
}

func (s *pickState) maybePanic(method string) {
	if s.g.panicIn == method {
		panic("pick: " + method + " failed")
	}
}

func (s *pickState) over() bool { return s.round > s.g.rounds }

func (s *pickState) ToMove() []games.Seat {
	s.maybePanic("tomove")
	if s.over() {
		return nil
	}
	var out []games.Seat
	for seat := range games.Seat(2) {
		if !s.chosen[seat] {
			out = append(out, seat)
			if s.g.sequential {
				break
			}
		}
	}
	return out
}

func (s *pickState) Turn() int32 { return min(s.round, s.g.rounds) }

func (s *pickState) pickedSeats() []games.Seat {
	out := []games.Seat{}
	for seat, c := range s.chosen {
		if c {
			out = append(out, games.Seat(seat))
		}
	}
	return out
}

func (s *pickState) Observe(seat games.Seat) *agentv1.Observation {
	s.maybePanic("observe")
	obs := &agentv1.Observation{Game: "pick", Seat: seat, Turn: s.Turn(), MaxTurns: s.g.rounds}
	obs.History, obs.HistoryOmitted = s.history.For(seat)
	if !s.over() && !s.chosen[seat] {
		obs.LegalMoves = []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_CHOOSE}
		for d := range 10 {
			obs.Choices = append(obs.Choices, &gamev1.Option{Id: strconv.Itoa(d)})
		}
	}
	obs.Briefing = fmt.Sprintf("Round %d of %d: pick a digit; the higher total wins. Your total: %d. Seats that have picked this round: %v.",
		s.Turn(), s.g.rounds, s.totals[seat], s.pickedSeats())
	if s.g.hugeFrom > 0 && s.round >= s.g.hugeFrom {
		obs.Briefing += strings.Repeat(" ", games.MaxObservationBytes)
	}
	return obs
}

func (s *pickState) Apply(seat games.Seat, action *agentv1.Action) ([]*eventsv1.MatchEvent, error) {
	s.maybePanic("apply")
	if err := games.CheckAction(action, seat, 2); err != nil {
		return nil, err
	}
	if s.over() || s.chosen[seat] || (s.g.sequential && s.ToMove()[0] != seat) {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN, "seat %d may not pick now", seat)
	}
	c := action.GetMove().GetChoose()
	if c == nil {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, "the only move is choose")
	}
	n, err := strconv.Atoi(c.GetOption())
	if err != nil || n < 0 || n > 9 {
		return nil, games.Reject(gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS, "option %q is not a digit 0 to 9", c.GetOption())
	}
	s.chosen[seat], s.picks[seat], s.moves[seat] = true, int64(n), proto.CloneOf(action.GetMove())
	if s.chosen[0] && s.chosen[1] {
		for p := range games.Seat(2) {
			s.history.AddMove(s.round, p, s.moves[p], nil, fmt.Sprintf("seat %d picks %d", p, s.picks[p]))
			s.totals[p] += s.picks[p]
		}
		s.round++
		s.chosen, s.moves = [2]bool{}, [2]*gamev1.Move{}
	}
	return nil, nil
}

func (s *pickState) Default(games.Seat) *agentv1.Action {
	s.maybePanic("default")
	return pick("0")
}

func (s *pickState) Outcome() *matchv1.Outcome {
	s.maybePanic("outcome")
	pay := []float64{0.5, 0.5}
	switch {
	case s.totals[0] > s.totals[1]:
		pay = []float64{1, 0}
	case s.totals[0] < s.totals[1]:
		pay = []float64{0, 1}
	}
	return &matchv1.Outcome{
		Cause:   matchv1.EndCause_END_CAUSE_TURN_LIMIT,
		Payoffs: pay,
		Summary: fmt.Sprintf("Totals %d and %d after %d rounds.", s.totals[0], s.totals[1], s.g.rounds),
	}
}

func (s *pickState) Clone() games.State {
	s.maybePanic("clone")
	c := *s
	c.history = s.history.Clone()
	return &c
}

func pick(option string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: option}}}}
}
