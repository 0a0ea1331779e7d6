// Package record reads and writes match records as JSON lines (one protojson MatchEvent per
// line) and renders them as transcripts people can follow. The same format is what
// `parley play --json` prints and what `--record FILE` writes, so any of them can be replayed.
package record

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
)

// maxLine bounds one JSON line when reading; an event is far smaller.
const maxLine = 16 << 20

// Marshal returns ev as one line of compact JSON without the trailing newline. protojson
// output is not promised to be stable in its whitespace, so it is compacted.
func Marshal(ev *eventsv1.MatchEvent) ([]byte, error) {
	raw, err := protojson.Marshal(ev)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Writer writes events as JSON lines. It is a match.Recorder and safe for concurrent use.
type Writer struct {
	mu sync.Mutex
	w  io.Writer
}

// NewWriter returns a Writer on w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Record writes ev as one line.
func (w *Writer) Record(_ context.Context, ev *eventsv1.MatchEvent) error {
	line, err := Marshal(ev)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	line = append(line, '\n')
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.w.Write(line); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// Read reads JSON-lines events. Blank lines are skipped; a bad line is an error naming its
// line number. Unknown fields are refused so that a file from another program is noticed.
func Read(r io.Reader) ([]*eventsv1.MatchEvent, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var out []*eventsv1.MatchEvent
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		ev := &eventsv1.MatchEvent{}
		if err := protojson.Unmarshal(line, ev); err != nil {
			return nil, fmt.Errorf("line %d: not a match event: %w", n, err)
		}
		out = append(out, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Validate checks that events form one match's record: same match id, sequence numbers 1, 2,
// 3, ... and MatchStarted first. It does not require MatchEnded (a record may be cut short).
func Validate(events []*eventsv1.MatchEvent) error {
	if len(events) == 0 {
		return fmt.Errorf("the record is empty")
	}
	if events[0].GetMatchStarted() == nil {
		return fmt.Errorf("the record does not begin with match_started")
	}
	id := events[0].GetMatchId()
	for i, ev := range events {
		if ev.GetMatchId() != id {
			return fmt.Errorf("event %d belongs to match %q, not %q", i+1, ev.GetMatchId(), id)
		}
		if ev.GetSeq() != uint64(i+1) {
			return fmt.Errorf("event %d has sequence number %d", i+1, ev.GetSeq())
		}
	}
	return nil
}
