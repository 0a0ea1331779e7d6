package matrix

import (
	"fmt"
	"strings"

	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/datagame"
	"github.com/parley-arena/parley/referee/games/equilibria"
	"github.com/parley-arena/parley/referee/games/pretalk"
)

// rulesText is the fixed part of seat's briefing: the game, every payoff in one sentence per
// cell from seat's side (as the published prompts write them), and how a round goes.
func (s *setup) rulesText(seat games.Seat) string {
	var b strings.Builder
	me := s.Players[seat]
	others := datagame.Others(seat, len(s.Players))
	var otherNames []string
	for _, o := range others {
		otherNames = append(otherNames, s.Players[o])
	}
	titled := !s.Neutral && s.shown.GetTitle() != ""
	switch {
	case len(s.Players) == 2 && titled:
		fmt.Fprintf(&b, "You are %s (the %s) in a two-player game, %s, against %s.", me, s.roles[seat], s.shown.GetTitle(), otherNames[0])
	case len(s.Players) == 2:
		fmt.Fprintf(&b, "You are %s (the %s) in a two-player game against %s.", me, s.roles[seat], otherNames[0])
	case titled:
		fmt.Fprintf(&b, "You are %s in a game of %s players, %s, with %s.", me, datagame.Number(len(s.Players)), s.shown.GetTitle(), bargain.AndList(otherNames))
	default:
		fmt.Fprintf(&b, "You are %s in a game of %s players with %s.", me, datagame.Number(len(s.Players)), bargain.AndList(otherNames))
	}
	if s.rounds == 1 {
		b.WriteString(" The game is played for one round.")
	} else {
		fmt.Fprintf(&b, " The game is played for %d rounds; your payoff is the sum of your payoffs over the rounds.", s.rounds)
	}
	if len(s.Players) == 2 {
		b.WriteString(" Both of you know every payoff.\n")
	} else {
		b.WriteString(" All of you know every payoff.\n")
	}
	if !s.Neutral && s.shown.GetScaleName() != "" {
		fmt.Fprintf(&b, "The %s is %s; the payoffs below include it.\n", s.shown.GetScaleName(), equilibria.RatText(s.Scale))
	}
	fmt.Fprintf(&b, "\nYour options: %s.", s.optionNames(seat))
	for _, o := range others {
		fmt.Fprintf(&b, " %s's options: %s.", s.Players[o], s.optionNames(o))
	}
	b.WriteString("\nPayoffs:\n")
	for i := range s.actions(seat) {
		s.eachOther(seat, i, func(pr equilibria.Profile) {
			b.WriteString("- " + s.cellSentence(seat, pr) + "\n")
		})
	}
	b.WriteString("\nHow a round goes\n")
	if s.Talk > 0 {
		fmt.Fprintf(&b, "- Talk: up to %d %s of public messages; in each, %s. "+
			"On your talk turn, say sends your message and the talk goes on; pass sends it and ends the talk at once. Nothing said binds anyone.\n",
			s.Talk, pretalk.Plural(int64(s.Talk), "round", "rounds"), pretalk.Order(s.Opener, s.Players))
	}
	if len(s.Players) == 2 {
		fmt.Fprintf(&b, "- Choice: you and %s choose at the same time, with a choose move naming one of your options. Neither of you sees the other's choice until both have chosen.\n", otherNames[0])
	} else {
		fmt.Fprintf(&b, "- Choice: you, %s choose at the same time, with a choose move naming one of your options. None of you sees another's choice until all have chosen.\n", bargain.AndList(otherNames))
	}
	if s.rounds > 1 {
		switch {
		case s.history && len(s.Players) == 2:
			b.WriteString("- Then both choices and payoffs are announced, and the next round begins.\n")
		case s.history:
			b.WriteString("- Then all choices and payoffs are announced, and the next round begins.\n")
		default:
			b.WriteString("- Then each of you learns only its own payoff, and the next round begins.\n")
		}
	}
	return b.String()
}

func (s *setup) optionNames(seat games.Seat) string {
	var out []string
	for i := range s.actions(seat) {
		out = append(out, s.label(seat, i))
	}
	return strings.Join(out, ", ")
}

// eachOther calls f with every profile in which seat plays action mine, the others' actions
// in row-major order.
func (s *setup) eachOther(seat games.Seat, mine int, f func(equilibria.Profile)) {
	for k := range s.m.Len() {
		if pr := s.m.ProfileAt(k); pr[seat] == mine {
			f(pr)
		}
	}
}

// cellSentence writes one cell from seat's side: "If you choose cooperate and Bob chooses
// defect, you get 0 and Bob gets 5."
func (s *setup) cellSentence(seat games.Seat, pr equilibria.Profile) string {
	pay := s.m.Payoffs(pr)
	choices := []string{"you choose " + s.actions(seat)[pr[seat]].GetId()}
	gets := []string{"you get " + equilibria.RatText(pay[seat])}
	for _, o := range datagame.Others(seat, len(s.Players)) {
		choices = append(choices, fmt.Sprintf("%s chooses %s", s.Players[o], s.actions(o)[pr[o]].GetId()))
		gets = append(gets, fmt.Sprintf("%s gets %s", s.Players[o], equilibria.RatText(pay[o])))
	}
	return fmt.Sprintf("If %s, %s.", bargain.AndList(choices), bargain.AndList(gets))
}

// optionText describes seat's option i by what it pays against each profile of the others'
// options: "if Bob chooses defect: you get 0, Bob gets 5; ...".
func (st *state) optionText(seat games.Seat, i int) string {
	s := st.s
	var parts []string
	s.eachOther(seat, i, func(pr equilibria.Profile) {
		pay := s.m.Payoffs(pr)
		var choices []string
		gets := []string{"you get " + equilibria.RatText(pay[seat])}
		for _, o := range datagame.Others(seat, len(s.Players)) {
			choices = append(choices, fmt.Sprintf("%s chooses %s", s.Players[o], s.actions(o)[pr[o]].GetId()))
			gets = append(gets, fmt.Sprintf("%s gets %s", s.Players[o], equilibria.RatText(pay[o])))
		}
		parts = append(parts, fmt.Sprintf("if %s: %s", bargain.AndList(choices), strings.Join(gets, ", ")))
	})
	return strings.Join(parts, "; ")
}

// briefing is the fixed rules plus where the match stands for seat.
func (st *state) briefing(seat games.Seat) string {
	s := st.s
	var b strings.Builder
	b.WriteString(s.text[seat])
	b.WriteString("\nNow\n")
	if s.rounds > 1 {
		fmt.Fprintf(&b, "- Round %d of %d.\n", st.round, s.rounds)
	}
	switch st.phase {
	case phaseTalk:
		fmt.Fprintf(&b, "- %s\n", st.talk.Status(s.Players, seat))
	case phaseChoice:
		switch {
		case st.chosen[seat] < 0:
			b.WriteString("- It is time to choose: send a choose move with the id of one of your options.\n")
		default:
			var waiting []string
			for _, o := range st.ToMove() {
				waiting = append(waiting, s.Players[o])
			}
			fmt.Fprintf(&b, "- You chose %s; waiting for %s to choose.\n", s.label(seat, st.chosen[seat]), bargain.AndList(waiting))
		}
	case phaseOver:
		b.WriteString("- The game is over.\n")
	}
	if len(st.results) > 0 {
		tot := st.totals()
		for k, r := range st.results {
			pay := s.m.Payoffs(r)
			if !s.history {
				fmt.Fprintf(&b, "- Round %d: you chose %s and got %s.\n", k+1, s.label(seat, r[seat]), equilibria.RatText(pay[seat]))
				continue
			}
			chose := []string{"you chose " + s.label(seat, r[seat])}
			got := []string{"you got " + equilibria.RatText(pay[seat])}
			for _, o := range datagame.Others(seat, len(s.Players)) {
				chose = append(chose, fmt.Sprintf("%s chose %s", s.Players[o], s.label(o, r[o])))
				got = append(got, fmt.Sprintf("%s got %s", s.Players[o], equilibria.RatText(pay[o])))
			}
			fmt.Fprintf(&b, "- Round %d: %s; %s.\n", k+1, strings.Join(chose, ", "), strings.Join(got, ", "))
		}
		fmt.Fprintf(&b, "- Your total so far: %s.\n", equilibria.RatText(tot[seat]))
	}
	return b.String()
}
