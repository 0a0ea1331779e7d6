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
	"maps"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

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

// MaxResources bounds the resource types in play.
const MaxResources = 32

// New returns the resource-exchange game.
func New() games.Game { return game{} }

type game struct{}

// Info describes the game, its seats and every parameter (as Params declares them).
func (g game) Info() *gamev1.GameInfo {
	defaults, _ := g.Resolve(nil) // for the derived max_proposals; the suite checks it resolves
	return &gamev1.GameInfo{
		Name:         Name,
		Description:  "Resource exchange: each player holds resources and has a private goal; they take turns proposing trades, or waiting, until one accepts.",
		RulesVersion: RulesVersion,
		Seats:        bargain.SeatNames(),
		SeatRoles:    []string{"", ""},
		Params:       games.ParamInfos(Name, defaults),
	}
}

// Resolve checks params and fills in the defaults: those Params declares, then max_proposals
// from max_turns. It refuses params meant for another game.
func (game) Resolve(gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	out, err := games.FillParams(Name, gp)
	if err != nil {
		return nil, err
	}
	t := out.GetTrading()
	if t.MaxProposals == nil {
		t.MaxProposals = proto.Int32(bargain.DefaultMaxProposals(t.GetMaxTurns()))
	}
	if _, err := read(out); err != nil {
		return nil, err
	}
	return out, nil
}

// NameTerms writes proposals in the game's own words, for transcripts (games.TermsNamer).
func (game) NameTerms(gp *matchv1.GameParams) func(*gamev1.Proposal) string {
	// A record's params may lack what the seats keep private (a spectator's copy): the words
	// need only the public ones, so the private ones take their defaults here.
	filled, err := games.FillParams(Name, gp)
	if err != nil {
		return nil
	}
	p, err := read(filled)
	if err != nil {
		return nil
	}
	return bargain.NameTerms[trade](&rules{p: p, resources: p.resources()})
}

// NewState starts a match with resolved params; the seed is unused since the game has no
// chance.
func (game) NewState(gp *matchv1.GameParams, _ uint64) (games.State, error) {
	p, err := read(gp)
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

// params are the resolved parameters. The maps are copies, never changed.
type params struct {
	maxTurns, maxProposals int32
	holdings               [2]map[string]int64
	goals                  [2]map[string]int64
}

// read takes resolved params as they are, checked against their declaration and the rules
// across fields: the holdings' sum, the resources in play, goals naming only those.
func read(gp *matchv1.GameParams) (params, error) {
	if err := games.CheckResolved(Name, gp); err != nil {
		return params{}, err
	}
	t := gp.GetTrading()
	p := params{
		maxTurns: t.GetMaxTurns(), maxProposals: t.GetMaxProposals(),
		holdings: [2]map[string]int64{maps.Clone(t.GetP1Holdings()), maps.Clone(t.GetP2Holdings())},
		goals:    [2]map[string]int64{maps.Clone(t.GetP1Goal()), maps.Clone(t.GetP2Goal())},
	}
	var sum int64
	inPlay := map[string]bool{}
	for seat, h := range p.holdings {
		for _, name := range bargain.SortedKeys(h) {
			if h[name] > bargain.MaxAmount-sum {
				return params{}, fmt.Errorf("trading: p%d_holdings %s=%d: the amounts of both players must add up to at most %d (2^53)", seat+1, name, h[name], bargain.MaxAmount)
			}
			sum += h[name]
			inPlay[name] = true
		}
	}
	if len(inPlay) > MaxResources {
		return params{}, fmt.Errorf("trading: at most %d resources may be in play (p1_holdings and p2_holdings), got %d", MaxResources, len(inPlay))
	}
	for seat, g := range p.goals {
		for _, name := range bargain.SortedKeys(g) {
			if !inPlay[name] {
				return params{}, fmt.Errorf("trading: p%d_goal names %s, which is not in play (the resources are those the holdings name: %s)", seat+1, bargain.NameText(name), strings.Join(bargain.SortedKeys(inPlay), ", "))
			}
		}
	}
	return p, nil
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
