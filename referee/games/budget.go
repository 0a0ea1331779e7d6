package games

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// The observation's budget (see Observation in agent.proto): whatever a match's length, what
// the referee sends a seat stays within these sizes, so no agent is faulted for the size of
// what it is sent and the cost of a turn does not grow with the turns before it.
const (
	// MaxObservationBytes bounds a whole encoded observation: well under gRPC's 4 MiB default
	// and the 1 MiB NATS payload the bot link carries it in, with room for their envelopes.
	MaxObservationBytes = 512 << 10
	// MaxHistoryEntries bounds the history window: the latest entries a seat may see.
	MaxHistoryEntries = 256
	// MaxHistoryBytes bounds the history window's encoded size. An entry is at most about
	// MaxMessages texts of MaxTextBytes (128 KiB), so the latest entry always fits.
	MaxHistoryBytes = 256 << 10
	// MaxNotesBytes bounds the notes window: the latest of a seat's own notes (each at most
	// MaxTextBytes, so at least the eight latest fit).
	MaxNotesBytes = 64 << 10
)

var (
	historyField        = observationField("history")
	notesField          = observationField("notes")
	historyOmittedField = observationField("history_omitted")
	notesOmittedField   = observationField("notes_omitted")
)

func observationField(name protoreflect.Name) protowire.Number {
	return (&agentv1.Observation{}).ProtoReflect().Descriptor().Fields().ByName(name).Number()
}

// listedSize is the encoded size of one element of n bytes of a repeated field.
func listedSize(field protowire.Number, n int) int {
	return protowire.SizeTag(field) + protowire.SizeBytes(n)
}

// LatestNotes returns the latest of a seat's notes that fit together in MaxNotesBytes, oldest
// first (a subslice of notes), and how many older ones it leaves out
// (Observation.notes_omitted).
func LatestNotes(notes []string) (kept []string, omitted int32) {
	i, size := len(notes), 0
	for ; i > 0; i-- {
		n := listedSize(notesField, len(notes[i-1]))
		if size+n > MaxNotesBytes {
			break
		}
		size += n
	}
	return notes[i:], int32(i)
}

// FitObservation leaves the oldest entries out of obs's history, then the oldest notes out
// of its notes, until obs encodes in at most budget bytes, and counts them in HistoryOmitted
// and NotesOmitted. It reports false when obs is over budget even with neither.
//
// An observation's size is that of the rest of it plus that of each entry and note, so it is
// worked out once and then kept up to date. Entries are sized from protobuf's cached sizes:
// an entry is read-only once made (see History), so a size cached when it was made or last
// sent is still its size, and a history a seat is shown every move is not walked every move.
func FitObservation(obs *agentv1.Observation, budget int) bool {
	history := obs.History
	obs.History = nil
	over := proto.Size(obs) - budget // the notes included
	obs.History = history
	for _, e := range history {
		over += entrySize(e)
	}
	for {
		switch {
		case over <= 0:
			return true
		case len(obs.History) > 0:
			k, freed := oldestToDrop(over, len(obs.History), func(i int) int { return entrySize(obs.History[i]) })
			obs.History = obs.History[k:]
			over += omitting(historyOmittedField, &obs.HistoryOmitted, k) - freed
		case len(obs.Notes) > 0:
			k, freed := oldestToDrop(over, len(obs.Notes), func(i int) int { return listedSize(notesField, len(obs.Notes[i])) })
			obs.Notes = obs.Notes[k:]
			over += omitting(notesOmittedField, &obs.NotesOmitted, k) - freed
		default:
			return false
		}
	}
}

// cachedSize sizes read-only messages, reusing what protobuf cached when they were last sized.
var cachedSize = proto.MarshalOptions{UseCachedSize: true}

// entrySize is the encoded size of a history entry in an observation.
func entrySize(e *agentv1.HistoryEntry) int { return listedSize(historyField, cachedSize.Size(e)) }

// omitting adds k to the count of omitted elements in field and returns the bytes the count's
// encoding grows by.
func omitting(field protowire.Number, count *int32, k int) int {
	size := func(n int32) int {
		if n == 0 {
			return 0
		}
		return protowire.SizeTag(field) + protowire.SizeVarint(uint64(n))
	}
	before := size(*count)
	*count += int32(k)
	return size(*count) - before
}

// oldestToDrop returns how many of n elements, oldest first, free at least over bytes (all of
// them when they do not), and the bytes they free.
func oldestToDrop(over, n int, size func(i int) int) (k, freed int) {
	for k = range n {
		if freed >= over {
			return k, freed
		}
		freed += size(k)
	}
	return n, freed
}
