package llm

import (
	"encoding/json"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// dealIssues are three issues with 3, 2 and 4 options.
func dealIssues(only ...string) *gamev1.ProposalForm {
	f := &gamev1.ProposalForm{Label: "deal"}
	for _, is := range []struct {
		id   string
		opts []string
	}{{"A", []string{"water", "mixed", "land"}}, {"B", []string{"harm", "balance"}}, {"C", []string{"none", "low", "mid", "high"}}} {
		gi := &gamev1.Issue{Id: is.id, Label: "issue " + is.id}
		for k, o := range is.opts {
			id := is.id + string(rune('1'+k))
			if len(only) > 0 && !strings.Contains(strings.Join(only, ","), id) {
				continue
			}
			gi.Options = append(gi.Options, &gamev1.Option{Id: id, Label: o})
		}
		f.Issues = append(f.Issues, gi)
	}
	return f
}

// dealTalkObs is a discussion turn: say with one public message that may carry a deal.
func dealTalkObs() *agentv1.Observation {
	return &agentv1.Observation{
		Game: "deliberation", Seat: 1, Seats: seats("Lead", "Two", "Three"), Turn: 3,
		LegalMoves:       []gamev1.MoveKind{say},
		RequiredMessages: []*gamev1.MessageSlot{{}},
		MessageTermForms: []*gamev1.ProposalForm{dealIssues()},
	}
}

// dealFinalObs is p1's final turn: propose a deal or reject.
func dealFinalObs() *agentv1.Observation {
	return &agentv1.Observation{
		Game: "deliberation", Seat: 0, Seats: seats("Lead", "Two", "Three"), Turn: 9,
		LegalMoves:       []gamev1.MoveKind{propose, reject},
		RequiredMessages: []*gamev1.MessageSlot{{}},
		ProposalForms:    []*gamev1.ProposalForm{dealIssues()},
	}
}

// dealOpeningObs is the opening: the deal is fixed.
func dealOpeningObs() *agentv1.Observation {
	o := dealFinalObs()
	o.LegalMoves = []gamev1.MoveKind{propose}
	o.ProposalForms = []*gamev1.ProposalForm{dealIssues("A1", "B2", "C4")}
	return o
}

const wantDeal = `deal{choices{issue:"A" option:"A2"} choices{issue:"B" option:"B1"} choices{issue:"C" option:"C4"}}`

func TestDealsTagged(t *testing.T) {
	tests := []struct {
		name, reply, want, wantErr string
		obs                        *agentv1.Observation
		kind                       FailureKind
	}{
		{name: "deal section in the message", obs: dealTalkObs(),
			reply: "<reasoning>r</reasoning><message>Here is a fair package. <deal>A2, B1, C4</deal></message>",
			want:  `move{say{}} messages{text:"Here is a fair package." proposal{` + wantDeal + `}} private_reasoning:"r"`},
		{name: "terms line, any order and case", obs: dealTalkObs(),
			reply: "<message>Consider this.\nTERMS: c4 b1 a2</message>",
			want:  `move{say{}} messages{text:"Consider this." proposal{` + wantDeal + `}}`},
		{name: "no deal", obs: dealTalkObs(),
			reply: "<message>Just talking.</message>",
			want:  `move{say{}} messages{text:"Just talking."}`},
		{name: "final deal", obs: dealFinalObs(),
			reply: "<message>Final.</message><move>propose: A2, B1, C4</move>",
			want:  `move{propose{proposal{` + wantDeal + `}}} messages{text:"Final."}`},
		{name: "final deal written A: 2", obs: dealFinalObs(),
			reply: "<message>Final.</message><move>propose: A: 2; B: 1; C: 4</move>",
			want:  `move{propose{proposal{` + wantDeal + `}}} messages{text:"Final."}`},
		{name: "no deal at the end", obs: dealFinalObs(),
			reply: "<message>No.</message><move>reject</move>",
			want:  `move{reject{}} messages{text:"No."}`},
		{name: "fixed options need not be written", obs: dealOpeningObs(),
			reply: "<message>Opening.</message><move>propose</move>",
			want:  `move{propose{proposal{deal{choices{issue:"A" option:"A1"} choices{issue:"B" option:"B2"} choices{issue:"C" option:"C4"}}}}} messages{text:"Opening."}`},
		{name: "fixed options filled in", obs: dealOpeningObs(),
			reply: "<message>Opening.</message><move>propose: A1</move>",
			want:  `move{propose{proposal{deal{choices{issue:"A" option:"A1"} choices{issue:"B" option:"B2"} choices{issue:"C" option:"C4"}}}}} messages{text:"Opening."}`},
		{name: "two options of one issue", obs: dealFinalObs(),
			reply: "<message>x</message><move>propose: A1, A2, B1, C1</move>",
			kind:  FailBadTerms, wantErr: "issue A is given two options (A1 and A2)"},
		{name: "missing issue", obs: dealFinalObs(),
			reply: "<message>x</message><move>propose: A1, B1</move>",
			kind:  FailBadTerms, wantErr: "no option chosen on issue C"},
		{name: "unknown option", obs: dealTalkObs(),
			reply: "<message>x <deal>A1, B3, C1</deal></message>",
			kind:  FailBadTerms, wantErr: "B3 is no option"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkParse(t, taggedStyle{}, tc.obs, tc.reply, tc.want, tc.wantErr, tc.kind)
		})
	}
}

func TestDealsJSON(t *testing.T) {
	checkParse(t, jsonStyle{}, dealTalkObs(),
		`{"reasoning": "r", "messages": [{"to": [], "text": "Package.", "terms": {"A": "A2", "B": "B1", "C": "C4"}}], "move": {"kind": "say"}, "plan": null}`,
		`move{say{}} messages{text:"Package." proposal{`+wantDeal+`}} private_reasoning:"r"`, "", "")
	checkParse(t, jsonStyle{}, dealFinalObs(),
		`{"reasoning": "", "messages": [{"to": [], "text": "Final."}], "move": {"kind": "propose", "terms": "A2,B1,C4"}, "plan": null}`,
		`move{propose{proposal{`+wantDeal+`}}} messages{text:"Final."}`, "", "")
	// The schema offers each issue's option ids.
	b, err := json.Marshal(moveSchema(newTurn(dealFinalObs())))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"C":{"type":"string","enum":["C1","C2","C3","C4"]}`) {
		t.Errorf("schema: %s", b)
	}
}

// TestDealPrompt: the prompt shows the deal form with its options, and the examples name the
// issues' option ranges.
func TestDealPrompt(t *testing.T) {
	for _, style := range []outputStyle{taggedStyle{}, jsonStyle{}} {
		d := promptData(newTurn(dealTalkObs()), style, "x")
		if len(d.TermForms) != 1 || !strings.Contains(d.TermForms[0].Ranges, "A (issue A): A1 water, A2 mixed, A3 land") ||
			!strings.Contains(d.TermForms[0].Example, "ONE OF A1-A3") || !strings.Contains(d.TermForms[0].Example, "ONE OF C1-C4") {
			t.Errorf("%T: term forms %+v", style, d.TermForms)
		}
		d = promptData(newTurn(dealFinalObs()), style, "x")
		if !strings.Contains(d.Moves[0].Example, "ONE OF A1-A3") {
			t.Errorf("%T: move example %q", style, d.Moves[0].Example)
		}
	}
}
