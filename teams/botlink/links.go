package botlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	"github.com/parley-arena/parley/internal/contract"
	"github.com/parley-arena/parley/teams/registry"
)

// helloTimeout bounds the wait for a new link's Hello.
const helloTimeout = 10 * time.Second

// Links serves the links of dial-out bots: the logic behind
// parley.botlink.v1.BotLinkService/Connect, whose streams the gateway authenticates and hands
// over with the caller's team. Its errors are gRPC statuses.
type Links struct {
	// Registry finds the bots and tells when a team is revoked. Required.
	Registry *registry.Service
	// NC is the NATS connection referees reach the bots through. Required.
	NC *nats.Conn
	// Logger (nil: discard).
	Logger *slog.Logger
}

// stream is one bot's side of a link.
type stream struct {
	recv func() (*botlinkv1.ConnectRequest, error)
	send func(*botlinkv1.ConnectResponse) error
}

func (s stream) Receive() (*botlinkv1.ConnectRequest, error) { return s.recv() }
func (s stream) Send(m *botlinkv1.ConnectResponse) error     { return s.send(m) }

// Serve serves one link of team's bot, whose stream receives with recv and sends with send,
// until the bot closes it, it breaks, ctx ends or the team is revoked.
func (l *Links) Serve(ctx context.Context, team string, recv func() (*botlinkv1.ConnectRequest, error), send func(*botlinkv1.ConnectResponse) error) error {
	stream := stream{recv: recv, send: send}
	log := l.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	hello, err := receiveHello(stream)
	if err != nil {
		return err
	}
	name, err := registry.OwnBot(team, hello.GetBot())
	if err != nil {
		return err
	}
	bot, err := l.Registry.Bot(ctx, team, name)
	switch {
	case err != nil:
		return err
	case bot.GetRetired():
		return status.Errorf(codes.FailedPrecondition, "bot %s/%s is retired; update it to bring it back", team, name)
	case bot.GetEndpoint() != registry.EndpointDialOut:
		return status.Errorf(codes.FailedPrecondition, "bot %s/%s is registered with endpoint %s; update its endpoint to %q to dial out", team, name, bot.GetEndpoint(), registry.EndpointDialOut)
	case hello.GetVersion() != "" && hello.GetVersion() != bot.GetVersion():
		return status.Errorf(codes.FailedPrecondition, "bot %s/%s is registered at version %s, not %s; update the registration first", team, name, bot.GetVersion(), hello.GetVersion())
	}
	var sendMu sync.Mutex
	sendOne := func(msg *botlinkv1.ConnectResponse) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(msg)
	}
	session := NewSession(l.NC, team, name, func(c *botlinkv1.Call) error {
		return sendOne(&botlinkv1.ConnectResponse{Msg: &botlinkv1.ConnectResponse_Call{Call: c}})
	})
	// The calls that come once the session has taken the bot over wait until the bot has its
	// Welcome.
	sendMu.Lock()
	err = l.start(ctx, session, team, name)
	if err == nil {
		err = stream.Send(&botlinkv1.ConnectResponse{Msg: &botlinkv1.ConnectResponse_Welcome{Welcome: &botlinkv1.Welcome{
			Team: team, Address: bot.GetAddress(), Contract: contract.Version(), BotVersion: bot.GetVersion(),
		}}})
	}
	sendMu.Unlock()
	reason := "the bot closed its stream"
	defer func() {
		session.Close(reason)
		log.Info("bot disconnected", "team", team, "bot", name, "reason", reason)
	}()
	if err != nil {
		reason = err.Error()
		return err
	}
	log.Info("bot connected", "team", team, "bot", name, "version", bot.GetVersion())
	// A revoked team's links end too, not only its future requests.
	revoked, err := l.Registry.Revoked(ctx, team)
	if err != nil {
		return err
	}
	received := make(chan error, 1)
	go func() { received <- receive(ctx, stream, session, log, team, name) }()
	ended := func(err error) error {
		if err != nil {
			reason = err.Error()
			if status.Code(err) == codes.InvalidArgument {
				return err
			}
		}
		return nil
	}
	select {
	case err := <-received:
		return ended(err)
	case <-revoked:
		// Returning ends the request; the Receive in the goroutine then fails and it ends.
		reason = "the team was revoked"
		return status.Errorf(codes.PermissionDenied, "team %s was revoked", team)
	case <-session.Replaced():
		// The calls this session was sent are still answered here, then it ends.
		select {
		case <-session.Drained():
		case err := <-received:
			return ended(err)
		case <-revoked:
		}
		reason = "a newer session of the bot took it over"
		return status.Errorf(codes.FailedPrecondition, "bot %s/%s: a newer session of this bot took its calls over, and this one ends; "+
			"a bot holds one session at a time (are two copies of it running?)", team, name)
	}
}

// start takes the bot over for session, one new session of the bot at a time across
// gateways. Its errors are gRPC statuses.
func (l *Links) start(ctx context.Context, session *Session, team, name string) error {
	lockCtx, cancel := context.WithTimeout(ctx, takeoverWait)
	defer cancel()
	unlock, err := l.Registry.Store.LockLink(lockCtx, team, name)
	if err != nil {
		return status.Errorf(codes.Unavailable, "%v; try again", err)
	}
	defer unlock()
	if err := session.Start(); err != nil {
		return status.Error(codes.Unavailable, err.Error())
	}
	return nil
}

// receive hands the bot's call results to its session until the stream ends. It returns nil
// when the bot closed its stream, an error saying why otherwise.
func receive(ctx context.Context, stream stream, session *Session, log *slog.Logger, team, name string) error {
	for {
		msg, err := stream.Receive()
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return errors.New("the gateway stopped")
			case errors.Is(err, io.EOF):
				return nil
			}
			return fmt.Errorf("the stream broke: %w", err)
		}
		res := msg.GetResult()
		if res == nil {
			return status.Error(codes.InvalidArgument, "after Hello, send only CallResult messages")
		}
		if !session.Deliver(res) {
			log.Debug("late or unknown call result dropped", "team", team, "bot", name, "call_id", res.GetCallId())
		}
	}
}

// receiveHello reads the first message, which must be a Hello, within helloTimeout.
func receiveHello(stream stream) (*botlinkv1.Hello, error) {
	type got struct {
		msg *botlinkv1.ConnectRequest
		err error
	}
	ch := make(chan got, 1)
	go func() {
		m, err := stream.Receive()
		ch <- got{m, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "no Hello: %v", r.err)
		}
		if r.msg.GetHello() == nil || r.msg.GetHello().GetBot() == "" {
			return nil, status.Error(codes.InvalidArgument, "the first message must be a Hello naming the bot")
		}
		return r.msg.GetHello(), nil
	case <-time.After(helloTimeout):
		// Returning ends the request; the Receive above then fails and its goroutine ends.
		return nil, status.Errorf(codes.DeadlineExceeded, "no Hello within %s", helloTimeout)
	}
}
