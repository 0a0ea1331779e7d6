// Package trading implements the resource-exchange game of NegotiationArena
// (specs/negotiationarena.md): two players each hold amounts of some resources and have a
// goal; they take turns proposing trades until one accepts the other's latest proposal or the
// turns run out. The game plays on the shared bargaining engine (referee/games/bargain), which
// enforces the turn rules; this package reads trades, values them by each player's goal, keeps
// holdings and goals private and writes the briefing.
//
// Rules, as this package enforces them:
//
//   - P1 (seat 0) moves on odd turns and opens; P2 (seat 1) on even turns; turns 1 to max_turns
//     (default 8).
//   - A proposal is any exchange, written as an Allocation in which each seat's share gives
//     {resource: amount}; either side may be empty. Amounts are whole numbers. A player cannot
//     give more of a resource than it holds, nor a resource it does not have, nor one that is
//     not in play: the referee refuses such a proposal, saying why. For the opponent's side it
//     says only that the opponent does not hold that much, never what it holds.
//   - Each player may make at most max_proposals proposals (default max_turns/2 - 1, 0 = no
//     limit). A proposal replaces the mover's earlier one and declines the opponent's.
//   - accept takes the opponent's proposal of the turn just before: the trade is carried out
//     and the game ends. pass (the spec's "wait") does nothing and play goes on. There is no
//     reject. After max_turns turns with no acceptance, nothing changes hands.
//   - Payoff, by the player's goal: with no goal (the default), the total count of resources
//     held at the end minus that at the start; with a minimum-holdings goal (e.g. X:15, Y:15),
//     1 when every minimum is met at the end, else 0.
//   - Each player sees its own holdings and goal and the resource types in play (every
//     resource either player's holdings name), never the opponent's holdings or goal. A goal
//     may name only resources in play, so that the list of resources says nothing about goals.
//
// Proposal bounds: for the mover's own side, each resource in play from 0 to what the mover
// holds, a true legal range. For the opponent's side, whose holdings the mover cannot see, each
// resource in play from 0 with no known upper limit (Bound.max_unknown): the real limit is
// what the opponent holds, which the rules keep from the mover, so the bound says just that.
// A proposal asking for more than the opponent holds is refused, saying only that it does not
// hold that much.
//
// The default move, for a seat whose agent gives no usable answer, is pass.
package trading

import (
	"fmt"
	"strconv"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

	tradingv1 "github.com/parley-arena/parley/gen/go/parley/games/trading/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"google.golang.org/protobuf/proto"
)

// Name is the game's name in the registry and in observations.
const Name = "trading"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

// Parameter defaults and limits.
const (
	DefaultMaxTurns int32 = 8
	// MaxResources bounds the resource types in play.
	MaxResources = 32
)

// DefaultHoldings returns the default starting holdings of seat: P1 25 X and 5 Y, P2 5 X and
// 25 Y.
func DefaultHoldings(seat games.Seat) map[string]int64 {
	if seat == bargain.P1 {
		return map[string]int64{"X": 25, "Y": 5}
	}
	return map[string]int64{"X": 5, "Y": 25}
}

// New returns the resource-exchange game.
func New() games.Game { return game{} }

type game struct{}

// Info describes the game, its seats and every parameter.
func (game) Info() *gamev1.GameInfo {
	mapParam := func(name, def, desc string) *gamev1.ParamInfo {
		return &gamev1.ParamInfo{Name: name, Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: def, Description: desc}
	}
	return &gamev1.GameInfo{
		Name:         Name,
		Description:  "Resource exchange: each player holds resources and has a private goal; they take turns proposing trades, or waiting, until one accepts.",
		RulesVersion: RulesVersion,
		Seats:        bargain.SeatNames(),
		SeatRoles:    []string{"", ""},
		Params: []*gamev1.ParamInfo{
			{Name: "max_turns", Kind: gamev1.ParamKind_PARAM_KIND_INT, DefaultValue: strconv.Itoa(int(DefaultMaxTurns)),
				Description: fmt.Sprintf("Turns of both players together, P1 first. From 1 to %d.", bargain.MaxMaxTurns)},
			{Name: "max_proposals", Kind: gamev1.ParamKind_PARAM_KIND_INT, DefaultValue: strconv.Itoa(int(bargain.DefaultMaxProposals(DefaultMaxTurns))),
				Description: "Proposals each player may make; unset: max_turns/2 - 1 (3 with 8 turns); 0: no limit."},
			mapParam("p1_holdings", "X:25,Y:5", fmt.Sprintf("P1's starting holdings as resource:amount pairs. Resource names are words of letters, digits, '_' or '-' starting with a letter; at most %d resources in play.", MaxResources)),
			mapParam("p2_holdings", "X:5,Y:25", "P2's starting holdings, as p1_holdings."),
			mapParam("p1_goal", "", "P1's goal as minimum holdings (e.g. X:15,Y:15): payoff 1 when all are met at the end, else 0. Empty: end with as many resources in total as possible (payoff = total gained)."),
			mapParam("p2_goal", "", "P2's goal, as p1_goal."),
		},
	}
}

// Resolve validates params and fills in the defaults. It refuses params meant for another game.
func (game) Resolve(gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	p, err := resolve(gp)
	if err != nil {
		return nil, err
	}
	return &matchv1.GameParams{Family: &matchv1.GameParams_Trading{Trading: p.proto()}}, nil
}

// NewState starts a match. params are resolved again, so unresolved ones work too; the seed is
// unused since the game has no chance.
// NameTerms writes proposals in the game's own words, for transcripts (games.TermsNamer).
func (game) NameTerms(gp *matchv1.GameParams) func(*gamev1.Proposal) string {
	p, err := resolve(gp)
	if err != nil {
		return nil
	}
	return bargain.NameTerms[trade](&rules{p: p, resources: p.resources()})
}

func (game) NewState(gp *matchv1.GameParams, _ uint64) (games.State, error) {
	p, err := resolve(gp)
	if err != nil {
		return nil, err
	}
	r := &rules{p: p, resources: p.resources()}
	r.text = [2]string{r.rulesText(bargain.P1), r.rulesText(bargain.P2)}
	return bargain.New[trade](bargain.Config{
		Game:         Name,
		Title:        "resource-exchange",
		MaxTurns:     p.maxTurns,
		MaxProposals: p.maxProposals,
		Pass:         true,
	}, r)
}

// params are the resolved parameters. The maps are never changed once resolved.
type params struct {
	maxTurns, maxProposals int32
	holdings               [2]map[string]int64
	goals                  [2]map[string]int64
}

func resolve(gp *matchv1.GameParams) (params, error) {
	if err := bargain.CheckFamily(gp, Name); err != nil {
		return params{}, err
	}
	t := gp.GetTrading()
	if t == nil {
		t = &tradingv1.Params{}
	}
	p := params{maxTurns: DefaultMaxTurns}
	if t.MaxTurns != nil {
		p.maxTurns = t.GetMaxTurns()
	}
	p.maxProposals = bargain.DefaultMaxProposals(p.maxTurns)
	if t.MaxProposals != nil {
		p.maxProposals = t.GetMaxProposals()
	}
	switch {
	case p.maxTurns < 1 || p.maxTurns > bargain.MaxMaxTurns:
		return params{}, fmt.Errorf("trading: max_turns must be from 1 to %d, got %d", bargain.MaxMaxTurns, p.maxTurns)
	case p.maxProposals < 0:
		return params{}, fmt.Errorf("trading: max_proposals must be 0 (no limit) or more, got %d", p.maxProposals)
	}
	given := [2]map[string]int64{t.GetP1Holdings(), t.GetP2Holdings()}
	goals := [2]map[string]int64{t.GetP1Goal(), t.GetP2Goal()}
	var sum int64
	inPlay := map[string]bool{}
	for seat := range p.holdings {
		h := given[seat]
		if len(h) == 0 {
			h = DefaultHoldings(games.Seat(seat))
		}
		field := fmt.Sprintf("p%d_holdings", seat+1)
		p.holdings[seat] = make(map[string]int64, len(h))
		for _, name := range bargain.SortedKeys(h) {
			v := h[name]
			if err := bargain.CheckName(Name, field+" resource", name); err != nil {
				return params{}, err
			}
			if v < 0 || v > bargain.MaxAmount-sum {
				return params{}, fmt.Errorf("trading: %s %s=%d: amounts must be from 0 and add up to at most %d (2^53)", field, name, v, bargain.MaxAmount)
			}
			sum += v
			p.holdings[seat][name] = v
			inPlay[name] = true
		}
	}
	if len(inPlay) > MaxResources {
		return params{}, fmt.Errorf("trading: at most %d resources may be in play, got %d", MaxResources, len(inPlay))
	}
	for seat, g := range goals {
		field := fmt.Sprintf("p%d_goal", seat+1)
		p.goals[seat] = make(map[string]int64, len(g))
		for _, name := range bargain.SortedKeys(g) {
			v := g[name]
			switch {
			case !inPlay[name]:
				return params{}, fmt.Errorf("trading: %s names %s, which is not in play (the resources are those the holdings name: %s)", field, bargain.NameText(name), strings.Join(bargain.SortedKeys(inPlay), ", "))
			case v < 0 || v > bargain.MaxAmount:
				return params{}, fmt.Errorf("trading: %s %s=%d: a minimum must be from 0 to %d (2^53)", field, name, v, bargain.MaxAmount)
			}
			p.goals[seat][name] = v
		}
	}
	return p, nil
}

func (p params) proto() *tradingv1.Params {
	clone := func(m map[string]int64) map[string]int64 {
		if len(m) == 0 {
			return nil
		}
		out := make(map[string]int64, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return &tradingv1.Params{
		MaxTurns:     proto.Int32(p.maxTurns),
		MaxProposals: proto.Int32(p.maxProposals),
		P1Holdings:   clone(p.holdings[0]),
		P2Holdings:   clone(p.holdings[1]),
		P1Goal:       clone(p.goals[0]),
		P2Goal:       clone(p.goals[1]),
	}
}

// resources returns every resource in play, sorted.
func (p params) resources() []string {
	in := map[string]bool{}
	for _, h := range p.holdings {
		for k := range h {
			in[k] = true
		}
	}
	return bargain.SortedKeys(in)
}
