package llm_test

import (
	"maps"
	"strings"
	"testing"

	"github.com/parley-arena/parley/agents/llm"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Replies as NegotiationArena's models wrote them (shapes taken from the published logs), and
// what each says.
func TestReadArenaReadsRealReplies(t *testing.T) {
	trade := func(red, blue map[string]int64) [2]map[string]int64 { return [2]map[string]int64{red, blue} }
	for _, tc := range []struct {
		name      string
		reply     string
		resources []string
		kind      gamev1.MoveKind
		gives     [2]map[string]int64
		message   string
	}{
		{name: "the format's own", resources: []string{"X", "Y"},
			reply: "<my name> Player RED </my name>\n<reason> I'll start. </reason>\n<player answer> NONE </player answer>\n<message> Hello! </message>\n<newly proposed trade> Player RED Gives X: 10 | Player BLUE Gives Y: 10 </newly proposed trade>",
			kind:  gamev1.MoveKind_MOVE_KIND_PROPOSE, gives: trade(map[string]int64{"X": 10}, map[string]int64{"Y": 10}), message: "Hello!"},
		{name: "accept, in a code fence", resources: []string{"X", "Y"},
			reply: "```xml\n<player answer> ACCEPT </player answer>\n<newly proposed trade> NONE </newly proposed trade>\n<message> Deal. </message>\n```",
			kind:  gamev1.MoveKind_MOVE_KIND_ACCEPT, message: "Deal."},
		{name: "accept with a name in front", reply: "<player answer> Player BLUE ACCEPT </player answer>\n<newly proposed trade> NONE </newly proposed trade>",
			kind: gamev1.MoveKind_MOVE_KIND_ACCEPT},
		{name: "accepted", reply: "<player answer> ACCEPTED </player answer> \n<message> Great </message>\n<newly proposed trade> NONE </newly proposed trade>",
			kind: gamev1.MoveKind_MOVE_KIND_ACCEPT, message: "Great"},
		{name: "reject", reply: "<player answer> REJECT </player answer>\n<newly proposed trade> NONE </newly proposed trade>", kind: gamev1.MoveKind_MOVE_KIND_REJECT},
		{name: "wait", reply: "<player answer> NONE </player answer>\n<newly proposed trade> NONE </newly proposed trade>", kind: gamev1.MoveKind_MOVE_KIND_PASS},
		{name: "the message's closing tag cut short, as in the platform's example", resources: []string{"X", "ZUP"},
			reply: "<player answer> PROPOSAL </player answer>\n<newly proposed trade> Player RED Gives X: 1 | Player BLUE Gives ZUP: 45 </newly proposed trade>\n<message> How about 45? </message",
			kind:  gamev1.MoveKind_MOVE_KIND_PROPOSE, gives: trade(map[string]int64{"X": 1}, map[string]int64{"ZUP": 45}), message: "How about 45?"},
		{name: "amount before the resource", resources: []string{"X", "ZUP"},
			reply: "<player answer> PROPOSAL </player answer>\n<newly proposed trade> Player RED Gives 1 X | Player BLUE Gives 40 ZUP </newly proposed trade>",
			kind:  gamev1.MoveKind_MOVE_KIND_PROPOSE, gives: trade(map[string]int64{"X": 1}, map[string]int64{"ZUP": 40})},
		{name: "blue first, lower case, commas in amounts", resources: []string{"Dollars"},
			reply: "<player answer> NONE </player answer>\n<newly proposed trade> player blue gives dollars: 0 | Player Red gives Dollars: 5,000,000,000 </newly proposed trade>",
			kind:  gamev1.MoveKind_MOVE_KIND_PROPOSE, gives: trade(map[string]int64{"Dollars": 5_000_000_000}, nil)},
		{name: "answered twice: the first filled-in answer counts", resources: []string{"X", "Y"},
			reply: "<player answer> [add here] </player answer>\n<player answer> NONE </player answer>\n<newly proposed trade> Player RED Gives X: 5 | Player BLUE Gives Y: 5 </newly proposed trade>\n\nOn second thought:\n<player answer> ACCEPT </player answer>\n<newly proposed trade> NONE </newly proposed trade>",
			kind:  gamev1.MoveKind_MOVE_KIND_PROPOSE, gives: trade(map[string]int64{"X": 5}, map[string]int64{"Y": 5})},
		{name: "prose around an unclosed answer", resources: []string{"X", "ZUP"},
			reply: "I think 50 is fair.\n<player answer> Propose a trade with\n<newly proposed trade> Player RED Gives X: 1 | Player BLUE Gives ZUP: 50 </newly proposed trade>\nThat is my offer.",
			kind:  gamev1.MoveKind_MOVE_KIND_PROPOSE, gives: trade(map[string]int64{"X": 1}, map[string]int64{"ZUP": 50})},
		{name: "a resource the game does not have is read as written", resources: []string{"X", "Y"},
			reply: "<player answer> NONE </player answer>\n<newly proposed trade> Player RED Gives X: 10 | Player BLUE Gives Any Resource: 5 </newly proposed trade>",
			kind:  gamev1.MoveKind_MOVE_KIND_PROPOSE, gives: trade(map[string]int64{"X": 10}, map[string]int64{"Any Resource": 5})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := llm.ReadArena(tc.reply, tc.resources)
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != tc.kind {
				t.Errorf("kind %v, want %v", r.Kind, tc.kind)
			}
			for s := range 2 {
				if len(r.Gives[s]) != len(tc.gives[s]) || !maps.Equal(r.Gives[s], tc.gives[s]) && len(tc.gives[s]) > 0 {
					t.Errorf("seat %d gives %v, want %v", s, r.Gives[s], tc.gives[s])
				}
			}
			if r.Message != tc.message {
				t.Errorf("message %q, want %q", r.Message, tc.message)
			}
		})
	}
}

func TestReadArenaRefusesWhatItCannotRead(t *testing.T) {
	for _, tc := range []struct{ name, reply, want string }{
		{"prose only", "I accept your offer of 40.", "no <player answer>"},
		{"a fraction", "<player answer> NONE </player answer><newly proposed trade> Player RED Gives X: 1 | Player BLUE Gives ZUP: 40.5 </newly proposed trade>", "not a whole number"},
		{"nobody named", "<player answer> NONE </player answer><newly proposed trade> X: 1 for ZUP: 40 </newly proposed trade>", "names neither"},
		{"a proposal with no trade", "<player answer> PROPOSAL </player answer>", "no <newly proposed trade>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := llm.ReadArena(tc.reply, []string{"X", "ZUP"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
