package bus

import (
	"errors"
	"fmt"
	"strconv"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

const (
	// MaxMatchIDLen is the longest match id accepted, in bytes.
	MaxMatchIDLen = 128

	// UnknownEvent is the event token used when no payload branch is set.
	UnknownEvent = "unknown"

	// payloadOneof is the name of MatchEvent's oneof in the proto file.
	payloadOneof = "payload"
)

// ErrInvalidMatchID reports a match id that cannot be one subject token.
var ErrInvalidMatchID = errors.New("bus: invalid match id")

// ValidMatchID checks that id can stand as a single NATS subject token: 1 to
// MaxMatchIDLen bytes, each an ASCII letter, digit, '_' or '-'. Dots,
// wildcards and spaces would split or widen the subject. The error wraps
// ErrInvalidMatchID.
func ValidMatchID(id string) error {
	if id == "" || len(id) > MaxMatchIDLen {
		return fmt.Errorf("%w %q: must be 1 to %d bytes of A-Z, a-z, 0-9, '_' or '-' (got %d bytes)",
			ErrInvalidMatchID, id, MaxMatchIDLen, len(id))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("%w %q: byte %d (%q) is not one of A-Z, a-z, 0-9, '_' or '-'",
				ErrInvalidMatchID, id, i, c)
		}
	}
	return nil
}

// Subject returns the subject an event of the given match travels on:
// parley.match.<matchID>.<event>, where <event> is EventName(ev). It does not
// validate matchID; see ValidMatchID.
func Subject(matchID string, ev *eventsv1.MatchEvent) string {
	return natsname.MatchSubject(matchID, EventName(ev))
}

// EventName returns the proto field name of the payload branch set in ev
// ("match_started", "action_taken", ...), read from the message descriptor so
// that a branch added to the proto needs no change here. It returns
// UnknownEvent when ev is nil or no branch is set.
func EventName(ev *eventsv1.MatchEvent) string {
	if ev == nil || payload == nil {
		return UnknownEvent
	}
	fd := ev.ProtoReflect().WhichOneof(payload)
	if fd == nil {
		return UnknownEvent
	}
	return string(fd.Name())
}

// payload is MatchEvent's payload oneof, looked up once: EventName runs for every event.
var payload = (&eventsv1.MatchEvent{}).ProtoReflect().Descriptor().Oneofs().ByName(payloadOneof)

// MsgID returns the JetStream message id of a match's event number seq:
// <matchID>/<seq>. JetStream drops a second message with the same id within
// DuplicateWindow, and consumers de-duplicate on it.
func MsgID(matchID string, seq uint64) string {
	return matchID + "/" + strconv.FormatUint(seq, 10)
}
