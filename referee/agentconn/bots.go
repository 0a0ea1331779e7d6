package agentconn

import (
	"context"
	"errors"
	"fmt"
	"strings"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
)

// BotPrefix starts the address of a registered bot: "bot:TEAM/NAME[@VERSION]".
const BotPrefix = "bot:"

// AllowBotDialFlag names the organiser's switch that lets referees dial the grpc:// endpoints
// teams registered; errors refusing such an endpoint name it.
const AllowBotDialFlag = "--allow-bot-dial"

// ErrBotDialRefused is wrapped by the error for a registered bot whose grpc:// endpoint the
// organiser has not allowed the referee to dial.
var ErrBotDialRefused = errors.New("dialling team-registered addresses is not allowed")

// BotDirectory finds registered bots and reaches those that dial out
// (botlink.Directory implements it on NATS).
type BotDirectory interface {
	// Bot returns the registered bot team/name.
	Bot(ctx context.Context, team, name string) (*registryv1.Bot, error)
	// Link returns a client reaching the dial-out bot team/name through its link.
	Link(team, name string) agentv1.AgentServiceClient
}

// Bots is how "bot:" addresses are opened in a context (WithBots).
type Bots struct {
	// Directory finds the bots.
	Directory BotDirectory
	// AllowDial lets the referee dial a grpc:// endpoint a team registered. Off: such a bot
	// cannot play (an address a team chose may point into the organiser's network).
	AllowDial bool
}

type botsKey struct{}

// WithBots returns ctx in which "bot:" addresses open through bots.
func WithBots(ctx context.Context, bots Bots) context.Context {
	return context.WithValue(ctx, botsKey{}, bots)
}

func openBot(ctx context.Context, spec string) (*Conn, error) {
	ref, version, _ := strings.Cut(strings.TrimPrefix(spec, BotPrefix), "@")
	team, name, ok := strings.Cut(ref, "/")
	if !ok || team == "" || name == "" || strings.Contains(spec, "@") && version == "" {
		return nil, fmt.Errorf("%w %q: want bot:TEAM/NAME or bot:TEAM/NAME@VERSION", ErrBadAddress, spec)
	}
	bots, _ := ctx.Value(botsKey{}).(Bots)
	if bots.Directory == nil {
		return nil, fmt.Errorf("%w %q: registered bots need the bot registry on NATS, which this command does not use", ErrBadAddress, spec)
	}
	bot, err := bots.Directory.Bot(ctx, team, name)
	switch {
	case err != nil:
		return nil, badAddressError{fmt.Errorf("agent %s: %w", spec, err)}
	case bot.GetRetired():
		return nil, fmt.Errorf("%w %q: the bot is retired", ErrBadAddress, spec)
	case version != "" && version != bot.GetVersion():
		return nil, fmt.Errorf("%w %q: the bot is registered at version %s", ErrBadAddress, spec, bot.GetVersion())
	}
	label := team + "/" + name + "@" + bot.GetVersion()
	ep := bot.GetEndpoint()
	if strings.HasPrefix(ep, "grpc://") {
		if !bots.AllowDial {
			return nil, fmt.Errorf("agent %s: its endpoint %s was registered by the team; %w without %s", spec, ep, ErrBotDialRefused, AllowBotDialFlag)
		}
		c, err := dialTarget(ep)
		if err != nil {
			return nil, err
		}
		c.Spec, c.Label = spec, label
		return c, nil
	}
	return &Conn{Client: bots.Directory.Link(team, name), Target: "dial-out link " + team + "/" + name, Spec: spec, Label: label}, nil
}

// Labels returns the labels to record for conns: each given one (given may be nil), or where
// none was given, the connection's own (a registered bot's "team/name@version"). It returns
// nil when no seat has one.
func Labels(conns []*Conn, given []string) []string {
	out := make([]string, len(conns))
	any := false
	for i, c := range conns {
		if i < len(given) && given[i] != "" {
			out[i] = given[i]
		} else {
			out[i] = c.Label
		}
		any = any || out[i] != ""
	}
	if !any {
		return nil
	}
	return out
}
