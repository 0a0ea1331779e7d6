package llm

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

var (
	propose = gamev1.MoveKind_MOVE_KIND_PROPOSE
	accept  = gamev1.MoveKind_MOVE_KIND_ACCEPT
	reject  = gamev1.MoveKind_MOVE_KIND_REJECT
	pass    = gamev1.MoveKind_MOVE_KIND_PASS
	choose  = gamev1.MoveKind_MOVE_KIND_CHOOSE
	say     = gamev1.MoveKind_MOVE_KIND_SAY
	gives   = gamev1.ShareSide_SHARE_SIDE_GIVES
	recv    = gamev1.ShareSide_SHARE_SIDE_RECEIVES
)

func seats(names ...string) []*gamev1.SeatInfo {
	out := make([]*gamev1.SeatInfo, len(names))
	for i, n := range names {
		out[i] = &gamev1.SeatInfo{Seat: int32(i), Name: n}
	}
	return out
}

// ultimatumObs is P2's turn with P1's offer standing: propose, accept or reject.
func ultimatumObs() *agentv1.Observation {
	return &agentv1.Observation{
		Game: "ultimatum", Seat: 1, Seats: seats("P1", "P2"), Turn: 2, MaxTurns: 8,
		LegalMoves:     []gamev1.MoveKind{propose, accept, reject},
		ProposalBounds: []*gamev1.Bound{{Seat: 0, Side: gives, Resource: "Dollars", Min: 0, Max: 100}},
	}
}

// tradingObs has two-sided trades.
func tradingObs() *agentv1.Observation {
	return &agentv1.Observation{
		Game: "trading", Seat: 0, Seats: seats("P1", "P2"), Turn: 1,
		LegalMoves: []gamev1.MoveKind{propose, pass},
		ProposalBounds: []*gamev1.Bound{
			{Seat: 0, Side: gives, Resource: "X", Max: 25}, {Seat: 0, Side: gives, Resource: "Y", Max: 5},
			{Seat: 1, Side: gives, Resource: "X", Max: 30}, {Seat: 1, Side: gives, Resource: "Y", Max: 30},
		},
	}
}

// buysellObs has an amount fixed by the rules.
func buysellObs() *agentv1.Observation {
	return &agentv1.Observation{
		Game: "buysell", Seat: 0, Seats: seats("P1", "P2"), Turn: 1,
		LegalMoves: []gamev1.MoveKind{propose, reject},
		ProposalBounds: []*gamev1.Bound{
			{Seat: 0, Side: gives, Resource: "X", Min: 1, Max: 1}, {Seat: 1, Side: gives, Resource: "ZUP", Max: 100},
		},
	}
}

func coalitionForm(label string, total int64, members ...int32) *gamev1.ProposalForm {
	f := &gamev1.ProposalForm{Label: label, Totals: []*gamev1.AmountTotal{{Side: recv, Resource: "g", Total: total}}}
	for _, m := range members {
		f.Bounds = append(f.Bounds, &gamev1.Bound{Seat: m, Side: recv, Resource: "g", Max: total})
	}
	return f
}

// coalitionObs is A proposing in phase 2.
func coalitionObs() *agentv1.Observation {
	return &agentv1.Observation{
		Game: "coalition", Seat: 0, Seats: seats("A", "B", "C"), Turn: 7, Phase: "proposals",
		LegalMoves: []gamev1.MoveKind{propose},
		ProposalForms: []*gamev1.ProposalForm{
			coalitionForm("coalition A", 0, 0),
			coalitionForm("coalition A+B", 750, 0, 1),
			coalitionForm("coalition A+C", 750, 0, 2),
			coalitionForm("coalition A+B+C", 1000, 0, 1, 2),
		},
	}
}

// pairsOnly is A proposing with only the pairs A+B and A+C allowed.
func pairsOnly() *agentv1.Observation {
	obs := coalitionObs()
	obs.ProposalForms = obs.ProposalForms[1:3]
	return obs
}

// talkObs is A's talk turn: one message each to B and C, which may carry terms.
func talkObs() *agentv1.Observation {
	obs := coalitionObs()
	obs.Phase, obs.Turn = "talk", 1
	obs.LegalMoves = []gamev1.MoveKind{say}
	obs.MessageTermForms, obs.ProposalForms = obs.ProposalForms, nil
	obs.RequiredMessages = []*gamev1.MessageSlot{{To: []int32{1}}, {To: []int32{2}}}
	return obs
}

// choiceObs is a matrix-like choice.
func choiceObs() *agentv1.Observation {
	return &agentv1.Observation{
		Game: "matrix", Seat: 0, Seats: seats("Alice", "Bob"), Turn: 1,
		LegalMoves: []gamev1.MoveKind{choose},
		Choices:    []*gamev1.Option{{Id: "choice_1", Label: "cooperate"}, {Id: "choice_2", Label: "defect"}},
	}
}

func TestTaggedStyle(t *testing.T) {
	tests := []struct {
		name  string
		obs   *agentv1.Observation
		reply string
		// want is the action in prototext, compared after parsing both; wantErr a substring of
		// the error and wantKind its kind.
		want     string
		wantErr  string
		wantKind FailureKind
	}{
		{name: "all sections", obs: ultimatumObs(),
			reply: "<reasoning>They offered 40.</reasoning>\n<message>Make it 60.</message>\n<move>propose: P1 gives 60 Dollars</move>\n<plan>hold at 55</plan>",
			want:  `move{propose{proposal{allocation{shares{seat:0 gives{key:"Dollars" value:60}}}}}} messages{text:"Make it 60."} private_reasoning:"They offered 40." private_notes:"hold at 55"`},
		{name: "accept, tags in any case, prose around", obs: ultimatumObs(),
			reply: "Sure.\n<REASONING>fine</REASONING> <Move> Accept </Move> thanks",
			want:  `move{accept{}} private_reasoning:"fine"`},
		{name: "unclosed sections end at the next", obs: ultimatumObs(),
			reply: "<reasoning>hmm\n<message>no way\n<move>reject",
			want:  `move{reject{}} messages{text:"no way"} private_reasoning:"hmm"`},
		{name: "aliases scratchpad and answer", obs: ultimatumObs(),
			reply: "<scratchpad>x</scratchpad><answer>accept</answer>",
			want:  `move{accept{}} private_reasoning:"x"`},
		{name: "the summaries' wording", obs: ultimatumObs(),
			reply: "<move>propose: P1 gives 45 Dollars to P2 and keeps 55</move>",
			want:  `move{propose{proposal{allocation{shares{seat:0 gives{key:"Dollars" value:45}}}}}}`},
		{name: "a bare amount when there is one", obs: ultimatumObs(),
			reply: "<move>offer 30</move>",
			want:  `move{propose{proposal{allocation{shares{seat:0 gives{key:"Dollars" value:30}}}}}}`},
		{name: "terms without a kind word", obs: ultimatumObs(),
			reply: "<move>P1 gives 52 Dollars</move>",
			want:  `move{propose{proposal{allocation{shares{seat:0 gives{key:"Dollars" value:52}}}}}}`},
		{name: "trade with RESOURCE: AMOUNT and bars", obs: tradingObs(),
			reply: "<move>propose: Player P1 Gives X: 5, Y: 0 | Player P2 Gives X: 0, Y: 7</move>",
			want:  `move{propose{proposal{allocation{shares{seat:0 gives{key:"X" value:5} gives{key:"Y" value:0}} shares{seat:1 gives{key:"X" value:0} gives{key:"Y" value:7}}}}}}`},
		{name: "trade, unstated amounts are 0", obs: tradingObs(),
			reply: "<move>propose: P1 gives 10 X; P2 gives 10 Y</move>",
			want:  `move{propose{proposal{allocation{shares{seat:0 gives{key:"X" value:10} gives{key:"Y" value:0}} shares{seat:1 gives{key:"X" value:0} gives{key:"Y" value:10}}}}}}`},
		{name: "fixed amounts fill themselves", obs: buysellObs(),
			reply: "<move>propose: 55</move>",
			want:  `move{propose{proposal{allocation{shares{seat:0 gives{key:"X" value:1}} shares{seat:1 gives{key:"ZUP" value:55}}}}}}`},
		{name: "wait is pass", obs: tradingObs(), reply: "<move>wait</move>", want: `move{pass{}}`},
		{name: "FINAL PROPOSAL line, grand coalition", obs: coalitionObs(),
			reply: "<reasoning>ok</reasoning>\nFINAL PROPOSAL: A: 500, B: 250, C: 250",
			want:  `move{propose{proposal{allocation{shares{seat:0 receives{key:"g" value:500}} shares{seat:1 receives{key:"g" value:250}} shares{seat:2 receives{key:"g" value:250}}}}}} private_reasoning:"ok"`},
		{name: "FINAL PROPOSAL picks the pair it adds up for", obs: coalitionObs(),
			reply: "**FINAL PROPOSAL:** A: 400, B: 350",
			want:  `move{propose{proposal{allocation{shares{seat:0 receives{key:"g" value:400}} shares{seat:1 receives{key:"g" value:350}}}}}}`},
		{name: "FINAL PROPOSAL with a zero for a non-member", obs: coalitionObs(),
			reply: "FINAL PROPOSAL: A: 375, B: 0, C: 375",
			want:  `move{propose{proposal{allocation{shares{seat:0 receives{key:"g" value:375}} shares{seat:2 receives{key:"g" value:375}}}}}}`},
		{name: "talk with SPLIT PROPOSAL lines", obs: talkObs(),
			reply: "<message to=\"B\">Join me.\nSPLIT PROPOSAL: A: 450, B: 300</message>\n<message to='C'>Hello C.\nTERMS: A receives 500 g; B receives 250 g; C receives 250 g</message>",
			want: `move{say{}} messages{to:1 text:"Join me." proposal{allocation{shares{seat:0 receives{key:"g" value:450}} shares{seat:1 receives{key:"g" value:300}}}}}` +
				` messages{to:2 text:"Hello C." proposal{allocation{shares{seat:0 receives{key:"g" value:500}} shares{seat:1 receives{key:"g" value:250}} shares{seat:2 receives{key:"g" value:250}}}}}`},
		{name: "choose by id or label", obs: choiceObs(), reply: "<move>choose defect</move>", want: `move{choose{option:"choice_2"}}`},
		{name: "a bare option", obs: choiceObs(), reply: "<move>choice_1</move>", want: `move{choose{option:"choice_1"}}`},

		{name: "prose only", obs: ultimatumObs(), reply: "I accept your offer.", wantKind: FailUnparsable, wantErr: "<move>"},
		{name: "no move", obs: ultimatumObs(), reply: "<reasoning>hmm</reasoning>", wantKind: FailNoMove, wantErr: "propose, accept, reject"},
		{name: "two moves", obs: ultimatumObs(), reply: "<move>accept</move><move>reject</move>", wantKind: FailUnparsable, wantErr: "more than one"},
		{name: "unknown move", obs: ultimatumObs(), reply: "<move>dance</move>", wantKind: FailUnknownMove, wantErr: `"dance" is not a move`},
		{name: "illegal kind", obs: ultimatumObs(), reply: "<move>pass</move>", wantKind: FailIllegalMove, wantErr: "pass is not legal now"},
		{name: "amount out of range", obs: ultimatumObs(), reply: "<move>propose: P1 gives 150 Dollars</move>", wantKind: FailBadTerms, wantErr: "from 0 to 100"},
		{name: "negative amount", obs: ultimatumObs(), reply: "<move>propose: P1 gives -5 Dollars</move>", wantKind: FailBadTerms, wantErr: "never negative"},
		{name: "fractional amount", obs: ultimatumObs(), reply: "<move>propose: P1 gives 40.5 Dollars</move>", wantKind: FailBadTerms, wantErr: "whole numbers"},
		{name: "amount nobody may fill", obs: ultimatumObs(), reply: "<move>propose: P2 gives 10 Dollars</move>", wantKind: FailBadTerms, wantErr: "P1 gives Dollars"},
		{name: "ambiguous amount", obs: tradingObs(), reply: "<move>propose: 5</move>", wantKind: FailBadTerms, wantErr: "could be any of"},
		{name: "wrong total", obs: coalitionObs(), reply: "FINAL PROPOSAL: A: 500, B: 200", wantKind: FailBadTerms, wantErr: "add up to exactly 750"},
		{name: "only a form it does not add up for", obs: coalitionObs(), reply: "<move>propose: B: 500, C: 250</move>", wantKind: FailBadTerms, wantErr: "A+B+C: the amounts of g received by A, B, C must add up to exactly 1000, and yours add up to 750"},
		{name: "no form has them", obs: pairsOnly(), reply: "<move>propose: B: 300, C: 450</move>", wantKind: FailBadTerms, wantErr: "no legal form of proposal has those amounts; the forms are: coalition A+B; coalition A+C"},
		{name: "a number for nobody", obs: coalitionObs(), reply: "<move>propose: 5</move>", wantKind: FailBadTerms, wantErr: "5 (with no seat or resource named) could be any of"},
		{name: "leak: a tag inside a message", obs: ultimatumObs(),
			reply: "<message>deal? <reasoning>I would take 30</reasoning></message><move>accept</move>", wantKind: FailBadMessage, wantErr: "holds a <reasoning> tag"},
		{name: "message to nobody known", obs: ultimatumObs(), reply: "<message to=\"Bob\">hi</message><move>accept</move>", wantKind: FailBadMessage, wantErr: `"Bob"`},
		{name: "message to oneself", obs: ultimatumObs(), reply: "<message to=\"P2\">hi</message><move>accept</move>", wantKind: FailBadMessage, wantErr: "yourself"},
		{name: "a required message missing", obs: talkObs(), reply: "<message to=\"B\">hi</message><move>say</move>", wantKind: FailBadMessage, wantErr: "lack the one to C"},
		{name: "recipients joined with and", obs: talkObs(), reply: "<message to=\"B and C\">hi</message><move>say</move>", wantKind: FailBadMessage, wantErr: "include one to B, C"},
		{name: "a message not asked for", obs: talkObs(), reply: "<message to=\"B,C\">hi</message><message to=\"B\">x</message><message to=\"C\">y</message>", wantKind: FailBadMessage, wantErr: "include one to B, C"},
		{name: "an unknown option", obs: choiceObs(), reply: "<move>choose peace</move>", wantKind: FailBadChoice, wantErr: "choice_1 (cooperate)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkParse(t, taggedStyle{}, tc.obs, tc.reply, tc.want, tc.wantErr, tc.wantKind)
		})
	}
}

func TestJSONStyle(t *testing.T) {
	tests := []struct {
		name, reply, want, wantErr string
		obs                        *agentv1.Observation
		wantKind                   FailureKind
	}{
		{name: "the documented object", obs: ultimatumObs(),
			reply: `{"reasoning": "r", "messages": [{"to": [], "text": "60?", "terms": null}], "move": {"kind": "propose", "terms": {"P1 gives Dollars": 60}, "option": null}, "plan": "p"}`,
			want:  `move{propose{proposal{allocation{shares{seat:0 gives{key:"Dollars" value:60}}}}}} messages{text:"60?"} private_reasoning:"r" private_notes:"p"`},
		{name: "code fence and prose", obs: ultimatumObs(),
			reply: "Here you go:\n```json\n{\"move\": {\"kind\": \"accept\"}}\n```",
			want:  `move{accept{}}`},
		{name: "move as a word, message as a string", obs: ultimatumObs(),
			reply: `{"message": "fine", "move": "reject"}`,
			want:  `move{reject{}} messages{text:"fine"}`},
		{name: "nested terms", obs: tradingObs(),
			reply: `{"move": {"kind": "propose", "terms": {"P1": {"gives": {"X": 5}}, "P2": {"gives": {"Y": 6.0}}}}}`,
			want:  `move{propose{proposal{allocation{shares{seat:0 gives{key:"X" value:5} gives{key:"Y" value:0}} shares{seat:1 gives{key:"X" value:0} gives{key:"Y" value:6}}}}}}`},
		{name: "shares as a list", obs: coalitionObs(),
			reply: `{"move": {"kind": "propose", "terms": [{"seat": "A", "receives": {"g": 500}}, {"seat": "C", "receives": {"g": 250}}, {"seat": "B", "receives": {"g": 250}}]}}`,
			want:  `move{propose{proposal{allocation{shares{seat:0 receives{key:"g" value:500}} shares{seat:1 receives{key:"g" value:250}} shares{seat:2 receives{key:"g" value:250}}}}}}`},
		{name: "terms as written text", obs: coalitionObs(),
			reply: `{"move": {"kind": "propose", "terms": "A: 400, C: 350"}}`,
			want:  `move{propose{proposal{allocation{shares{seat:0 receives{key:"g" value:400}} shares{seat:2 receives{key:"g" value:350}}}}}}`},
		{name: "talk: messages with terms, to as one name", obs: talkObs(),
			reply: `{"messages": [{"to": "B", "text": "b", "terms": {"A receives g": 450, "B receives g": 300}}, {"to": ["C"], "text": "c", "terms": null}], "move": {"kind": "say"}}`,
			want:  `move{say{}} messages{to:1 text:"b" proposal{allocation{shares{seat:0 receives{key:"g" value:450}} shares{seat:1 receives{key:"g" value:300}}}}} messages{to:2 text:"c"}`},
		{name: "choose", obs: choiceObs(), reply: `{"move": {"kind": "choose", "option": "cooperate"}}`, want: `move{choose{option:"choice_1"}}`},

		{name: "not JSON", obs: ultimatumObs(), reply: "accept", wantKind: FailUnparsable, wantErr: "not a JSON object"},
		{name: "broken JSON", obs: ultimatumObs(), reply: `{"move": {"kind": "accept"`, wantKind: FailUnparsable, wantErr: "not a JSON object"},
		{name: "no move", obs: ultimatumObs(), reply: `{"reasoning": "x"}`, wantKind: FailNoMove},
		{name: "unknown kind", obs: ultimatumObs(), reply: `{"move": {"kind": "haggle"}}`, wantKind: FailUnknownMove, wantErr: "haggle"},
		{name: "amount out of range", obs: ultimatumObs(), reply: `{"move": {"kind": "propose", "terms": {"P1 gives Dollars": 101}}}`, wantKind: FailBadTerms, wantErr: "from 0 to 100"},
		{name: "amount not a number", obs: ultimatumObs(), reply: `{"move": {"kind": "propose", "terms": {"P1 gives Dollars": true}}}`, wantKind: FailBadTerms},
		{name: "messages not a list", obs: ultimatumObs(), reply: `{"messages": 3, "move": "accept"}`, wantKind: FailUnparsable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkParse(t, jsonStyle{}, tc.obs, tc.reply, tc.want, tc.wantErr, tc.wantKind)
		})
	}
}

func checkParse(t *testing.T, style outputStyle, obs *agentv1.Observation, reply, want, wantErr string, wantKind FailureKind) {
	t.Helper()
	tn := newTurn(obs)
	d, ferr := style.parse(reply, tn)
	var got *agentv1.Action
	if ferr == nil {
		got, _, ferr = tn.resolve(d)
	}
	if wantKind != "" {
		if ferr == nil {
			t.Fatalf("parsed %q as %v, want a %s error", reply, got, wantKind)
		}
		if ferr.kind != wantKind || !strings.Contains(ferr.msg, wantErr) {
			t.Fatalf("error %s %q, want %s containing %q", ferr.kind, ferr.msg, wantKind, wantErr)
		}
		return
	}
	if ferr != nil {
		t.Fatalf("parse %q: %s: %s", reply, ferr.kind, ferr.msg)
	}
	wantAction := &agentv1.Action{}
	if err := prototext.Unmarshal([]byte(want), wantAction); err != nil {
		t.Fatalf("bad want: %v", err)
	}
	if prototext.Format(got) != prototext.Format(wantAction) {
		t.Errorf("parsed %q\n got  %s\n want %s", reply, prototext.Format(got), prototext.Format(wantAction))
	}
}

func TestTokenizeNumbers(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		bad  string
	}{
		{"1,000 g", 1000, ""}, {"$40", 40, ""}, {"500g", 500, ""}, {"12.5", 0, "whole"}, {"-3", 0, "negative"},
		{"99999999999999999999", 0, "too large"},
	} {
		toks := tokenize(tc.in)
		if len(toks) == 0 || toks[0].kind != tokNum {
			t.Errorf("tokenize(%q) = %v, want a number first", tc.in, toks)
			continue
		}
		if tc.bad != "" {
			if !strings.Contains(toks[0].bad, tc.bad) {
				t.Errorf("tokenize(%q): bad %q, want %q", tc.in, toks[0].bad, tc.bad)
			}
			continue
		}
		if toks[0].num != tc.want || toks[0].bad != "" {
			t.Errorf("tokenize(%q) = %d (%s), want %d", tc.in, toks[0].num, toks[0].bad, tc.want)
		}
	}
}

func TestMoveSchema(t *testing.T) {
	s := moveSchema(newTurn(ultimatumObs()))
	move := s.Properties["move"]
	if got := move.Properties["kind"].Enum; len(got) != 3 || *got[0] != "propose" {
		t.Errorf("kinds = %v", got)
	}
	amount := move.Properties["terms"].Properties["P1 gives Dollars"]
	if amount == nil || *amount.Minimum != 0 || *amount.Maximum != 100 {
		t.Errorf("terms schema = %+v", move.Properties["terms"])
	}
	if to := s.Properties["messages"].Items.Properties["to"].Items.Enum; len(to) != 1 || *to[0] != "P1" {
		t.Errorf("recipients = %v", to)
	}
	if !slicesEqual(s.Required, []string{"messages", "move", "plan", "reasoning"}) || *s.AdditionalProperties {
		t.Errorf("top level not strict: %+v", s)
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

// FuzzTagged checks that no reply can crash the parser or produce an action the observation
// does not allow.
func FuzzTagged(f *testing.F) {
	for _, s := range []string{"<move>accept</move>", "<message to=\"B\">x\nSPLIT PROPOSAL: A: 1</message>", "FINAL PROPOSAL: A: 500, B: 250, C: 250", "<move>propose: A receives 1,000 g</move>", `{"move":{"kind":"propose","terms":{"A":{"receives":{"g":750}},"B":0}}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		for _, obs := range []*agentv1.Observation{coalitionObs(), talkObs(), tradingObs()} {
			for _, style := range []outputStyle{taggedStyle{}, jsonStyle{}} {
				tn := newTurn(obs)
				d, ferr := style.parse(reply, tn)
				if ferr != nil {
					continue
				}
				action, _, ferr := tn.resolve(d)
				if ferr != nil {
					continue
				}
				if !tn.isLegal(games.KindOf(action.GetMove())) {
					t.Fatalf("illegal move %v from %q", action.GetMove(), reply)
				}
			}
		}
	})
}
