package deliberation

import (
	"fmt"
	"slices"
	"strings"

	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	"github.com/parley-arena/parley/referee/games"
)

// briefing is the plain-language account of the rules and of seat's situation, complete enough
// for a person or a language model to act on alone: the scenario, the parties and issues, the
// seat's own private briefing, score sheet and minimum, the rules, where the match stands and
// the exact form of every legal move. It is a pure function of the state and holds nothing
// private to another seat.
func (m *match) briefing(seat int) string {
	return games.Brief(m.f.rules[seat], "Where the match stands",
		func(line games.BriefingLine) { m.situation(seat, line) },
		func(line games.BriefingLine) { m.options(seat, line) })
}

// rulesText is the part of the briefing that depends only on the parameters and the seat.
func rulesText(s *Setup, seat int) string {
	var b strings.Builder
	line := func(format string, args ...any) {
		fmt.Fprintf(&b, format, args...)
		b.WriteByte('\n')
	}
	me := s.Parties[seat]
	n := s.N()
	role := ""
	switch seat {
	case 0:
		role = " You are p1, the lead party: you table the opening deal and, on the last turn, the final deal that is put to the vote."
	case 1:
		role = " You are p2."
	}
	line("You are %s (seat %d), one of %d parties negotiating a deal: %s.%s", me.Name, seat, n, s.Title, role)
	if s.Text != "" {
		line("")
		line("The scenario")
		line("%s", s.Text)
	}
	line("")
	line("The parties")
	for i, p := range s.Parties {
		var notes []string
		switch i {
		case 0:
			notes = append(notes, "p1, the lead party")
		case 1:
			notes = append(notes, "p2")
		}
		if slices.Contains(s.Vetoes, i) {
			notes = append(notes, "holds a veto")
		}
		if i == seat {
			notes = append(notes, "you")
		}
		extra := ""
		if len(notes) > 0 {
			extra = " (" + strings.Join(notes, "; ") + ")"
		}
		line("- %s, seat %d%s", p.Name, i, extra)
	}
	line("")
	line("The issues: a deal picks exactly one option on every issue, written like %s", s.DealString(s.Opening))
	for _, is := range s.Issues {
		opts := make([]string, len(is.Options))
		for k, o := range is.Options {
			opts[k] = is.OptionID(k) + " " + o
		}
		line("- %s, %s: %s", is.ID, is.Label, strings.Join(opts, "; "))
	}
	if me.Briefing != "" {
		line("")
		line("Your private briefing (only you see it)")
		line("%s", me.Briefing)
	}
	line("")
	line("Your private score sheet (only you see it; keep these numbers to yourself)")
	for i, is := range s.Issues {
		pts := make([]string, len(is.Options))
		for k := range is.Options {
			pts[k] = fmt.Sprintf("%s %d", is.OptionID(k), me.Points[i][k])
		}
		line("- %s, %s: %s (best %d)", is.ID, is.Label, strings.Join(pts, ", "), slices.Max(me.Points[i]))
	}
	line("Your score for a deal is the sum of the points of its options; your best possible deal is worth %d to you.", me.Max())
	line("Your minimum score is %d: you say yes to any deal worth at least %d to you, and if no deal passes you get %d.", me.Threshold, me.Threshold, me.Threshold)
	if seat == 0 && s.Bonus != 0 {
		line("Only you know this: if every other party says yes, you get a bonus of %d points on top of your score, and you then say yes as soon as your score plus %d reaches %d.", s.Bonus, s.Bonus, me.Threshold)
	}
	line("")
	line("Rules")
	line("- Turn 1: %s (p1) tables the opening deal %s with a short public message.", s.Parties[0].Name, s.DealString(s.Opening))
	talk := s.TalkTurns()
	switch {
	case s.Solo > 0:
		line("- Turns 2 to %d: %s (p1) speaks alone, one public message per turn, and sees its own earlier messages; the other parties do not speak.", talk+1, s.Parties[0].Name)
	case talk > 0 && s.Order != nil:
		line("- Turns 2 to %d: %d discussion %s, the speakers in an order fixed in advance. Each party is told when it speaks for the last time.", talk+1, talk, plural(talk, "turn", "turns"))
		line("- On a discussion turn a party sends exactly one public message to everyone; it may attach one complete deal to it. Attached deals bind nobody.")
	case talk > 0:
		line("- Turns 2 to %d: %d discussion %s in blocks of %d. In each block every party speaks once, in an order drawn at random; a block never starts with the party that spoke just before, nor ends with p1. Each party is told when it speaks for the last time.", talk+1, talk, plural(talk, "turn", "turns"), n)
		line("- On a discussion turn a party sends exactly one public message to everyone; it may attach one complete deal to it. Attached deals bind nobody.")
	default:
		line("- There are no discussion turns in this match.")
	}
	line("- Turn %d, the last: %s (p1) tables the final deal, or no deal, with a public message.", talk+2, s.Parties[0].Name)
	bonus := "" // only p1 knows of its bonus
	if seat == 0 && s.Bonus != 0 {
		bonus = " (and you, also through your bonus, as above)"
	}
	line("- Nobody votes by hand: the referee computes the votes. A party says yes exactly when the final deal is worth at least its minimum score to it%s.", bonus)
	line("- The final deal passes with at least %d yes-votes%s.", s.Quorum, vetoRule(s))
	line("- If it passes, every party gets its score for the deal, even a party that said no. If it fails, or p1 tables no deal, every party gets its minimum score.")
	line("- Everyone knows the scenario, the parties, the issues and these rules. Score sheets and minimum scores are private: each party knows only its own. Never state your points or your minimum in a message.")
	line("- All messages and attached deals are public. Your private reasoning and notes are never shown to anyone else.")
	if s.HistoryWindow > 0 {
		line("- Your history shows the latest %d public messages.", s.HistoryWindow)
	}
	line("- A move that breaks the rules is refused with the reason, and you may try again a limited number of times. If your agent gives no usable answer, the referee moves for you: on the opening turn it tables the opening deal, in the discussion it sends %q without a deal, on the final turn it tables no deal.", DefaultText)
	line("")
	return b.String()
}

func vetoRule(s *Setup) string {
	if len(s.Vetoes) == 0 {
		return ""
	}
	names := make([]string, len(s.Vetoes))
	for i, seat := range s.Vetoes {
		names[i] = s.Parties[seat].Name
	}
	if len(names) == 1 {
		return ", including " + names[0] + "'s"
	}
	return ", including those of " + strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1] + " (they hold vetoes)"
}

// situation says where the match stands for seat.
func (m *match) situation(seat int, line func(string, ...any)) {
	s := m.s()
	me := s.Parties[seat]
	switch m.stage {
	case deliberationv1.Stage_STAGE_OVER:
		if m.final == nil {
			line("- The match is over: %s tabled no final deal, so every party gets its minimum score; you get %d.", s.Parties[0].Name, me.Threshold)
			return
		}
		pay := m.vote.Payoffs(s)
		line("- The match is over. %s", m.voteText(*m.vote, false))
		line("- Your score for the final deal is %d; you get %d.", m.vote.Scores[seat], pay[seat])
		return
	case deliberationv1.Stage_STAGE_OPENING:
		line("- Turn 1 of %d: the opening.", s.MaxTurns())
	case deliberationv1.Stage_STAGE_DISCUSSION:
		idx := m.talkIndex()
		left := 0
		for _, sp := range m.f.speakers[idx:] {
			if sp == seat {
				left++
			}
		}
		line("- Turn %d of %d: talk turn %d of %d; %s speaks. You have %d talk %s left, this one included if it is yours.", m.turn, s.MaxTurns(), idx+1, s.TalkTurns(), m.name(m.speaker()), left, plural(left, "turn", "turns"))
	case deliberationv1.Stage_STAGE_FINAL:
		line("- Turn %d of %d, the last: %s tables the final deal.", m.turn, s.MaxTurns(), s.Parties[0].Name)
	}
	if d := m.latestP1Deal(); d != nil {
		line("- The latest deal %s tabled is %s; it is worth %d to you (your minimum is %d).", s.Parties[0].Name, s.DealString(d), s.Score(seat, d), me.Threshold)
	}
}

// latestP1Deal is the latest deal p1 tabled, or nil.
func (m *match) latestP1Deal() Deal {
	for i := len(m.statements) - 1; i >= 0; i-- {
		if st := m.statements[i]; st.seat == 0 && st.deal != nil {
			return st.deal
		}
	}
	return nil
}

// options lists the moves seat may make now, with their exact form.
func (m *match) options(seat int, line func(string, ...any)) {
	s := m.s()
	if seat != m.speaker() {
		line("- Nothing: %s.", m.waitingText())
		return
	}
	example := dealJSON(s, s.Opening)
	switch m.stage {
	case deliberationv1.Stage_STAGE_OPENING:
		line("- propose: table the opening deal %s, with one short public message.", s.DealString(s.Opening))
		line("  In the action: move {propose: {proposal: {deal: %s}}} and messages [{text: \"...\"}].", example)
	case deliberationv1.Stage_STAGE_DISCUSSION:
		if m.isLastTalk() {
			line("- This is your last discussion turn.")
		}
		line("- say: one public message to everyone; you may attach one complete deal to it (it binds nobody).")
		line("  In the action: move {say: {}} and messages [{text: \"...\", proposal: {deal: %s}}]; leave proposal out to attach no deal. %s.", example, capitalize(dealRule(s.Issues)))
	case deliberationv1.Stage_STAGE_FINAL:
		line("- propose: table the final deal. This is the deciding vote: the parties' votes are computed as soon as you table it, and the match ends.")
		line("  In the action: move {propose: {proposal: {deal: %s}}} and messages [{text: \"...\"}]. %s.", example, capitalize(dealRule(s.Issues)))
		line("- reject: table no deal; every party gets its minimum score. In the action: move {reject: {}} and messages [{text: \"...\"}].")
	}
}

// dealJSON writes a deal as the action's deal field, e.g. {choices: [{issue: "A", option: "A1"}]}.
func dealJSON(s *Setup, d Deal) string {
	parts := make([]string, len(d))
	for i, k := range d {
		parts[i] = fmt.Sprintf("{issue: %q, option: %q}", s.Issues[i].ID, s.Issues[i].OptionID(k))
	}
	return "{choices: [" + strings.Join(parts, ", ") + "]}"
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
