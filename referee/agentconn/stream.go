package agentconn

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// streams says whether an agent serves Play, as far as known: one per connection, shared by
// every seat client on it.
type streams struct {
	unsupported atomic.Bool // Play failed before answering anything, and Act answered
	served      atomic.Bool // Play answered at least once
}

// seatClient asks one seat's agent over one Play stream (AgentService.Play): the stream is
// opened by the first Act and closed with the Conn, so a match pays for a call's set-up once
// per seat instead of once per move; on a pooled connection to an agent whose streams span
// matches (Observing.streams_span_matches) it is parked with the connection instead, for the
// next seat to play there, and the first Act takes a parked one when there is one. A call that
// fails ends the stream with it (the agent's work is cancelled as for Act) and the next call
// opens another; the first call on a stream taken from the park that fails is made again once
// on a new stream, since the agent may have closed the parked one.
//
// Play is optional. Until it has answered once on the connection, a Play that fails before
// its first answer, with whatever status (UNIMPLEMENTED from most gRPC libraries, UNKNOWN
// "Illegal arity" from grpc-ruby, INTERNAL from others), is taken for not served: the same
// call is made with Act in the time left, and once Act has answered, every seat on the
// connection is asked with Act from then on. Every error names the call that failed ("Play:
// ...", "Act: ..."), so that records and agent-check say which one it was.
// Calls come one at a time, as the runner makes them for one seat.
type seatClient struct {
	agentv1.AgentServiceClient
	support *streams
	ctx     context.Context // ends with the Conn
	stop    context.CancelFunc
	park    *streamPark // nil: streams end with the Conn

	mu       sync.Mutex // one call at a time
	stream   *seatStream
	inFlight atomic.Pointer[seatStream] // the stream of the call being made, if any
}

// seatStream is an open Play stream.
type seatStream struct {
	s      agentv1.AgentService_PlayClient
	ctx    context.Context // ends with the stream
	cancel context.CancelFunc
	calls  uint64   // calls sent on it
	prev   *carried // what its last observation carried, whole: nil or &kept
	kept   carried
	// unparked: taken from the park, and not yet answered on since.
	unparked bool
	parked   time.Time // when it was parked last
}

// forget drops what the stream's last observation carried: the next call sends it whole.
func (st *seatStream) forget() { st.prev, st.kept = nil, carried{} }

// carried is what a call's observation carried that the next call may leave out: all the
// stream keeps of it, so the rest of the observation is not held between calls.
type carried struct {
	seats    []*gamev1.SeatInfo
	briefing string
	history  []*agentv1.HistoryEntry
	omitted  int32 // Observation.history_omitted
}

// playOverhead bounds what a PlayResponse adds to the ActResponse it carries (the call
// number, the field's tag and length), so that the largest answer accepted is Act's.
const playOverhead = 16

func newSeatClient(c agentv1.AgentServiceClient, support *streams, park *streamPark) *seatClient {
	ctx, stop := context.WithCancel(context.Background())
	return &seatClient{AgentServiceClient: c, support: support, ctx: ctx, stop: stop, park: park}
}

// Act sends the call over the seat's stream and waits for its answer, ctx's end, or the end
// of the stream. The errors are those Act would give: the agent's status, the transport's
// (an answer too large or that cannot be decoded, a broken connection), or ctx's.
func (c *seatClient) Act(ctx context.Context, in *agentv1.ActRequest, opts ...grpc.CallOption) (*agentv1.ActResponse, error) {
	if c.support.unsupported.Load() {
		return c.act(ctx, in, opts, nil)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ans, err := c.send(ctx, in, opts, false)
	switch {
	case err != nil && ans.unparked && ctx.Err() == nil:
		// The stream waited in the park, where the agent may have closed it (it restarted, or
		// let idle streams go): once more on a new stream, and the streams parked with it go.
		c.park.clear()
		ans, err = c.send(ctx, in, opts, true)
	case err == nil && codes.Code(ans.GetErrorCode()) == codes.InvalidArgument && ans.leftOut:
		// The agent's side could not put the observation back together: send it whole, on a
		// stream of its own (once).
		ans, err = c.send(ctx, in, opts, true)
	}
	if err != nil {
		if ans.PlayResponse == nil && !c.support.served.Load() && ctx.Err() == nil && c.ctx.Err() == nil {
			return c.act(ctx, in, opts, err)
		}
		return nil, namedError("Play", err)
	}
	c.support.served.Store(true)
	if code := codes.Code(ans.GetErrorCode()); code != codes.OK {
		return nil, status.Error(code, "Play: "+ans.GetErrorMessage())
	}
	if ans.GetAct() == nil {
		return &agentv1.ActResponse{}, nil
	}
	return ans.GetAct(), nil
}

// act makes the call with Act. After a Play that failed before answering (playErr), an
// answer marks the connection as one to ask with Act, and a failure says what Play said too,
// unless that was only UNIMPLEMENTED.
func (c *seatClient) act(ctx context.Context, in *agentv1.ActRequest, opts []grpc.CallOption, playErr error) (*agentv1.ActResponse, error) {
	resp, err := c.AgentServiceClient.Act(ctx, in, opts...)
	switch {
	case err == nil && playErr != nil:
		c.support.unsupported.Store(true)
	case err != nil && playErr != nil && status.Code(playErr) != codes.Unimplemented:
		play := status.Convert(playErr)
		return nil, namedError("Act", err, fmt.Sprintf("asked with Act after Play failed before answering: %s: %s", play.Code(), play.Message()))
	case err != nil:
		return nil, namedError("Act", err)
	}
	return resp, err
}

// namedError is err, a gRPC status, with the call that failed named at the head of its message
// and any notes after it; its code is kept.
func namedError(call string, err error, notes ...string) error {
	st := status.Convert(err)
	msg := call + ": " + st.Message()
	for _, n := range notes {
		msg += " (" + n + ")"
	}
	return status.Error(st.Code(), msg)
}

// answer is a call's answer, and how the call went.
type answer struct {
	*agentv1.PlayResponse
	leftOut  bool // the call left out what the previous one carried
	unparked bool // the stream was taken from the park for this call
}

// send makes one call over the seat's stream, opening one when there is none (or, unless
// fresh, taking one from the park). A call that fails takes its stream down with it (an
// answer that is an error does not).
func (c *seatClient) send(ctx context.Context, in *agentv1.ActRequest, opts []grpc.CallOption, fresh bool) (answer, error) {
	if c.ctx.Err() != nil {
		return answer{}, status.Error(codes.Canceled, "agentconn: the agent's connection is closed")
	}
	if c.stream == nil && !fresh && c.parks() {
		c.stream = c.park.take()
	}
	if c.stream == nil {
		// A stream that may be parked outlives the Conn: it ends with the connection.
		parent := c.ctx
		if c.parks() {
			parent = c.park.ctx
		}
		sctx, cancel := context.WithCancel(parent)
		s, err := c.AgentServiceClient.Play(sctx, streamOptions(opts)...)
		if err != nil {
			cancel()
			return answer{}, err
		}
		c.stream = &seatStream{s: s, ctx: sctx, cancel: cancel}
	}
	st := c.stream
	c.inFlight.Store(st)
	defer c.inFlight.Store(nil)
	if c.ctx.Err() != nil {
		// Closed meanwhile (close saw no call in flight, or cancelled this one's stream).
		st.cancel()
	}
	// Whatever blocks (an agent that reads nothing, or answers nothing) ends with ctx: the
	// stream is cancelled under it.
	stopTimer := context.AfterFunc(ctx, st.cancel)
	st.calls++
	ans := answer{unparked: st.unparked}
	var err error
	ans.PlayResponse, ans.leftOut, err = st.roundTrip(st.calls, in)
	st.unparked = false
	if !stopTimer() && err == nil {
		// The time ran out as the answer came: the stream is being cancelled under it, and an
		// answer the referee had stopped waiting for is a timeout, as it would be a moment later.
		err = status.FromContextError(ctx.Err()).Err()
	}
	if limit := maxRecv(opts); err == nil && limit > 0 && proto.Size(ans.GetAct()) > limit {
		err = status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", proto.Size(ans.GetAct()), limit)
	}
	if err != nil || ans.leftOut && codes.Code(ans.GetErrorCode()) == codes.InvalidArgument {
		c.stream = nil
		st.cancel()
	}
	if err != nil && ctx.Err() != nil {
		err = status.FromContextError(ctx.Err()).Err()
	}
	return ans, err
}

// roundTrip sends one call, leaving out what the stream's previous call carried, and reads
// until its answer.
func (st *seatStream) roundTrip(call uint64, in *agentv1.ActRequest) (ans *agentv1.PlayResponse, leftOut bool, err error) {
	obs := in.GetObservation()
	// The request's messages are new ones (see presized); in holds nothing but obs.
	req := &agentv1.PlayRequest{Call: call, Act: &agentv1.ActRequest{}}
	if obs != nil {
		req.Act.Observation = sentCopy(obs)
		if st.prev != nil {
			req.SameAsBefore = leaveOut(req.Act.Observation, st.prev)
		}
	}
	err = st.s.Send(req) // encodes req before it returns
	leftOut = req.SameAsBefore != nil
	st.forget()
	if obs != nil {
		st.kept = carried{seats: obs.Seats, briefing: obs.Briefing, history: obs.History, omitted: obs.HistoryOmitted}
		st.prev = &st.kept
	}
	if err != nil {
		// Send reports only that the stream ended; Recv says why.
		if _, rerr := st.s.Recv(); rerr != nil {
			return nil, leftOut, rerr
		}
		return nil, leftOut, err
	}
	for {
		ans, err := st.s.Recv()
		if err != nil {
			return nil, leftOut, err
		}
		if ans.GetCall() == call {
			return ans, leftOut, nil
		}
		// An answer to no call waiting: skipped, as a stale answer to Act would be.
	}
}

// briefingKept is the least run of briefing lines worth leaving out.
const briefingKept = 256

// leaveOut takes out of obs (a copy about to be sent) what prev (the stream's previous
// observation) carried already, and returns what it took out; nil when nothing. What is left
// out:
//   - the seats, when they are prev's (the runner gives every observation of a match the same);
//   - the lines that begin both briefings (the rules);
//   - the history entries both show. A seat's history is a window on an append-only list:
//     the entries it sees in all, Observation.history_omitted plus those shown, only grow, so
//     the counts say which of prev's entries lead obs's and which follow them; the two ends of
//     that run are checked all the same, and anything amiss sends the history whole.
func leaveOut(obs *agentv1.Observation, prev *carried) *agentv1.SameAsBefore {
	same := &agentv1.SameAsBefore{}
	seats, briefing, history := obs.Seats, obs.Briefing, obs.History
	if len(seats) > 0 && len(seats) == len(prev.seats) && sameSeats(seats, prev.seats) {
		same.Seats = true
		obs.Seats = nil
	}
	if n := commonLines(briefing, prev.briefing); n >= briefingKept {
		same.BriefingBytes = uint32(n)
		obs.Briefing = briefing[n:]
	}
	if from, kept, ok := sharedHistory(obs, prev); ok && kept > 0 {
		same.History, same.HistoryFrom = true, uint32(from)
		obs.History = history[kept:]
	}
	if !same.Seats && same.BriefingBytes == 0 && !same.History {
		return nil
	}
	return same
}

func sameSeats(a, b []*gamev1.SeatInfo) bool {
	for i := range a {
		if a[i] != b[i] && !proto.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// commonLines is the length of the longest run of whole lines both strings begin with.
func commonLines(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	// Whole chunks first: comparing strings is many times faster than a loop over bytes.
	const chunk = 256
	for i+chunk <= n && a[i:i+chunk] == b[i:i+chunk] {
		i += chunk
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return strings.LastIndexByte(a[:i], '\n') + 1
}

// sharedHistory finds the entries obs's history and prev's share: prev's from index from on
// are obs's first kept entries.
func sharedHistory(obs *agentv1.Observation, prev *carried) (from, kept int, ok bool) {
	from = int(obs.GetHistoryOmitted()) - int(prev.omitted)
	kept = len(prev.history) - from
	if from < 0 || kept <= 0 || kept > len(obs.History) {
		return 0, 0, false
	}
	if !sameEntry(obs.History[0], prev.history[from]) || !sameEntry(obs.History[kept-1], prev.history[len(prev.history)-1]) {
		return 0, 0, false
	}
	return from, kept, true
}

// sameEntry compares what tells history entries apart (cheaply: the counts have placed them
// already; this is a check).
func sameEntry(a, b *agentv1.HistoryEntry) bool {
	if a.GetTurn() != b.GetTurn() || a.GetSeat() != b.GetSeat() || a.GetFromReferee() != b.GetFromReferee() ||
		a.GetSummary() != b.GetSummary() || len(a.GetMessages()) != len(b.GetMessages()) || (a.GetMove() == nil) != (b.GetMove() == nil) {
		return false
	}
	for i, m := range a.GetMessages() {
		if m.GetText() != b.GetMessages()[i].GetText() || len(m.GetTo()) != len(b.GetMessages()[i].GetTo()) {
			return false
		}
	}
	return true
}

// maxRecv is the largest answer opts accept (0: gRPC's default).
func maxRecv(opts []grpc.CallOption) int {
	n := 0
	for _, o := range opts {
		if m, ok := o.(grpc.MaxRecvMsgSizeCallOption); ok {
			n = m.MaxRecvMsgSize
		}
	}
	return n
}

// streamOptions are opts for a stream: the largest message accepted grows by what a
// PlayResponse adds to its answer (Act checks the answer itself), and requests are encoded
// with the sizes cached when they were made (presized).
func streamOptions(opts []grpc.CallOption) []grpc.CallOption {
	out := make([]grpc.CallOption, len(opts), len(opts)+1)
	for i, o := range opts {
		if m, ok := o.(grpc.MaxRecvMsgSizeCallOption); ok && m.MaxRecvMsgSize > 0 {
			o = grpc.MaxCallRecvMsgSize(m.MaxRecvMsgSize + playOverhead)
		}
		out[i] = o
	}
	return append(out, grpc.ForceCodecV2(presizedCodec))
}

// NewClient returns c as a Conn asks its agent: over a Play stream where the agent serves it,
// with Act otherwise, every error naming the call that failed; for a client reached another
// way than through a Resolver (a gateway's relay). stop ends its stream.
func NewClient(c agentv1.AgentServiceClient) (client agentv1.AgentServiceClient, stop func()) {
	s := newSeatClient(c, &streams{}, nil)
	return s, s.close
}

// ActOnly returns c as a client that asks with Act alone, never over a Play stream: for a
// bare round trip to measure a stream against, or to check what an agent's Act answers.
func ActOnly(c agentv1.AgentServiceClient) agentv1.AgentServiceClient {
	if s, ok := c.(*seatClient); ok {
		return s.AgentServiceClient
	}
	return c
}

// KnownDescription returns the agent's answer to Describe when it is known without a call (an
// agent of this process, or one described before on the same connection), or nil. The answer
// is shared: it must not be changed.
func (c *seatClient) KnownDescription() *agentv1.DescribeResponse {
	if d, ok := c.AgentServiceClient.(*describeCache); ok {
		return d.known()
	}
	return nil
}

// newMatch readies the client for another match: its next call sends the observation whole.
// Leaving out what the last call carried is checked only by counts and ends, which across
// matches could agree by chance.
func (c *seatClient) newMatch() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stream != nil {
		c.stream.forget()
	}
}

// parks reports whether the client's streams go to a park when it closes: on a pooled
// connection, to an agent that said its streams span matches.
func (c *seatClient) parks() bool {
	if c.park == nil {
		return false
	}
	d, ok := c.AgentServiceClient.(*describeCache)
	return ok && d.known().GetObserving().GetStreamsSpanMatches()
}

// close ends the stream, and a call still waiting on it; a stream with no call waiting goes
// to the park instead, where the client parks.
func (c *seatClient) close() {
	c.stop() // a call made from now on fails, and one that begins cancels its stream
	if st := c.inFlight.Load(); st != nil {
		st.cancel() // a call waiting ends now, its stream with it
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stream
	c.stream = nil
	if st != nil && (st.ctx.Err() != nil || !c.parks() || !c.park.put(st)) {
		st.cancel()
	}
}

// streamPark keeps the idle Play streams of one pooled connection, for the next seats to play
// there (Observing.streams_span_matches): at most maxParked, none longer than idle.
type streamPark struct {
	ctx  context.Context // the connection's: parked streams end with it
	idle time.Duration

	mu      sync.Mutex
	streams []*seatStream // oldest first
}

// maxParked bounds the streams parked on one connection: as many as matches play there at
// once, as a rule, which the referee's concurrency bounds.
const maxParked = 256

// take returns the stream parked last, readied for a new match, or nil.
func (p *streamPark) take() *seatStream {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropStaleLocked(time.Now())
	n := len(p.streams)
	if n == 0 {
		return nil
	}
	st := p.streams[n-1]
	p.streams[n-1] = nil
	p.streams = p.streams[:n-1]
	st.forget()
	st.unparked = true
	return st
}

// put parks st, unless the park is full or its connection gone.
func (p *streamPark) put(st *seatStream) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	p.dropStaleLocked(now)
	if p.ctx.Err() != nil || len(p.streams) >= maxParked {
		return false
	}
	st.parked = now
	p.streams = append(p.streams, st)
	return true
}

// clear ends every parked stream.
func (p *streamPark) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.streams {
		st.cancel()
	}
	p.streams = nil
}

// dropStaleLocked ends the streams parked longer than idle.
func (p *streamPark) dropStaleLocked(now time.Time) {
	n := 0
	for n < len(p.streams) && now.Sub(p.streams[n].parked) > p.idle {
		p.streams[n].cancel()
		n++
	}
	if n > 0 {
		p.streams = slices.Delete(p.streams, 0, n)
	}
}
