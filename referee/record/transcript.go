package record

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// TranscriptOptions chooses what a transcript shows.
type TranscriptOptions struct {
	// ShowPrivate adds each seat's private reasoning and notes (for the organiser only).
	ShowPrivate bool
	// Games, when set, lets the transcript write terms as the match's game names them
	// (games.TermsNamer), e.g. a deal with its option names.
	Games *games.Registry
}

// Transcript writes events as text a person can follow: who said what to whom, the moves,
// refusals and faults, and the outcome with payoffs.
func Transcript(w io.Writer, events []*eventsv1.MatchEvent, opts TranscriptOptions) error {
	t := NewTranscriptWriter(w, opts)
	for _, ev := range events {
		t.event(ev)
	}
	return t.err
}

// TranscriptWriter renders events as a transcript as they happen. It is a match.Recorder; use
// one per match.
type TranscriptWriter struct {
	w     io.Writer
	opts  TranscriptOptions
	names []string
	terms func(*gamev1.Proposal) string // the game's wording of terms, or nil
	err   error
	// tail holds the last two bytes written, to tell whether the output ends with an empty
	// line.
	tail string
}

// NewTranscriptWriter returns a TranscriptWriter on w.
func NewTranscriptWriter(w io.Writer, opts TranscriptOptions) *TranscriptWriter {
	return &TranscriptWriter{w: w, opts: opts}
}

// Record renders one event.
func (t *TranscriptWriter) Record(_ context.Context, ev *eventsv1.MatchEvent) error {
	t.event(ev)
	return t.err
}

func (t *TranscriptWriter) printf(format string, args ...any) {
	if t.err == nil {
		text := fmt.Sprintf(format, args...)
		if text == "" {
			return
		}
		t.tail = t.tail + text
		t.tail = t.tail[max(0, len(t.tail)-2):]
		_, t.err = io.WriteString(t.w, text)
	}
}

// section starts a section with a heading, after one empty line.
func (t *TranscriptWriter) section(heading string) {
	if t.tail != "\n\n" {
		t.printf("\n")
	}
	t.printf("-- %s --\n", strings.TrimSuffix(heading, "."))
}

func (t *TranscriptWriter) name(seat int32) string { return games.SeatName(seat, t.names) }

func (t *TranscriptWriter) event(ev *eventsv1.MatchEvent) {
	switch p := ev.GetPayload().(type) {
	case *eventsv1.MatchEvent_MatchStarted:
		s := p.MatchStarted
		t.names = make([]string, len(s.GetSeats()))
		var seats []string
		for i, seat := range s.GetSeats() {
			t.names[i] = seat.GetName()
			a := seat.GetAgent()
			who := a.GetName()
			if who == "" {
				who = "(unknown agent)"
			}
			if a.GetVersion() != "" {
				who += " " + a.GetVersion()
			}
			seats = append(seats, fmt.Sprintf("%s = %s", t.name(int32(i)), who))
		}
		t.terms = nil
		if t.opts.Games != nil {
			if g, err := t.opts.Games.Lookup(s.GetGame()); err == nil {
				if tn, ok := g.(games.TermsNamer); ok {
					t.terms = tn.NameTerms(s.GetParams())
				}
			}
		}
		t.printf("Match %s: %s (rules %s), seed %d\n", ev.GetMatchId(), s.GetGame(), s.GetRulesVersion(), s.GetSeed())
		if params := games.FormatParams(s.GetParams()); len(params) > 0 {
			t.printf("Parameters: %s\n", strings.Join(params, " "))
		}
		t.printf("Seats: %s\n\n", strings.Join(seats, ", "))
	case *eventsv1.MatchEvent_ActionTaken:
		a := p.ActionTaken
		line := fmt.Sprintf("Turn %d  %s %s", ev.GetTurn(), t.name(a.GetSeat()), t.describe(a.GetAction()))
		if a.GetDefaultReason() != "" {
			line += fmt.Sprintf("  [default move: %s]", a.GetDefaultReason())
		}
		t.printf("%s\n", line)
		t.messages(a.GetSeat(), a.GetAction().GetMessages())
		if t.opts.ShowPrivate {
			t.private(a.GetAction().GetPrivateReasoning(), a.GetAction().GetPrivateNotes())
		}
	case *eventsv1.MatchEvent_ActionRefused:
		r := p.ActionRefused
		t.printf("Turn %d  %s's action refused (attempt %d): %s\n", ev.GetTurn(), t.name(r.GetSeat()), r.GetAttempt(), r.GetRejection().GetMessage())
	case *eventsv1.MatchEvent_AgentFault:
		f := p.AgentFault
		t.printf("Turn %d  %s's agent failed (%s): %s\n", ev.GetTurn(), t.name(f.GetSeat()), faultName(f.GetKind()), f.GetDetail())
	case *eventsv1.MatchEvent_PhaseStarted:
		t.section(p.PhaseStarted.GetSummary())
	case *eventsv1.MatchEvent_ChanceDrawn:
		d := p.ChanceDrawn
		if len(d.GetVisibleTo()) > 0 && !t.opts.ShowPrivate {
			var names []string
			for _, s := range d.GetVisibleTo() {
				names = append(names, t.name(s))
			}
			t.printf("Turn %d  Referee: draws a value only %s may see (%s)\n", ev.GetTurn(), strings.Join(names, ", "), d.GetWhat())
			return
		}
		t.printf("Turn %d  Referee: %s\n", ev.GetTurn(), d.GetSummary())
	case *eventsv1.MatchEvent_ProposalResolved:
		t.printf("Turn %d  Referee: %s\n", ev.GetTurn(), p.ProposalResolved.GetSummary())
	case *eventsv1.MatchEvent_MatchEnded:
		o := p.MatchEnded.GetOutcome()
		t.printf("\nOutcome: %s\n", o.GetSummary())
		if len(o.GetPayoffs()) > 0 {
			var pay []string
			for i, v := range o.GetPayoffs() {
				pay = append(pay, fmt.Sprintf("%s %s", t.name(int32(i)), strconv.FormatFloat(v, 'f', -1, 64)))
			}
			t.printf("Payoffs: %s\n", strings.Join(pay, ", "))
		}
	}
}

// describe writes an action's move; a talk-only move whose messages are all private says who
// it was written to.
func (t *TranscriptWriter) describe(a *agentv1.Action) string {
	msgs := a.GetMessages()
	if p := a.GetMove().GetPropose(); p != nil {
		return "proposes: " + t.proposal(p.GetProposal())
	}
	if a.GetMove().GetSay() == nil || len(msgs) == 0 {
		return games.DescribeMove(a.GetMove(), t.names)
	}
	var to []int32
	for _, m := range msgs {
		if len(m.GetTo()) == 0 {
			return games.DescribeMove(a.GetMove(), t.names)
		}
		for _, s := range m.GetTo() {
			if !slices.Contains(to, s) {
				to = append(to, s)
			}
		}
	}
	slices.Sort(to)
	names := make([]string, len(to))
	for i, s := range to {
		names[i] = t.name(s)
	}
	return "writes privately to " + andList(names)
}

// andList joins words as "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func (t *TranscriptWriter) messages(from int32, msgs []*gamev1.Message) {
	for _, m := range msgs {
		to := "all"
		if len(m.GetTo()) > 0 {
			var names []string
			for _, s := range m.GetTo() {
				names = append(names, t.name(s))
			}
			to = strings.Join(names, ", ")
		}
		t.printf("        %s to %s: %q\n", t.name(from), to, m.GetText())
		switch {
		case m.GetProposal().GetDeal() != nil:
			t.printf("        (attaches, not binding: %s)\n", t.proposal(m.GetProposal()))
		case m.GetProposal() != nil:
			t.printf("        (offers, not binding: %s)\n", t.proposal(m.GetProposal()))
		}
	}
}

// proposal writes terms as the game names them, when it does, else as DescribeProposal does.
func (t *TranscriptWriter) proposal(p *gamev1.Proposal) string {
	if t.terms != nil {
		if text := t.terms(p); text != "" {
			return text
		}
	}
	return games.DescribeProposal(p, t.names)
}

func (t *TranscriptWriter) private(reasoning, notes string) {
	if reasoning != "" {
		t.printf("        (private reasoning) %q\n", reasoning)
	}
	if notes != "" {
		t.printf("        (private notes) %q\n", notes)
	}
}

func faultName(k eventsv1.FaultKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "FAULT_KIND_"))
}
