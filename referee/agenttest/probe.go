package agenttest

import (
	"context"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// mode is what a probe does to the requests on their way to the bot.
type mode int

const (
	// forward passes every request through unchanged.
	forward mode = iota
	// rejectFirst answers the first request of the match itself, with an action that has no
	// move, so that the referee refuses it and asks the bot again with the rejection.
	rejectFirst
	// unknownFields adds fields no Parley version defines to every request.
	unknownFields
	// wholeOnly passes every request through unchanged, to the bot's Act (never over Play):
	// each observation whole.
	wholeOnly
)

// call is one request the probe saw.
type call struct {
	obs     *agentv1.Observation // as the referee built it
	latency time.Duration
	err     error
	faked   bool // answered by the probe, not sent to the bot
}

// probe stands between the match runner and the bot: it records each request the runner
// sends (so the observations are exactly what a referee sends) and how long the bot took.
type probe struct {
	bot  agentv1.AgentServiceClient
	mode mode

	mu        sync.Mutex
	sabotaged bool
	calls     []call
}

var _ agentv1.AgentServiceClient = (*probe)(nil)

// Play is not the probe's: the bot's own client (under it) carries the calls over Play where
// the bot serves it.
func (p *probe) Play(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[agentv1.PlayRequest, agentv1.PlayResponse], error) {
	return nil, status.Error(codes.Unimplemented, "agenttest: the probe is asked with Act")
}

func (p *probe) Describe(ctx context.Context, in *agentv1.DescribeRequest, opts ...grpc.CallOption) (*agentv1.DescribeResponse, error) {
	return p.bot.Describe(ctx, in, opts...)
}

func (p *probe) Act(ctx context.Context, in *agentv1.ActRequest, opts ...grpc.CallOption) (*agentv1.ActResponse, error) {
	if p.mode == rejectFirst && in.GetObservation().GetAttempt() == 1 {
		p.mu.Lock()
		first := !p.sabotaged
		p.sabotaged = true
		if first {
			p.calls = append(p.calls, call{obs: in.GetObservation(), faked: true})
		}
		p.mu.Unlock()
		if first {
			return &agentv1.ActResponse{Action: &agentv1.Action{}}, nil
		}
	}
	req := in
	if p.mode == unknownFields {
		req = withUnknownFields(in)
	}
	start := time.Now()
	resp, err := p.bot.Act(ctx, req, opts...)
	c := call{obs: in.GetObservation(), latency: time.Since(start), err: err}
	p.mu.Lock()
	p.calls = append(p.calls, c)
	p.mu.Unlock()
	return resp, err
}

// sent returns the requests that reached the bot.
func (p *probe) sent() []call {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []call
	for _, c := range p.calls {
		if !c.faked {
			out = append(out, c)
		}
	}
	return out
}

// timedOut reports whether a call failed because its deadline passed.
func (c call) timedOut(deadline time.Duration) bool {
	return c.err != nil && (status.Code(c.err) == codes.DeadlineExceeded || c.latency >= deadline)
}

// Field numbers no Parley message uses: what a newer referee might add.
const (
	unknownBytesField  protowire.Number = 4001
	unknownVarintField protowire.Number = 4002
)

// unknownPayload is two fields a bot built from an older proto has never heard of.
func unknownPayload() []byte {
	b := protowire.AppendTag(nil, unknownBytesField, protowire.BytesType)
	b = protowire.AppendString(b, "a field from a newer version of the protocol")
	b = protowire.AppendTag(b, unknownVarintField, protowire.VarintType)
	return protowire.AppendVarint(b, 42)
}

// withUnknownFields returns a copy of in carrying unknown fields at the top, in the
// observation and in a message nested in it; proto.Marshal writes them out as they are.
func withUnknownFields(in *agentv1.ActRequest) *agentv1.ActRequest {
	out := proto.CloneOf(in)
	add := func(m proto.Message) {
		r := m.ProtoReflect()
		r.SetUnknown(append(r.GetUnknown(), unknownPayload()...))
	}
	add(out)
	if obs := out.GetObservation(); obs != nil {
		add(obs)
		for _, s := range obs.GetSeats() {
			add(s)
		}
	}
	return out
}
