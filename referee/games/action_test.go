package games_test

import (
	"errors"
	"strings"
	"testing"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

func TestCheckAction(t *testing.T) {
	const (
		ok      = gamev1.RejectionCode_REJECTION_CODE_UNSPECIFIED
		missing = gamev1.RejectionCode_REJECTION_CODE_MISSING_MOVE
		badMsg  = gamev1.RejectionCode_REJECTION_CODE_BAD_MESSAGE
	)
	rejectMove := &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}
	// action builds an action with a reject move and the given messages.
	action := func(msgs ...*gamev1.Message) *agentv1.Action {
		return &agentv1.Action{Move: rejectMove, Messages: msgs}
	}
	messages := func(n int) []*gamev1.Message {
		out := make([]*gamev1.Message, n)
		for i := range out {
			out[i] = &gamev1.Message{Text: "m"}
		}
		return out
	}
	const limit = 8192 // MaxTextBytes, worked out: 8 KiB
	atLimit := strings.Repeat("a", limit)
	overLimit := strings.Repeat("a", limit+1)
	// 2730 three-byte runes are 8190 bytes; one more is 8193, over the limit though only 2731
	// characters: the limit is on bytes.
	runesOver := strings.Repeat("€", 2731)
	invalid := "ok \xff\xfe not UTF-8"

	tests := []struct {
		name   string
		action *agentv1.Action
		seat   games.Seat
		nSeats int
		code   gamev1.RejectionCode
		// wantMsg is a substring of the rejection's message.
		wantMsg string
	}{
		{name: "nil action", action: nil, seat: 0, nSeats: 2, code: missing, wantMsg: "no move"},
		{name: "no move", action: &agentv1.Action{Messages: []*gamev1.Message{{Text: "hi"}}}, seat: 0, nSeats: 2, code: missing, wantMsg: "no move"},
		{name: "empty oneof", action: &agentv1.Action{Move: &gamev1.Move{}}, seat: 0, nSeats: 2, code: missing, wantMsg: "set exactly one of"},
		{name: "valid: move only", action: action(), seat: 0, nSeats: 2, code: ok},
		{name: "valid: public and addressed messages", action: action(&gamev1.Message{Text: "all"}, &gamev1.Message{To: []int32{0, 2}, Text: "two"}), seat: 1, nSeats: 3, code: ok},
		{name: "valid: 16 messages", action: &agentv1.Action{Move: rejectMove, Messages: messages(16)}, seat: 0, nSeats: 2, code: ok},
		{name: "valid: texts at the limit", action: &agentv1.Action{Move: rejectMove, Messages: []*gamev1.Message{{Text: atLimit}}, PrivateReasoning: atLimit, PrivateNotes: atLimit}, seat: 0, nSeats: 2, code: ok},
		{name: "valid: empty texts", action: action(&gamev1.Message{To: []int32{1}}), seat: 0, nSeats: 2, code: ok},
		{name: "valid: other move kinds", action: &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{}}}}, seat: 0, nSeats: 2, code: ok},
		{name: "too many messages", action: &agentv1.Action{Move: rejectMove, Messages: messages(17)}, seat: 0, nSeats: 2, code: badMsg, wantMsg: "17 messages in one action; at most 16"},
		{name: "message to self", action: action(&gamev1.Message{To: []int32{1}, Text: "me"}), seat: 1, nSeats: 3, code: badMsg, wantMsg: "sender's own seat 1"},
		{name: "message to self among others", action: action(&gamev1.Message{To: []int32{0, 2}, Text: "x"}), seat: 2, nSeats: 3, code: badMsg, wantMsg: "own seat 2"},
		{name: "message to a seat past the end", action: action(&gamev1.Message{To: []int32{3}, Text: "x"}), seat: 0, nSeats: 3, code: badMsg, wantMsg: "seat 3, which does not exist (seats are 0 to 2)"},
		{name: "message to a negative seat", action: action(&gamev1.Message{To: []int32{-1}, Text: "x"}), seat: 0, nSeats: 2, code: badMsg, wantMsg: "seat -1, which does not exist"},
		{name: "duplicate recipient", action: action(&gamev1.Message{To: []int32{1, 2, 1}, Text: "x"}), seat: 0, nSeats: 3, code: badMsg, wantMsg: "seat 1 twice"},
		{name: "the same recipient in two messages is fine", action: action(&gamev1.Message{To: []int32{1}, Text: "a"}, &gamev1.Message{To: []int32{1}, Text: "b"}), seat: 0, nSeats: 2, code: ok},
		{name: "second message bad", action: action(&gamev1.Message{Text: "fine"}, &gamev1.Message{To: []int32{5}, Text: "x"}), seat: 0, nSeats: 2, code: badMsg, wantMsg: "seat 5"},
		{name: "message text too long", action: action(&gamev1.Message{Text: overLimit}), seat: 0, nSeats: 2, code: badMsg, wantMsg: "message is 8193 bytes long; at most 8192"},
		{name: "message text too long in bytes, not characters", action: action(&gamev1.Message{Text: runesOver}), seat: 0, nSeats: 2, code: badMsg, wantMsg: "message is 8193 bytes long"},
		{name: "private_reasoning too long", action: &agentv1.Action{Move: rejectMove, PrivateReasoning: overLimit}, seat: 0, nSeats: 2, code: badMsg, wantMsg: "private_reasoning is 8193 bytes long"},
		{name: "private_notes too long", action: &agentv1.Action{Move: rejectMove, PrivateNotes: overLimit}, seat: 0, nSeats: 2, code: badMsg, wantMsg: "private_notes is 8193 bytes long"},
		{name: "message invalid UTF-8", action: action(&gamev1.Message{Text: invalid}), seat: 0, nSeats: 2, code: badMsg, wantMsg: "message is not valid UTF-8"},
		{name: "private_reasoning invalid UTF-8", action: &agentv1.Action{Move: rejectMove, PrivateReasoning: invalid}, seat: 0, nSeats: 2, code: badMsg, wantMsg: "private_reasoning is not valid UTF-8"},
		{name: "private_notes invalid UTF-8", action: &agentv1.Action{Move: rejectMove, PrivateNotes: invalid}, seat: 0, nSeats: 2, code: badMsg, wantMsg: "private_notes is not valid UTF-8"},
		{name: "truncated rune", action: &agentv1.Action{Move: rejectMove, PrivateNotes: "€"[:2]}, seat: 0, nSeats: 2, code: badMsg, wantMsg: "not valid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := games.CheckAction(tc.action, tc.seat, tc.nSeats)
			if tc.code == ok {
				if err != nil {
					t.Fatalf("CheckAction: %v, want no error", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("CheckAction = nil, want a %v rejection", tc.code)
			}
			var rej *games.Rejection
			if !errors.As(err, &rej) {
				t.Fatalf("CheckAction error %v (%T) is not a *games.Rejection", err, err)
			}
			if rej.Code != tc.code {
				t.Errorf("code = %v, want %v", rej.Code, tc.code)
			}
			if !strings.Contains(rej.Message, tc.wantMsg) {
				t.Errorf("message %q does not contain %q", rej.Message, tc.wantMsg)
			}
			if p := rej.Proto(); p.GetCode() != tc.code || p.GetMessage() != rej.Message {
				t.Errorf("Proto() = %v, want code %v and the same message", p, tc.code)
			}
		})
	}
	if games.MaxTextBytes != limit || games.MaxMessages != 16 {
		t.Errorf("limits changed: MaxTextBytes %d, MaxMessages %d; update this test", games.MaxTextBytes, games.MaxMessages)
	}
}
