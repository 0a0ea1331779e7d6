package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Play serves one seat of a match over one stream: each call's observation is put back
// together from what the call left out as the previous call's (PlayRequest.same_as_before),
// handled as Act handles it, in the order the calls come, and answered on the stream. A
// call's context ends with the stream (the referee cancels it when it gives up on a call) or
// when the observation's time limit, counted from the call's arrival, runs out. The agent is
// given the whole observation; it must not change it, since the next call's is built on it.
func (s *service) Play(stream agentv1.AgentService_PlayServer) error {
	ctx := stream.Context()
	var prev *carried // nil or &kept
	var kept carried
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		out := &agentv1.PlayResponse{Call: req.GetCall()}
		if err := restore(req, prev); err != nil {
			// A stream this side cannot follow: the referee opens another.
			out.ErrorCode, out.ErrorMessage = int32(codes.InvalidArgument), err.Error()
			prev = nil
		} else {
			obs := req.GetAct().GetObservation()
			kept = carried{seats: obs.GetSeats(), briefing: obs.GetBriefing(), history: obs.GetHistory()}
			prev = &kept
			cctx, cancel := callContext(ctx, req)
			resp, err := s.Act(cctx, req.GetAct())
			cancel()
			out.Act = resp
			if err != nil {
				st := status.Convert(err)
				out.ErrorCode, out.ErrorMessage = int32(st.Code()), st.Message()
			}
		}
		if err := stream.Send(out); err != nil {
			return err
		}
	}
}

// carried is what a call's whole observation carried that the next call may leave out: all
// the stream keeps of it.
type carried struct {
	seats    []*gamev1.SeatInfo
	briefing string
	history  []*agentv1.HistoryEntry
}

// restore puts back into req's observation what it left out as prev's.
func restore(req *agentv1.PlayRequest, prev *carried) error {
	same := req.GetSameAsBefore()
	obs := req.GetAct().GetObservation()
	if same == nil || obs == nil {
		return nil
	}
	if prev == nil {
		return errors.New("play: the call leaves out what no earlier call of the stream carried")
	}
	if same.GetSeats() {
		obs.Seats = prev.seats
	}
	if n := int(same.GetBriefingBytes()); n > 0 {
		if n > len(prev.briefing) {
			return fmt.Errorf("play: the call keeps %d bytes of a %d-byte briefing", n, len(prev.briefing))
		}
		obs.Briefing = prev.briefing[:n] + obs.GetBriefing()
	}
	if same.GetHistory() {
		from := int(same.GetHistoryFrom())
		if from > len(prev.history) {
			return fmt.Errorf("play: the call keeps history from entry %d of %d", from, len(prev.history))
		}
		obs.History = append(slices.Clip(prev.history[from:]), obs.GetHistory()...)
	}
	return nil
}

// callContext is the context of one call of a stream: it ends with the stream, or when the
// observation's time limit has passed since the call came.
func callContext(ctx context.Context, req *agentv1.PlayRequest) (context.Context, context.CancelFunc) {
	if d := req.GetAct().GetObservation().GetTimeLimit().AsDuration(); d > 0 {
		return context.WithTimeout(ctx, d)
	}
	return context.WithCancel(ctx)
}
