// Package botlink carries a referee's calls to a bot that dials out. The bot holds a stream
// open to a gateway (BotLinkService.Connect); the gateway subscribes, for as long as the
// stream lasts, to the bot's NATS subject. A referee reaches the bot with a Client, an
// AgentServiceClient that sends each call as a NATS request on that subject and reads the
// reply, so referees and gateways can be separate processes sharing one NATS server. With no
// session open the request fails at once (no responders): the referee records the bot as
// unavailable instead of waiting out the deadline.
package botlink

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/teams/registry"
)

// codeHeader carries, in a reply the gateway makes itself, the gRPC code of the failure
// (the bot disconnected, the session closed): the CallResult's error then says why.
const codeHeader = "Parley-Code"

// takeoverWait bounds the wait for the session open before to hand a bot's calls over.
const takeoverWait = 10 * time.Second

// linkRoom is what a call or result may not use of the NATS payload limit: the headers of a
// request and its reply.
const linkRoom = 1 << 10

// Client reaches a dial-out bot through whichever gateway holds its session. It implements
// agentv1.AgentServiceClient; grpc.MaxCallRecvMsgSize is honoured, other call options ignored.
type Client struct {
	nc         *nats.Conn
	team, name string
}

var _ agentv1.AgentServiceClient = (*Client)(nil)

// NewClient returns a client of the dial-out bot team/name.
func NewClient(nc *nats.Conn, team, name string) *Client {
	return &Client{nc: nc, team: team, name: name}
}

// Act asks the bot for an action.
func (c *Client) Act(ctx context.Context, req *agentv1.ActRequest, opts ...grpc.CallOption) (*agentv1.ActResponse, error) {
	res, err := c.call(ctx, &botlinkv1.Call{Kind: &botlinkv1.Call_Act{Act: req}}, opts)
	if err != nil {
		return nil, err
	}
	if res.GetAct() == nil {
		return nil, status.Errorf(codes.Internal, "bot %s/%s answered an act call with something else", c.team, c.name)
	}
	return res.GetAct(), nil
}

// Play is not carried over a link: UNIMPLEMENTED, so the referee asks the bot with Act.
func (c *Client) Play(context.Context, ...grpc.CallOption) (grpc.BidiStreamingClient[agentv1.PlayRequest, agentv1.PlayResponse], error) {
	return nil, status.Errorf(codes.Unimplemented, "bot %s/%s is reached through its link, which carries Act and Describe calls", c.team, c.name)
}

// Describe asks the bot who it is.
func (c *Client) Describe(ctx context.Context, req *agentv1.DescribeRequest, opts ...grpc.CallOption) (*agentv1.DescribeResponse, error) {
	res, err := c.call(ctx, &botlinkv1.Call{Kind: &botlinkv1.Call_Describe{Describe: req}}, opts)
	if err != nil {
		return nil, err
	}
	if res.GetDescribe() == nil {
		return nil, status.Errorf(codes.Internal, "bot %s/%s answered a describe call with something else", c.team, c.name)
	}
	return res.GetDescribe(), nil
}

func (c *Client) call(ctx context.Context, call *botlinkv1.Call, opts []grpc.CallOption) (*botlinkv1.CallResult, error) {
	call.CallId = newID()
	if d, ok := ctx.Deadline(); ok {
		call.Deadline = timestamppb.New(d)
	}
	data, err := proto.Marshal(call)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if len(data) > int(c.nc.MaxPayload())-linkRoom {
		// Rare: only a server with a payload limit under the observation's budget needs it.
		if err := c.fit(call); err != nil {
			return nil, err
		}
		if data, err = proto.Marshal(call); err != nil {
			return nil, status.Error(codes.Internal, err.Error())
		}
	}
	msg, err := c.nc.RequestWithContext(ctx, natsname.BotCallSubject(c.team, c.name), data)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, status.Errorf(codes.Unavailable, "dial-out bot %s/%s is not connected to any gateway", c.team, c.name)
	case ctx.Err() != nil:
		return nil, status.FromContextError(ctx.Err()).Err()
	case err != nil:
		return nil, status.Errorf(codes.Unavailable, "dial-out bot %s/%s: %v", c.team, c.name, err)
	}
	for _, o := range opts {
		if m, ok := o.(grpc.MaxRecvMsgSizeCallOption); ok && m.MaxRecvMsgSize > 0 && len(msg.Data) > m.MaxRecvMsgSize {
			// The same words grpc-go uses, so the referee records an oversized reply.
			return nil, status.Errorf(codes.ResourceExhausted, "grpc: received message larger than max (%d vs. %d)", len(msg.Data), m.MaxRecvMsgSize)
		}
	}
	res := new(botlinkv1.CallResult)
	if err := proto.Unmarshal(msg.Data, res); err != nil {
		return nil, status.Errorf(codes.Internal, "bot %s/%s: unmarshal reply: %v", c.team, c.name, err)
	}
	if e, ok := res.GetKind().(*botlinkv1.CallResult_Error); ok {
		code := codes.Unknown
		if n, err := strconv.Atoi(msg.Header.Get(codeHeader)); err == nil {
			code = codes.Code(n)
		}
		return nil, status.Errorf(code, "bot %s/%s: %s", c.team, c.name, e.Error)
	}
	return res, nil
}

// fit keeps call within what NATS carries: an observation too large for the link (a server
// whose payload limit is under the observation's budget) leaves out more of its oldest history
// and notes, counted as the referee counts them (games.FitObservation), on a copy.
func (c *Client) fit(call *botlinkv1.Call) error {
	limit := int(c.nc.MaxPayload()) - linkRoom
	over := proto.Size(call) - limit
	obs := call.GetAct().GetObservation()
	if over <= 0 || limit <= 0 {
		return nil
	}
	if obs != nil {
		obs = proto.CloneOf(obs)
		if games.FitObservation(obs, proto.Size(obs)-over) {
			call.GetAct().Observation = obs
			return nil
		}
	}
	return status.Errorf(codes.Unavailable, "the bot link to %s/%s carries at most %d bytes, and this call needs %d even without history or notes", c.team, c.name, limit, limit+over)
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Connected reports whether some gateway holds a session of team/name now.
func Connected(ctx context.Context, nc *nats.Conn, team, name string) bool {
	ctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_, err := nc.RequestWithContext(ctx, natsname.BotPingSubject(team, name), nil)
	return err == nil
}

// Session is the gateway's end of one bot's stream: it takes the bot's calls from NATS,
// passes them to send, and replies with the results Deliver is given.
//
// A bot holds one session at a time, so which one gets its calls is never in doubt: a session
// that starts takes the bot over from the one open before, through whichever gateway that is
// (Start). The one before stops taking calls before the new one takes any, still answers the
// calls it was sent, and is told it was replaced (Replaced).
type Session struct {
	nc         *nats.Conn
	team, name string
	send       func(*botlinkv1.Call) error
	grace      time.Duration

	mu       sync.Mutex
	pending  map[string]chan *botlinkv1.CallResult
	subs     []*nats.Subscription
	closed   chan struct{}
	reason   string
	handover bool          // a newer session took the calls over
	replaced chan struct{} // closed then
	wg       sync.WaitGroup
}

// NewSession returns a session for bot team/name; send passes a call to the bot and must be
// safe for concurrent use. Start subscribes.
func NewSession(nc *nats.Conn, team, name string, send func(*botlinkv1.Call) error) *Session {
	return &Session{
		nc: nc, team: team, name: name, send: send, grace: time.Second,
		pending: map[string]chan *botlinkv1.CallResult{}, closed: make(chan struct{}), replaced: make(chan struct{}),
	}
}

// Start takes the bot over from the session of it open before, if any, then subscribes to
// the bot's subjects: every call to the bot comes here from then on, until Close or until a
// newer session takes over. Sessions of one bot must start one at a time (the gateway holds
// registry.Store.LockLink meanwhile); of sessions started at once otherwise, one may stay
// subscribed with the next for a moment, and each call still reaches only one of them.
func (s *Session) Start() error {
	if err := s.takeOver(); err != nil {
		return err
	}
	call, err := s.nc.QueueSubscribe(natsname.BotCallSubject(s.team, s.name), natsname.BotCallQueue, func(m *nats.Msg) {
		s.mu.Lock()
		select {
		case <-s.closed:
			s.mu.Unlock()
			s.fail(m, codes.Unavailable, "the bot's session closed: "+s.reason)
			return
		default:
		}
		if s.handover {
			s.mu.Unlock()
			s.fail(m, codes.Unavailable, "the bot's session was handing over to a newer one")
			return
		}
		s.wg.Add(1) // under mu, so never after Close or a hand-over began waiting
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.handle(m)
		}()
	})
	if err != nil {
		return fmt.Errorf("botlink: subscribe: %w", err)
	}
	subs := []*nats.Subscription{call}
	for subject, handler := range map[string]nats.MsgHandler{
		natsname.BotPingSubject(s.team, s.name):     func(m *nats.Msg) { _ = m.Respond(nil) },
		natsname.BotTakeoverSubject(s.team, s.name): s.handOver,
	} {
		sub, err := s.nc.Subscribe(subject, handler)
		if err != nil {
			for _, sub := range subs {
				_ = sub.Unsubscribe()
			}
			return fmt.Errorf("botlink: subscribe: %w", err)
		}
		subs = append(subs, sub)
	}
	s.mu.Lock()
	s.subs = subs
	s.mu.Unlock()
	// Subscriptions are live once the server has them: a referee asking right after the
	// bot's Welcome must find a responder.
	return s.nc.Flush()
}

// takeOver asks the session of the bot open before, wherever it is, to hand the bot over, and
// returns once it has stopped taking calls (or there is none).
func (s *Session) takeOver() error {
	subject := natsname.BotTakeoverSubject(s.team, s.name)
	// One session at a time is open; a few more answers allow for sessions of gateways
	// started without the lock's bucket, and for one that answers as it goes.
	for range 4 {
		_, err := s.nc.Request(subject, nil, takeoverWait)
		switch {
		case errors.Is(err, nats.ErrNoResponders):
			return nil
		case err != nil:
			return fmt.Errorf("botlink: the session of bot %s/%s open before did not hand the bot over: %w", s.team, s.name, err)
		}
	}
	return fmt.Errorf("botlink: bot %s/%s still has other sessions after four hand-overs", s.team, s.name)
}

// handOver answers a newer session's takeover: no call comes here any more (the subscriptions
// end before the answer leaves, on the same connection, so the server has them ended before
// the newer session subscribes), the calls under way are still answered, and Replaced is
// closed.
func (s *Session) handOver(m *nats.Msg) {
	s.mu.Lock()
	subs := s.subs
	s.subs = nil
	first := !s.handover
	s.handover = true
	s.mu.Unlock()
	for _, sub := range subs {
		_ = sub.Unsubscribe()
	}
	_ = m.Respond(nil)
	if first {
		close(s.replaced)
	}
}

// Replaced is closed when a newer session of the bot has taken its calls over; the calls this
// one was sent are still answered (Drained).
func (s *Session) Replaced() <-chan struct{} { return s.replaced }

// Drained returns a channel closed once the calls under way are answered or given up. Call
// it only once Replaced is closed: no call is taken after that.
func (s *Session) Drained() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	return done
}

// Deliver hands over the bot's answer to a call; an answer to an unknown or expired call is
// dropped and reported false.
func (s *Session) Deliver(res *botlinkv1.CallResult) bool {
	s.mu.Lock()
	ch, ok := s.pending[res.GetCallId()]
	delete(s.pending, res.GetCallId())
	s.mu.Unlock()
	if ok {
		ch <- res // buffered
	}
	return ok
}

// Close unsubscribes; calls still waiting fail as unavailable with reason. It waits for
// the calls being handled to be answered.
func (s *Session) Close(reason string) {
	s.mu.Lock()
	select {
	case <-s.closed:
		s.mu.Unlock()
		return
	default:
	}
	s.reason = reason
	close(s.closed)
	subs := s.subs
	s.subs = nil
	s.mu.Unlock()
	for _, sub := range subs {
		_ = sub.Unsubscribe()
	}
	s.wg.Wait()
}

func (s *Session) handle(m *nats.Msg) {
	call := new(botlinkv1.Call)
	if err := proto.Unmarshal(m.Data, call); err != nil || call.GetCallId() == "" {
		s.fail(m, codes.Internal, "malformed call")
		return
	}
	ch := make(chan *botlinkv1.CallResult, 1)
	s.mu.Lock()
	s.pending[call.GetCallId()] = ch
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.pending, call.GetCallId())
		s.mu.Unlock()
	}()
	if err := s.send(call); err != nil {
		s.fail(m, codes.Unavailable, "the bot's session failed: "+err.Error())
		return
	}
	// The referee stops waiting at the deadline; a little longer here lets a reply that
	// crosses it still be matched and dropped quietly.
	wait := 5 * time.Minute
	if d := call.GetDeadline(); d != nil {
		wait = time.Until(d.AsTime()) + s.grace
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case res := <-ch:
		data, err := proto.Marshal(res)
		if err != nil {
			s.fail(m, codes.Internal, err.Error())
			return
		}
		if limit := int(s.nc.MaxPayload()) - linkRoom; len(data) > limit {
			// NATS would drop it and the referee wait out the deadline: say at once, in
			// grpc-go's words, that the reply is too large, as a direct connection would.
			s.fail(m, codes.ResourceExhausted, fmt.Sprintf("grpc: received message larger than max (%d vs. %d)", len(data), limit))
			return
		}
		_ = m.Respond(data)
	case <-s.closed:
		s.fail(m, codes.Unavailable, "the bot disconnected before answering: "+s.reason)
	case <-timer.C:
		// The referee has given up already; nothing to say.
	}
}

func (s *Session) fail(m *nats.Msg, code codes.Code, why string) {
	data, _ := proto.Marshal(&botlinkv1.CallResult{Kind: &botlinkv1.CallResult_Error{Error: why}})
	reply := nats.NewMsg(m.Reply)
	reply.Data = data
	reply.Header.Set(codeHeader, strconv.Itoa(int(code)))
	_ = m.RespondMsg(reply)
}

// Directory finds registered bots and reaches dial-out ones; it is what a referee's agent
// resolver needs to open "bot:team/name" addresses.
type Directory struct {
	Store *registry.Store
	NC    *nats.Conn
}

// Bot returns the registered bot team/name.
func (d Directory) Bot(ctx context.Context, team, name string) (*registryv1.Bot, error) {
	if err := registry.ValidName("team", team); err != nil {
		return nil, err
	}
	if err := registry.ValidName("bot", name); err != nil {
		return nil, err
	}
	// A revoked team's bots stay listed but play no more.
	if err := d.Store.Active(ctx, team); err != nil {
		return nil, err
	}
	return d.Store.Bot(ctx, team, name)
}

// Link returns a client of the dial-out bot team/name.
func (d Directory) Link(team, name string) agentv1.AgentServiceClient {
	return NewClient(d.NC, team, name)
}

// OpenDirectory opens the bot registry on b as the directory a referee's agent resolver
// finds registered bots in (agentconn.Resolver.Bots).
func OpenDirectory(ctx context.Context, b *bus.Bus) (Directory, error) {
	store, err := registry.Open(ctx, b.JetStream())
	if err != nil {
		return Directory{}, err
	}
	return Directory{Store: store, NC: b.Conn()}, nil
}

var _ agentconn.BotDirectory = Directory{}
