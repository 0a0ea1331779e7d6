package pretalk_test

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games/pretalk"
)

// TestRounds: two rounds opened by seat 1 run 1, 0, 1, 0; a pass ends the talk at once.
func TestRounds(t *testing.T) {
	if !pretalk.Start(0, 0).Over {
		t.Error("no rounds: the talk is over at once")
	}
	tk := pretalk.Start(2, 1)
	var speakers []int32
	for !tk.Over {
		speakers = append(speakers, tk.Speaker())
		tk = tk.Advance(tk.Speaker(), false)
	}
	if len(speakers) != 4 || speakers[0] != 1 || speakers[1] != 0 || speakers[2] != 1 || speakers[3] != 0 || tk.EndedBy != -1 {
		t.Errorf("speakers %v, ended by %d", speakers, tk.EndedBy)
	}
	tk = pretalk.Start(3, 0).Advance(0, false).Advance(1, true)
	if !tk.Over || tk.EndedBy != 1 || tk.Round != 1 {
		t.Errorf("early end: %+v", tk)
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
