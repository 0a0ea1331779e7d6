package concede_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/concede"
	"github.com/parley-arena/parley/agents/random"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
	"google.golang.org/protobuf/proto"
)

type actor interface {
	Act(context.Context, *agentv1.Observation) (*agentv1.Action, error)
}

// price is a price proposed by seat.
type price struct {
	seat  games.Seat
	price int64
}

// result of one match played in process.
type result struct {
	out     *matchv1.Outcome
	prices  []price // every proposed price, in order
	refused int
}

// values returns the seller's cost and the buyer's willingness in a match with p (resolved
// here) and seed.
func values(p *matchv1.GameParams, seed uint64) (cost, willingness int64, err error) {
	r, err := buysell.New().Resolve(p)
	if err != nil {
		return 0, 0, err
	}
	return buysell.Values(r, seed)
}

// play runs one buysell match between seller and buyer in process, as the runner would (a
// refused action is retried once with the reason, then the default is played).
func play(t *testing.T, p *matchv1.GameParams, seed uint64, seller, buyer actor) result {
	t.Helper()
	st, err := games.Start(buysell.New(), p, seed)
	if err != nil {
		t.Fatal(err)
	}
	agents := []actor{seller, buyer}
	var r result
	for len(st.ToMove()) > 0 {
		seat := st.ToMove()[0]
		obs := st.Observe(seat)
		obs.Attempt = 1
		a, err := agents[seat].Act(context.Background(), obs)
		if err != nil {
			t.Fatalf("seat %d turn %d: %v", seat, obs.GetTurn(), err)
		}
		if _, err := st.Apply(seat, a); err != nil {
			r.refused++
			if _, err := st.Apply(seat, st.Default(seat)); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if pr := a.GetMove().GetPropose(); pr != nil {
			for _, sh := range pr.GetProposal().GetAllocation().GetShares() {
				if sh.GetSeat() == buysell.Buyer {
					r.prices = append(r.prices, price{seat, sh.GetGives()[obs.GetBuysell().GetCurrency()]})
				}
			}
		}
	}
	r.out = st.Outcome()
	return r
}

func mustNew(t *testing.T, cfg concede.Config) *concede.Agent {
	t.Helper()
	a, err := concede.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func params(p *buysellv1.Params) *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: p}}
}

// TestNeverCrossesItsValue plays concede against random buyers and sellers over many seeds and
// variants: the concede side never proposes past its value and never ends with a loss.
func TestNeverCrossesItsValue(t *testing.T) {
	variants := []*matchv1.GameParams{
		nil,
		params(&buysellv1.Params{Draw: proto.Bool(true)}),
		params(&buysellv1.Params{Scale: proto.Int64(1000)}),
		params(&buysellv1.Params{Willingness: proto.Int64(400)}),
		params(&buysellv1.Params{Cost: proto.Int64(60), Willingness: proto.Int64(40)}),
		params(&buysellv1.Params{Cost: proto.Int64(150)}), // no legal price covers the cost
		params(&buysellv1.Params{MaxTurns: proto.Int32(3), MaxProposals: proto.Int32(0)}),
	}
	for _, curve := range []string{concede.Linear, concede.Boulware} {
		c := mustNew(t, concede.Config{Curve: curve, Open: 2})
		for vi, p := range variants {
			for seed := range uint64(50) {
				cost, willingness, err := values(p, seed)
				if err != nil {
					t.Fatal(err)
				}
				for seat := range games.Seat(2) {
					agents := []actor{random.New(seed), random.New(seed)}
					agents[seat] = c
					r := play(t, p, seed, agents[0], agents[1])
					if pay := r.out.GetPayoffs()[seat]; pay < 0 {
						t.Errorf("%s, variant %d, seed %d, seat %d: payoff %v < 0 (%v)", curve, vi, seed, seat, pay, r.out)
					}
					for _, pr := range r.prices {
						if pr.seat != seat {
							continue // the random side's
						}
						if (seat == buysell.Seller && pr.price < cost) || (seat == buysell.Buyer && pr.price > willingness) {
							t.Errorf("%s, variant %d, seed %d: seat %d proposed %d (cost %d, willingness %d)", curve, vi, seed, seat, pr.price, cost, willingness)
						}
					}
				}
			}
		}
	}
}

// TestConcedeVersusConcede checks the matches between two concede agents and logs the deal
// rate and mean price over 100 seeds.
func TestConcedeVersusConcede(t *testing.T) {
	tests := []struct {
		name     string
		params   *matchv1.GameParams
		curve    string
		wantDeal float64 // least share of matches with a sale
	}{
		{name: "fixed 40/60", params: nil, curve: concede.Linear, wantDeal: 1},
		{name: "fixed 40/60 boulware", params: nil, curve: concede.Boulware, wantDeal: 1},
		{name: "drawn", params: params(&buysellv1.Params{Draw: proto.Bool(true)}), curve: concede.Linear, wantDeal: 1},
		{name: "drawn boulware", params: params(&buysellv1.Params{Draw: proto.Bool(true)}), curve: concede.Boulware, wantDeal: 1},
		{name: "contrasting 60/40", params: params(&buysellv1.Params{Cost: proto.Int64(60), Willingness: proto.Int64(40)}), curve: concede.Linear, wantDeal: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustNew(t, concede.Config{Curve: tc.curve, Open: 2})
			var deals int
			var sum float64
			for seed := range uint64(100) {
				cost, willingness, _ := values(tc.params, seed)
				r := play(t, tc.params, seed, c, c)
				if r.refused > 0 {
					t.Fatalf("seed %d: %d actions refused", seed, r.refused)
				}
				if !r.out.GetAgreement() {
					continue
				}
				deals++
				sold := r.out.GetPayoffs()[0] + float64(cost)
				if sold < float64(cost) || sold > float64(willingness) {
					t.Errorf("seed %d: sale at %v outside [%d, %d]", seed, sold, cost, willingness)
				}
				sum += sold
			}
			rate := float64(deals) / 100
			mean := math.NaN()
			if deals > 0 {
				mean = sum / float64(deals)
			}
			t.Logf("%s: %d of 100 matches end in a sale, mean price %.2f", tc.name, deals, mean)
			if rate < tc.wantDeal || (tc.wantDeal == 0 && deals != 0) {
				t.Errorf("deal rate %.2f, want %v", rate, tc.wantDeal)
			}
		})
	}
}

// TestOpening checks the first prices of each side.
func TestOpening(t *testing.T) {
	c := mustNew(t, concede.DefaultConfig())
	st, err := games.Start(buysell.New(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, err := c.Act(context.Background(), st.Observe(0))
	if err != nil {
		t.Fatal(err)
	}
	if got := a.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[1].GetGives()["ZUP"]; got != 80 {
		t.Errorf("seller opens at %d, want 2 x 40 = 80", got)
	}
	for _, m := range a.GetMessages() {
		if strings.Contains(m.GetText(), "40") {
			t.Errorf("the seller's message mentions its cost: %q", m.GetText())
		}
	}
	if _, err := st.Apply(0, a); err != nil {
		t.Fatal(err)
	}
	b, err := c.Act(context.Background(), st.Observe(1))
	if err != nil {
		t.Fatal(err)
	}
	if got := b.GetMove().GetPropose().GetProposal().GetAllocation().GetShares()[1].GetGives()["ZUP"]; got != 30 {
		t.Errorf("buyer opens at %d, want 60 / 2 = 30", got)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, cfg := range []concede.Config{{Curve: "fast", Open: 2}, {Curve: concede.Linear, Open: 0.5}, {Curve: concede.Linear, Open: math.NaN()}, {Curve: concede.Linear, Open: math.Inf(1)}} {
		if _, err := concede.New(cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if _, err := concede.New(concede.Config{Curve: concede.Boulware, Open: 1}); err != nil {
		t.Error(err)
	}
}

func TestOtherGames(t *testing.T) {
	c := mustNew(t, concede.DefaultConfig())
	if _, err := c.Act(context.Background(), &agentv1.Observation{Game: "ultimatum"}); err == nil || !strings.Contains(err.Error(), "plays only the buysell game") {
		t.Errorf("Act on another game: %v", err)
	}
}
