package bus

import (
	"errors"
	"strings"
	"testing"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

func TestSubject(t *testing.T) {
	tests := []struct {
		name string
		ev   *eventsv1.MatchEvent
		want string
	}{
		{"match started", &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{}}}, "parley.match.m1.match_started"},
		{"action taken", &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_ActionTaken{ActionTaken: &eventsv1.ActionTaken{}}}, "parley.match.m1.action_taken"},
		{"action refused", &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_ActionRefused{ActionRefused: &eventsv1.ActionRefused{}}}, "parley.match.m1.action_refused"},
		{"agent fault", &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_AgentFault{AgentFault: &eventsv1.AgentFault{}}}, "parley.match.m1.agent_fault"},
		{"match ended", &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{}}}, "parley.match.m1.match_ended"},
		{"branch set to nil message", &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{}}, "parley.match.m1.match_ended"},
		{"no payload", &eventsv1.MatchEvent{MatchId: "m1", Seq: 3}, "parley.match.m1.unknown"},
		{"nil event", nil, "parley.match.m1.unknown"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Subject("m1", tc.ev); got != tc.want {
				t.Errorf("Subject = %q, want %q", got, tc.want)
			}
		})
	}
}

// Every branch of the payload oneof gets its own token, named after the
// proto field, with no code listing them.
func TestEventNameCoversEveryBranch(t *testing.T) {
	oneof := (&eventsv1.MatchEvent{}).ProtoReflect().Descriptor().Oneofs().ByName(payloadOneof)
	if oneof == nil {
		t.Fatalf("MatchEvent has no oneof %q", payloadOneof)
	}
	fields := oneof.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		m := (&eventsv1.MatchEvent{}).ProtoReflect()
		m.Set(fd, m.NewField(fd))
		ev := m.Interface().(*eventsv1.MatchEvent)
		if got := EventName(ev); got != string(fd.Name()) {
			t.Errorf("EventName with %s set = %q", fd.Name(), got)
		}
	}
}

func TestMsgID(t *testing.T) {
	tests := []struct {
		matchID string
		seq     uint64
		want    string
	}{
		{"m1", 1, "m1/1"},
		{"tournament-3_match-17", 42, "tournament-3_match-17/42"},
		{"m", 18446744073709551615, "m/18446744073709551615"},
		{"m", 0, "m/0"},
	}
	for _, tc := range tests {
		if got := MsgID(tc.matchID, tc.seq); got != tc.want {
			t.Errorf("MsgID(%q, %d) = %q, want %q", tc.matchID, tc.seq, got, tc.want)
		}
	}
}

func TestValidMatchID(t *testing.T) {
	tests := []struct {
		name string
		id   string
		ok   bool
	}{
		{"simple", "m1", true},
		{"all allowed bytes", "AZaz09_-", true},
		{"uuid", "0b7e2f3c-6a1d-4c7e-9f0a-2d5b8e1c4a77", true},
		{"max length", strings.Repeat("a", MaxMatchIDLen), true},
		{"too long", strings.Repeat("a", MaxMatchIDLen+1), false},
		{"empty", "", false},
		{"dot splits tokens", "a.b", false},
		{"star wildcard", "a*", false},
		{"gt wildcard", ">", false},
		{"space", "a b", false},
		{"tab", "a\tb", false},
		{"slash", "a/b", false},
		{"dollar", "$JS", false},
		{"non-ascii", "matché", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidMatchID(tc.id)
			if tc.ok && err != nil {
				t.Fatalf("ValidMatchID(%q) = %v, want nil", tc.id, err)
			}
			if !tc.ok {
				if !errors.Is(err, ErrInvalidMatchID) {
					t.Fatalf("ValidMatchID(%q) = %v, want ErrInvalidMatchID", tc.id, err)
				}
				if !strings.Contains(err.Error(), "A-Z, a-z, 0-9, '_' or '-'") {
					t.Errorf("error %q does not say which bytes are allowed", err)
				}
			}
		})
	}
}

// The names of a match's first and last events that filters are built from are the names
// EventName gives their payloads.
func TestStartedAndEndedEventNames(t *testing.T) {
	started := &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{}}}
	ended := &eventsv1.MatchEvent{Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{}}}
	if got := EventName(started); got != natsname.StartedEvent {
		t.Errorf("natsname.StartedEvent = %q, the payload's name is %q", natsname.StartedEvent, got)
	}
	if got := EventName(ended); got != natsname.EndedEvent {
		t.Errorf("natsname.EndedEvent = %q, the payload's name is %q", natsname.EndedEvent, got)
	}
}
