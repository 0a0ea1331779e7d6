package gametest

import (
	"math"
	"slices"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"google.golang.org/protobuf/proto"
)

// Fuzz is the fuzz harness every family's FuzzApply runs: arbitrary bytes, read as an Action,
// applied at one of Stages by one of the seats. Apply must not panic and must accept, or refuse
// with a *games.Rejection that leaves every seat's observation unchanged; after an accepted
// action every seat can still be observed, and a finished match pays each seat one finite
// payoff. Check adds what the family's rules promise on top (amounts within bounds, resources
// kept, payoffs that add up).
type Fuzz struct {
	Game games.Game
	// Seed is the match seed of every stage.
	Seed uint64
	// Stages are the states a fuzzed action is tried on.
	Stages []FuzzStage
	// Corpus seeds the fuzzer: action i is tried at stage i (modulo the stages).
	Corpus []*agentv1.Action
	// Check, when set, checks an accepted action further.
	Check func(t *testing.T, a Accepted)
}

// FuzzStage is a state a fuzzed action is tried on: a match with Params played from the start
// with Moves, Moves[i] by seat Seats[i], or by the first seat to move where Seats is shorter.
// Every move must be accepted.
type FuzzStage struct {
	Params *matchv1.GameParams // nil: all defaults
	Moves  []*agentv1.Action
	Seats  []games.Seat
}

// Accepted is an action the rules accepted, for Fuzz.Check.
type Accepted struct {
	Stage  int
	Params *matchv1.GameParams // the stage's params, resolved
	State  games.State         // after the action
	Seat   games.Seat
	Action *agentv1.Action
	ToMove []games.Seat           // the seats to move before the action
	Before []*agentv1.Observation // every seat's observation before the action
}

// Run runs the harness; call it from a FuzzXxx function.
func (fz Fuzz) Run(f *testing.F) {
	f.Helper()
	for i, a := range fz.Corpus {
		b, err := proto.Marshal(a)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), b)
	}
	f.Fuzz(fz.Input)
}

// Input runs the harness on one input, as the fuzzer does: choice picks the stage and the seat,
// data is read as an Action (an input that is none is skipped).
func (fz Fuzz) Input(t *testing.T, choice uint8, data []byte) {
	t.Helper()
	action := &agentv1.Action{}
	if err := proto.Unmarshal(data, action); err != nil {
		return
	}
	stage := int(choice) % len(fz.Stages)
	params, st := fz.start(t, stage)
	seats, _ := games.Seats(fz.Game, params)
	n := len(seats)
	toMove := st.ToMove()
	// Even picks ask a seat to move, which reaches deeper into the rules; odd picks ask any
	// seat, one past the last included, which must be refused unless it is to move.
	pick := int(choice) / len(fz.Stages)
	seat := games.Seat(pick / 2 % (n + 1))
	if pick%2 == 0 && len(toMove) > 0 {
		seat = toMove[pick/2%len(toMove)]
	}
	before := make([]*agentv1.Observation, n)
	for s := range before {
		before[s] = st.Observe(games.Seat(s))
	}
	if _, err := st.Apply(seat, action); err != nil {
		if _, ok := games.AsRejection(err); !ok {
			t.Fatalf("Apply returned %T %v, want *games.Rejection", err, err)
		}
		for s, b := range before {
			if !proto.Equal(st.Observe(games.Seat(s)), b) {
				t.Fatalf("refused action %v changed seat %d's observation", action, s)
			}
		}
		return
	}
	for s := range games.Seat(n) {
		if st.Observe(s) == nil {
			t.Fatalf("after %v by seat %d, seat %d's observation is nil", action, seat, s)
		}
	}
	if len(st.ToMove()) == 0 {
		pay := st.Outcome().GetPayoffs()
		if len(pay) != n || slices.ContainsFunc(pay, func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }) {
			t.Fatalf("after %v by seat %d the match is over with payoffs %v for %d seats", action, seat, pay, n)
		}
	}
	if fz.Check != nil {
		fz.Check(t, Accepted{Stage: stage, Params: params, State: st, Seat: seat, Action: action, ToMove: toMove, Before: before})
	}
}

// start returns the resolved params of stage i and its state, its moves played.
func (fz Fuzz) start(t *testing.T, i int) (*matchv1.GameParams, games.State) {
	t.Helper()
	stage := fz.Stages[i]
	params, err := fz.Game.Resolve(stage.Params)
	if err != nil {
		t.Fatalf("stage %d: Resolve: %v", i, err)
	}
	st, err := fz.Game.NewState(params, fz.Seed)
	if err != nil {
		t.Fatalf("stage %d: NewState: %v", i, err)
	}
	for k, a := range stage.Moves {
		var seat games.Seat
		switch {
		case k < len(stage.Seats):
			seat = stage.Seats[k]
		case len(st.ToMove()) > 0:
			seat = st.ToMove()[0]
		default:
			t.Fatalf("stage %d: move %d after the end", i, k+1)
		}
		if _, err := st.Apply(seat, proto.CloneOf(a)); err != nil {
			t.Fatalf("stage %d: move %d (seat %d, %v): %v", i, k+1, seat, a, err)
		}
	}
	return params, st
}
