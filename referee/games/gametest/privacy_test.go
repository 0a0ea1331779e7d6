package gametest_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	buysellv1 "github.com/parley-arena/parley/gen/go/parley/games/buysell/v1"
	dealornodealv1 "github.com/parley-arena/parley/gen/go/parley/games/dealornodeal/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/buysell"
	"github.com/parley-arena/parley/referee/games/dealornodeal"
	"github.com/parley-arena/parley/referee/games/gametest"
	"google.golang.org/protobuf/proto"
)

// envPrivacyMutant names the mutant TestPrivacyMutantChild runs the suite on.
const envPrivacyMutant = "GAMETEST_PRIVACY_MUTANT"

// TestPrivacyCatchesLeaks proves the privacy checks, which read the families' declarations, can
// fail: a buyer/seller game that leaks one side's private value to the other (at once, only at
// the end, in the typed view, in a public event, or a value drawn from the seed), or whose
// declared secret never reaches its owner or can never be varied, fails the suite; so does a
// Deal or No Deal game that shows an undeclared parameter to one seat only. The unbroken games
// pass.
func TestPrivacyCatchesLeaks(t *testing.T) {
	checkMutants(t, "TestPrivacyMutantChild", envPrivacyMutant, []mutant{
		{"none", ""},
		{"leaks-cost", "seat 1's observation depends on buysell.cost, private to seat 0"},
		{"leaks-willingness-at-the-end", "seat 0's observation depends on buysell.willingness, private to seat 1"},
		{"leaks-in-the-view", "seat 1's observation depends on buysell.cost, private to seat 0"},
		{"announces-cost", "the spectator's redacted record depends on buysell.cost"},
		{"ignores-cost", "parley.games.buysell.v1.Params.cost is declared private to seat 0, but varying it never changed that seat's observation"},
		{"leaks-draw", `seat 1's observation leaks "4`},
		{"fixes-cost", "parley.games.buysell.v1.Params.cost is declared private, but no variant let the suite vary it"},
		{"tells-alice-the-corpus", "parameter dealornodeal.corpus reaches seat(s) [0] only"},
	})
}

// TestPrivacyMutantChild runs the suite on the mutant named in the environment; it is the child
// of TestPrivacyCatchesLeaks and does nothing on its own.
func TestPrivacyMutantChild(t *testing.T) {
	name := os.Getenv(envPrivacyMutant)
	if name == "" {
		t.Skip("run by TestPrivacyCatchesLeaks")
	}
	// A few matches suffice: the leaks show in the first ones.
	quick := gametest.Suite{Seeds: 8}
	if name == "none" || strings.Contains(name, "corpus") {
		p := &matchv1.GameParams{Family: &matchv1.GameParams_Dealornodeal{Dealornodeal: &dealornodealv1.Params{
			Counts: []int64{1, 2, 2}, AliceValues: []int64{2, 3, 1}, BobValues: []int64{8, 1, 0},
			Corpus: proto.String("somewhere.txt"), Datapoint: proto.Int32(3), Source: proto.String("somewhere.txt dialogue 3"),
		}}}
		// Both seats' first values at their least, as the parameter checks need a base for.
		least := &matchv1.GameParams{Family: &matchv1.GameParams_Dealornodeal{Dealornodeal: &dealornodealv1.Params{
			Counts: []int64{2, 1, 1}, AliceValues: []int64{0, 6, 4}, BobValues: []int64{0, 5, 5},
		}}}
		quick.Run(t, &leakyGame{Game: dealornodeal.New(), mut: name}, p, least)
	}
	if name == "none" || !strings.Contains(name, "corpus") {
		fixed := &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{
			Cost: proto.Int64(4321), Willingness: proto.Int64(8765), Budget: proto.Int64(1000),
		}}}
		drawn := &matchv1.GameParams{Family: &matchv1.GameParams_Buysell{Buysell: &buysellv1.Params{
			Draw: proto.Bool(true), Budget: proto.Int64(1000),
			CostMin: proto.Int64(4000), CostMax: proto.Int64(4999), WillingnessMin: proto.Int64(8000), WillingnessMax: proto.Int64(8999),
		}}}
		quick.Run(t, &leakyGame{Game: buysell.New(), mut: name}, fixed, drawn)
	}
}

// leakyGame wraps a game and leaks a private value, or a parameter, in the way mut names.
type leakyGame struct {
	games.Game
	mut string
}

// Resolve refuses, for fixes-cost, any cost but the test's and the default, so that the suite
// cannot vary it.
func (g *leakyGame) Resolve(p *matchv1.GameParams) (*matchv1.GameParams, error) {
	r, err := g.Game.Resolve(p)
	if err == nil && g.mut == "fixes-cost" {
		if c := r.GetBuysell().GetCost(); c != 4321 && c != 40 { // 40: the default cost (the spec's)
			return nil, fmt.Errorf("buysell: this test's cost is fixed, got %d", c)
		}
	}
	return r, err
}

func (g *leakyGame) NewState(p *matchv1.GameParams, seed uint64) (games.State, error) {
	if g.mut == "ignores-cost" && p.GetBuysell() != nil {
		p = proto.CloneOf(p)
		p.GetBuysell().Cost = proto.Int64(4321)
	}
	st, err := g.Game.NewState(p, seed)
	if err != nil {
		return nil, err
	}
	return &leakyState{State: st, mut: g.mut, draw: p.GetBuysell().GetDraw(), corpus: p.GetDealornodeal().GetCorpus()}, nil
}

type leakyState struct {
	games.State
	mut    string
	draw   bool
	corpus string
}

func (s *leakyState) LastMove(seat games.Seat, turn int32) (string, []games.Seat, bool) {
	return s.State.(games.MoveWorder).LastMove(seat, turn)
}

func (s *leakyState) Observe(seat games.Seat) *agentv1.Observation {
	o := s.State.Observe(seat)
	if s.corpus != "" {
		if s.mut == "tells-alice-the-corpus" && seat == 0 {
			o.Briefing += fmt.Sprintf("(This set-up comes from %s.)\n", s.corpus)
		}
		return o
	}
	other := s.State.Observe(1 - seat).GetBuysell().GetPrivateValue()
	switch {
	case s.mut == "leaks-cost" && seat == buysell.Buyer:
		o.Briefing += fmt.Sprintf("(The seller's cost is %d.)\n", other)
	case s.mut == "leaks-willingness-at-the-end" && seat == buysell.Seller && len(s.ToMove()) == 0:
		o.Briefing += fmt.Sprintf("The buyer would have paid up to %d.\n", other)
	case s.mut == "leaks-in-the-view" && seat == buysell.Buyer:
		o.GetBuysell().StandingPrice = proto.Int64(other)
	case s.mut == "leaks-draw" && s.draw && seat == buysell.Buyer:
		o.Briefing += fmt.Sprintf("(The seller's cost is %d.)\n", other)
	}
	return o
}

// OpeningEvents forwards the wrapped state's, plus, for announces-cost, a public event that
// names the seller's cost.
func (s *leakyState) OpeningEvents() []*eventsv1.MatchEvent {
	var out []*eventsv1.MatchEvent
	if o, ok := s.State.(games.Opener); ok {
		out = o.OpeningEvents()
	}
	if s.mut == "announces-cost" {
		cost := s.State.Observe(buysell.Seller).GetBuysell().GetPrivateValue()
		out = append(out, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_ChanceDrawn{ChanceDrawn: &eventsv1.ChanceDrawn{
			What: "cost", Value: proto.Int64(cost), Summary: fmt.Sprintf("The seller's cost is %d.", cost),
		}}})
	}
	return out
}

func (s *leakyState) Clone() games.State {
	c := *s
	c.State = s.State.Clone()
	return &c
}
