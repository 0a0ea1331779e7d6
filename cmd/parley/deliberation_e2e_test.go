package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/games/deliberation"
)

// deliberationAgents are six built-in agents over gRPC: five cooperative parties and the
// Environmental League as an adversary targeting the Local Labour Union.
var deliberationAgents = []string{
	"--agent", "builtin:cooperative",
	"--agent", "builtin:cooperative",
	"--agent", "builtin:cooperative",
	"--agent", "builtin:cooperative",
	"--agent", "builtin:greedy",
	"--agent", "builtin:adversarial?target=union",
}

// TestDeliberationEndToEnd plays a seeded base match between six built-in agents over gRPC with
// events on an external NATS server, and checks the record against the rules: the phases and
// speaking orders, one public message per turn, the computed votes and payoffs, a replay, the
// events read back from NATS, and the transcript with the final votes and the metrics.
func TestDeliberationEndToEnd(t *testing.T) {
	t.Parallel()
	url := natstest.Start(t).URL
	const seed = 5
	out := mustRun(t, nil, withArgs([]string{"play", "deliberation"}, append(deliberationAgents, "--seed", strconv.Itoa(seed), "--nats", url, "--json")...)...)
	evs := decodeRecord(t, out.stdout)
	started, ended := checkRecord(t, evs, 6)
	s, err := deliberation.NewSetup(started.GetParams())
	if err != nil {
		t.Fatal(err)
	}
	if started.GetGame() != deliberation.Name || started.GetParams().GetDeliberation().GetScenario() == nil || s.N() != 6 || s.MaxTurns() != 26 {
		t.Fatalf("match_started: %v", started)
	}
	for i, seat := range started.GetSeats() {
		if seat.GetName() != s.Parties[i].Name {
			t.Errorf("seat %d is %q, want %q", i, seat.GetName(), s.Parties[i].Name)
		}
	}

	// Turns, phases and speakers: 1 + 24 + 1 turns, one public message each, the discussion in
	// the drawn orders.
	var phases []string
	var taken []*eventsv1.ActionTaken
	var turns []int32
	blocks := 0
	for _, ev := range evs {
		switch {
		case ev.GetPhaseStarted() != nil:
			phases = append(phases, ev.GetPhaseStarted().GetPhase())
		case ev.GetChanceDrawn() != nil:
			blocks++
		case ev.GetActionTaken() != nil:
			a := ev.GetActionTaken()
			taken = append(taken, a)
			turns = append(turns, ev.GetTurn())
			if a.GetDefaultReason() != "" {
				t.Errorf("turn %d: a default move (%s)", ev.GetTurn(), a.GetDefaultReason())
			}
			msgs := a.GetAction().GetMessages()
			if len(msgs) != 1 || len(msgs[0].GetTo()) != 0 || msgs[0].GetText() == "" {
				t.Errorf("turn %d: messages %v, want one public message", ev.GetTurn(), msgs)
			}
		case ev.GetActionRefused() != nil || ev.GetAgentFault() != nil:
			t.Errorf("turn %d: %v", ev.GetTurn(), ev)
		}
	}
	if !slices.Equal(phases, []string{deliberation.PhaseOpening, deliberation.PhaseDiscussion, deliberation.PhaseFinal}) || blocks != 4 || len(taken) != 26 {
		t.Fatalf("phases %v, %d speaking orders, %d actions; want opening, discussion, final, 4 and 26", phases, blocks, len(taken))
	}
	order := deliberation.Schedule(s, seed)
	for i, a := range taken {
		want := int32(0)
		if i > 0 && i < 25 {
			want = int32(order[i-1])
		}
		if a.GetSeat() != want || turns[i] != int32(i+1) {
			t.Errorf("action %d: seat %d on turn %d, want seat %d on turn %d", i+1, a.GetSeat(), turns[i], want, i+1)
		}
	}
	// The final deal's votes and the payoffs, recomputed from the score sheets.
	final, err := s.DealFromProto(taken[25].GetAction().GetMove().GetPropose().GetProposal().GetDeal())
	if err != nil {
		t.Fatalf("final turn: %v", err)
	}
	v := s.Vote(final)
	var res *eventsv1.ProposalResolved
	for _, ev := range evs {
		if r := ev.GetProposalResolved(); r != nil {
			res = r
		}
	}
	var yes, no []int32
	for seat, y := range v.Yes {
		if y {
			yes = append(yes, int32(seat))
		} else {
			no = append(no, int32(seat))
		}
	}
	if res == nil || res.GetAccepted() != v.Passed || !slices.Equal(res.GetAcceptedBy(), yes) || !slices.Equal(res.GetRejectedBy(), no) {
		t.Fatalf("proposal_resolved %v, want passed %v, yes %v, no %v", res, v.Passed, yes, no)
	}
	o := ended.GetOutcome()
	for seat, x := range v.Payoffs(s) {
		if o.GetPayoffs()[seat] != float64(x) {
			t.Fatalf("payoffs %v, want %v", o.GetPayoffs(), v.Payoffs(s))
		}
	}
	replays(t, evs)
	fromNATS(t, url, evs)

	// The transcript of the same match (embedded NATS): speakers, messages, deals with their
	// option names, every party's vote with its score and minimum, the outcome, the metrics.
	transcript := mustRun(t, nil, withArgs([]string{"play", "deliberation"}, append(deliberationAgents, "--seed", strconv.Itoa(seed))...)...).stdout
	wantLines := []string{
		"-- Opening: SportCo (p1) tables the opening deal A1,B1,C4,D1,E5 (A1 on the water; B1 some lasting harm; C4 no union preference; D1 $3bn; E5 none) --",
		"Turn 1  SportCo proposes: deal A1,B1,C4,D1,E5 (A1 on the water; B1 some lasting harm; C4 no union preference; D1 $3bn; E5 none)",
		fmt.Sprintf("Turn 2  %s speaks", s.Parties[order[0]].Name),
		fmt.Sprintf("Turn 26  SportCo proposes: deal %s", s.DealText(final)),
		fmt.Sprintf("    SportCo: %s (score %d, minimum 55%s)", map[bool]string{true: "yes", false: "no"}[v.Yes[0]], v.Scores[0], map[bool]string{true: ", through its bonus of 10", false: ""}[v.ByBonus]),
		fmt.Sprintf("    Environmental League: %s (score %d, minimum 55)", map[bool]string{true: "yes", false: "no"}[v.Yes[5]], v.Scores[5]),
		"Outcome: " + o.GetSummary(),
		"Deliberation metrics over 1 match",
	}
	lines := strings.Split(transcript, "\n")
	next := 0
	for _, w := range wantLines {
		i := slices.IndexFunc(lines[next:], func(l string) bool { return strings.HasPrefix(l, w) })
		if i < 0 {
			t.Fatalf("the transcript lacks, in order, a line starting\n%s\n--- transcript:\n%s", w, transcript)
		}
		next += i + 1
	}
	if !strings.Contains(transcript, "(attaches, not binding: deal ") {
		t.Error("the transcript shows no attached deal")
	}
}

// TestDeliberationImportedFolders plays two short matches of each authors' folder, imported as
// it is, and checks the metrics over both; a broken copy is refused naming the file and line.
func TestDeliberationImportedFolders(t *testing.T) {
	t.Parallel()
	data := repodata.Path(t, "deliberation")
	agents := []string{"--agent", "builtin:cooperative", "--agent", "builtin:cooperative", "--agent", "builtin:cooperative",
		"--agent", "builtin:cooperative", "--agent", "builtin:cooperative", "--agent", "builtin:cooperative"}
	for _, name := range deliberation.ShippedNames() {
		out := mustRun(t, nil, withArgs([]string{"play", "deliberation", "--param", "game=" + filepath.Join(data, name), "--param", "discussion_turns=6", "--seed", "1", "--matches", "2"}, agents...)...)
		if !strings.Contains(out.stdout, "Deliberation metrics over 2 matches") || strings.Count(out.stdout, "\nOutcome: ") != 2 {
			t.Errorf("%s: output:\n%s", name, out.stdout)
		}
	}
	broken := t.TempDir()
	b, err := os.ReadFile(filepath.Join(data, "game2", "config.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "config.txt"), []byte(strings.Replace(string(b), ",p1,", ",lead,", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := runParley(t, nil, withArgs([]string{"play", "deliberation", "--param", "game=" + broken}, agents...)...)
	if r.code != 2 || !strings.Contains(r.stderr, filepath.Join(broken, "config.txt")+":2: role \"lead\"") {
		t.Errorf("broken folder: %s", r)
	}
}
