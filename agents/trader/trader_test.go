package trader_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/random"
	"github.com/parley-arena/parley/agents/trader"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/trading"
)

type actor interface {
	Act(context.Context, *agentv1.Observation) (*agentv1.Action, error)
}

type bundle = map[string]int64

func params(p *tradingv1.Params) *matchv1.GameParams {
	return &matchv1.GameParams{Family: &matchv1.GameParams_Trading{Trading: p}}
}

// play runs one trading match in process, as the runner would: a refused action is retried
// once with the reason, then the default (pass) is played. It returns the outcome and the
// number of refusals per seat.
func play(t *testing.T, p *matchv1.GameParams, seed uint64, agents ...actor) (*matchv1.Outcome, [2]int) {
	t.Helper()
	st, err := games.Start(trading.New(), p, seed)
	if err != nil {
		t.Fatal(err)
	}
	var refused [2]int
	for len(st.ToMove()) > 0 {
		seat := st.ToMove()[0]
		obs := st.Observe(seat)
		for attempt := int32(1); ; attempt++ {
			obs.Attempt = attempt
			a, err := agents[seat].Act(context.Background(), obs)
			if err != nil {
				t.Fatalf("seat %d turn %d: %v", seat, obs.GetTurn(), err)
			}
			_, err = st.Apply(seat, a)
			if err == nil {
				break
			}
			refused[seat]++
			rej, _ := games.AsRejection(err)
			obs.LastRejection = rej.Proto()
			if attempt == 2 {
				if _, err := st.Apply(seat, st.Default(seat)); err != nil {
					t.Fatal(err)
				}
				break
			}
		}
	}
	return st.Outcome(), refused
}

func TestTraderVersusTrader(t *testing.T) {
	tests := []struct {
		name      string
		params    *matchv1.GameParams
		agreement bool
		payoffs   string
	}{
		{name: "complementary goals", params: params(&tradingv1.Params{P1Goal: bundle{"X": 15, "Y": 15}, P2Goal: bundle{"X": 15, "Y": 15}}), agreement: true, payoffs: "[1 1]"},
		{name: "one goal, one total", params: params(&tradingv1.Params{P1Goal: bundle{"Y": 10}}), agreement: true, payoffs: "[1 1]"},
		{name: "more resources", params: params(&tradingv1.Params{
			P1Holdings: bundle{"X": 25, "Y": 5, "Z": 0}, P2Holdings: bundle{"X": 5, "Y": 25, "Z": 10},
			P1Goal: bundle{"Z": 4, "X": 10}, P2Goal: bundle{"X": 12}}), agreement: true, payoffs: "[1 1]"},
		{name: "totals are zero-sum", params: nil, agreement: false, payoffs: "[0 0]"},
		{name: "goals already met", params: params(&tradingv1.Params{P1Goal: bundle{"X": 1}, P2Goal: bundle{"Y": 1}}), agreement: false, payoffs: "[1 1]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, _ := play(t, tc.params, 0, trader.New(), trader.New())
			if out.GetAgreement() != tc.agreement || fmt.Sprint(out.GetPayoffs()) != tc.payoffs {
				t.Errorf("outcome %v, want agreement %v payoffs %s", out, tc.agreement, tc.payoffs)
			}
		})
	}
}

// TestNeverLoses plays the trader against random agents: whatever the opponent does, the
// trader never ends worse off than with no trade.
func TestNeverLoses(t *testing.T) {
	variants := []*matchv1.GameParams{
		nil,
		params(&tradingv1.Params{P1Goal: bundle{"X": 15, "Y": 15}, P2Goal: bundle{"X": 15, "Y": 15}}),
		params(&tradingv1.Params{P2Holdings: bundle{"X": 5, "Y": 25, "Z": 10, "W": 7}, P2Goal: bundle{"W": 7, "Y": 30}}),
	}
	for vi, p := range variants {
		for seed := range uint64(60) {
			for seat := range 2 {
				agents := []actor{random.New(seed), random.New(seed + 1)}
				agents[seat] = trader.New()
				out, refused := play(t, p, seed, agents...)
				if out.GetPayoffs()[seat] < noTrade(t, p, seat) {
					t.Errorf("variant %d seed %d: the trader in seat %d ends with %v, less than with no trade", vi, seed, seat, out.GetPayoffs())
				}
				if refused[seat] > 1 {
					t.Errorf("variant %d seed %d: the trader's actions were refused %d times in one match", vi, seed, refused[seat])
				}
			}
		}
	}
}

// noTrade is seat's payoff when nothing changes hands.
func noTrade(t *testing.T, p *matchv1.GameParams, seat int) float64 {
	t.Helper()
	st, err := games.Start(trading.New(), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	for len(st.ToMove()) > 0 {
		s := st.ToMove()[0]
		if _, err := st.Apply(s, st.Default(s)); err != nil {
			t.Fatal(err)
		}
	}
	return st.Outcome().GetPayoffs()[seat]
}

func TestOtherGames(t *testing.T) {
	if _, err := trader.New().Act(context.Background(), &agentv1.Observation{Game: "buysell"}); err == nil || !strings.Contains(err.Error(), "plays only the trading game") {
		t.Errorf("Act on another game: %v", err)
	}
}
