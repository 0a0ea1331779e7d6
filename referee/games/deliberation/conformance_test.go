package deliberation_test

import (
	"fmt"
	"strings"
	"testing"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/referee/games/gametest"
)

// TestConformance runs the conformance suite on the shipped games, an imported folder, a
// smaller cut of one and the solo baseline. The suite also varies each party's score sheet,
// threshold and briefing and p1's bonus (private, as deliberation.proto declares them) and
// checks that no other party's observation changes.
func TestConformance(t *testing.T) {
	gametest.Suite{Seeds: conformanceSeeds()}.Run(t, newGame(),
		nil,
		params(t, "game=game1", "discussion_turns=7"),
		params(t, "game=game2", "discussion_turns=13", "history_window=2"),
		params(t, "game=game3", "discussion_turns=6", "quorum=6", "vetoes=none", "p1_bonus=0"),
		params(t, "game="+dataDir+"/base", "discussion_turns=6", "history_window=0"),
		params(t, "game=game1", "parties=3", "issues=2", "discussion_turns=5"),
		params(t, "solo_turns=3"),
		params(t, "discussion_turns=0"),
	)
}

// conformanceSeeds is the number of random matches per variant: a match of this game is long
// to check at every step, so fewer than gametest's default, and fewer still under -race.
func conformanceSeeds() int {
	if gametest.Race {
		return 1
	}
	return 8
}

// secretScenario is a game of its own whose every private number is distinctive: no turn, count
// or other public number of a short match can equal one of them, nor hold one as a substring.
func secretScenario(parties, issues, options int) *deliberationv1.Scenario {
	sc := &deliberationv1.Scenario{Title: "Secret numbers", Text: "A scenario for privacy tests.", Source: "test"}
	var opening []string
	for i := range issues {
		id := deliberation.IssueID(i)
		is := &gamev1.Issue{Id: id, Label: "issue " + id}
		for k := range options {
			is.Options = append(is.Options, &gamev1.Option{Id: fmt.Sprintf("%s%d", id, k+1), Label: fmt.Sprintf("choice %d", k+1)})
		}
		sc.Issues = append(sc.Issues, is)
		opening = append(opening, id+"1")
	}
	sc.OpeningDeal = strings.Join(opening, ",")
	for p := range parties {
		role := deliberationv1.PartyRole_PARTY_ROLE_PLAYER
		switch p {
		case 0:
			role = deliberationv1.PartyRole_PARTY_ROLE_P1
		case 1:
			role = deliberationv1.PartyRole_PARTY_ROLE_P2
		}
		party := &deliberationv1.Party{
			Id: fmt.Sprintf("party%d", p), Name: fmt.Sprintf("Party %c", 'K'+p), Role: role,
			Threshold: int32(secretThreshold(p)),
			Briefing:  fmt.Sprintf("Secret briefing of party %d: zq%dzq.", p, p),
		}
		for i := range issues {
			ip := &deliberationv1.IssuePoints{}
			for k := range options {
				ip.Points = append(ip.Points, int32(secretPoints(p, i, k)))
			}
			party.Points = append(party.Points, ip)
		}
		sc.Parties = append(sc.Parties, party)
	}
	return sc
}

// secretPoints are five-digit numbers 7PIK3 (party, issue, option); thresholds 8P553 and the
// bonus 96421: none is a substring of another.
func secretPoints(p, i, k int) int { return 70003 + 1000*p + 100*i + 10*k }
func secretThreshold(p int) int    { return 80553 + 1000*p }
func secretParams(kvs ...string) *matchv1.GameParams {
	gp := &matchv1.GameParams{Family: &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{
		Scenario: secretScenario(5, 3, 3),
	}}}
	return gp
}

// TestPrivacyOverWholeMatches runs the suite on a scenario of its own, with p1's bonus, solo
// and with a short history: whole random matches in which no party's observation may depend
// on another's score sheet, threshold, briefing or (for p1) bonus.
func TestPrivacyOverWholeMatches(t *testing.T) {
	const bonus = 96421
	withBonus := secretParams()
	withBonus.GetDeliberation().P1Bonus = ptr(int32(bonus))
	solo := secretParams()
	solo.GetDeliberation().P1Bonus = ptr(int32(bonus))
	solo.GetDeliberation().SoloTurns = ptr(int32(4))
	short := secretParams()
	short.GetDeliberation().P1Bonus = ptr(int32(bonus))
	short.GetDeliberation().DiscussionTurns = ptr(int32(7))
	short.GetDeliberation().HistoryWindow = ptr(int32(1))
	gametest.Suite{Seeds: conformanceSeeds()}.Run(t, deliberation.New(), withBonus, solo, short)
}

func ptr[T any](v T) *T { return &v }
