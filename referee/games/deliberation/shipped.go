package deliberation

import (
	"fmt"
	"slices"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
)

// shippedGame is one scenario shipped with Parley, written for Parley: the numbers are those of
// the published games (shared/data/deliberation), the words are ours. Parties are listed in
// seat order: p1, p2, then the others in the published configuration's order.
type shippedGame struct {
	title, text string
	issues      []shippedIssue
	parties     []shippedParty
	opening     string
}

type shippedIssue struct {
	label   string
	options []string
}

type shippedParty struct {
	id, name  string
	threshold int32
	points    [][]int32
	briefing  string
}

// shippedGames are the scenarios `game` names without a folder.
var shippedGames = map[string]*shippedGame{
	"base":  &baseGame,
	"game1": &game1Game,
	"game2": &game2Game,
	"game3": &game3Game,
}

// ShippedNames lists the scenarios shipped with Parley, sorted.
func ShippedNames() []string {
	names := make([]string, 0, len(shippedGames))
	for name := range shippedGames {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Shipped returns the shipped scenario called name, a fresh copy each call.
func Shipped(name string) (*deliberationv1.Scenario, bool) {
	g, ok := shippedGames[name]
	if !ok {
		return nil, false
	}
	return g.scenario(), true
}

func (g *shippedGame) scenario() *deliberationv1.Scenario {
	sc := &deliberationv1.Scenario{Title: g.title, Text: strings.TrimSpace(g.text), OpeningDeal: g.opening, Source: "shipped"}
	for i, is := range g.issues {
		id := IssueID(i)
		gi := &gamev1.Issue{Id: id, Label: is.label}
		for k, o := range is.options {
			gi.Options = append(gi.Options, &gamev1.Option{Id: fmt.Sprintf("%s%d", id, k+1), Label: o})
		}
		sc.Issues = append(sc.Issues, gi)
	}
	for i, p := range g.parties {
		role := deliberationv1.PartyRole_PARTY_ROLE_PLAYER
		switch i {
		case 0:
			role = deliberationv1.PartyRole_PARTY_ROLE_P1
		case 1:
			role = deliberationv1.PartyRole_PARTY_ROLE_P2
		}
		party := &deliberationv1.Party{Id: p.id, Name: p.name, Role: role, Threshold: p.threshold, Briefing: strings.TrimSpace(p.briefing)}
		for _, row := range p.points {
			party.Points = append(party.Points, &deliberationv1.IssuePoints{Points: slices.Clone(row)})
		}
		sc.Parties = append(sc.Parties, party)
	}
	return sc
}
