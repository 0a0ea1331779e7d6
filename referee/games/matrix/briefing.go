package matrix

import (
	"fmt"
	"strings"

	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/equilibria"
)

// rulesText is the fixed part of seat's briefing: the game, every payoff in one sentence per
// cell from seat's side (as the published prompts write them), and how a round goes.
func (s *setup) rulesText(seat games.Seat) string {
	var b strings.Builder
	me, other := s.players[seat], s.players[1-seat]
	role := []string{"row player", "column player"}[seat]
	switch {
	case s.neutral || s.shown.GetTitle() == "":
		fmt.Fprintf(&b, "You are %s (the %s) in a two-player game against %s.", me, role, other)
	default:
		fmt.Fprintf(&b, "You are %s (the %s) in a two-player game, %s, against %s.", me, role, s.shown.GetTitle(), other)
	}
	if s.rounds == 1 {
		b.WriteString(" The game is played for one round.")
	} else {
		fmt.Fprintf(&b, " The game is played for %d rounds; your payoff is the sum of your payoffs over the rounds.", s.rounds)
	}
	b.WriteString(" Both of you know every payoff.\n")
	if !s.neutral && s.shown.GetScaleName() != "" {
		fmt.Fprintf(&b, "The %s is %s; the payoffs below include it.\n", s.shown.GetScaleName(), equilibria.RatText(s.scale))
	}
	fmt.Fprintf(&b, "\nYour options: %s. %s's options: %s.\n", s.optionNames(seat), other, s.optionNames(1-seat))
	b.WriteString("Payoffs:\n")
	for i := range s.actions(seat) {
		for j := range s.actions(1 - seat) {
			b.WriteString("- " + s.cellSentence(seat, i, j) + "\n")
		}
	}
	b.WriteString("\nHow a round goes\n")
	if s.talk > 0 {
		fmt.Fprintf(&b, "- Talk: up to %d %s of public messages; in each, %s writes one message and %s replies with one. "+
			"On your talk turn, say sends your message and the talk goes on; pass sends it and ends the talk at once. Nothing said binds anyone.\n",
			s.talk, plural(int64(s.talk), "round", "rounds"), s.players[s.opener], s.players[1-s.opener])
	}
	fmt.Fprintf(&b, "- Choice: you and %s choose at the same time, with a choose move naming one of your options. Neither of you sees the other's choice until both have chosen.\n", other)
	if s.rounds > 1 {
		if s.history {
			b.WriteString("- Then both choices and payoffs are announced, and the next round begins.\n")
		} else {
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

// cellSentence writes one cell from seat's side: "If you choose cooperate and Bob chooses
// defect, you get 0 and Bob gets 5."
func (s *setup) cellSentence(seat games.Seat, mine, theirs int) string {
	pr := equilibria.Profile{Row: mine, Col: theirs}
	if seat == 1 {
		pr = equilibria.Profile{Row: theirs, Col: mine}
	}
	pay := s.m.Payoffs(pr)
	other := s.players[1-seat]
	return fmt.Sprintf("If you choose %s and %s chooses %s, you get %s and %s gets %s.",
		s.actions(seat)[mine].GetId(), other, s.actions(1 - seat)[theirs].GetId(),
		equilibria.RatText(pay[seat]), other, equilibria.RatText(pay[1-seat]))
}

// optionText describes seat's option i by what it pays against each of the other's options.
func (st *state) optionText(seat games.Seat, i int) string {
	s := st.s
	var parts []string
	for j := range s.actions(1 - seat) {
		pr := equilibria.Profile{Row: i, Col: j}
		if seat == 1 {
			pr = equilibria.Profile{Row: j, Col: i}
		}
		pay := s.m.Payoffs(pr)
		parts = append(parts, fmt.Sprintf("if %s chooses %s: you get %s, %s gets %s", s.players[1-seat], s.actions(1 - seat)[j].GetId(),
			equilibria.RatText(pay[seat]), s.players[1-seat], equilibria.RatText(pay[1-seat])))
	}
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
		fmt.Fprintf(&b, "- %s\n", st.talk.Status(s.players, seat))
	case phaseChoice:
		switch {
		case st.chosen[seat] < 0:
			b.WriteString("- It is time to choose: send a choose move with the id of one of your options.\n")
		default:
			fmt.Fprintf(&b, "- You chose %s; waiting for %s to choose.\n", s.label(seat, st.chosen[seat]), s.players[1-seat])
		}
	case phaseOver:
		b.WriteString("- The game is over.\n")
	}
	if len(st.results) > 0 {
		tot := st.totals()
		for k, r := range st.results {
			pay := s.m.Payoffs(r.profile)
			mine := r.profile.Action(int(seat))
			if s.history {
				fmt.Fprintf(&b, "- Round %d: you chose %s, %s chose %s; you got %s, %s got %s.\n", k+1, s.label(seat, mine),
					s.players[1-seat], s.label(1-seat, r.profile.Action(int(1-seat))), equilibria.RatText(pay[seat]), s.players[1-seat], equilibria.RatText(pay[1-seat]))
			} else {
				fmt.Fprintf(&b, "- Round %d: you chose %s and got %s.\n", k+1, s.label(seat, mine), equilibria.RatText(pay[seat]))
			}
		}
		fmt.Fprintf(&b, "- Your total so far: %s.\n", equilibria.RatText(tot[seat]))
	}
	return b.String()
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func joinList(words []string, last string) string {
	switch len(words) {
	case 0:
		return "nothing"
	case 1:
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + last + words[len(words)-1]
}

func joinOr(words []string) string  { return joinList(words, " or ") }
func joinAnd(words []string) string { return joinList(words, " and ") }
