package record_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/record"
)

// threeSeatRecord is a made-up three-seat game with no parameters, an agent with a version but
// no name, a seat with no name (shown as "seat 2") and a message to two seats.
func threeSeatRecord() []*eventsv1.MatchEvent {
	return []*eventsv1.MatchEvent{
		{MatchId: "m-3", Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
			Game: "coalition", RulesVersion: "2", Seed: 7,
			Seats: []*gamev1.SeatInfo{
				{Seat: 0, Name: "A", Agent: &gamev1.AgentInfo{Name: "llm", Version: "gpt-x"}},
				{Seat: 1, Name: "B", Agent: &gamev1.AgentInfo{Version: "0.1"}},
				{Seat: 2, Name: "", Agent: &gamev1.AgentInfo{Name: "random"}},
			},
		}}},
		{MatchId: "m-3", Seq: 2, Turn: 1, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{
			Seat: 1,
			Action: &agentv1.Action{
				Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: "join"}}},
				Messages: []*gamev1.Message{
					{To: []int32{0, 2}, Text: "line one\nline two"},
				},
				PrivateNotes: "only notes",
			},
		}}},
		{MatchId: "m-3", Seq: 3, Turn: 2, Payload: &eventsv1.MatchEvent_AgentFault{AgentFault: &eventsv1.AgentFault{
			Seat: 2, Kind: eventsv1.FaultKind_FAULT_KIND_RETRIES_EXHAUSTED, Detail: "3 refused actions",
		}}},
		{MatchId: "m-3", Seq: 4, Turn: 2, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{
			Summary: "Void.",
		}}}},
	}
}

func TestTranscript(t *testing.T) {
	const sampleHead = `Match m-1: ultimatum (rules 1), seed 42
Parameters: total=100 max_turns=8 currency=Dollars
Seats: P1 = fair 1, P2 = (unknown agent)

Turn 1  P1 proposes: P1 gives 40 Dollars
        P1 to all: "Hello"
        P1 to P2: "Just \"you\""
`
	const sampleTail = `Turn 2  P2's action refused (attempt 1): the ultimatum game has no choose move
Turn 2  P2's agent failed (timeout): no answer within 5s
Turn 2  P2 rejects  [default move: agent timed out]

Outcome: P2 rejected.
Payoffs: P1 60, P2 40.5
`
	const samplePrivate = `        (private reasoning) "secret plan"
        (private notes) "note to self"
`
	const threeSeat = `Match m-3: coalition (rules 2), seed 7
Seats: A = llm gpt-x, B = (unknown agent) 0.1, seat 2 = random

Turn 1  B chooses join
        B to A, seat 2: "line one\nline two"
Turn 2  seat 2's agent failed (retries_exhausted): 3 refused actions

Outcome: Void.
`
	tests := []struct {
		name   string
		events []*eventsv1.MatchEvent
		opts   record.TranscriptOptions
		want   string
	}{
		{name: "public", events: sampleRecord(), want: sampleHead + sampleTail},
		{name: "with private reasoning", events: sampleRecord(), opts: record.TranscriptOptions{ShowPrivate: true}, want: sampleHead + samplePrivate + sampleTail},
		{name: "three seats", events: threeSeatRecord(), want: threeSeat},
		{name: "three seats with private notes", events: threeSeatRecord(), opts: record.TranscriptOptions{ShowPrivate: true},
			want: strings.Replace(threeSeat, "line two\"\n", "line two\"\n        (private notes) \"only notes\"\n", 1)},
		{name: "private talk, phases, draws, votes", events: coalitionRecord(), want: coalitionTranscript},
		{name: "no events", events: nil, want: ""},
		{
			name: "events before match_started use seat numbers",
			events: []*eventsv1.MatchEvent{
				{Turn: 3, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{
					Seat: 1, Action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}},
						Messages: []*gamev1.Message{{To: []int32{0}, Text: "ok"}}},
				}}},
				{Turn: 3, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{
					Summary: "Done.", Payoffs: []float64{0.25, -1, 1e6},
				}}}},
			},
			want: "Turn 3  seat 1 accepts\n        seat 1 to seat 0: \"ok\"\n\nOutcome: Done.\nPayoffs: seat 0 0.25, seat 1 -1, seat 2 1000000\n",
		},
		{
			name:   "event without payload is skipped",
			events: []*eventsv1.MatchEvent{{MatchId: "x", Seq: 1}},
			want:   "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := record.Transcript(&buf, tc.events, tc.opts); err != nil {
				t.Fatalf("Transcript: %v", err)
			}
			if got := buf.String(); got != tc.want {
				t.Errorf("Transcript =\n%s\nwant\n%s", got, tc.want)
			}
			if !tc.opts.ShowPrivate {
				for _, secret := range []string{"secret plan", "note to self", "only notes", "(private"} {
					if strings.Contains(buf.String(), secret) {
						t.Errorf("transcript without ShowPrivate contains %q", secret)
					}
				}
			}
			// The streaming writer renders the same text, event by event.
			var streamed bytes.Buffer
			tw := record.NewTranscriptWriter(&streamed, tc.opts)
			for _, ev := range tc.events {
				if err := tw.Record(context.Background(), ev); err != nil {
					t.Fatalf("TranscriptWriter.Record: %v", err)
				}
			}
			if streamed.String() != tc.want {
				t.Errorf("TranscriptWriter =\n%s\nwant\n%s", streamed.String(), tc.want)
			}
		})
	}
}

// coalitionRecord is a short coalition match: one round of private talk with offers, a phase
// change with a draw, a proposal, votes and the resolution.
func coalitionRecord() []*eventsv1.MatchEvent {
	say := &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}
	split := func(amounts ...int64) *gamev1.Proposal {
		alloc := &gamev1.Allocation{}
		for seat, x := range amounts {
			if x >= 0 {
				alloc.Shares = append(alloc.Shares, &gamev1.SeatShare{Seat: int32(seat), Receives: map[string]int64{"g": x}})
			}
		}
		return &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: alloc}}
	}
	taken := func(turn int32, seat int32, move *gamev1.Move, msgs ...*gamev1.Message) *eventsv1.MatchEvent {
		return &eventsv1.MatchEvent{Turn: turn, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{
			Seat: seat, Action: &agentv1.Action{Move: move, Messages: msgs},
		}}}
	}
	return []*eventsv1.MatchEvent{
		{MatchId: "c-1", Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
			Game: "coalition", RulesVersion: "1", Seed: 3,
			Seats: []*gamev1.SeatInfo{{Seat: 0, Name: "A"}, {Seat: 1, Name: "B"}, {Seat: 2, Name: "C"}},
		}}},
		{Turn: 1, Payload: &eventsv1.MatchEvent_PhaseStarted{PhaseStarted: &eventsv1.PhaseStarted{Phase: "talk", Summary: "Phase 1: private negotiation."}}},
		taken(1, 0, say, &gamev1.Message{To: []int32{2}, Text: "C?", Proposal: split(500, -1, 250)}, &gamev1.Message{To: []int32{1}, Text: "B?"}),
		taken(2, 2, say, &gamev1.Message{To: []int32{0}, Text: "ok", Proposal: split(-1, 0, 0)}),
		{Turn: 2, Payload: &eventsv1.MatchEvent_PhaseStarted{PhaseStarted: &eventsv1.PhaseStarted{Phase: "proposals", Summary: "Phase 2: binding proposals"}}},
		{Turn: 2, Payload: &eventsv1.MatchEvent_ChanceDrawn{ChanceDrawn: &eventsv1.ChanceDrawn{What: "proposer", Summary: "C is drawn to propose."}}},
		taken(3, 2, &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: split(500, -1, 250)}}}),
		taken(4, 0, &gamev1.Move{Kind: &gamev1.Move_Accept{Accept: &gamev1.Accept{}}}, &gamev1.Message{Text: "deal"}),
		{Turn: 4, Payload: &eventsv1.MatchEvent_ProposalResolved{ProposalResolved: &eventsv1.ProposalResolved{Accepted: true, Summary: "C's proposal passes: A accepts."}}},
		{Turn: 4, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{
			Summary: "A+C share 750 g.", Payoffs: []float64{500, 0, 250},
		}}}},
	}
}

const coalitionTranscript = `Match c-1: coalition (rules 1), seed 3
Seats: A = (unknown agent), B = (unknown agent), C = (unknown agent)

-- Phase 1: private negotiation --
Turn 1  A writes privately to B and C
        A to C: "C?"
        (offers, not binding: A 500 g; C 250 g)
        A to B: "B?"
Turn 2  C writes privately to A
        C to A: "ok"
        (offers, not binding: B 0 g; C 0 g)

-- Phase 2: binding proposals --
Turn 2  Referee: C is drawn to propose.
Turn 3  C proposes: A 500 g; C 250 g
Turn 4  A accepts
        A to all: "deal"
Turn 4  Referee: C's proposal passes: A accepts.

Outcome: A+C share 750 g.
Payoffs: A 500, B 0, C 250
`

func TestTranscriptWriteError(t *testing.T) {
	if err := record.Transcript(failingWriter{}, sampleRecord(), record.TranscriptOptions{}); !errors.Is(err, errDiskFull) {
		t.Errorf("Transcript on a failing writer = %v, want %v", err, errDiskFull)
	}
	tw := record.NewTranscriptWriter(failingWriter{}, record.TranscriptOptions{})
	if err := tw.Record(context.Background(), sampleRecord()[0]); !errors.Is(err, errDiskFull) {
		t.Errorf("TranscriptWriter.Record on a failing writer = %v, want %v", err, errDiskFull)
	}
}

// TestTranscriptWordsTermsAsTheGame: a transcript writes each bargaining game's proposals in
// the words the players read in their own history (the seat page), not in a wording of its
// own. Each game is played for real: a proposal applied, then the other seat's history read.
func TestTranscriptWordsTermsAsTheGame(t *testing.T) {
	reg := families.New()
	alloc := func(shares ...*gamev1.SeatShare) *agentv1.Action {
		return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{
			Proposal: &gamev1.Proposal{Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: shares}}}}}}}
	}
	for _, tc := range []struct {
		game   string
		action *agentv1.Action
	}{
		{"ultimatum", alloc(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"Dollars": 40}})},
		{"buysell", alloc(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 1}}, &gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"ZUP": 55}})},
		{"trading", alloc(&gamev1.SeatShare{Seat: 0, Gives: map[string]int64{"X": 3}}, &gamev1.SeatShare{Seat: 1, Gives: map[string]int64{"Y": 2}})},
	} {
		t.Run(tc.game, func(t *testing.T) {
			g, err := reg.Lookup(tc.game)
			if err != nil {
				t.Fatal(err)
			}
			params, err := g.Resolve(nil)
			if err != nil {
				t.Fatal(err)
			}
			st, err := games.Start(g, params, 1)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := st.Apply(0, tc.action); err != nil {
				t.Fatalf("the proposal is refused: %v", err)
			}
			var seen string
			for _, h := range st.Observe(1).GetHistory() {
				if h.GetMove().GetPropose() != nil {
					seen = strings.TrimSuffix(h.GetSummary(), ".")
				}
			}
			if !strings.HasPrefix(seen, "P1 proposes: ") {
				t.Fatalf("P2's history says %q, want P1's proposal", seen)
			}
			evs := []*eventsv1.MatchEvent{
				{MatchId: "m", Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
					Game: tc.game, Params: params, Seats: []*gamev1.SeatInfo{{Seat: 0, Name: "P1"}, {Seat: 1, Name: "P2"}}}}},
				{MatchId: "m", Seq: 2, Turn: 1, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: 0, Action: tc.action}}},
			}
			var buf bytes.Buffer
			if err := record.Transcript(&buf, evs, record.TranscriptOptions{Games: reg}); err != nil {
				t.Fatal(err)
			}
			if want := "Turn 1  " + seen + "\n"; !strings.Contains(buf.String(), want) {
				t.Errorf("transcript:\n%s\nwant the line %q", buf.String(), want)
			}
		})
	}
}
