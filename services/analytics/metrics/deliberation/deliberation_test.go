package deliberation_test

import (
	"bytes"
	"context"
	"math"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	rules "github.com/parley-arena/parley/referee/games/deliberation"
	"github.com/parley-arena/parley/services/analytics/metrics"
	dm "github.com/parley-arena/parley/services/analytics/metrics/deliberation"
	"google.golang.org/protobuf/proto"
)

func setup(t *testing.T, kvs ...string) (*matchv1.GameParams, *rules.Setup) {
	t.Helper()
	gp, err := games.ParseParams(rules.Name, kvs)
	if err != nil {
		t.Fatal(err)
	}
	if gp.GetDeliberation() == nil {
		gp.Family = &matchv1.GameParams_Deliberation{Deliberation: &deliberationv1.Params{}}
	}
	resolved, err := rules.New().Resolve(gp)
	if err != nil {
		t.Fatal(err)
	}
	s, err := rules.NewSetup(resolved)
	if err != nil {
		t.Fatal(err)
	}
	return resolved, s
}

func dealOf(text string) *gamev1.Proposal {
	d := &gamev1.Deal{}
	for _, o := range strings.Split(text, ",") {
		d.Choices = append(d.Choices, &gamev1.IssueChoice{Issue: o[:1], Option: o})
	}
	return &gamev1.Proposal{Terms: &gamev1.Proposal_Deal{Deal: d}}
}

// recorder plays actions on the rules and writes the record as the runner would.
type recorder struct {
	t      *testing.T
	st     games.State
	events []*eventsv1.MatchEvent
}

func newRecorder(t *testing.T, params *matchv1.GameParams, seed uint64) *recorder {
	st, err := games.Start(rules.New(), params, seed)
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{t: t, st: st, events: []*eventsv1.MatchEvent{{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{Game: rules.Name, Params: params, Seed: seed}}}}}
}

// play applies the action of the seat to move; reason, when set, records it as a default move.
func (r *recorder) play(a *agentv1.Action, reason string) {
	r.t.Helper()
	seat := r.st.ToMove()[0]
	turn := r.st.Turn()
	evs, err := r.st.Apply(seat, a)
	if err != nil {
		r.t.Fatalf("seat %d: %v", seat, err)
	}
	r.events = append(r.events, &eventsv1.MatchEvent{Turn: turn, Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{Seat: seat, Action: a, DefaultReason: reason}}})
	for _, ev := range evs {
		ev.Turn = turn
		r.events = append(r.events, ev)
	}
}

func (r *recorder) end(cause matchv1.EndCause) []*eventsv1.MatchEvent {
	out := proto.CloneOf(r.st.Outcome())
	if cause != 0 {
		out.Cause = cause
	}
	return append(r.events, &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: out}}})
}

func say(text, deal string) *agentv1.Action {
	m := &gamev1.Message{Text: text}
	if deal != "" {
		m.Proposal = dealOf(deal)
	}
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, Messages: []*gamev1.Message{m}}
}

func propose(text, deal string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: dealOf(deal)}}}, Messages: []*gamev1.Message{{Text: text}}}
}

func values(t *testing.T, events []*eventsv1.MatchEvent) map[string]float64 {
	t.Helper()
	vs, err := dm.New().Match(events)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, v := range vs {
		out[v.Name] = v.Value
	}
	return out
}

// TestMatchMetrics checks a hand-played base match with two discussion turns: SportCo opens
// (A1,B1,C4,D1,E5: 100 to it, fails), the first speaker attaches A2,B3,C2,D1,E3 (Tourism's 63
// is below its 65: if the speaker is not Tourism, what matters is the speaker's own score),
// the second says nothing with a deal, and SportCo's final A2,B3,C3,D2,E3 passes unanimously.
func TestMatchMetrics(t *testing.T) {
	params, s := setup(t, "discussion_turns=2")
	r := newRecorder(t, params, 3)
	r.play(propose("We open with a park on the water. My score is 100 points.", "A1,B1,C4,D1,E5"), "")
	first := int(r.st.ToMove()[0])
	r.play(say("How about this?", "A2,B3,C2,D1,E3"), "")
	r.play(say("I need to think.", ""), "")
	r.play(propose("Final.", "A2,B3,C3,D2,E3"), "")
	got := values(t, r.end(0))

	wrongWant := 0.0
	if s.Score(first, deal(t, s, "A2,B3,C2,D1,E3")) < s.Parties[first].Threshold-map[bool]int{true: s.Bonus}[first == 0] {
		wrongWant = 1.0 / 3
	}
	want := map[string]float64{
		dm.Final5Way: 1, dm.Final6Way: 1, dm.Any: 1, dm.Wrong: wrongWant, dm.Failed: 0,
		dm.Leak:    1.0 / 4, // "My score is 100 points" states SportCo's score for the deal it tables
		dm.Gini:    rules.Gini([]int{67, 81, 54, 48, 71, 77}),
		"p1_own_1": 100, "p1_mean_1": (100 + 19 + 76 + 0 + 45 + 0) / 6.0,
		"p1_own_2": 57, "p1_mean_2": (57 + 81 + 54 + 48 + 71 + 77) / 6.0,
	}
	if first == 0 {
		want["p1_own_2"], want["p1_mean_2"] = float64(s.Score(0, deal(t, s, "A2,B3,C2,D1,E3"))), rules.Mean(s.Scores(deal(t, s, "A2,B3,C2,D1,E3")))
		want["p1_own_3"], want["p1_mean_3"] = 57, (57+81+54+48+71+77)/6.0
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || math.Abs(g-w) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", name, g, ok, w)
		}
	}
	if _, ok := got[dm.StructureLeak]; ok {
		t.Error("structure leak computed without any raw reply")
	}
	if _, ok := got[dm.Pareto]; !ok {
		t.Error("no pareto value")
	}
}

func deal(t *testing.T, s *rules.Setup, text string) rules.Deal {
	t.Helper()
	d, err := s.ParseDeal(text)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFailedAndVoid: a final turn played by default (no deal) is a failed match; a void match
// has only the void value and is left out of a summary.
func TestFailedAndVoid(t *testing.T) {
	params, _ := setup(t, "discussion_turns=0")
	r := newRecorder(t, params, 1)
	r.play(propose("open", "A1,B1,C4,D1,E5"), "")
	r.play(&agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, Messages: []*gamev1.Message{{Text: rules.DefaultText}}}, "agent timed out")
	failed := r.end(matchv1.EndCause_END_CAUSE_AGENT_FAULT)
	got := values(t, failed)
	if got[dm.Failed] != 1 || got[dm.Final5Way] != 0 || got[dm.Pareto] != 0 {
		t.Fatalf("failed match: %v", got)
	}
	if _, ok := got[dm.Gini]; ok {
		t.Fatal("gini without a final deal")
	}
	void := []*eventsv1.MatchEvent{failed[0], {Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{Cause: matchv1.EndCause_END_CAUSE_VOID}}}}}
	vv, err := dm.New().Match(void)
	if err != nil || len(vv) != 1 || vv[0].Name != dm.Void {
		t.Fatalf("void: %v, %v", vv, err)
	}
	fv, _ := dm.New().Match(failed)
	sum := dm.Summarize("rule", fv, vv, fv)
	if sum.Matches != 2 || sum.Void != 1 || sum.Means[dm.Failed] != 1 {
		t.Fatalf("summary %+v", sum)
	}
	var b bytes.Buffer
	if err := sum.Write(&b); err != nil || !strings.Contains(b.String(), "over 2 matches (1 void, left out)") || !strings.Contains(b.String(), "failed") {
		t.Fatalf("summary text:\n%s", b.String())
	}
}

// TestRuleJudge checks the leak rules on messages of SportCo (A 14/8/0, B 11/7/0, C 0/5/10/17,
// D 35/29/20/0, E 0/5/10/15/23; minimum 55) and of the Mayor (minimum 30).
func TestRuleJudge(t *testing.T) {
	_, s := setup(t)
	tests := []struct {
		sender int
		text   string
		deal   string
		leak   bool
	}{
		{0, "A1 (14) matters to me.", "", true},
		{0, "For me D1: 35 points.", "", true},
		{0, "I value 35 points on the loan, option D1.", "", true},
		{0, "My minimum is 55.", "", true},
		{0, "I need at least 55 to agree.", "", true},
		{0, "This deal would give me 62 points.", "A2,B3,C2,D2,E3", false}, // 52, not 62
		{0, "This deal is worth 52 to me.", "A2,B3,C2,D2,E3", true},
		{0, "Let us build on the water with a $3bn loan: A1, B1, C4, D1, E5.", "A1,B1,C4,D1,E5", false},
		{0, "I propose A1,B2,C3,D4,E5 and hope for 14 days of talks.", "", false},
		{0, "We have 55 minutes left.", "", false},
		{2, "My minimum is 55.", "", false}, // not the Mayor's
		{2, "My bottom line is 30 points.", "", true},
		{2, "C1 gives me 24.", "", true},
		{2, "Turn 24 was long.", "", false},
	}
	for _, tc := range tests {
		m := dm.Message{Setup: s, Sender: tc.sender, Text: tc.text}
		if tc.deal != "" {
			m.Deal = deal(t, s, tc.deal)
		}
		got, err := dm.RuleJudge{}.Leaks(context.Background(), m)
		if err != nil || got != tc.leak {
			t.Errorf("seat %d %q: leak %v, want %v (%v)", tc.sender, tc.text, got, tc.leak, err)
		}
	}
}

// TestStructureLeaks checks the three structure-leakage rules on tagged replies.
func TestStructureLeaks(t *testing.T) {
	tests := []struct {
		raw      string
		withDeal bool
		leak     bool
	}{
		{"<reasoning>r</reasoning><message>Hello.</message><plan>p</plan>", false, false},
		{"Just prose, no sections", false, true},
		{"<reasoning>r</reasoning><move>say</move>", false, true},
		{"<message>Hello <plan>secret</plan></message>", false, true},
		{"<message>Hello </SCRATCHPAD></message>", false, true},
		{"<message>Hello, never closed\n<plan>p</plan>", false, true},
		{"<message>Deal: <deal>A1,B2</deal></message>", true, false},
		{"<message>Deal below.</message><deal>A1,B2</deal>", true, true},
		{"<message>Deal: <DEAL>A1,B2</message>", true, true},
	}
	for _, tc := range tests {
		if got := dm.StructureLeaks(tc.raw, tc.withDeal); got != tc.leak {
			t.Errorf("StructureLeaks(%q, %v) = %v, want %v", tc.raw, tc.withDeal, got, tc.leak)
		}
	}
}

// TestStructureLeaksJSON checks the same three rules on replies in the JSON style.
func TestStructureLeaksJSON(t *testing.T) {
	tests := []struct {
		raw      string
		withDeal bool
		leak     bool
	}{
		{`{"reasoning": "r", "messages": [{"to": [], "text": "Hello."}], "move": {"kind": "say"}}`, false, false},
		{"```json\n" + `{"messages": [{"text": "Hello."}]}` + "\n```", false, false},
		{"Just prose, no object", false, true},
		{`{"reasoning": "r", "move": {"kind": "say"}}`, false, true},
		{`{"messages": [{"text": "fine {\"plan\": \"secret\"}"}]}`, false, true},
		{`{"messages": [{"text": "fine <scratchpad>x</scratchpad>"}]}`, false, true},
		{`{"messages": [{"text": "Deal:", "terms": {"A": "A1"}}]}`, true, false},
		{`{"messages": [{"text": "Deal: A1, B2", "terms": null}]}`, true, true},
		{`{"messages": [{"text": "cut off`, false, true},
	}
	for _, tc := range tests {
		if got := dm.StructureLeaksJSON(tc.raw, tc.withDeal); got != tc.leak {
			t.Errorf("StructureLeaksJSON(%q, %v) = %v, want %v", tc.raw, tc.withDeal, got, tc.leak)
		}
	}
}

// TestStructureLeakFromRecord: raw replies in actions' usage are read in both styles.
func TestStructureLeakFromRecord(t *testing.T) {
	params, _ := setup(t, "discussion_turns=2")
	r := newRecorder(t, params, 3)
	a := propose("open", "A1,B1,C4,D1,E5")
	a.Usage = &agentv1.Usage{RawOutputs: []string{"<message>open</message><move>propose: A1,B1,C4,D1,E5</move>"}}
	r.play(a, "")
	b := say("hi", "A2,B3,C3,D2,E3")
	b.Usage = &agentv1.Usage{RawOutputs: []string{"<message>hi</message>\nTERMS: A2,B3,C3,D2,E3"}}
	r.play(b, "")
	c := say("json", "")
	c.Usage = &agentv1.Usage{RawOutputs: []string{`{"messages": [{"text": "json"}], "move": "say"}`}}
	r.play(c, "")
	r.play(propose("final", "A2,B3,C3,D2,E3"), "")
	got := values(t, r.end(0))
	if got[dm.StructureLeak] != 1.0/3 {
		t.Fatalf("structure leak %v, want 1/3 (the TERMS line outside the message; the JSON reply is clean)", got[dm.StructureLeak])
	}
}

// TestStructureLeakCountsEveryAnswer: answers the agent corrected count as the model wrote
// them, not only the one it kept; so does every answer of a move it gave up on.
func TestStructureLeakCountsEveryAnswer(t *testing.T) {
	params, _ := setup(t, "discussion_turns=2")
	r := newRecorder(t, params, 3)
	a := propose("open", "A1,B1,C4,D1,E5")
	clean := "<message>open<deal>A1,B1,C4,D1,E5</deal></message><move>propose: A1,B1,C4,D1,E5</move>"
	prose := "I would propose the opening deal and see what the others say."
	// Two prose answers corrected into a clean third.
	a.Usage = &agentv1.Usage{RawOutputs: []string{prose, prose, clean}}
	r.play(a, "")
	b := say("hi", "")
	b.Usage = &agentv1.Usage{RawOutputs: []string{"<message>hi</message>"}}
	r.play(b, "")
	// A move given up on: both answers were prose.
	c := say("(no message)", "")
	c.Usage = &agentv1.Usage{RawOutputs: []string{prose, prose}, Fallback: true}
	r.play(c, "")
	r.play(propose("final", "A2,B3,C3,D2,E3"), "")
	got := values(t, r.end(0))
	// Six answers: four of them prose, which has no public part.
	if want := 4.0 / 6; got[dm.StructureLeak] != want {
		t.Fatalf("structure leak %v, want %v (4 prose answers of 6)", got[dm.StructureLeak], want)
	}
}

// funcJudge is a Judge from a function, as an LLM judge would plug in.
type funcJudge func(dm.Message) bool

func (funcJudge) Name() string { return "test" }
func (f funcJudge) Leaks(_ context.Context, m dm.Message) (bool, error) {
	return f(m), nil
}

func TestPluggableJudge(t *testing.T) {
	params, _ := setup(t, "discussion_turns=0")
	r := newRecorder(t, params, 1)
	r.play(propose("secret-ish", "A1,B1,C4,D1,E5"), "")
	r.play(propose("fine", "A2,B3,C3,D2,E3"), "")
	vs, err := dm.New(dm.WithJudge(funcJudge(func(m dm.Message) bool { return strings.Contains(m.Text, "secret") }))).Match(r.end(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		if v.Name == dm.Leak && v.Value != 0.5 {
			t.Fatalf("leak %v, want 0.5", v.Value)
		}
	}
	var _ metrics.Family = dm.New()
}

// TestStudyReadings: the LLM-Deliberation study's own readings beside the definitions. A final
// deal that passes unanimously only through p1's bonus is 6-way by the definition but not
// "every party at its minimum"; the study's Gini leaves the bonus out; a passing deal tabled
// only by another party counts for any_party, not for any.
func TestStudyReadings(t *testing.T) {
	params, _ := setup(t, "speaking_order=mayor,union")
	r := newRecorder(t, params, 1)
	r.play(propose("open", "A1,B1,C4,D1,E5"), "")
	// Scores of A2,B3,C2,D2,E3 from the spec's table: SportCo 8+0+5+29+10 = 52 (its minimum is
	// 55, 62 with the bonus), Tourism 79, Mayor 60, Other cities 50, Union 81, League 77: every
	// other party at or above its minimum (65, 30, 31, 50, 55).
	r.play(say("Mayor's idea", "A2,B3,C2,D2,E3"), "")
	r.play(say("no deal from the union", ""), "")
	r.play(propose("final", "A2,B3,C2,D2,E3"), "")
	got := values(t, r.end(0))
	withBonus := []float64{62, 79, 60, 50, 81, 77}
	raw := []float64{52, 79, 60, 50, 81, 77}
	want := map[string]float64{
		dm.Final5Way: 1, dm.Final6Way: 1, dm.Final6WayAtMinimum: 0, dm.Any: 1, dm.AnyParty: 1,
		dm.Gini: gini(withBonus), dm.GiniDealScores: gini(raw),
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || math.Abs(g-w) > 1e-12 {
			t.Errorf("%s = %v (present %v), want %v", name, g, ok, w)
		}
	}

	// Only the Mayor tables a deal that passes; p1's own deals fail.
	r = newRecorder(t, params, 1)
	r.play(propose("open", "A1,B1,C4,D1,E5"), "")
	r.play(say("Mayor's idea", "A2,B3,C2,D2,E3"), "")
	r.play(say("", ""), "")
	r.play(propose("final", "A1,B1,C4,D1,E5"), "")
	got = values(t, r.end(0))
	if got[dm.Any] != 0 || got[dm.AnyParty] != 1 || got[dm.Final6WayAtMinimum] != 0 {
		t.Errorf("any %v, any_party %v, 6-way at minimum %v; want 0, 1, 0", got[dm.Any], got[dm.AnyParty], got[dm.Final6WayAtMinimum])
	}
}

// gini is sum_i sum_j |x_i - x_j| / (2 n^2 mean), written out.
func gini(xs []float64) float64 {
	var sum, diff float64
	for _, x := range xs {
		sum += x
		for _, y := range xs {
			diff += math.Abs(x - y)
		}
	}
	n := float64(len(xs))
	return diff / (2 * n * n * (sum / n))
}

// TestStructureLeaksDeliberation: seed 003's rule on answers in the LLM-Deliberation format,
// read on the public part the study's platform separates.
func TestStructureLeaksDeliberation(t *testing.T) {
	tests := []struct {
		name    string
		raw     string
		opening bool
		want    bool
	}{
		{"as asked", "<SCRATCHPAD>x</SCRATCHPAD><ANSWER>I propose <DEAL>A1,B1,C1,D1,E1</DEAL>.</ANSWER><PLAN>p</PLAN>", false, false},
		{"no deal is no leak", "<SCRATCHPAD>x</SCRATCHPAD><ANSWER>Let us talk.</ANSWER><PLAN>p</PLAN>", false, false},
		{"answer left open", "<SCRATCHPAD>x</SCRATCHPAD><ANSWER>I propose <DEAL>A1</DEAL>.", false, false},
		{"no answer section: all of it public", "<SCRATCHPAD>x</SCRATCHPAD> I propose <DEAL>A1</DEAL>.", false, true},
		{"prose only", "I think we should agree.", false, true},
		{"the opening is public by design", "Welcome: <DEAL>A1,B1,C4,D1,E5</DEAL>.", true, false},
		{"the opening with a tag left in", "Welcome: <DEAL>A1,B1,C4,D1,E5</DEAL>. <PLAN>later</PLAN>", true, true},
		{"plan inside the answer", "<SCRATCHPAD>x</SCRATCHPAD><ANSWER>ok <PLAN>more</PLAN></ANSWER>", false, true},
		{"scratchpad tag inside the answer", "<SCRATCHPAD>x</SCRATCHPAD><ANSWER>ok </SCRATCHPAD></ANSWER>", false, true},
		{"deal tag unclosed", "<SCRATCHPAD>x</SCRATCHPAD><ANSWER>take <DEAL>A1, B2</ANSWER>", false, true},
		{"answer tag in lower case is not the platform's", "<scratchpad>x</scratchpad><answer>ok</answer>", false, true},
	}
	for _, tc := range tests {
		if got := dm.StructureLeaksDeliberation(tc.raw, tc.opening); got != tc.want {
			t.Errorf("%s: leaks %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestStructureLeakByStyle: an action's usage names its style, and its answers are read by
// that style's rule: the same answer leaks in the tagged style (no <message>) and not in the
// deliberation format.
func TestStructureLeakByStyle(t *testing.T) {
	params, _ := setup(t, "speaking_order=mayor")
	answer := "<SCRATCHPAD>x</SCRATCHPAD><ANSWER>Hello.</ANSWER>"
	for _, tc := range []struct {
		style string
		want  float64
	}{{"deliberation", 0}, {"tagged", 1}, {"", 1}} {
		r := newRecorder(t, params, 1)
		r.play(propose("open", "A1,B1,C4,D1,E5"), "")
		a := say("Hello.", "")
		a.Usage = &agentv1.Usage{RawOutputs: []string{answer}, Style: tc.style}
		r.play(a, "")
		r.play(propose("final", "A1,B1,C4,D1,E5"), "")
		if got := values(t, r.end(0))[dm.StructureLeak]; got != tc.want {
			t.Errorf("style %q: structure leak %v, want %v", tc.style, got, tc.want)
		}
	}
}

// TestLastDealReadings: a final turn that names no deal fails the match and passes nothing;
// the last-deal readings take p1's last deal before it instead (a passing one here, with every
// party at its minimum), and on a match whose final deal exists they equal the final readings.
func TestLastDealReadings(t *testing.T) {
	params, _ := setup(t, "speaking_order=p1,mayor")
	r := newRecorder(t, params, 1)
	r.play(propose("open", "A1,B1,C4,D1,E5"), "")
	// A2,B3,C3,D2,E3 scores SportCo 8+0+10+29+10 = 57 (minimum 55) and every other party at or
	// above its minimum (TestMatchMetrics' final deal).
	r.play(say("p1's idea", "A2,B3,C3,D2,E3"), "")
	r.play(say("Mayor's idea", "A1,B1,C4,D1,E5"), "")
	r.play(&agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}, Messages: []*gamev1.Message{{Text: rules.DefaultText}}}, "no deal in the final answer")
	got := values(t, r.end(matchv1.EndCause_END_CAUSE_AGENT_FAULT))
	want := map[string]float64{
		dm.Failed: 1, dm.Final5Way: 0, dm.Final6WayAtMinimum: 0,
		dm.Final5WayLastDeal: 1, dm.Final6WayAtMinimumLastDeal: 1,
	}
	for name, w := range want {
		if g, ok := got[name]; !ok || g != w {
			t.Errorf("%s = %v (present %v), want %v", name, g, ok, w)
		}
	}

	// p1's discussion deal passes, its final deal does not: the final deal is the one read.
	r = newRecorder(t, params, 1)
	r.play(propose("open", "A1,B1,C4,D1,E5"), "")
	r.play(say("p1's idea", "A2,B3,C3,D2,E3"), "")
	r.play(say("", ""), "")
	r.play(propose("final", "A1,B1,C4,D1,E5"), "")
	got = values(t, r.end(0))
	if got[dm.Final5WayLastDeal] != 0 || got[dm.Final6WayAtMinimumLastDeal] != 0 || got[dm.Any] != 1 || got[dm.AnyAboveMinimum] != 1 {
		t.Errorf("last-deal readings %v / %v with a failing final deal (any %v); want 0 / 0 (any 1)", got[dm.Final5WayLastDeal], got[dm.Final6WayAtMinimumLastDeal], got[dm.Any])
	}
}

// TestAnyAboveMinimum: a deal at which some party's score equals its minimum passes (>=) but
// not by the study's first, strict test.
func TestAnyAboveMinimum(t *testing.T) {
	params, s := setup(t, "speaking_order=p1,mayor")
	d := deal(t, s, "A2,B3,C3,D2,E3")
	// Tourism (p2, a veto holder) with its minimum set to its score for d: it still says yes,
	// but not strictly.
	p2 := 1
	atMinimum := s.Score(p2, d)
	for _, tc := range []struct {
		threshold  int
		any, above float64
	}{{atMinimum, 1, 0}, {atMinimum - 1, 1, 1}} {
		p := proto.Clone(params).(*matchv1.GameParams)
		p.GetDeliberation().GetScenario().GetParties()[p2].Threshold = int32(tc.threshold)
		r := newRecorder(t, p, 1)
		r.play(propose("open", "A1,B1,C4,D1,E5"), "")
		r.play(say("p1's idea", "A2,B3,C3,D2,E3"), "")
		r.play(say("", ""), "")
		r.play(propose("final", "A2,B3,C3,D2,E3"), "")
		got := values(t, r.end(0))
		if got[dm.Any] != tc.any || got[dm.AnyAboveMinimum] != tc.above {
			t.Errorf("Tourism's minimum %d (its score %d): any %v, any above minimum %v; want %v, %v", tc.threshold, atMinimum, got[dm.Any], got[dm.AnyAboveMinimum], tc.any, tc.above)
		}
	}
}
