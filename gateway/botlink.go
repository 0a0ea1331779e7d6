// BotLinkService: bots that dial out hold a stream here; referees reach them through NATS
// (services/botlink).
//
// To run it in a test from another language, use the binary:
//
//	parley up --data-dir D --listen 127.0.0.1:0 --referee-listen 127.0.0.1:0 --analytics-listen 127.0.0.1:0
//	    prints "Parley is up: http://127.0.0.1:PORT/" (the gateway; gRPC over cleartext HTTP/2)
//	parley admin team add TEAM --data-dir D        prints the team token on stdout
//	POST http://127.0.0.1:PORT/parley.registry.v1.RegistryService/RegisterBot
//	    headers Content-Type: application/json, Authorization: Bearer TOKEN
//	    body {"name":"NAME","version":"1","games":["ultimatum"],"endpoint":"dialout"}
//	then call parley.botlink.v1.BotLinkService/Connect (gRPC) with metadata
//	"authorization: Bearer TOKEN", send Hello{bot: NAME}, read Welcome, answer each Call with
//	a CallResult; matches reach the bot as agent "bot:TEAM/NAME".
//
// In Go: gateway.New(ctx, gateway.Config{Bus: b, Referee: ref, Games: reg}) with b from
// bus.Open(ctx, bus.Config{}, nil), served with HTTP/2 without TLS (gatewaycmd.Serve);
// registry.Open(ctx, b.JetStream()).AddTeam(ctx, TEAM) gives a token; sdk.Dial connects a Go
// agent. gateway/botlink_test.go does all of it.

package gateway

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"connectrpc.com/connect"

	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	"github.com/parley-arena/parley/services/botlink"
	"github.com/parley-arena/parley/services/registry"
)

// helloTimeout bounds the wait for a new stream's Hello.
const helloTimeout = 10 * time.Second

type botLinkService struct {
	g *Gateway
}

func (s *botLinkService) Connect(ctx context.Context, stream *connect.BidiStream[botlinkv1.ConnectRequest, botlinkv1.ConnectResponse]) error {
	team, err := s.g.auth.authenticate(ctx, stream.RequestHeader())
	if err != nil {
		return err
	}
	hello, err := receiveHello(stream)
	if err != nil {
		return err
	}
	name, err := ownBot(team, hello.GetBot())
	if err != nil {
		return err
	}
	bot, err := s.g.registry.Bot(ctx, team, name)
	switch {
	case err != nil:
		return registryError(err)
	case bot.GetRetired():
		return connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("bot %s/%s is retired; update it to bring it back", team, name))
	case bot.GetEndpoint() != registry.EndpointDialOut:
		return connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("bot %s/%s is registered with endpoint %s; update its endpoint to %q to dial out", team, name, bot.GetEndpoint(), registry.EndpointDialOut))
	case hello.GetVersion() != "" && hello.GetVersion() != bot.GetVersion():
		return connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("bot %s/%s is registered at version %s, not %s; update the registration first", team, name, bot.GetVersion(), hello.GetVersion()))
	}
	var sendMu sync.Mutex
	send := func(msg *botlinkv1.ConnectResponse) error {
		sendMu.Lock()
		defer sendMu.Unlock()
		return stream.Send(msg)
	}
	if err := send(&botlinkv1.ConnectResponse{Msg: &botlinkv1.ConnectResponse_Welcome{Welcome: &botlinkv1.Welcome{Team: team, Address: bot.GetAddress()}}}); err != nil {
		return err
	}
	session := botlink.NewSession(s.g.cfg.Bus.Conn(), team, name, func(c *botlinkv1.Call) error {
		return send(&botlinkv1.ConnectResponse{Msg: &botlinkv1.ConnectResponse_Call{Call: c}})
	})
	if err := session.Start(); err != nil {
		return connect.NewError(connect.CodeUnavailable, err)
	}
	s.g.log.Info("bot connected", "team", team, "bot", name, "version", bot.GetVersion())
	reason := "the bot closed its stream"
	defer func() {
		session.Close(reason)
		s.g.log.Info("bot disconnected", "team", team, "bot", name, "reason", reason)
	}()
	// A revoked team's links end too, not only its future requests.
	revoked, err := s.g.registry.Revoked(ctx, team)
	if err != nil {
		return connect.NewError(connect.CodeUnavailable, err)
	}
	received := make(chan error, 1)
	go func() { received <- s.receive(ctx, stream, session, team, name) }()
	select {
	case err := <-received:
		if err != nil {
			reason = err.Error()
			if connect.CodeOf(err) == connect.CodeInvalidArgument {
				return err
			}
		}
		return nil
	case <-revoked:
		// Returning ends the request; the Receive in the goroutine then fails and it ends.
		reason = "the team was revoked"
		return connect.NewError(connect.CodePermissionDenied, fmt.Errorf("team %s was revoked", team))
	}
}

// receive hands the bot's call results to its session until the stream ends. It returns nil
// when the bot closed its stream, an error saying why otherwise.
func (s *botLinkService) receive(ctx context.Context, stream *connect.BidiStream[botlinkv1.ConnectRequest, botlinkv1.ConnectResponse], session *botlink.Session, team, name string) error {
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
			return connect.NewError(connect.CodeInvalidArgument, errors.New("after Hello, send only CallResult messages"))
		}
		if !session.Deliver(res) {
			s.g.log.Debug("late or unknown call result dropped", "team", team, "bot", name, "call_id", res.GetCallId())
		}
	}
}

// receiveHello reads the first message, which must be a Hello, within helloTimeout.
func receiveHello(stream *connect.BidiStream[botlinkv1.ConnectRequest, botlinkv1.ConnectResponse]) (*botlinkv1.Hello, error) {
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
			return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("no Hello: %w", r.err))
		}
		if r.msg.GetHello() == nil || r.msg.GetHello().GetBot() == "" {
			return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("the first message must be a Hello naming the bot"))
		}
		return r.msg.GetHello(), nil
	case <-time.After(helloTimeout):
		// Returning ends the request; the Receive above then fails and its goroutine ends.
		return nil, connect.NewError(connect.CodeDeadlineExceeded, fmt.Errorf("no Hello within %s", helloTimeout))
	}
}
