package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natstest"
	"github.com/parley-arena/parley/internal/repodata"
	"github.com/parley-arena/parley/referee/families"
	"github.com/parley-arena/parley/services/analytics/metrics"
	dondmetrics "github.com/parley-arena/parley/services/analytics/metrics/dealornodeal"
	"github.com/parley-arena/parley/services/analytics/metrics/standard"
)

// fromNATS reads a match back from the NATS server at url and checks it is the --json record.
func fromNATS(t *testing.T, url string, evs []*eventsv1.MatchEvent) {
	t.Helper()
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
}

// replays applies the record's actions to fresh rules and compares the outcome.
func replays(t *testing.T, evs []*eventsv1.MatchEvent) {
	t.Helper()
	started, ended := evs[0].GetMatchStarted(), evs[len(evs)-1].GetMatchEnded()
	g, err := families.New().Lookup(started.GetGame())
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.NewState(started.GetParams(), started.GetSeed())
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
	if got, want := st.Outcome(), ended.GetOutcome(); len(st.ToMove()) != 0 || !slices.Equal(got.GetPayoffs(), want.GetPayoffs()) || got.GetCause() != want.GetCause() {
		t.Errorf("replayed outcome %v, recorded %v", got, want)
	}
}

// rowOf computes the match's metrics from its record.
func rowOf(t *testing.T, evs []*eventsv1.MatchEvent) metrics.Row {
	t.Helper()
	row, err := metrics.NewRow(evs, standard.New())
	if err != nil {
		t.Fatal(err)
	}
	return row
}

func want(t *testing.T, row metrics.Row, name string, seat int32, v float64) {
	t.Helper()
	if got, ok := row.Value(name, seat); !ok || got != v {
		t.Errorf("%s (seat %d) = %v (present %v), want %v", name, seat, got, ok, v)
	}
}

// TestMatrixEndToEnd plays the stag hunt with two talk rounds between equilibrium agents over
// gRPC with events on an external NATS server: the talk, both choices on one turn, the payoffs,
// the metrics from the record; then a user's own game file.
func TestMatrixEndToEnd(t *testing.T) {
	t.Parallel()
	url := natstest.Start(t).URL
	agents := []string{"--agent", "builtin:equilibrium", "--agent", "builtin:equilibrium"}
	out := mustRun(t, nil, withArgs([]string{"play", "matrix", "--param", "game=stag_hunt", "--param", "talk_rounds=2", "--seed", "5", "--nats", url, "--json"}, agents...)...)
	evs := decodeRecord(t, out.stdout)
	started, ended := checkRecord(t, evs, 2)
	if started.GetParams().GetMatrix().GetTable().GetTitle() != "Stag hunt" || started.GetSeats()[0].GetName() != "Alice" || started.GetSeats()[1].GetAgent().GetName() != "equilibrium" {
		t.Errorf("match_started %v", started)
	}
	var phases []string
	choices := map[int32][]string{}
	for _, ev := range evs {
		if p := ev.GetPhaseStarted(); p != nil {
			phases = append(phases, p.GetPhase())
		}
		if a := ev.GetActionTaken(); a != nil {
			if c := a.GetAction().GetMove().GetChoose(); c != nil {
				choices[ev.GetTurn()] = append(choices[ev.GetTurn()], c.GetOption())
			}
		}
	}
	// Alice announces (stag, stag) and ends the talk at once; both then choose on one turn.
	if !slices.Equal(phases, []string{"talk", "choice"}) || len(choices) != 1 || !slices.Equal(choices[2], []string{"stag", "stag"}) {
		t.Errorf("phases %v, choices by turn %v", phases, choices)
	}
	o := ended.GetOutcome()
	if o.GetCause() != matchv1.EndCause_END_CAUSE_COMPLETED || !slices.Equal(o.GetPayoffs(), []float64{3, 3}) {
		t.Errorf("outcome %v", o)
	}
	fromNATS(t, url, evs)
	replays(t, evs)
	row := rowOf(t, evs)
	want(t, row, "equilibrium", metrics.WholeMatch, 1)
	want(t, row, "po_equilibrium", metrics.WholeMatch, 1)
	want(t, row, "profile:stag,stag", metrics.WholeMatch, 1)

	// The transcript (embedded NATS) shows the talk and the simultaneous choices.
	tr := mustRun(t, nil, withArgs([]string{"play", "matrix", "--param", "game=stag_hunt", "--param", "talk_rounds=2", "--seed", "5"}, agents...)...).stdout
	for _, line := range []string{"Alice passes", "I will play stag", "Turn 2  Alice chooses stag", "Turn 2  Bob chooses stag", "Payoffs: Alice 3, Bob 3"} {
		if !strings.Contains(tr, line) {
			t.Errorf("transcript lacks %q:\n%s", line, tr)
		}
	}

	// A user's own game file, played by path.
	file := filepath.Join(t.TempDir(), "coordination.yaml")
	if err := os.WriteFile(file, []byte("title: Meeting\nrows: [cafe, park]\ncols: [cafe, park]\npayoffs:\n  - [[\"5/2\", 2], [0, 0]]\n  - [[0, 0], [1, 3]]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	evs = decodeRecord(t, mustRun(t, nil, withArgs([]string{"play", "matrix", "--param", "file=" + file, "--seed", "1", "--json"}, agents...)...).stdout)
	started, ended = checkRecord(t, evs, 2)
	p := started.GetParams().GetMatrix()
	// Both equilibria total 4.5 and 4; the agents pick (cafe, cafe), paying 5/2 and 2.
	if p.GetFile() != file || p.GetTable().GetTitle() != "Meeting" || !slices.Equal(ended.GetOutcome().GetPayoffs(), []float64{2.5, 2}) {
		t.Errorf("params %v, outcome %v", p, ended.GetOutcome())
	}
	replays(t, evs)
}

// TestSequentialEndToEnd plays trigame with talk before every move between equilibrium agents
// over gRPC and NATS: the subgame-perfect path a2, b1, a2 and (4, 10).
func TestSequentialEndToEnd(t *testing.T) {
	t.Parallel()
	url := natstest.Start(t).URL
	out := mustRun(t, nil, "play", "sequential", "--param", "game=trigame", "--param", "talk_rounds=1", "--param", "talk_opener=1",
		"--agent", "builtin:equilibrium", "--agent", "builtin:equilibrium", "--seed", "3", "--nats", url, "--json")
	evs := decodeRecord(t, out.stdout)
	_, ended := checkRecord(t, evs, 2)
	var path []string
	talk := 0
	for _, ev := range evs {
		a := ev.GetActionTaken()
		switch {
		case a.GetAction().GetMove().GetChoose() != nil:
			path = append(path, a.GetAction().GetMove().GetChoose().GetOption())
		case a.GetAction().GetMove().GetPass() != nil:
			talk++
			if a.GetSeat() != 1 {
				t.Errorf("turn %d: seat %d opened the talk, want Bob", ev.GetTurn(), a.GetSeat())
			}
		}
	}
	if !slices.Equal(path, []string{"a2", "b1", "a2"}) || talk != 3 || !slices.Equal(ended.GetOutcome().GetPayoffs(), []float64{4, 10}) {
		t.Errorf("path %v after %d talks, outcome %v", path, talk, ended.GetOutcome())
	}
	fromNATS(t, url, evs)
	replays(t, evs)
	row := rowOf(t, evs)
	want(t, row, "equilibrium", metrics.WholeMatch, 1)
	want(t, row, "nash_outcome", metrics.WholeMatch, 1)
}

// TestDealOrNoDealEndToEnd plays Deal or No Deal from a corpus file (the repository's sample,
// then one of the seed's hardest datapoints when the public corpus is beside the repository)
// between bayes agents, and bayes against greedy, over gRPC and NATS, and computes the metrics
// (estimation included) from the record read back from NATS.
func TestDealOrNoDealEndToEnd(t *testing.T) {
	t.Parallel()
	url := natstest.Start(t).URL
	root := repoRoot(t)
	sample := filepath.Join(root, "referee", "games", "dealornodeal", "corpus", "testdata", "sample_tagged.txt")
	runs := []struct {
		corpus, datapoint string
		agents            []string
	}{
		{sample, "1", []string{"builtin:bayes", "builtin:bayes"}},
		{sample, "2", []string{"builtin:bayes", "builtin:dondgreedy"}},
	}
	runs = append(runs, struct {
		corpus, datapoint string
		agents            []string
	}{repodata.Path(t, "dealornodeal", "sampled_50_deal_no_deal.txt"), "3", []string{"builtin:bayes", "builtin:bayes"}})
	for _, r := range runs {
		out := mustRun(t, nil, "play", "dealornodeal", "--param", "corpus="+r.corpus, "--param", "datapoint="+r.datapoint,
			"--agent", r.agents[0], "--agent", r.agents[1], "--seed", "9", "--nats", url, "--json")
		evs := decodeRecord(t, out.stdout)
		started, ended := checkRecord(t, evs, 2)
		p := started.GetParams().GetDealornodeal()
		if !strings.Contains(p.GetSource(), "dialogue "+r.datapoint) || len(p.GetCounts()) != 3 {
			t.Errorf("params %v", p)
		}
		if !ended.GetOutcome().GetAgreement() {
			t.Errorf("%s %s: no agreement: %v", filepath.Base(r.corpus), r.agents, ended.GetOutcome())
		}
		fromNATS(t, url, evs)
		replays(t, evs)
		row := rowOf(t, evs)
		want(t, row, dondmetrics.ValueEF, metrics.WholeMatch, 1)
		for seat, a := range r.agents {
			_, has := row.Value(dondmetrics.ValueEstPrecision, int32(seat))
			if has != (a == "builtin:bayes") {
				t.Errorf("%s seat %d (%s): estimation values present: %v", filepath.Base(r.corpus), seat, a, has)
			}
		}
		t.Logf("%s %s: %v", filepath.Base(r.corpus), r.agents, row.Values)
	}
}

// TestAnalyzeEquilibria runs `parley analyze equilibria` on shipped games and a file.
func TestAnalyzeEquilibria(t *testing.T) {
	t.Parallel()
	out := mustRun(t, nil, "analyze", "equilibria", "stag_hunt", "stag_hunt_2", "--compare").stdout
	for _, line := range []string{
		"Pure Nash equilibria: 2",
		"(hare, hare) paying (1, 1): not Pareto-optimal, dominated by (stag, stag)",
		"Alice: x3 = stag 1/103, hare 102/103",
		"Compare (actions matched by name): the same pure-equilibrium set: stag_hunt has {(stag, stag), (hare, hare)}, stag_hunt_2 has {(stag, stag), (hare, hare)}.",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	out = mustRun(t, nil, "analyze", "equilibria", "monopoly").stdout
	for _, line := range []string{
		"Subgame-perfect path (backward induction): Alice a2 (enter), Bob b1 (accommodate) -> (2, 1)",
		"Alice a1 (stay out) -> (0, 2) (not subgame-perfect)",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	out = mustRun(t, nil, "analyze", "equilibria", "golden_balls", "--scale", "27").stdout
	if !strings.Contains(out, "jackpot 27") || !strings.Contains(out, "split  27/2, 27/2") {
		t.Errorf("golden balls at 27:\n%s", out)
	}
	if r := runParley(t, nil, "analyze", "equilibria", "prisoners_dilemma", "trigame", "--compare"); r.code == 0 {
		t.Errorf("--compare with a tree succeeded:\n%s", r)
	}
	if r := runParley(t, nil, "analyze", "equilibria", "no_such_game"); r.code == 0 || !strings.Contains(r.stderr, "neither a file nor a shipped game") {
		t.Errorf("an unknown game:\n%s", r)
	}
}

// TestAnalyzeDond runs `parley analyze dond` on the sample (rows, --write, --play) and, when
// the public corpus is there, on the seed's hardest test datapoints.
func TestAnalyzeDond(t *testing.T) {
	t.Parallel()
	root := repoRoot(t)
	sample := filepath.Join(root, "referee", "games", "dealornodeal", "corpus", "testdata", "sample_tagged.txt")
	written := filepath.Join(t.TempDir(), "selected.txt")
	out := mustRun(t, nil, "analyze", "dond", "--data", sample, "--write", written, "--play", "builtin:bayes,builtin:bayes").stdout
	for _, line := range []string{
		"7 lines, 5 dialogues (2 seen from both sides, 3 from one side only); outcomes of the dialogues: 2 deal, 1 disagree, 1 no agreement, 1 disconnect.",
		"Wrote 5 datapoints to " + written,
		"bayes vs bayes",
		"Belief estimation",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
	// The written selection reads back as the same five datapoints.
	again := mustRun(t, nil, "analyze", "dond", "--data", written).stdout
	human := func(s string) string {
		for _, l := range strings.Split(s, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), "Human") {
				return strings.Join(strings.Fields(l), " ")
			}
		}
		return ""
	}
	if human(out) == "" || human(out) != human(again) {
		t.Errorf("Human rows differ:\n%s\n%s", human(out), human(again))
	}
	test := repodata.Path(t, "dealornodeal", "test.txt")
	out = mustRun(t, nil, "analyze", "dond", "--data", test, "--hardest", "50", "--seed-lines", "--require-ef").stdout
	for _, line := range []string{
		"248 left after the seed's filters; the 50 hardest: the first in file order with value distance at most 4.",
		"Without any envy-free allocation: 6, left out (--require-ef); 44 datapoints remain.",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("output lacks %q:\n%s", line, out)
		}
	}
}
