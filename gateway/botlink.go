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
//	    body {"name":"NAME","version":"1","games":["ultimatum"],"endpoint":"dialout"} (no games: any game)
//	then call parley.botlink.v1.BotLinkService/Connect (gRPC) with metadata
//	"authorization: Bearer TOKEN", send Hello{bot: NAME}, read Welcome, answer each Call with
//	a CallResult; matches reach the bot as agent "bot:TEAM/NAME".
//
// In Go: gateway.New(gateway.Config{Referee: ref, Teams: teams, BotLinks: links}) served with
// HTTP/2 without TLS (the gateway role's Serve), with teams a registry.Service and links a
// botlink.Links on one NATS connection; registry.Store.AddTeam gives a token; sdk.Dial connects
// a Go agent. gateway/botlink_test.go does all of it.

package gateway

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	botlinkv1 "github.com/parley-arena/parley/gen/go/parley/botlink/v1"
	"github.com/parley-arena/parley/gen/go/parley/botlink/v1/botlinkv1connect"
)

// botLinkService is BotLinkService: a team's own bots hold their links here.
type botLinkService struct {
	botlinkv1connect.UnimplementedBotLinkServiceHandler
	g *Gateway
}

var _ botlinkv1connect.BotLinkServiceHandler = (*botLinkService)(nil)

func (s *botLinkService) Connect(ctx context.Context, stream *connect.BidiStream[botlinkv1.ConnectRequest, botlinkv1.ConnectResponse]) error {
	if s.g.cfg.BotLinks == nil {
		return connect.NewError(connect.CodeUnavailable, errors.New("this gateway holds no bot links"))
	}
	team, err := s.g.auth.authenticate(ctx, stream.RequestHeader(), stream.Peer().Addr)
	if err != nil {
		return err
	}
	if err := s.g.cfg.BotLinks.Serve(ctx, team, stream.Receive, stream.Send); err != nil {
		return fromGRPC(err)
	}
	return nil
}
