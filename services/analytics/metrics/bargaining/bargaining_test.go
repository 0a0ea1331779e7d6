package bargaining_test

import (
	"math"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/bargaining"
	"google.golang.org/protobuf/proto"
)

// rec builds a record: match_started, the moves (one per turn from turn 1), match_ended.
type rec struct {
	game   string
	params *matchv1.GameParams
	seed   uint64
	moves  []*eventsv1.ActionTaken
	cause  matchv1.EndCause
	pay    []float64
}

func (r rec) events() []*eventsv1.MatchEvent {
	evs := []*eventsv1.MatchEvent{{MatchId: "m", Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
		Game: r.game, Params: r.params, Seed: r.seed,
		Seats: []*gamev1.SeatInfo{{Seat: 0, Name: "P1"}, {Seat: 1, Name: "P2"}}}}}}
	for i, m := range r.moves {
		evs = append(evs, &eventsv1.MatchEvent{MatchId: "m", Seq: uint64(len(evs) + 1), Turn: int32(i + 1),
			Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: m}})
	}
	evs = append(evs, &eventsv1.MatchEvent{MatchId: "m", Seq: uint64(len(evs) + 1), Turn: int32(len(r.moves)),
		Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{
			Cause: r.cause, Agreement: r.cause == matchv1.EndCause_END_CAUSE_AGREEMENT, Payoffs: r.pay}}}})
	return evs
}

// propose is seat proposing that seat 0 gives g0 and seat 1 gives g1.
func propose(seat int32, g0, g1 map[string]int64) *eventsv1.ActionTaken {
	return &eventsv1.ActionTaken{Seat: seat, Attempt: 1, Action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{
		Proposal: &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
			{Seat: 0, Gives: g0}, {Seat: 1, Gives: g1}}}}}}}}}}
}

func accept(seat int32) *eventsv1.ActionTaken {
	return &eventsv1.ActionTaken{Seat: seat, Attempt: 1, Action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}}}
}

func reject(seat int32, defaultReason string) *eventsv1.ActionTaken {
	return &eventsv1.ActionTaken{Seat: seat, DefaultReason: defaultReason, Action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}}
}

func pass(seat int32, defaultReason string) *eventsv1.ActionTaken {
	return &eventsv1.ActionTaken{Seat: seat, DefaultReason: defaultReason, Action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}}}
}

// price is a buyer/seller proposal at p ZUP.
func price(seat int32, p int64) *eventsv1.ActionTaken {
	return propose(seat, map[string]int64{"X": 1}, map[string]int64{"ZUP": p})
}

// offer is an ultimatum proposal: P1 hands x Dollars to P2.
func offer(seat int32, x int64) *eventsv1.ActionTaken {
	return propose(seat, map[string]int64{"Dollars": x}, nil)
}

type want struct {
	name string
	seat int32
	v    float64
}

const W = metrics.WholeMatch

func TestMatch(t *testing.T) {
	bs := func(p *buysellv1.Params) *matchv1.GameParams {
		return &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: p}}
	}
	tests := []struct {
		name   string
		rec    rec
		want   []want
		absent []want
	}{
		{
			name: "ultimatum: P1 offers 30, P2 asks 60, P1 accepts",
			rec: rec{game: "ultimatum", params: &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{}}},
				moves: []*eventsv1.ActionTaken{offer(0, 30), offer(1, 60), accept(0)},
				cause: matchv1.EndCause_END_CAUSE_AGREEMENT, pay: []float64{40, 60}},
			want: []want{{"turns_to_agreement", W, 3}, {"proposals", 0, 1}, {"proposals", 1, 1},
				{"opening_proposal", 0, 30}, {"opening_proposal", 1, 60}, {"opening_share", 0, 0.3},
				{"opening_share", 1, 0.6}, {"total", W, 100}, {"default_moves", 0, 0}, {"default_moves", 1, 0}},
			absent: []want{{name: "price_1", seat: W}},
		},
		{
			name: "ultimatum: P2's agent fails, its default move rejects",
			rec: rec{game: "ultimatum", params: &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{Total: proto.Int64(10)}}},
				moves: []*eventsv1.ActionTaken{offer(0, 4), reject(1, "agent timed out")},
				cause: matchv1.EndCause_END_CAUSE_AGENT_FAULT, pay: []float64{0, 0}},
			want:   []want{{"proposals", 0, 1}, {"proposals", 1, 0}, {"opening_share", 0, 0.4}, {"total", W, 10}, {"default_moves", 1, 1}},
			absent: []want{{name: "turns_to_agreement", seat: W}, {name: "opening_proposal", seat: 1}},
		},
		{
			name: "buysell: the default values, a sale at 40 on turn 8",
			rec: rec{game: "buysell", params: bs(&buysellv1.Params{}),
				moves: []*eventsv1.ActionTaken{price(0, 80), price(1, 30), price(0, 67), price(1, 31), price(0, 54), price(1, 38), price(0, 40), accept(1)},
				cause: matchv1.EndCause_END_CAUSE_AGREEMENT, pay: []float64{0, 20}},
			want: []want{{"price_1", W, 80}, {"price_2", W, 30}, {"price_3", W, 67}, {"price_4", W, 31}, {"price_5", W, 54},
				{"price_6", W, 38}, {"price_7", W, 40}, {"price_count", W, 7}, {"first_price", W, 80}, {"last_price", W, 40},
				{"final_price", W, 40}, {"bad_counter_offer", W, 0}, {"seller_payoff", W, 0}, {"buyer_payoff", W, 20},
				{"cost", W, 40}, {"willingness", W, 60}, {"budget", W, 100}, {"budget_share", W, 0.4},
				{"turns_to_agreement", W, 8}, {"proposals", 0, 4}, {"proposals", 1, 3},
				{"opening_proposal", 0, 80}, {"opening_proposal", 1, 30}},
			absent: []want{{name: "price_8", seat: W}, {name: "opening_share", seat: 0}},
		},
		{
			name: "buysell: the buyer counters above the opening, the seller rejects",
			rec: rec{game: "buysell", params: bs(&buysellv1.Params{Scale: proto.Int64(2)}),
				moves: []*eventsv1.ActionTaken{price(0, 50), price(1, 55), reject(0, "")},
				cause: matchv1.EndCause_END_CAUSE_REJECTED, pay: []float64{0, 0}},
			want: []want{{"bad_counter_offer", W, 1}, {"first_price", W, 50}, {"last_price", W, 55}, {"price_count", W, 2},
				{"cost", W, 80}, {"willingness", W, 120}, {"budget", W, 200}},
			absent: []want{{name: "final_price", seat: W}, {name: "budget_share", seat: W}, {name: "turns_to_agreement", seat: W}},
		},
		{
			name: "buysell: one price only, no counter",
			rec: rec{game: "buysell", params: bs(&buysellv1.Params{}),
				moves: []*eventsv1.ActionTaken{price(0, 70), reject(1, "")},
				cause: matchv1.EndCause_END_CAUSE_REJECTED, pay: []float64{0, 0}},
			want:   []want{{"price_count", W, 1}, {"first_price", W, 70}},
			absent: []want{{name: "bad_counter_offer", seat: W}, {name: "opening_proposal", seat: 1}},
		},
		{
			name: "trading: P1 asks 2 Y for 1 X, P2 waits (default), then offers 5 X for 3 Y",
			rec: rec{game: "trading",
				moves: []*eventsv1.ActionTaken{
					propose(0, map[string]int64{"X": 1}, map[string]int64{"Y": 2}),
					pass(1, "agent timed out"),
					pass(0, ""),
					propose(1, map[string]int64{"X": 5}, map[string]int64{"Y": 3}),
					accept(0)},
				cause: matchv1.EndCause_END_CAUSE_AGREEMENT, pay: []float64{-2, 2}},
			want: []want{{"opening_proposal", 0, 1}, {"opening_proposal", 1, 2}, {"proposals", 0, 1}, {"proposals", 1, 1},
				{"default_moves", 1, 1}, {"default_moves", 0, 0}, {"turns_to_agreement", W, 5}},
			absent: []want{{name: "price_1", seat: W}, {name: "total", seat: W}},
		},
	}
	fam := bargaining.New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vals, err := fam.Match(tc.rec.events())
			if err != nil {
				t.Fatal(err)
			}
			row := metrics.Row{Values: vals}
			for _, w := range tc.want {
				got, ok := row.Value(w.name, w.seat)
				if !ok || math.Abs(got-w.v) > 1e-12 {
					t.Errorf("%s seat %d = %v (present %v), want %v", w.name, w.seat, got, ok, w.v)
				}
			}
			for _, a := range tc.absent {
				if got, ok := row.Value(a.name, a.seat); ok {
					t.Errorf("%s seat %d = %v, want absent", a.name, a.seat, got)
				}
			}
			seen := map[[2]any]bool{}
			for _, v := range vals {
				k := [2]any{v.Name, v.Seat}
				if seen[k] {
					t.Errorf("value %s seat %d given twice", v.Name, v.Seat)
				}
				seen[k] = true
			}
		})
	}
}

// TestDrawnValues checks that drawn cost and willingness are those the game drew for the seed.
func TestDrawnValues(t *testing.T) {
	params := &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{Draw: proto.Bool(true)}}}
	for _, seed := range []uint64{1, 2, 99} {
		r := rec{game: "buysell", params: params, seed: seed, moves: []*eventsv1.ActionTaken{price(0, 70), reject(1, "")},
			cause: matchv1.EndCause_END_CAUSE_REJECTED, pay: []float64{0, 0}}
		vals, err := bargaining.New().Match(r.events())
		if err != nil {
			t.Fatal(err)
		}
		resolved, err := buysell.New().Resolve(params)
		if err != nil {
			t.Fatal(err)
		}
		cost, will, err := buysell.Values(resolved, seed)
		if err != nil {
			t.Fatal(err)
		}
		row := metrics.Row{Values: vals}
		if got, _ := row.Value("cost", W); got != float64(cost) {
			t.Errorf("seed %d: cost %v, want %d", seed, got, cost)
		}
		if got, _ := row.Value("willingness", W); got != float64(will) {
			t.Errorf("seed %d: willingness %v, want %d", seed, got, will)
		}
		if cost < 20 || cost > 40 || will < 60 || will > 80 {
			t.Errorf("seed %d: drawn values %d, %d outside the default ranges", seed, cost, will)
		}
	}
}

func TestBadRecords(t *testing.T) {
	good := rec{game: "ultimatum", moves: []*eventsv1.ActionTaken{offer(0, 30), accept(1)}, cause: matchv1.EndCause_END_CAUSE_AGREEMENT, pay: []float64{70, 30}}
	if _, err := bargaining.New().Match(good.events()); err != nil {
		t.Fatalf("unresolved (nil) params: %v", err)
	}
	other := good
	other.game = "coalition"
	if _, err := bargaining.New().Match(other.events()); err == nil {
		t.Error("a coalition record was read")
	}
	if _, err := bargaining.New().Match(good.events()[:2]); err == nil {
		t.Error("a record without match_ended was read")
	}
	bad := good
	bad.moves = []*eventsv1.ActionTaken{{Seat: 2, Action: offer(0, 1).GetAction()}}
	if _, err := bargaining.New().Match(bad.events()); err == nil {
		t.Error("an action of seat 2 was read")
	}
}
