package matrix_test

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/matrix"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
)

func newState(t testing.TB, kvs ...string) games.State {
	t.Helper()
	st, err := games.Start(matrix.New(), params(t, kvs...), 1)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func say(text string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, Messages: []*gamev1.Message{{Text: text}}}
}

func pass(text string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Pass{Pass: &gamev1.Pass{}}}, Messages: []*gamev1.Message{{Text: text}}}
}

func choose(id string) *agentv1.Action {
	return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: id}}}}
}

func apply(t testing.TB, st games.State, seat games.Seat, a *agentv1.Action) {
	t.Helper()
	if _, err := st.Apply(seat, a); err != nil {
		t.Fatalf("seat %d %v: %v", seat, a, err)
	}
}

func refused(t testing.TB, st games.State, seat games.Seat, a *agentv1.Action, code gamev1.RejectionCode) {
	t.Helper()
	_, err := st.Apply(seat, a)
	rej, ok := games.AsRejection(err)
	if !ok || rej.Code != code {
		t.Fatalf("seat %d %v: %v, want a rejection with %v", seat, a, err, code)
	}
}

// TestTalkThenChoose: two talk rounds opened by Bob, the choice, the payoffs.
func TestTalkThenChoose(t *testing.T) {
	st := newState(t, "game=stag_hunt", "talk_rounds=2", "talk_opener=1")
	if got := st.ToMove(); !slices.Equal(got, []games.Seat{1}) {
		t.Fatalf("ToMove = %v, want Bob", got)
	}
	obs := st.Observe(1)
	if obs.GetPhase() != matrix.PhaseTalk || !slices.Equal(obs.GetLegalMoves(), []gamev1.MoveKind{gamev1.MoveKind_MOVE_KIND_SAY, gamev1.MoveKind_MOVE_KIND_PASS}) || len(obs.GetRequiredMessages()) != 1 {
		t.Fatalf("talk observation %v", obs)
	}
	refused(t, st, 0, say("me first"), gamev1.RejectionCode_REJECTION_CODE_OUT_OF_TURN)
	refused(t, st, 1, choose("stag"), gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE)
	refused(t, st, 1, &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}}, gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE)
	refused(t, st, 1, &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, Messages: []*gamev1.Message{{To: []int32{0}, Text: "psst"}}}, gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE)
	apply(t, st, 1, say("stag?"))
	apply(t, st, 0, say("stag."))
	apply(t, st, 1, say("deal"))
	apply(t, st, 0, say("deal"))
	if obs := st.Observe(0); obs.GetPhase() != matrix.PhaseChoice || len(obs.GetChoices()) != 2 || obs.GetChoices()[0].GetId() != "stag" {
		t.Fatalf("choice observation %v", obs)
	}
	if got := st.ToMove(); !slices.Equal(got, []games.Seat{0, 1}) {
		t.Fatalf("ToMove = %v, want both", got)
	}
	refused(t, st, 0, choose("deer"), gamev1.RejectionCode_REJECTION_CODE_INVALID_TERMS)
	refused(t, st, 0, say("wait"), gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE)
	apply(t, st, 0, choose("stag"))
	apply(t, st, 1, choose("stag"))
	out := st.Outcome()
	if len(st.ToMove()) != 0 || out.GetCause() != matchv1.EndCause_END_CAUSE_COMPLETED || !slices.Equal(out.GetPayoffs(), []float64{3, 3}) {
		t.Fatalf("outcome %v", out)
	}
}

// TestEarlyEnd: either player's pass ends the talk at once.
func TestEarlyEnd(t *testing.T) {
	st := newState(t, "talk_rounds=3")
	apply(t, st, 0, say("hi"))
	apply(t, st, 1, pass("bye"))
	if got := st.ToMove(); !slices.Equal(got, []games.Seat{0, 1}) || st.Observe(0).GetPhase() != matrix.PhaseChoice {
		t.Fatalf("after an early end: ToMove %v, phase %q", got, st.Observe(0).GetPhase())
	}
	if d := st.Default(0); d.GetMove().GetChoose().GetOption() != "cooperate" {
		t.Errorf("default choice %v, want the first action", d)
	}
}

// TestChoiceHidden: until both have chosen, the one who chose is the only one who can tell;
// the other's observation is exactly what it was before.
func TestChoiceHidden(t *testing.T) {
	for _, first := range []games.Seat{0, 1} {
		st := newState(t, "game=battle_of_the_sexes", "rounds=2")
		other := 1 - first
		before := st.Observe(other)
		apply(t, st, first, choose("football"))
		after := st.Observe(other)
		if !proto.Equal(before, after) {
			t.Fatalf("seat %d's observation changed when seat %d chose:\n%v\n%v", other, first, before, after)
		}
		mine := st.Observe(first)
		if mine.GetMatrix().OwnChoice == nil || mine.GetMatrix().GetOwnChoice() != 1 || len(mine.GetLegalMoves()) != 0 {
			t.Errorf("the chooser's own view %v", mine.GetMatrix())
		}
		apply(t, st, other, choose("opera"))
		// Revealed: both see both choices in round 1's result and the announcement.
		for _, s := range []games.Seat{0, 1} {
			o := st.Observe(s)
			r := o.GetMatrix().GetResults()
			if len(r) != 1 || r[0].OtherChoice == nil || o.GetMatrix().OwnChoice != nil {
				t.Fatalf("seat %d after the reveal: %v", s, o.GetMatrix())
			}
			if !strings.Contains(prototext.Format(o), "chose football") || !strings.Contains(prototext.Format(o), "chose opera") {
				t.Errorf("seat %d does not see both choices", s)
			}
		}
	}
}

// TestHiddenHistory: with show_history=false each seat learns only its own choices and
// payoffs, round after round.
func TestHiddenHistory(t *testing.T) {
	st := newState(t, "rounds=3", "show_history=false")
	for range 3 {
		apply(t, st, 0, choose("defect"))
		apply(t, st, 1, choose("cooperate"))
	}
	for seat, want := range map[games.Seat]float64{0: 15, 1: 0} {
		o := st.Observe(seat)
		text := prototext.Format(o.GetMatrix())
		for _, r := range o.GetMatrix().GetResults() {
			if r.OtherChoice != nil || r.OtherPayoff != nil {
				t.Errorf("seat %d sees the other's round: %v", seat, r)
			}
		}
		other := []string{"cooperate", "defect"}[seat]
		if strings.Contains(o.GetBriefing(), "chose "+other) || strings.Contains(text, "other_choice") {
			t.Errorf("seat %d learns the other's choice:\n%s", seat, o.GetBriefing())
		}
		if got := st.Outcome().GetPayoffs()[seat]; got != want {
			t.Errorf("seat %d payoff %v, want %v", seat, got, want)
		}
	}
}

// TestNeutralLabels: ids and labels are choice_N, and neither the title nor any label of the
// file reaches a player.
func TestNeutralLabels(t *testing.T) {
	st := newState(t, "game=prisoners_dilemma", "neutral_labels=true", "talk_rounds=1")
	for _, seat := range []games.Seat{0, 1} {
		text := prototext.Format(st.Observe(seat))
		for _, word := range []string{"cooperate", "defect", "Prisoner", "dilemma"} {
			if strings.Contains(text, word) {
				t.Errorf("seat %d sees %q under neutral labels", seat, word)
			}
		}
	}
	apply(t, st, 0, pass("let's both pick choice_1"))
	if ids := st.Observe(1).GetChoices(); ids[0].GetId() != "choice_1" || ids[1].GetId() != "choice_2" {
		t.Errorf("choices %v", ids)
	}
	apply(t, st, 0, choose("choice_2"))
	apply(t, st, 1, choose("choice_2"))
	if got := st.Outcome().GetPayoffs(); !slices.Equal(got, []float64{1, 1}) {
		t.Errorf("payoffs %v", got)
	}
}

// TestScale: golden balls' jackpot, fractional, halves stay exact.
func TestScale(t *testing.T) {
	st := newState(t, "game=golden_balls", "scale=13601")
	apply(t, st, 0, choose("split"))
	apply(t, st, 1, choose("split"))
	if got := st.Outcome().GetPayoffs(); !slices.Equal(got, []float64{6800.5, 6800.5}) {
		t.Errorf("payoffs %v, want half of 13601 each", got)
	}
	if b := st.Observe(0).GetBriefing(); !strings.Contains(b, "The jackpot is 13601") || !strings.Contains(b, "you get 13601/2") {
		t.Errorf("briefing:\n%s", b)
	}
}

// TestResolve: defaults are filled in with the table, and bad parameters are refused.
func TestResolve(t *testing.T) {
	gp, err := matrix.New().Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := gp.GetMatrix()
	if p.GetGame() != "prisoners_dilemma" || p.GetTable() == nil || p.GetScale() != "1" || p.GetRounds() != 1 || !p.GetShowHistory() {
		t.Errorf("resolved %v", p)
	}
	for _, kvs := range [][]string{
		{"game=trigame"}, {"game=nope"}, {"rounds=0"}, {"talk_opener=2"}, {"talk_rounds=-1"}, {"scale=0"}, {"file=x.yaml"},
	} {
		if _, err := matrix.New().Resolve(params(t, kvs...)); err == nil {
			t.Errorf("%v accepted", kvs)
		}
	}
}

// TestLoad reads a user's file through the host's reader; the record then holds the table.
func TestLoad(t *testing.T) {
	files := map[string]string{
		"mine.yaml": "title: Mine\nrows: [up, down]\ncols: [left, right]\npayoffs:\n  - [[1, 0], [0, 1]]\n  - [[0, 1], [1, 0]]\n",
		"tree.yaml": "root: {player: 0, moves: [{id: a, leaf: [1, 1]}]}\n",
	}
	read := func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	g := matrix.New().(games.Loader)
	gp, err := g.Load(params(t, "file=mine.yaml"), 1, read)
	if err != nil {
		t.Fatal(err)
	}
	res, err := matrix.New().Resolve(gp)
	if err != nil {
		t.Fatal(err)
	}
	if res.GetMatrix().GetTable().GetTitle() != "Mine" || res.GetMatrix().GetFile() != "mine.yaml" {
		t.Errorf("resolved %v", res)
	}
	if again, err := g.Load(res, 1, read); err != nil || !proto.Equal(again, res) {
		t.Errorf("loading loaded params again changed them: %v %v", again, err)
	}
	if _, err := g.Load(params(t, "file=tree.yaml"), 1, read); err == nil || !strings.Contains(err.Error(), "sequential") {
		t.Errorf("a tree file: %v", err)
	}
	if _, err := g.Load(params(t, "file=missing.yaml"), 1, read); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}
