package record_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	ultimatumv1 "github.com/parley-arena/parley/gen/go/parley/games/ultimatum/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/record"
)

// sampleRecord is a hand-built ultimatum match with one event of every payload kind and most
// optional fields set.
func sampleRecord() []*eventsv1.MatchEvent {
	ev := func(seq uint64, turn int32) *eventsv1.MatchEvent {
		return &eventsv1.MatchEvent{MatchId: "m-1", Seq: seq, Turn: turn}
	}
	started := ev(1, 0)
	started.Time = timestamppb.New(time.Date(2025, 3, 4, 5, 6, 7, 8000, time.UTC))
	started.Payload = &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
		Game:         "ultimatum",
		RulesVersion: "1",
		Params: &matchv1.GameParams{Family: &matchv1.GameParams_Ultimatum{Ultimatum: &ultimatumv1.Params{
			Total: proto.Int64(100), MaxTurns: proto.Int32(8), Currency: proto.String("Dollars"),
		}}},
		Seed: 42,
		Seats: []*gamev1.SeatInfo{
			{Seat: 0, Name: "P1", Role: "holder", Agent: &gamev1.AgentInfo{Name: "fair", Version: "1", Games: []string{"ultimatum"}}},
			{Seat: 1, Name: "P2", Role: "receiver", Agent: &gamev1.AgentInfo{}},
		},
		Limits: &matchv1.Limits{MoveTimeout: durationpb.New(5 * time.Second), MaxRetries: proto.Int32(2), MaxReplyBytes: 65536},
	}}

	taken := ev(2, 1)
	taken.Payload = &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{
		Seat:    0,
		Attempt: 1,
		Action: &agentv1.Action{
			Move: &gamev1.Move{Kind: &gamev1.Move_Propose{Propose: &gamev1.Propose{Proposal: &gamev1.Proposal{
				Terms: &gamev1.Proposal_Allocation{Allocation: &gamev1.Allocation{Shares: []*gamev1.SeatShare{
					{Seat: 0, Gives: map[string]int64{"Dollars": 40}},
				}}},
			}}}},
			Messages: []*gamev1.Message{
				{Text: "Hello"},
				{To: []int32{1}, Text: `Just "you"`},
			},
			PrivateReasoning: "secret plan",
			PrivateNotes:     "note to self",
			Usage:            &agentv1.Usage{Model: "m", PromptTokens: 10, CompletionTokens: 5, Retries: 1},
		},
	}}

	refused := ev(3, 2)
	refused.Payload = &eventsv1.MatchEvent_ActionRefused{ActionRefused: &eventsv1.ActionRefused{
		Seat:      1,
		Attempt:   1,
		Action:    &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: "x"}}}},
		Rejection: &gamev1.Rejection{Code: gamev1.RejectionCode_REJECTION_CODE_ILLEGAL_MOVE, Message: "the ultimatum game has no choose move"},
	}}

	fault := ev(4, 2)
	fault.Payload = &eventsv1.MatchEvent_AgentFault{AgentFault: &eventsv1.AgentFault{
		Seat: 1, Attempt: 2, Kind: eventsv1.FaultKind_FAULT_KIND_TIMEOUT, Detail: "no answer within 5s",
	}}

	def := ev(5, 2)
	def.Payload = &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{
		Seat:          1,
		Action:        &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}},
		DefaultReason: "agent timed out",
	}}

	ended := ev(6, 2)
	ended.Payload = &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{
		Cause:        matchv1.EndCause_END_CAUSE_AGENT_FAULT,
		Payoffs:      []float64{60, 40.5},
		FaultedSeats: []int32{1},
		Summary:      "P2 rejected.",
	}}}
	return []*eventsv1.MatchEvent{started, taken, refused, fault, def, ended}
}

func TestMarshalIsCompactSingleLine(t *testing.T) {
	for _, ev := range sampleRecord() {
		t.Run(fmt.Sprintf("seq %d", ev.GetSeq()), func(t *testing.T) {
			line, err := record.Marshal(ev)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			if bytes.ContainsAny(line, "\n\r") {
				t.Errorf("Marshal output has a line break: %s", line)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, line); err != nil {
				t.Fatalf("Marshal output is not JSON: %v\n%s", err, line)
			}
			if !bytes.Equal(compact.Bytes(), line) {
				t.Errorf("Marshal output is not compact:\ngot  %s\nwant %s", line, compact.Bytes())
			}
			back := &eventsv1.MatchEvent{}
			if err := protojson.Unmarshal(line, back); err != nil {
				t.Fatalf("protojson.Unmarshal: %v", err)
			}
			if !proto.Equal(back, ev) {
				t.Errorf("round trip:\ngot  %v\nwant %v", back, ev)
			}
		})
	}
}

func TestWriterReadRoundTrip(t *testing.T) {
	events := sampleRecord()
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	for _, ev := range events {
		if err := w.Record(context.Background(), ev); err != nil {
			t.Fatalf("Record: %v", err)
		}
	}
	out := buf.String()
	if !strings.HasSuffix(out, "}\n") {
		t.Errorf("output does not end in a newline after the last event: %q", out[max(0, len(out)-10):])
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(events) {
		t.Fatalf("%d lines for %d events:\n%s", len(lines), len(events), out)
	}
	for i, line := range lines {
		want, err := record.Marshal(events[i])
		if err != nil {
			t.Fatal(err)
		}
		if line != string(want) {
			t.Errorf("line %d = %s, want %s", i+1, line, want)
		}
	}
	got, err := record.Read(strings.NewReader(out))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	assertEvents(t, got, events)
	if err := record.Validate(got); err != nil {
		t.Errorf("Validate of the sample record: %v", err)
	}
}

func assertEvents(t *testing.T, got, want []*eventsv1.MatchEvent) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d events, want %d", len(got), len(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Errorf("event %d:\ngot  %v\nwant %v", i+1, got[i], want[i])
		}
	}
}

func TestWriterConcurrent(t *testing.T) {
	const n = 50
	var buf bytes.Buffer
	w := record.NewWriter(&buf)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ev := &eventsv1.MatchEvent{MatchId: "m", Seq: uint64(i + 1), Payload: &eventsv1.MatchEvent_AgentFault{AgentFault: &eventsv1.AgentFault{
				Detail: strings.Repeat("x", 1000),
			}}}
			if err := w.Record(context.Background(), ev); err != nil {
				t.Errorf("Record: %v", err)
			}
		})
	}
	wg.Wait()
	got, err := record.Read(&buf)
	if err != nil {
		t.Fatalf("Read after concurrent writes: %v", err)
	}
	seen := make(map[uint64]bool)
	for _, ev := range got {
		seen[ev.GetSeq()] = true
	}
	if len(got) != n || len(seen) != n {
		t.Errorf("read %d events with %d distinct seqs, want %d", len(got), len(seen), n)
	}
}

type failingWriter struct{}

var errDiskFull = errors.New("disk full")

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriterError(t *testing.T) {
	err := record.NewWriter(failingWriter{}).Record(context.Background(), sampleRecord()[0])
	if !errors.Is(err, errDiskFull) || !strings.HasPrefix(err.Error(), "record: ") {
		t.Errorf("Record on a failing writer = %v, want a record: error wrapping %v", err, errDiskFull)
	}
}

func TestRead(t *testing.T) {
	events := sampleRecord()
	lines := make([]string, len(events))
	for i, ev := range events {
		b, err := record.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		lines[i] = string(b)
	}
	tests := []struct {
		name string
		in   string
		want []*eventsv1.MatchEvent
		// wantErr lists substrings of the error; empty means no error.
		wantErr []string
	}{
		{name: "empty input", in: "", want: nil},
		{name: "only blank lines", in: "\n\n   \n\t\n", want: nil},
		{name: "no final newline", in: lines[0] + "\n" + lines[1], want: events[:2]},
		{name: "blank lines skipped", in: "\n" + lines[0] + "\n   \n\n" + lines[1] + "\n\n", want: events[:2]},
		{name: "CRLF line endings", in: lines[0] + "\r\n" + lines[1] + "\r\n", want: events[:2]},
		{name: "indented lines", in: "  " + lines[0] + "  \n", want: events[:1]},
		{name: "multi-line protojson is refused", in: "{\n\"matchId\": \"m\"\n}\n", wantErr: []string{"line 1:"}},
		{name: "bad line number counts blank lines", in: lines[0] + "\n\n" + lines[1] + "\nnot json\n" + lines[2] + "\n", wantErr: []string{"line 4:", "not a match event"}},
		{name: "unknown field refused", in: lines[0] + "\n" + `{"matchId":"m-1","seq":2,"bogus":true}` + "\n", wantErr: []string{"line 2:", "bogus"}},
		{name: "unknown payload refused", in: `{"matchId":"m-1","seq":1,"somethingNew":{}}`, wantErr: []string{"line 1:", "somethingNew"}},
		{name: "wrong type refused", in: `{"matchId":"m-1","seq":"one"}`, wantErr: []string{"line 1:"}},
		{name: "truncated line", in: lines[0][:len(lines[0])/2] + "\n", wantErr: []string{"line 1:"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := record.Read(strings.NewReader(tc.in))
			if len(tc.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Read = %d events, want an error", len(got))
				}
				for _, s := range tc.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not contain %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Read: %v", err)
			}
			assertEvents(t, got, tc.want)
		})
	}
}

func TestValidate(t *testing.T) {
	started := func(id string, seq uint64) *eventsv1.MatchEvent {
		return &eventsv1.MatchEvent{MatchId: id, Seq: seq, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{Game: "g"}}}
	}
	fault := func(id string, seq uint64) *eventsv1.MatchEvent {
		return &eventsv1.MatchEvent{MatchId: id, Seq: seq, Payload: &eventsv1.MatchEvent_AgentFault{AgentFault: &eventsv1.AgentFault{}}}
	}
	ended := func(id string, seq uint64) *eventsv1.MatchEvent {
		return &eventsv1.MatchEvent{MatchId: id, Seq: seq, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{}}}
	}
	tests := []struct {
		name   string
		events []*eventsv1.MatchEvent
		// wantErr is the exact error; empty means valid.
		wantErr string
	}{
		{name: "sample", events: sampleRecord()},
		{name: "started only", events: []*eventsv1.MatchEvent{started("m", 1)}},
		{name: "cut short without match_ended", events: []*eventsv1.MatchEvent{started("m", 1), fault("m", 2)}},
		{name: "empty match id throughout", events: []*eventsv1.MatchEvent{started("", 1), ended("", 2)}},
		{name: "nil", events: nil, wantErr: "the record is empty"},
		{name: "empty", events: []*eventsv1.MatchEvent{}, wantErr: "the record is empty"},
		{name: "starts with another event", events: []*eventsv1.MatchEvent{fault("m", 1), started("m", 2)}, wantErr: "the record does not begin with match_started"},
		{name: "starts with an event without payload", events: []*eventsv1.MatchEvent{{MatchId: "m", Seq: 1}}, wantErr: "the record does not begin with match_started"},
		{name: "mixed match ids", events: []*eventsv1.MatchEvent{started("m", 1), fault("m", 2), fault("other", 3)}, wantErr: `event 3 belongs to match "other", not "m"`},
		{name: "first seq not 1", events: []*eventsv1.MatchEvent{started("m", 0)}, wantErr: "event 1 has sequence number 0"},
		{name: "seq gap", events: []*eventsv1.MatchEvent{started("m", 1), fault("m", 2), fault("m", 4)}, wantErr: "event 3 has sequence number 4"},
		{name: "seq repeated", events: []*eventsv1.MatchEvent{started("m", 1), fault("m", 2), fault("m", 2)}, wantErr: "event 3 has sequence number 2"},
		{name: "seq out of order", events: []*eventsv1.MatchEvent{started("m", 1), fault("m", 3), fault("m", 2)}, wantErr: "event 2 has sequence number 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := record.Validate(tc.events)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Validate: %v, want valid", err)
			case tc.wantErr != "" && err == nil:
				t.Errorf("Validate = nil, want %q", tc.wantErr)
			case tc.wantErr != "" && err.Error() != tc.wantErr:
				t.Errorf("Validate error %q, want %q", err, tc.wantErr)
			}
		})
	}
}
