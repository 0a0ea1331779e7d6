package fair_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/parley-arena/parley/agents/fair"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

func TestConfigValidate(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		cfg  fair.Config
		ok   bool
	}{
		{"default", fair.DefaultConfig(), true},
		{"all equal", fair.Config{Open: 0.5, Target: 0.5, Floor: 0.5}, true},
		{"widest", fair.Config{Open: 1, Target: 0.5, Floor: 0}, true},
		{"all zero", fair.Config{}, true},
		{"all one", fair.Config{Open: 1, Target: 1, Floor: 1}, true},
		{"negative floor", fair.Config{Open: 0.6, Target: 0.5, Floor: -0.1}, false},
		{"open above one", fair.Config{Open: 1.01, Target: 0.5, Floor: 0.2}, false},
		{"floor above target", fair.Config{Open: 0.6, Target: 0.3, Floor: 0.4}, false},
		{"target above open", fair.Config{Open: 0.5, Target: 0.6, Floor: 0.2}, false},
		{"everything negative", fair.Config{Open: -0.1, Target: -0.2, Floor: -0.3}, false},
		{"NaN open", fair.Config{Open: nan, Target: 0.5, Floor: 0.2}, false},
		{"NaN target", fair.Config{Open: 0.6, Target: nan, Floor: 0.2}, false},
		{"NaN floor", fair.Config{Open: 0.6, Target: 0.5, Floor: nan}, false},
		{"infinite open", fair.Config{Open: inf, Target: 0.5, Floor: 0.2}, false},
		{"negative infinite floor", fair.Config{Open: 0.6, Target: 0.5, Floor: -inf}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.ok != (err == nil) {
				t.Fatalf("Validate(%+v) = %v, want ok=%v", tc.cfg, err, tc.ok)
			}
			_, nerr := fair.New(tc.cfg)
			if tc.ok != (nerr == nil) {
				t.Errorf("New(%+v) = %v, want ok=%v", tc.cfg, nerr, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), "0 <= floor <= target <= open <= 1") {
				t.Errorf("error %q does not say what is allowed", err)
			}
		})
	}
}

func gameParams(total int64, maxTurns int32) *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{
		Total: proto.Int64(total), MaxTurns: proto.Int32(maxTurns),
	}}}
}

func newState(t *testing.T, total int64, maxTurns int32) games.State {
	t.Helper()
	st, err := games.Start(ultimatum.New(), gameParams(total, maxTurns), 0)
	if err != nil {
		t.Fatalf("NewState: %v", err)
	}
	return st
}

func proposeAction(x int64) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
		Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
			{Seat: 0, Gives: map[string]int64{"Dollars": x}},
		}}},
	}}}}}
}

// playProposals has the players propose xs in turn, from turn 1.
func playProposals(t *testing.T, st games.State, xs ...int64) {
	t.Helper()
	for _, x := range xs {
		if _, err := st.Apply(st.ToMove()[0], proposeAction(x)); err != nil {
			t.Fatalf("turn %d: propose %d: %v", st.Turn(), x, err)
		}
	}
}

// proposed returns x, what P1 gives P2, from a proposal, and whether a is one.
func proposed(a *agentv1.Action) (int64, bool) {
	p := a.GetMove().GetPropose()
	if p == nil {
		return 0, false
	}
	var x int64
	for _, sh := range p.GetProposal().GetAllocation().GetShares() {
		if sh.GetSeat() == 0 {
			for _, v := range sh.GetGives() {
				x += v
			}
		}
	}
	return x, true
}

func mustNew(t *testing.T, cfg fair.Config) *fair.Agent {
	t.Helper()
	a, err := fair.New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return a
}

func act(t *testing.T, a *fair.Agent, st games.State) *agentv1.Action {
	t.Helper()
	seat := st.ToMove()[0]
	action, err := a.Act(context.Background(), st.Observe(seat))
	if err != nil {
		t.Fatalf("Act on turn %d: %v", st.Turn(), err)
	}
	return action
}

// TestProposals checks the agent's proposals against asks worked out by hand: the ask on turn
// t is round(total * (open + (target-open) * (t-1)/(L-1))) with L = max_turns-1 the last turn
// that allows a proposal (just target when L <= 1), and P1 proposes total-ask while P2
// proposes ask. The opponent always makes the worst offer for the agent, so it never accepts.
func TestProposals(t *testing.T) {
	def := fair.DefaultConfig()
	tests := []struct {
		name     string
		cfg      fair.Config
		total    int64
		maxTurns int32
		seat     games.Seat
		// want[i] is the agent's i-th proposal (x, given by P1 to P2).
		want []int64
	}{
		// L=7: asks 60, 56.67, 53.33, 50 on turns 1, 3, 5, 7.
		{"P1, default, 100 over 8 turns", def, 100, 8, 0, []int64{40, 43, 47, 50}},
		// Asks 58.33, 55, 51.67 on turns 2, 4, 6; turn 8 allows no proposal.
		{"P2, default, 100 over 8 turns", def, 100, 8, 1, []int64{58, 55, 52}},
		// L=3: asks 7 on turn 1 and 5 on turn 3.
		{"P1, open 0.7, 10 over 4 turns", fair.Config{Open: 0.7, Target: 0.5, Floor: 0.2}, 10, 4, 0, []int64{3, 5}},
		// Turn 2: 0.6 of 10.
		{"P2, open 0.7, 10 over 4 turns", fair.Config{Open: 0.7, Target: 0.5, Floor: 0.2}, 10, 4, 1, []int64{6}},
		// L=1: only the target.
		{"P1, two turns: straight to the target", def, 100, 2, 0, []int64{50}},
		// L=2: 0.6 on turn 1; P2's ask on turn 2 is 0.5.
		{"P1, three turns", def, 100, 3, 0, []int64{40}},
		{"P2, three turns", def, 100, 3, 1, []int64{50}},
		{"P1, greedy", fair.Config{Open: 1, Target: 1, Floor: 1}, 100, 6, 0, []int64{0, 0, 0}},
		// Turn 1: 0.6*7 = 4.2 -> 4; turn 3 (L=4, progress 2/3): 0.5333*7 = 3.73 -> 4.
		{"P1, small total rounds", def, 7, 5, 0, []int64{3, 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := mustNew(t, tc.cfg)
			st := newState(t, tc.total, tc.maxTurns)
			var got []int64
			for len(st.ToMove()) > 0 && st.Turn() < tc.maxTurns {
				if st.ToMove()[0] != tc.seat {
					// The worst offer for the agent: P1 gives everything, or P2 gets nothing.
					worst := int64(0)
					if tc.seat == 0 {
						worst = tc.total
					}
					playProposals(t, st, worst)
					continue
				}
				action := act(t, a, st)
				x, ok := proposed(action)
				if !ok {
					t.Fatalf("turn %d: agent played %v, want a proposal", st.Turn(), action.GetMove())
				}
				got = append(got, x)
				if _, err := st.Apply(tc.seat, action); err != nil {
					t.Fatalf("turn %d: the game refused the agent's proposal: %v", st.Turn(), err)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("proposals = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestResponses(t *testing.T) {
	def := fair.DefaultConfig()
	tests := []struct {
		name     string
		cfg      fair.Config
		total    int64
		maxTurns int32
		// before are the proposals played before the agent moves; the last is the offer.
		before []int64
		want   gamev1.MoveKind
		// wantX is the agent's counter-proposal when want is PROPOSE.
		wantX int64
	}{
		// P2 on turn 2 asks 58.
		{"P2 accepts an offer at its ask", def, 100, 8, []int64{58}, gamev1.MoveKind_MOVE_KIND_ACCEPT, 0},
		{"P2 accepts an offer above its ask", def, 100, 8, []int64{59}, gamev1.MoveKind_MOVE_KIND_ACCEPT, 0},
		{"P2 counters an offer just below its ask", def, 100, 8, []int64{57}, gamev1.MoveKind_MOVE_KIND_PROPOSE, 58},
		// P1 on turn 3 asks 57, so accepts x <= 43.
		{"P1 accepts an offer at its ask", def, 100, 8, []int64{40, 43}, gamev1.MoveKind_MOVE_KIND_ACCEPT, 0},
		{"P1 counters an offer just below its ask", def, 100, 8, []int64{40, 44}, gamev1.MoveKind_MOVE_KIND_PROPOSE, 43},
		// Last turn (8, P2's): accept at or above the floor of 20, reject below.
		{"P2 on the last turn accepts the floor", def, 100, 8, []int64{0, 100, 0, 100, 0, 100, 20}, gamev1.MoveKind_MOVE_KIND_ACCEPT, 0},
		{"P2 on the last turn rejects below the floor", def, 100, 8, []int64{0, 100, 0, 100, 0, 100, 19}, gamev1.MoveKind_MOVE_KIND_REJECT, 0},
		// Last turn (3, P1's): P1 gets 100-x, so x=80 gives the floor.
		{"P1 on the last turn accepts the floor", def, 100, 3, []int64{40, 80}, gamev1.MoveKind_MOVE_KIND_ACCEPT, 0},
		{"P1 on the last turn rejects below the floor", def, 100, 3, []int64{40, 81}, gamev1.MoveKind_MOVE_KIND_REJECT, 0},
		// Floor 0.25 of 10 is 2.5, rounded up to 3.
		{"floor rounds up: 3 accepted", fair.Config{Open: 0.6, Target: 0.5, Floor: 0.25}, 10, 2, []int64{3}, gamev1.MoveKind_MOVE_KIND_ACCEPT, 0},
		{"floor rounds up: 2 rejected", fair.Config{Open: 0.6, Target: 0.5, Floor: 0.25}, 10, 2, []int64{2}, gamev1.MoveKind_MOVE_KIND_REJECT, 0},
		// One turn: nothing to accept, no proposal allowed.
		{"a single turn is a reject", def, 100, 1, nil, gamev1.MoveKind_MOVE_KIND_REJECT, 0},
		// Floor 0 accepts anything on the last turn, even nothing.
		{"zero floor accepts zero", fair.Config{Open: 0.5, Target: 0.5}, 10, 2, []int64{0}, gamev1.MoveKind_MOVE_KIND_ACCEPT, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := mustNew(t, tc.cfg)
			st := newState(t, tc.total, tc.maxTurns)
			playProposals(t, st, tc.before...)
			action := act(t, a, st)
			if got := games.KindOf(action.GetMove()); got != tc.want {
				t.Fatalf("agent played %v, want %v", action.GetMove(), tc.want)
			}
			if tc.want == gamev1.MoveKind_MOVE_KIND_PROPOSE {
				if x, _ := proposed(action); x != tc.wantX {
					t.Errorf("agent proposed x=%d, want %d", x, tc.wantX)
				}
			}
			if _, err := st.Apply(st.ToMove()[0], action); err != nil {
				t.Fatalf("the game refused the agent's move: %v", err)
			}
			if tc.want == gamev1.MoveKind_MOVE_KIND_ACCEPT {
				o := st.Outcome()
				last := tc.before[len(tc.before)-1]
				want := []float64{float64(tc.total - last), float64(last)}
				if !o.GetAgreement() || fmt.Sprint(o.GetPayoffs()) != fmt.Sprint(want) {
					t.Errorf("outcome after accepting = %v, want an agreement paying %v", o, want)
				}
			}
		})
	}
}

// TestPlaysLegallyAndConcedes plays the agent against a random opponent over many
// configurations and checks, at every move: the move is among the legal moves, a proposal
// stays within proposal_bounds, the game accepts it, and the agent's ask never grows.
func TestPlaysLegallyAndConcedes(t *testing.T) {
	configs := []fair.Config{
		fair.DefaultConfig(),
		{Open: 1, Target: 0.5, Floor: 0},
		{Open: 1, Target: 1, Floor: 1},
		{},
		{Open: 0.9, Target: 0.1, Floor: 0.05},
		{Open: 0.55, Target: 0.45, Floor: 0.45},
	}
	totals := []int64{1, 2, 3, 7, 100, 1001, bargain.MaxAmount}
	turns := []int32{1, 2, 3, 4, 5, 8, 13}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, cfg := range configs {
		for _, total := range totals {
			for _, maxTurns := range turns {
				for seat := range games.Seat(2) {
					name := fmt.Sprintf("%+v/total=%d/turns=%d/seat=%d", cfg, total, maxTurns, seat)
					t.Run(name, func(t *testing.T) {
						playAgainstRandom(t, mustNew(t, cfg), seat, total, maxTurns, rng)
					})
				}
			}
		}
	}
}

func playAgainstRandom(t *testing.T, a *fair.Agent, seat games.Seat, total int64, maxTurns int32, rng *rand.Rand) {
	st := newState(t, total, maxTurns)
	lastAsk := int64(math.MaxInt64) // what the agent wanted for itself last time
	for len(st.ToMove()) > 0 {
		mover := st.ToMove()[0]
		obs := st.Observe(mover)
		var action *agentv1.Action
		if mover == seat {
			var err error
			if action, err = a.Act(context.Background(), obs); err != nil {
				t.Fatalf("turn %d: Act: %v", st.Turn(), err)
			}
			kind := games.KindOf(action.GetMove())
			if !slices.Contains(obs.GetLegalMoves(), kind) {
				t.Fatalf("turn %d: agent played %v, legal are %v", st.Turn(), kind, obs.GetLegalMoves())
			}
			if x, ok := proposed(action); ok {
				checkBounds(t, action, obs.GetProposalBounds())
				ask := x // P2 asks for x
				if seat == 0 {
					ask = total - x
				}
				if ask > lastAsk {
					t.Fatalf("turn %d: agent asks for %d after asking for %d", st.Turn(), ask, lastAsk)
				}
				lastAsk = ask
			}
		} else {
			action = games.RandomAction(obs, rng)
		}
		if _, err := st.Apply(mover, action); err != nil {
			t.Fatalf("turn %d: seat %d's %v refused: %v", st.Turn(), mover, action.GetMove(), err)
		}
		if st.Turn() > maxTurns {
			t.Fatalf("the game went past turn %d", maxTurns)
		}
	}
}

// checkBounds checks every amount of a proposal lies within a bound for its seat, side and
// resource (zero amounts need no bound).
func checkBounds(t *testing.T, a *agentv1.Action, bounds []*gamev1.Bound) {
	t.Helper()
	within := func(seat int32, side gamev1.ShareSide, res string, v int64) bool {
		for _, b := range bounds {
			if b.GetSeat() == seat && b.GetSide() == side && b.GetResource() == res {
				return b.GetMin() <= v && v <= b.GetMax()
			}
		}
		return v == 0
	}
	for _, sh := range a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares() {
		for res, v := range sh.GetGives() {
			if !within(sh.GetSeat(), gamev1.ShareSide_SHARE_SIDE_GIVES, res, v) {
				t.Fatalf("seat %d gives %d %s, outside bounds %v", sh.GetSeat(), v, res, bounds)
			}
		}
		for res, v := range sh.GetReceives() {
			if !within(sh.GetSeat(), gamev1.ShareSide_SHARE_SIDE_RECEIVES, res, v) {
				t.Fatalf("seat %d receives %d %s, outside bounds %v", sh.GetSeat(), v, res, bounds)
			}
		}
	}
}

func TestOtherGame(t *testing.T) {
	a := mustNew(t, fair.DefaultConfig())
	_, err := a.Act(context.Background(), &agentv1.Observation{Game: "chess"})
	if err == nil || !strings.Contains(err.Error(), `"chess"`) {
		t.Errorf("Act on a chess observation = %v, want an error naming the game", err)
	}
}

func TestDescribe(t *testing.T) {
	a := mustNew(t, fair.Config{Open: 0.7, Target: 0.45, Floor: 0.1})
	info := a.Describe()
	if info.GetName() != "fair" || !slices.Contains(info.GetGames(), "ultimatum") {
		t.Errorf("Describe = %v", info)
	}
	for _, want := range []string{"70%", "45%", "10%"} {
		if !strings.Contains(info.GetDescription(), want) {
			t.Errorf("description %q does not mention %s", info.GetDescription(), want)
		}
	}
}
