package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/referee/games/buysell"
)

// TestBargainingEndToEnd plays buyer/seller and resource-exchange matches with the binary, as a
// user would: built-in agents served over gRPC, events on a NATS server (read back and compared
// with the --json record). Each outcome is checked against payoffs recomputed here from the
// record alone: the parameters and seed of match_started and the moves of action_taken.
func TestBargainingEndToEnd(t *testing.T) {
	t.Parallel()
	url := natstest.Start(t).URL
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{URL: url}, nil)
	if err != nil {
		t.Fatalf("bus.Open(%s): %v", url, err)
	}
	defer b.Close()

	concede := []string{"--agent", "builtin:concede", "--agent", "builtin:concede"}
	traders := []string{"--agent", "builtin:trader", "--agent", "builtin:trader"}
	tests := []struct {
		name      string
		game      string
		args      []string
		agreement bool
	}{
		{name: "buysell defaults", game: "buysell", args: withArgs(concede, "--seed", "1"), agreement: true},
		{name: "buysell boulware seller", game: "buysell", args: []string{"--agent", "builtin:concede?curve=boulware", "--agent", "builtin:concede", "--seed", "2"}, agreement: true},
		{name: "buysell drawn values", game: "buysell", args: withArgs(concede, "--param", "draw=true", "--seed", "7"), agreement: true},
		{name: "buysell drawn values, another seed", game: "buysell", args: withArgs(concede, "--param", "draw=true", "--seed", "8"), agreement: true},
		{name: "buysell scaled", game: "buysell", args: withArgs(concede, "--param", "scale=1000", "--seed", "3"), agreement: true},
		{name: "buysell contrasting values", game: "buysell", args: withArgs(concede, "--param", "cost=60", "--param", "willingness=40", "--seed", "4"), agreement: false},
		{name: "trading goals", game: "trading", args: withArgs(traders, "--param", "p1_goal=X:15,Y:15", "--param", "p2_goal=X:15,Y:15", "--seed", "5"), agreement: true},
		{name: "trading goals, more resources", game: "trading", args: withArgs(traders,
			"--param", "p1_holdings=X:25,Y:5,Z:0", "--param", "p2_holdings=X:5,Y:25,Z:10,W:7",
			"--param", "p1_goal=Z:4,X:10", "--param", "p2_goal=X:12", "--seed", "6"), agreement: true},
		{name: "trading totals", game: "trading", args: withArgs(traders, "--seed", "9"), agreement: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"play", tc.game, "--nats", url, "--json"}, tc.args...)
			evs := decodeRecord(t, mustRun(t, nil, args...).stdout)
			started, ended := checkRecord(t, evs, 2)
			if started.GetGame() != tc.game {
				t.Fatalf("match_started names game %q, want %q", started.GetGame(), tc.game)
			}
			got, err := bus.ReadMatch(ctx, b.JetStream(), evs[0].GetMatchId())
			if err != nil {
				t.Fatalf("ReadMatch: %v", err)
			}
			if err := sameEvents(got, evs); err != nil {
				t.Errorf("the match on NATS differs from --json: %v", err)
			}
			for _, ev := range evs {
				if ev.GetActionRefused() != nil || ev.GetAgentFault() != nil {
					t.Errorf("a built-in agent was refused or faulted: %v", ev)
				}
			}
			var want []float64
			var agreed bool
			switch tc.game {
			case "buysell":
				want, agreed = buysellPayoffs(t, started, evs)
			case "trading":
				want, agreed = tradingPayoffs(t, started, evs)
			}
			out := ended.GetOutcome()
			if agreed != tc.agreement || out.GetAgreement() != agreed {
				t.Errorf("agreement: recomputed %v, recorded %v, want %v (%s)", agreed, out.GetAgreement(), tc.agreement, out.GetSummary())
			}
			wantCause := matchv1.EndCause_END_CAUSE_AGREEMENT
			if !agreed {
				wantCause = matchv1.EndCause_END_CAUSE_REJECTED
				if tc.game == "trading" {
					wantCause = matchv1.EndCause_END_CAUSE_TURN_LIMIT
				}
			}
			if out.GetCause() != wantCause {
				t.Errorf("cause %v, want %v", out.GetCause(), wantCause)
			}
			if !slices.Equal(out.GetPayoffs(), want) {
				t.Errorf("payoffs %v, recomputed from the record %v (%s)", out.GetPayoffs(), want, out.GetSummary())
			}
			t.Logf("%s: %v", out.GetSummary(), out.GetPayoffs())
		})
	}
}

// buysellPayoffs recomputes a buyer/seller match's payoffs from its record: the values from the
// parameters (or, when drawn, from the seed, as the rules draw them), the price from the
// proposal standing when a seat accepted. It also checks that neither concede agent proposed a
// price past its own value.
func buysellPayoffs(t *testing.T, started *eventsv1.MatchStarted, evs []*eventsv1.MatchEvent) ([]float64, bool) {
	t.Helper()
	p := started.GetParams().GetBuysell()
	cost, willingness := p.GetCost()*p.GetScale(), p.GetWillingness()*p.GetScale()
	if p.GetDraw() {
		var err error
		if cost, willingness, err = buysell.Values(started.GetParams(), started.GetSeed()); err != nil {
			t.Fatal(err)
		}
		if cost < p.GetCostMin() || cost > p.GetCostMax() || willingness < p.GetWillingnessMin() || willingness > p.GetWillingnessMax() {
			t.Errorf("drawn cost %d and willingness %d outside the ranges of %v", cost, willingness, p)
		}
	}
	var price int64 = -1
	for _, ev := range evs {
		a := ev.GetActionTaken()
		switch {
		case a.GetAction().GetMove().GetPropose() != nil:
			price = -1
			for _, sh := range a.GetAction().GetMove().GetPropose().GetProposal().GetAllocation().GetShares() {
				if sh.GetSeat() == 1 {
					price = sh.GetGives()[p.GetCurrency()]
				}
			}
			if (a.GetSeat() == 0 && price < cost) || (a.GetSeat() == 1 && price > willingness) {
				t.Errorf("turn %d: seat %d proposed %d (cost %d, willingness %d)", ev.GetTurn(), a.GetSeat(), price, cost, willingness)
			}
		case a.GetAction().GetMove().GetAccept() != nil:
			if price < 0 {
				t.Fatalf("turn %d: an accept with no price standing", ev.GetTurn())
			}
			return []float64{float64(price - cost), float64(willingness - price)}, true
		}
	}
	return []float64{0, 0}, false
}

// tradingPayoffs recomputes a resource-exchange match's payoffs from its record: the starting
// holdings and goals from the parameters, the trade from the proposal standing when a seat
// accepted.
func tradingPayoffs(t *testing.T, started *eventsv1.MatchStarted, evs []*eventsv1.MatchEvent) ([]float64, bool) {
	t.Helper()
	p := started.GetParams().GetTrading()
	start := [2]map[string]int64{p.GetP1Holdings(), p.GetP2Holdings()}
	goals := [2]map[string]int64{p.GetP1Goal(), p.GetP2Goal()}
	hold := [2]map[string]int64{{}, {}}
	for s := range hold {
		for k, v := range start[s] {
			hold[s][k] = v
		}
	}
	var standing [2]map[string]int64
	agreed := false
	for _, ev := range evs {
		a := ev.GetActionTaken()
		switch {
		case a.GetAction().GetMove().GetPropose() != nil:
			standing = [2]map[string]int64{}
			for _, sh := range a.GetAction().GetMove().GetPropose().GetProposal().GetAllocation().GetShares() {
				standing[sh.GetSeat()] = sh.GetGives()
			}
		case a.GetAction().GetMove().GetAccept() != nil:
			for s := range 2 {
				for k, v := range standing[s] {
					hold[s][k] -= v
					hold[1-s][k] += v
				}
			}
			agreed = true
		}
	}
	pay := make([]float64, 2)
	for s := range 2 {
		for k, v := range hold[s] {
			if v < 0 {
				t.Errorf("seat %d ends with %d %s", s, v, k)
			}
		}
		if len(goals[s]) == 0 {
			pay[s] = float64(total(hold[s]) - total(start[s]))
			continue
		}
		pay[s] = 1
		for k, least := range goals[s] {
			if hold[s][k] < least {
				pay[s] = 0
			}
		}
	}
	return pay, agreed
}

func total(h map[string]int64) int64 {
	var n int64
	for _, v := range h {
		n += v
	}
	return n
}

// TestGamesListsBargaining checks that `parley games` lists both games with every parameter
// and its default.
func TestGamesListsBargaining(t *testing.T) {
	t.Parallel()
	out := mustRun(t, nil, "games").stdout
	for _, want := range []string{
		"buysell", "trading",
		"--param cost=40", "--param willingness=60", "--param budget=100", "--param max_turns=10", "--param max_proposals=4",
		"--param scale=1", "--param draw=false", "--param cost_min=20", "--param cost_max=40", "--param willingness_min=60",
		"--param willingness_max=80", "--param item=X", "--param currency=ZUP", "--param self_interested_buyer=false",
		"--param max_turns=8", "--param max_proposals=3", "--param p1_holdings=X:25,Y:5", "--param p2_holdings=X:5,Y:25",
		"--param p1_goal=", "--param p2_goal=",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("`parley games` does not list %q:\n%s", want, out)
		}
	}
	bad := runParley(t, nil, "play", "trading", "--agent", "builtin:trader", "--agent", "builtin:trader", "--param", "p1_goal=Gold:1")
	if bad.code != 2 || !strings.Contains(bad.stderr, "p1_goal names Gold, which is not in play") {
		t.Errorf("a goal outside play: want exit status 2 and the reason\n%s", bad)
	}
}
