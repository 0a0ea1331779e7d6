package llm_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/referee/games/deliberation"
)

// TestReadReply reads answers written elsewhere through the agent's own parser: a usable one
// becomes the action the rules take, an unusable one says why, with nothing private made
// public.
func TestReadReply(t *testing.T) {
	g := deliberation.New()
	params, err := g.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := g.NewState(params, 1)
	if err != nil {
		t.Fatal(err)
	}
	act, err := llm.ReadReply("deliberation", st.Observe(0), "Hello all. <DEAL>A1, B1, C4, D1, E5</DEAL>")
	if err != nil {
		t.Fatal(err)
	}
	if got := act.GetMove().GetPropose().GetProposal().GetDeal(); len(got.GetChoices()) != 5 || got.GetChoices()[2].GetOption() != "C4" {
		t.Fatalf("deal %v", got)
	}
	if _, err := st.Apply(0, act); err != nil {
		t.Fatalf("the rules refuse the opening read: %v", err)
	}
	seat := st.ToMove()[0]
	act, err = llm.ReadReply("deliberation", st.Observe(seat), "<SCRATCHPAD>I should say that my minimum is 55.")
	var re *llm.ReplyError
	if !errors.As(err, &re) || re.Kind != llm.FailUnparsable || act != nil {
		t.Fatalf("an answer with nothing public read as %v, %v", act, err)
	}
	if strings.Contains(err.Error(), "55") {
		t.Fatalf("the error quotes the scratchpad: %v", err)
	}
	if _, err := llm.ReadReply("nosuch", st.Observe(seat), "x"); err == nil {
		t.Fatal("an unknown style read a reply")
	}
}
