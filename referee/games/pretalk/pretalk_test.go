package pretalk_test

import (
	"slices"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/pretalk"
)

// TestRounds: two rounds of two players opened by seat 1 run 1, 0, 1, 0; three players opened
// by seat 2 run 2, 0, 1 per round; a pass ends the talk at once.
func TestRounds(t *testing.T) {
	if !pretalk.Start(0, 0, 2).Over {
		t.Error("no rounds: the talk is over at once")
	}
	order := func(tk pretalk.Talk) []int32 {
		var speakers []int32
		for !tk.Over {
			speakers = append(speakers, tk.Speaker())
			tk = tk.Advance(tk.Speaker(), false)
		}
		if tk.EndedBy != -1 {
			t.Errorf("ended by %d", tk.EndedBy)
		}
		return speakers
	}
	if got := order(pretalk.Start(2, 1, 2)); !slices.Equal(got, []int32{1, 0, 1, 0}) {
		t.Errorf("two players: speakers %v", got)
	}
	if got := order(pretalk.Start(2, 2, 3)); !slices.Equal(got, []int32{2, 0, 1, 2, 0, 1}) {
		t.Errorf("three players: speakers %v", got)
	}
	tk := pretalk.Start(3, 0, 2).Advance(0, false).Advance(1, true)
	if !tk.Over || tk.EndedBy != 1 || tk.Round != 1 {
		t.Errorf("early end: %+v", tk)
	}
}

// TestSpeak records a message in the history and refuses a bad one without recording it.
func TestSpeak(t *testing.T) {
	var h games.History
	names := []string{"Ann", "Ben", "Cat"}
	tk := pretalk.Start(1, 1, 3)
	say := &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}, Messages: []*gamev1.Message{{Text: "hello"}}}
	tk, err := tk.Speak(&h, 1, 1, say, names)
	if err != nil || tk.Speaker() != 2 {
		t.Fatalf("speak: %+v %v", tk, err)
	}
	if _, err := tk.Speak(&h, 2, 2, &agentv1.Action{Move: say.Move}, names); err == nil {
		t.Fatal("a say without a message was accepted")
	}
	if got, _ := h.For(0); len(got) != 1 || got[0].GetMessages()[0].GetText() != "hello" {
		t.Errorf("history %v", got)
	}
	if got := pretalk.Order(1, names); got != "Ben writes one message and then Cat and Ann reply with one each, in that order" {
		t.Errorf("order: %q", got)
	}
}

func TestCheck(t *testing.T) {
	say := &gamev1.Move{Kind: &gamev1.Move_Say{Say: &gamev1.Say{}}}
	for name, a := range map[string]*agentv1.Action{
		"choose":     {Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{}}}, Messages: []*gamev1.Message{{Text: "x"}}},
		"no message": {Move: say},
		"two":        {Move: say, Messages: []*gamev1.Message{{Text: "x"}, {Text: "y"}}},
		"private":    {Move: say, Messages: []*gamev1.Message{{To: []int32{1}, Text: "x"}}},
		"with terms": {Move: say, Messages: []*gamev1.Message{{Text: "x", Proposal: &gamev1.Proposal{}}}},
	} {
		if pretalk.Check(a) == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := pretalk.Check(pretalk.Default()); err != nil {
		t.Errorf("the default move: %v", err)
	}
}
