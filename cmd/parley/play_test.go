package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// longMatch is a match of several turns: two fair agents with different demands bargain
// through most of max_turns=8 (the record has at least fromTurn-1 moves, checked below).
var longMatch = []string{
	"play", "ultimatum",
	"--agent", "builtin:fair?open=0.9&target=0.7",
	"--agent", "builtin:fair?open=0.6&target=0.55",
	"--param", "max_turns=8", "--seed", "1",
}

func withArgs(base []string, more ...string) []string {
	return append(append([]string(nil), base...), more...)
}

func TestPlayDeterministic(t *testing.T) {
	t.Parallel()
	play := []string{"play", "ultimatum", "--agent", "builtin:fair", "--agent", "builtin:random", "--json"}

	first := mustRun(t, nil, withArgs(play, "--seed", "42")...)
	evs := decodeRecord(t, first.stdout)
	started, _ := checkRecord(t, evs, 2)
	if started.GetGame() != "ultimatum" || started.GetSeed() != 42 {
		t.Errorf("match_started: game %q seed %d, want ultimatum 42", started.GetGame(), started.GetSeed())
	}
	for i, want := range []string{"fair", "random"} {
		if got := started.GetSeats()[i].GetAgent().GetName(); got != want {
			t.Errorf("seat %d agent %q, want %q", i, got, want)
		}
	}

	same := map[string]result{
		"second run":                 mustRun(t, nil, withArgs(play, "--seed", "42")...),
		"PARLEY_SEED=42":             mustRun(t, []string{"PARLEY_SEED=42"}, play...),
		"in process, --seed 42":      runInProcess(t, nil, withArgs(play, "--seed", "42")...),
		"in process, PARLEY_SEED=42": runInProcess(t, map[string]string{"PARLEY_SEED": "42"}, play...),
	}
	for name, r := range same {
		if r.code != 0 {
			t.Errorf("%s failed:\n%s", name, r)
		} else if r.stdout != first.stdout {
			t.Errorf("%s: output differs from the first run with --seed 42\n--- first:\n%s--- %s:\n%s", name, first.stdout, name, r.stdout)
		}
	}

	other := mustRun(t, nil, withArgs(play, "--seed", "43")...)
	otherEvs := decodeRecord(t, other.stdout)
	checkRecord(t, otherEvs, 2)
	if other.stdout == first.stdout {
		t.Error("--seed 43 printed the same record as --seed 42")
	}
	if otherEvs[0].GetMatchId() == evs[0].GetMatchId() {
		t.Errorf("--seed 43 and --seed 42 both give match id %q", evs[0].GetMatchId())
	}
}

// TestTranscript checks the default output against the --json record of the same match.
func TestTranscript(t *testing.T) {
	t.Parallel()
	evs := decodeRecord(t, mustRun(t, nil, withArgs(longMatch, "--json")...).stdout)
	started, ended := checkRecord(t, evs, 2)
	plain := mustRun(t, nil, longMatch...).stdout
	private := mustRun(t, nil, withArgs(longMatch, "--show-private")...).stdout

	names := make([]string, len(started.GetSeats()))
	var seats []string
	for i, s := range started.GetSeats() {
		names[i] = s.GetName()
		seats = append(seats, fmt.Sprintf("%s = %s", s.GetName(), s.GetAgent().GetName()))
	}
	lines := strings.Split(strings.TrimSuffix(plain, "\n"), "\n")
	if !strings.HasPrefix(lines[0], "Match "+evs[0].GetMatchId()+": ultimatum") {
		t.Errorf("first line %q does not name the match and game", lines[0])
	}
	seatLine := ""
	for _, l := range lines {
		if strings.HasPrefix(l, "Seats: ") {
			seatLine = l
		}
	}
	for _, s := range seats {
		if !strings.Contains(seatLine, s) {
			t.Errorf("seats line %q does not say %q", seatLine, s)
		}
	}

	// Each move, in order, on its own "Turn N  SEAT verb ..." line, followed by what was said.
	next, moves, reasoned := 0, 0, 0
	for _, ev := range evs {
		a := ev.GetActionTaken()
		if a == nil {
			continue
		}
		moves++
		verb := ""
		switch a.GetAction().GetMove().GetKind().(type) {
		case *gamev1.Move_Propose:
			verb = "proposes"
		case *gamev1.Move_Accept:
			verb = "accepts"
		case *gamev1.Move_Reject:
			verb = "rejects"
		case *gamev1.Move_Pass:
			verb = "passes"
		default:
			t.Fatalf("turn %d: unexpected move in this game: %v", ev.GetTurn(), a)
		}
		want := fmt.Sprintf("Turn %d  %s %s", ev.GetTurn(), names[a.GetSeat()], verb)
		found := false
		for ; next < len(lines); next++ {
			if strings.HasPrefix(lines[next], want) {
				found = true
				break
			}
		}
		if !found {
			t.Fatalf("no line %q (in order) in the transcript:\n%s", want, plain)
		}
		for _, m := range a.GetAction().GetMessages() {
			if next+1 >= len(lines) || !strings.Contains(lines[next+1], strconv.Quote(m.GetText())) {
				t.Errorf("the line after %q does not quote the message %q", lines[next], m.GetText())
			}
		}
		if r := a.GetAction().GetPrivateReasoning(); r != "" {
			reasoned++
			if strings.Contains(plain, r) {
				t.Errorf("the default transcript shows private reasoning %q", r)
			}
			if !strings.Contains(private, "(private reasoning) "+strconv.Quote(r)+"\n") {
				t.Errorf("--show-private does not show reasoning %q", r)
			}
		}
	}
	if moves < 4 {
		t.Errorf("the match has %d moves; the test wants a longer one (change longMatch)", moves)
	}
	if reasoned == 0 {
		t.Error("no move carries private reasoning; --show-private is not exercised")
	}

	var pay []string
	for i, v := range ended.GetOutcome().GetPayoffs() {
		pay = append(pay, fmt.Sprintf("%s %s", names[i], strconv.FormatFloat(v, 'f', -1, 64)))
	}
	wantEnd := fmt.Sprintf("\nOutcome: %s\nPayoffs: %s\n", ended.GetOutcome().GetSummary(), strings.Join(pay, ", "))
	if !strings.HasSuffix(plain, wantEnd) {
		t.Errorf("transcript does not end with\n%s\ngot:\n%s", wantEnd, plain)
	}

	if strings.Contains(plain, "(private") {
		t.Errorf("the default transcript has private lines:\n%s", plain)
	}
	// --show-private only adds lines.
	var public []string
	for _, l := range strings.SplitAfter(private, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "(private ") {
			public = append(public, l)
		}
	}
	if got := strings.Join(public, ""); got != plain {
		t.Errorf("--show-private without its private lines differs from the default transcript:\n--- default:\n%s--- stripped:\n%s", plain, got)
	}
}

func TestRecordAndReplay(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "match.jsonl")

	played := mustRun(t, nil, withArgs(longMatch, "--json", "--record", file)...)
	recorded, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(recorded) != played.stdout {
		t.Fatalf("--record wrote other lines than --json printed\n--- file:\n%s--- stdout:\n%s", recorded, played.stdout)
	}
	checkRecord(t, decodeRecord(t, string(recorded)), 2)

	if got := mustRun(t, nil, "replay", file, "--json").stdout; got != string(recorded) {
		t.Errorf("replay --json does not reproduce the file\n--- file:\n%s--- replay:\n%s", recorded, got)
	}
	for _, flags := range [][]string{nil, {"--show-private"}} {
		live := mustRun(t, nil, withArgs(longMatch, flags...)...).stdout
		replayed := mustRun(t, nil, withArgs([]string{"replay", file}, flags...)...).stdout
		if replayed != live {
			t.Errorf("replay %v prints another transcript than play %v\n--- play:\n%s--- replay:\n%s", flags, flags, live, replayed)
		}
	}
}

// TestReplayFromTurn continues a recorded match from turn fromTurn with other agents.
func TestReplayFromTurn(t *testing.T) {
	t.Parallel()
	const fromTurn = 4
	dir := t.TempDir()
	file := filepath.Join(dir, "match.jsonl")
	mustRun(t, nil, withArgs(longMatch, "--record", file)...)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	orig := decodeRecord(t, string(b))
	origStarted, _ := checkRecord(t, orig, 2)
	kept := actionsBefore(orig, fromTurn)
	if len(kept) < fromTurn-1 {
		t.Fatalf("the original has %d moves before turn %d, want %d (change longMatch)", len(kept), fromTurn, fromTurn-1)
	}

	replay := []string{"replay", file, "--from-turn", strconv.Itoa(fromTurn), "--agent", "builtin:fair", "--agent", "builtin:random?seed=3", "--json"}
	first := mustRun(t, nil, replay...)
	if again := mustRun(t, nil, replay...); again.stdout != first.stdout {
		t.Errorf("the same counterfactual run twice differs\n--- first:\n%s--- second:\n%s", first.stdout, again.stdout)
	}

	evs := decodeRecord(t, first.stdout)
	started, _ := checkRecord(t, evs, 2)
	if evs[0].GetMatchId() == orig[0].GetMatchId() {
		t.Errorf("the counterfactual has the original's match id %q", evs[0].GetMatchId())
	}
	if started.GetSeed() != origStarted.GetSeed() || !proto.Equal(started.GetParams(), origStarted.GetParams()) {
		t.Errorf("the counterfactual's seed and parameters (%d, %v) differ from the original's (%d, %v)",
			started.GetSeed(), started.GetParams(), origStarted.GetSeed(), origStarted.GetParams())
	}
	for i, want := range []string{"fair", "random"} {
		if got := started.GetSeats()[i].GetAgent().GetName(); got != want {
			t.Errorf("seat %d is played by %q, want the new agent %q", i, got, want)
		}
	}
	got := actionsBefore(evs, fromTurn)
	if len(got) != len(kept) {
		t.Fatalf("the counterfactual has %d moves before turn %d, the original %d", len(got), fromTurn, len(kept))
	}
	for i := range kept {
		if got[i].GetSeat() != kept[i].GetSeat() || !proto.Equal(got[i].GetAction(), kept[i].GetAction()) {
			t.Errorf("move %d before turn %d:\n got  %v\n want %v (the original's)", i+1, fromTurn, got[i], kept[i])
		}
	}
	after := 0
	for _, ev := range evs {
		if ev.GetActionTaken() != nil && ev.GetTurn() >= fromTurn {
			after++
		}
	}
	if after == 0 {
		t.Errorf("the new agents made no move from turn %d on:\n%s", fromTurn, first.stdout)
	}
}

// actionsBefore returns the actions taken before turn.
func actionsBefore(evs []*eventsv1.MatchEvent, turn int32) []*eventsv1.ActionTaken {
	var out []*eventsv1.ActionTaken
	for _, ev := range evs {
		if a := ev.GetActionTaken(); a != nil && ev.GetTurn() < turn {
			out = append(out, a)
		}
	}
	return out
}
