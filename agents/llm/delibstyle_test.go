package llm

import (
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// TestDeliberationStyle reads answers shaped like the ones real models wrote in the
// LLM-Deliberation study's transcripts: the format as asked, tags dropped or written as
// headings, sections left open, answers given twice, deals without tags.
func TestDeliberationStyle(t *testing.T) {
	const deal = `proposal{` + wantDeal + `}`
	tests := []struct {
		name, reply, want, wantErr string
		obs                        func() *agentv1.Observation
		kind                       FailureKind
	}{
		{name: "as asked", obs: dealTalkObs,
			reply: "<SCRATCHPAD>\nA2 gives me 11.\n</SCRATCHPAD>\n<ANSWER>\nI propose <DEAL>A2, B1, C4</DEAL>.\n</ANSWER>\n<PLAN>\nTry C3 next.\n</PLAN>",
			want:  `move{say{}} messages{text:"I propose <DEAL>A2, B1, C4</DEAL>." ` + deal + `} private_reasoning:"A2 gives me 11." private_notes:"Try C3 next."`},
		{name: "no deal", obs: dealTalkObs,
			reply: "<SCRATCHPAD>x</SCRATCHPAD><ANSWER>Let us keep talking.</ANSWER>",
			want:  `move{say{}} messages{text:"Let us keep talking."} private_reasoning:"x"`},
		{name: "answer left open, plan after it", obs: dealTalkObs,
			reply: "<SCRATCHPAD>x</SCRATCHPAD>\n<ANSWER>\nI back <DEAL>A2,B1,C4</DEAL> now.\n<PLAN>later</PLAN>",
			want:  `move{say{}} messages{text:"I back <DEAL>A2,B1,C4</DEAL> now." ` + deal + `} private_reasoning:"x" private_notes:"later"`},
		{name: "sections as headings", obs: dealTalkObs,
			reply: "**SCRATCHPAD**\n\nA2 scores well.\n\n**ANSWER**\n\nWe agree on <DEAL>\nA2, B1, C4\n</DEAL>\n\n**PLAN**\n\nHold.",
			want:  `move{say{}} messages{text:"We agree on <DEAL>\nA2, B1, C4\n</DEAL>" ` + deal + `} private_reasoning:"A2 scores well." private_notes:"Hold."`},
		{name: "deal tag left open", obs: dealTalkObs,
			reply: "<SCRATCHPAD>x</SCRATCHPAD><ANSWER>Agreed.\n\n<DEAL>\n\nA2, B1, C4\n\n<PLAN>p</PLAN>",
			want:  `move{say{}} messages{text:"Agreed.\n\n<DEAL>\n\nA2, B1, C4" ` + deal + `} private_reasoning:"x" private_notes:"p"`},
		{name: "answering twice: the last answer counts", obs: dealTalkObs,
			reply: "<ANSWER>First <DEAL>A1, B1, C1</DEAL></ANSWER><SCRATCHPAD>no, better:</SCRATCHPAD><ANSWER>Second <DEAL>A2, B1, C4</DEAL></ANSWER>",
			want:  `move{say{}} messages{text:"Second <DEAL>A2, B1, C4</DEAL>" ` + deal + `} private_reasoning:"no, better:"`},
		{name: "two deals in one answer: the first counts", obs: dealTalkObs,
			reply: "<ANSWER>I propose <DEAL>A2,B1,C4</DEAL>, or else <DEAL>A3,B2,C1</DEAL>.</ANSWER>",
			want:  `move{say{}} messages{text:"I propose <DEAL>A2,B1,C4</DEAL>, or else <DEAL>A3,B2,C1</DEAL>." ` + deal + `}`},
		{name: "deal in tags with prose inside", obs: dealTalkObs,
			reply: "<ANSWER><DEAL>A2 (mixed), B1 (harm), C4 (high)</DEAL></ANSWER>",
			want:  `move{say{}} messages{text:"<DEAL>A2 (mixed), B1 (harm), C4 (high)</DEAL>" ` + deal + `}`},
		{name: "no tags at all: all of it is the answer, options without tags", obs: dealFinalObs,
			reply: "I agree with the current deal of A2, B1, C4. Let's finalize.",
			want:  `move{propose{` + deal + `}} messages{text:"I agree with the current deal of A2, B1, C4. Let's finalize."}`},
		{name: "prose naming two options of an issue is no deal", obs: dealTalkObs,
			reply: "<ANSWER>Maybe A1 or A2, with B1 and C4.</ANSWER>",
			want:  `move{say{}} messages{text:"Maybe A1 or A2, with B1 and C4."}`},
		{name: "untagged deal, then more options as talk", obs: dealTalkObs,
			reply: "<ANSWER>I propose A2, B1 and C4, or C3 if need be.</ANSWER>",
			want:  `move{say{}} messages{text:"I propose A2, B1 and C4, or C3 if need be." ` + deal + `}`},
		{name: "untagged deal, one option per sentence", obs: dealTalkObs,
			reply: "<ANSWER>Keep the mix (A2). Accept some harm (B1). Go high (C4). Or C1 later.</ANSWER>",
			want:  `move{say{}} messages{text:"Keep the mix (A2). Accept some harm (B1). Go high (C4). Or C1 later." ` + deal + `}`},
		{name: "a tagged deal with two options of an issue is none", obs: dealTalkObs,
			reply: "<ANSWER>I propose <DEAL>A2, B1, C4+C3</DEAL>.</ANSWER>",
			want:  `move{say{}} messages{text:"I propose <DEAL>A2, B1, C4+C3</DEAL>."}`},
		{name: "text outside the sections is the answer when none is tagged", obs: dealTalkObs,
			reply: "<SCRATCHPAD>private</SCRATCHPAD>\nI suggest <DEAL>A2, B1, C4</DEAL>.\n<PLAN>p</PLAN>",
			want:  `move{say{}} messages{text:"I suggest <DEAL>A2, B1, C4</DEAL>." ` + deal + `} private_reasoning:"private" private_notes:"p"`},
		{name: "the opening: the whole answer, deal in tags", obs: dealOpeningObs,
			reply: "Welcome. To start: <DEAL>A1, B2, C4</DEAL>.",
			want:  `move{propose{proposal{deal{choices{issue:"A" option:"A1"} choices{issue:"B" option:"B2"} choices{issue:"C" option:"C4"}}}}} messages{text:"Welcome. To start: <DEAL>A1, B2, C4</DEAL>."}`},
		{name: "final deal", obs: dealFinalObs,
			reply: "<SCRATCHPAD>s</SCRATCHPAD><ANSWER>Final: <DEAL>A2, B1, C4</DEAL></ANSWER>",
			want:  `move{propose{` + deal + `}} messages{text:"Final: <DEAL>A2, B1, C4</DEAL>"} private_reasoning:"s"`},
		{name: "final turn, a word for no deal", obs: dealFinalObs,
			reply: "<ANSWER>Reject: we could not agree.</ANSWER>",
			want:  `move{reject{}} messages{text:"Reject: we could not agree."}`},
		{name: "final turn without a deal", obs: dealFinalObs,
			reply: "<SCRATCHPAD>s</SCRATCHPAD><ANSWER>Thanks, everyone, for the talks.</ANSWER>",
			kind:  FailNoMove, wantErr: "names no complete deal"},
		{name: "all of it in the scratchpad", obs: dealTalkObs,
			reply: "<SCRATCHPAD>I will propose A2, B1, C4 and say so.",
			kind:  FailUnparsable, wantErr: "has no public part"},
		{name: "an answer heading inside a tagged scratchpad stays private", obs: dealTalkObs,
			reply: "<SCRATCHPAD>draft\nAnswer:\nmy minimum is 55\n</SCRATCHPAD><ANSWER>Hello.</ANSWER>",
			want:  `move{say{}} messages{text:"Hello."} private_reasoning:"draft\nAnswer:\nmy minimum is 55"`},
		{name: "empty answer then the plan: nothing public", obs: dealTalkObs,
			reply: "<SCRATCHPAD>Thinking.\n\n<ANSWER>\n\n<PLAN>\nNext steps.\n</PLAN>",
			kind:  FailUnparsable, wantErr: "has no public part"},
		{name: "lower-case tags", obs: dealTalkObs,
			reply: "<scratchpad>s</scratchpad><answer>ok <deal>a2, b1, c4</deal></answer>",
			want:  `move{say{}} messages{text:"ok <deal>a2, b1, c4</deal>" ` + deal + `} private_reasoning:"s"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkParse(t, deliberationStyle{}, tc.obs(), tc.reply, tc.want, tc.wantErr, tc.kind)
		})
	}
}
