package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition"
)

// coalitionAgents are three built-in agents over gRPC: A and B bargain for the core split
// (500, 250, 250), C for the Shapley split (417, 292, 291) but accepts 85% of its 291. So a
// proposal by A or B passes, and one by C is rejected by A.
var coalitionAgents = []string{
	"--agent", "builtin:coalition",
	"--agent", "builtin:coalition?basis=core",
	"--agent", "builtin:coalition?basis=shapley&threshold=0.85",
}

// TestCoalitionEndToEnd plays the coalition game between built-in agents over gRPC with events
// on an external NATS server, and checks the record (phases, private talk with offers, draws,
// votes), the outcome against payoffs recomputed from the record and by replaying it on the
// rules, the events read back from NATS, and the transcript.
func TestCoalitionEndToEnd(t *testing.T) {
	t.Parallel()
	url := natstest.Start(t).URL
	// Find a seed whose first proposer is C, so that the match has a rejected proposal.
	var evs []*eventsv1.MatchEvent
	var seed int
	var out result
	for seed = 1; ; seed++ {
		if seed > 30 {
			t.Fatal("no seed among 1 to 30 draws C first")
		}
		play := withArgs([]string{"play", "coalition"}, append(coalitionAgents, "--seed", strconv.Itoa(seed), "--nats", url, "--json")...)
		out = mustRun(t, nil, play...)
		evs = decodeRecord(t, out.stdout)
		if d := firstDraw(evs); d != nil && d.GetSeat() == 2 {
			break
		}
	}
	started, ended := checkRecord(t, evs, 3)
	if started.GetGame() != "coalition" || started.GetSeed() != uint64(seed) {
		t.Errorf("match_started: %v", started)
	}
	for i, s := range started.GetSeats() {
		if s.GetName() != []string{"A", "B", "C"}[i] || s.GetAgent().GetName() != "coalition" {
			t.Errorf("seat %d: %v", i, s)
		}
	}

	// Phase 1: three rounds, each an active player writing one offer-carrying message to each
	// other player, then both others replying to it alone.
	if p := evs[1].GetPhaseStarted(); p.GetPhase() != coalition.PhaseTalk {
		t.Fatalf("event 2 is %v, want the talk phase", evs[1])
	}
	var talk []*eventsv1.ActionTaken
	for _, ev := range evs {
		if a := ev.GetActionTaken(); a != nil && a.GetAction().GetMove().GetSay() != nil {
			talk = append(talk, a)
		}
		if ev.GetPhaseStarted().GetPhase() == coalition.PhaseProposals {
			break
		}
	}
	if len(talk) != 9 {
		t.Fatalf("%d talk moves, want 9 (3 rounds of 3)", len(talk))
	}
	for r := range 3 {
		active := int32(r)
		for k, a := range talk[3*r : 3*r+3] {
			if a.GetDefaultReason() != "" {
				t.Errorf("round %d: a default move: %v", r+1, a)
			}
			var want [][]int32
			if k == 0 {
				if a.GetSeat() != active {
					t.Errorf("round %d opens with seat %d, want %d", r+1, a.GetSeat(), active)
				}
				for s := range int32(3) {
					if s != active {
						want = append(want, []int32{s})
					}
				}
			} else {
				if a.GetSeat() == active {
					t.Errorf("round %d: the active seat replies to itself", r+1)
				}
				want = [][]int32{{active}}
			}
			msgs := a.GetAction().GetMessages()
			if len(msgs) != len(want) {
				t.Fatalf("round %d, seat %d: %d messages, want %d", r+1, a.GetSeat(), len(msgs), len(want))
			}
			for i, m := range msgs {
				if !slices.Equal(m.GetTo(), want[i]) || m.GetProposal().GetAllocation() == nil {
					t.Errorf("round %d, seat %d, message %d: %v, want to %v with an offer", r+1, a.GetSeat(), i, m, want[i])
				}
			}
		}
	}

	// Phase 2: recompute the payoffs from the record: the accepted proposal's amounts, 0 for
	// everyone outside it; every proposal before it rejected, each followed by a new draw.
	var resolved []*eventsv1.ProposalResolved
	draws := 0
	for _, ev := range evs {
		if r := ev.GetProposalResolved(); r != nil {
			resolved = append(resolved, r)
		}
		if ev.GetChanceDrawn().GetWhat() == "proposer" {
			draws++
		}
	}
	if len(resolved) < 2 || draws != len(resolved) {
		t.Fatalf("%d proposals resolved after %d draws; want at least 2 (C's is rejected), one draw each", len(resolved), draws)
	}
	first := resolved[0]
	if first.GetProposer() != 2 || first.GetAccepted() || !slices.Equal(first.GetRejectedBy(), []int32{0}) || !slices.Equal(first.GetAcceptedBy(), []int32{1, 2}) {
		t.Errorf("first proposal: %v, want C's, rejected by A alone", first)
	}
	last := resolved[len(resolved)-1]
	want := make([]float64, 3)
	for _, r := range resolved[:len(resolved)-1] {
		if r.GetAccepted() {
			t.Errorf("proposal %v passed but the game went on", r)
		}
	}
	if !last.GetAccepted() {
		t.Fatalf("the last proposal was rejected: %v", last)
	}
	for _, sh := range last.GetProposal().GetAllocation().GetShares() {
		want[sh.GetSeat()] = float64(sh.GetReceives()["g"])
	}
	o := ended.GetOutcome()
	if !o.GetAgreement() || o.GetCause() != matchv1.EndCause_END_CAUSE_AGREEMENT || !slices.Equal(o.GetPayoffs(), want) {
		t.Errorf("outcome %v, want an agreement paying %v", o, want)
	}
	if !slices.Equal(want, []float64{500, 250, 250}) {
		t.Errorf("payoffs %v, want the core split 500, 250, 250 (A or B proposes it, everyone accepts)", want)
	}

	// Replaying the record's actions on the rules gives the same outcome.
	st, err := coalition.New().NewState(started.GetParams(), started.GetSeed())
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if a := ev.GetActionTaken(); a != nil {
			if _, err := st.Apply(a.GetSeat(), a.GetAction()); err != nil {
				t.Fatalf("replaying turn %d: %v", ev.GetTurn(), err)
			}
		}
	}
	if replayed := st.Outcome(); len(st.ToMove()) != 0 || replayed.GetCause() != o.GetCause() || !slices.Equal(replayed.GetPayoffs(), o.GetPayoffs()) || replayed.GetSummary() != o.GetSummary() {
		t.Errorf("replayed outcome %v, recorded %v", replayed, o)
	}

	// The events on NATS are the record.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{URL: url}, nil)
	if err != nil {
		t.Fatalf("bus.Open(%s): %v", url, err)
	}
	defer b.Close()
	got, err := bus.ReadMatch(ctx, b.JetStream(), evs[0].GetMatchId())
	if err != nil {
		t.Fatal(err)
	}
	if err := sameEvents(got, evs); err != nil {
		t.Errorf("the match on NATS differs from --json: %v", err)
	}

	// The transcript of the same match (embedded NATS this time) reads as private
	// conversations, draws, proposals, votes and the final split.
	transcript := mustRun(t, nil, withArgs([]string{"play", "coalition"}, append(coalitionAgents, "--seed", strconv.Itoa(seed))...)...).stdout
	names := []string{"A", "B", "C"}
	wantLines := []string{
		"-- Phase 1: private negotiation, 3 rounds; the active player rotates A, B, C --",
		"Turn 1  A writes privately to B and C",
		`        A to B: "I suggest we share by the numbers. The core (the only split no coalition can beat) shares A+B+C's 1000 g as A 500 g, B 250 g, C 250 g."`,
		"        (offers, not binding: A 500 g; B 250 g; C 250 g)",
		"Turn 2  B writes privately to A",
		"Turn 2  C writes privately to A",
		`        C to A: "Your offer gives me 250 g, which I would accept. The Shapley value (each player's average contribution) shares A+B+C's 1000 g as A 417 g, B 292 g, C 291 g."`,
		"        (offers, not binding: A 417 g; B 292 g; C 291 g)",
		"Turn 3  B writes privately to A and C",
		"Turn 5  C writes privately to A and B",
		"-- Phase 2: binding proposals, at most 10 --",
		"Turn 6  Referee: Proposal 1 of 10: C is drawn to propose.",
		"Turn 7  C proposes: A 417 g; B 292 g; C 291 g",
		"Turn 8  A rejects",
		"Turn 8  B accepts",
		"Turn 8  Referee: C's proposal (A+B+C: A 417 g, B 292 g, C 291 g) is rejected: A rejects, B accepts.",
		"Outcome: " + o.GetSummary(),
		"Payoffs: A 500, B 250, C 250",
	}
	lines := strings.Split(transcript, "\n")
	next := 0
	for _, w := range wantLines {
		i := slices.Index(lines[next:], w)
		if i < 0 {
			t.Fatalf("the transcript lacks, in order, the line\n%s\n--- transcript:\n%s", w, transcript)
		}
		next += i + 1
	}
	// Every vote is on its own line, in the record's order.
	for _, ev := range evs {
		a := ev.GetActionTaken()
		if a == nil {
			continue
		}
		verb := ""
		switch a.GetAction().GetMove().GetKind().(type) {
		case *gamev1.Move_Accept:
			verb = "accepts"
		case *gamev1.Move_Reject:
			verb = "rejects"
		default:
			continue
		}
		if line := fmt.Sprintf("Turn %d  %s %s", ev.GetTurn(), games.SeatName(a.GetSeat(), names), verb); !slices.Contains(lines, line) {
			t.Errorf("the transcript lacks the vote %q", line)
		}
	}
	if strings.Contains(transcript, "(private reasoning)") {
		t.Error("the transcript shows private reasoning without --show-private")
	}
}

// firstDraw returns the first proposer draw of a record.
func firstDraw(evs []*eventsv1.MatchEvent) *eventsv1.ChanceDrawn {
	for _, ev := range evs {
		if d := ev.GetChanceDrawn(); d != nil {
			return proto.CloneOf(d)
		}
	}
	return nil
}
