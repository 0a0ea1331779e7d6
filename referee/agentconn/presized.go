package agentconn

import (
	"fmt"

	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// presized encodes a Play stream's requests with the sizes protobuf cached when the runner
// fitted the observation to its budget (games.FitObservation) and when its history entries
// were made (games.History), so that a move's observation is sized once, not once more by
// gRPC. That is sound for a request whose own messages are new (roundTrip sends a copy of the
// observation, sentCopy) and whose parts are unchanged since they were sized; a part changed
// since is caught by protobuf (its measured size differs from the cached one) and the request
// is then encoded afresh, as gRPC's own codec does. Decoding is gRPC's.
type presized struct{ encoding.CodecV2 }

// presizedCodec is the codec of every Play stream the referee opens.
var presizedCodec = presized{encoding.GetCodecV2(grpcproto.Name)}

// Name is empty so that a stream's content type stays "application/grpc", as without a codec
// of its own (gRPC would name the codec in it: "application/grpc+proto").
func (presized) Name() string { return "" }

func (c presized) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("agentconn: encoding %T, not a protobuf message", v)
	}
	buf, err := proto.MarshalOptions{UseCachedSize: true}.Marshal(m)
	if err != nil {
		return c.CodecV2.Marshal(v)
	}
	return mem.BufferSlice{mem.SliceBuffer(buf)}, nil
}

// sentCopy is a new observation holding obs's fields (the values shared, not copied): what a
// call leaves out is taken out of the copy, so obs stays as the runner made it, and the copy
// has no size cached that a change could make stale. Every field is copied
// (TestSentCopyHasEveryField).
func sentCopy(obs *agentv1.Observation) *agentv1.Observation {
	return &agentv1.Observation{
		MatchId:          obs.MatchId,
		Game:             obs.Game,
		Seat:             obs.Seat,
		Seats:            obs.Seats,
		Phase:            obs.Phase,
		Turn:             obs.Turn,
		MaxTurns:         obs.MaxTurns,
		TimeLimit:        obs.TimeLimit,
		Deadline:         obs.Deadline,
		Attempt:          obs.Attempt,
		LegalMoves:       obs.LegalMoves,
		ProposalBounds:   obs.ProposalBounds,
		Choices:          obs.Choices,
		History:          obs.History,
		LastRejection:    obs.LastRejection,
		Notes:            obs.Notes,
		Briefing:         obs.Briefing,
		MaxReplyBytes:    obs.MaxReplyBytes,
		HistoryOmitted:   obs.HistoryOmitted,
		NotesOmitted:     obs.NotesOmitted,
		RequiredMessages: obs.RequiredMessages,
		ProposalForms:    obs.ProposalForms,
		MessageTermForms: obs.MessageTermForms,
		TokensLeft:       obs.TokensLeft,
		View:             obs.View,
	}
}
