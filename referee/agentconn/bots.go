package agentconn

import (
	"context"
	"fmt"
	"strings"

	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
)

// AllowBotDialFlag names the organiser's switch that lets referees dial the grpc:// endpoints
// teams registered; errors refusing such an endpoint name it.
const AllowBotDialFlag = "--allow-bot-dial"

// registered is a registered bot an address names.
type registered struct {
	team, name string
	bot        *registryv1.Bot
}

func (b registered) label() string { return b.team + "/" + b.name + "@" + b.bot.GetVersion() }

// lookupBot finds the bot "bot:TEAM/NAME[@VERSION]" names, and checks that it may play.
func (r *Resolver) lookupBot(ctx context.Context, addr string) (registered, error) {
	ref, version, _ := strings.Cut(strings.TrimPrefix(addr, BotPrefix), "@")
	team, name, ok := strings.Cut(ref, "/")
	if !ok || team == "" || name == "" || strings.Contains(addr, "@") && version == "" {
		return registered{}, fmt.Errorf("%w %q: want bot:TEAM/NAME or bot:TEAM/NAME@VERSION", ErrBadAddress, addr)
	}
	if r.Bots == nil {
		return registered{}, fmt.Errorf("agent %s: registered bots are %w (they need the bot registry on NATS)", addr, ErrNotServed)
	}
	bot, err := r.Bots.Bot(ctx, team, name)
	switch {
	case err != nil:
		return registered{}, fmt.Errorf("%w: agent %s: %w", ErrBadAddress, addr, err)
	case bot.GetRetired():
		return registered{}, fmt.Errorf("%w %q: the bot is retired", ErrBadAddress, addr)
	case version != "" && version != bot.GetVersion():
		return registered{}, fmt.Errorf("%w %q: the bot is registered at version %s", ErrBadAddress, addr, bot.GetVersion())
	}
	if ep := bot.GetEndpoint(); strings.HasPrefix(ep, GRPCPrefix) {
		if !r.AllowBotDial {
			return registered{}, fmt.Errorf("agent %s: its endpoint %s was registered by the team; %w without %s", addr, ep, ErrDialRefused, AllowBotDialFlag)
		}
		target, err := parseTarget(ep)
		if err != nil {
			return registered{}, err
		}
		if err := r.dialAllowed(addr, target); err != nil {
			return registered{}, err
		}
	}
	return registered{team: team, name: name, bot: bot}, nil
}

func (r *Resolver) openBot(ctx context.Context, addr string) (*Conn, error) {
	b, err := r.lookupBot(ctx, addr)
	if err != nil {
		return nil, err
	}
	if ep := b.bot.GetEndpoint(); strings.HasPrefix(ep, GRPCPrefix) {
		c, err := r.dial(addr, strings.TrimPrefix(ep, GRPCPrefix))
		if err != nil {
			return nil, err
		}
		c.Label = b.label()
		return c, nil
	}
	// The link carries Act and Describe: asked with Act from the start, its errors named too.
	link := &streams{}
	link.unsupported.Store(true)
	seat := newSeatClient(r.Bots.Link(b.team, b.name), link, nil)
	return &Conn{Client: seat, Addr: addr, Target: "dial-out link " + b.team + "/" + b.name, Label: b.label(), close: func() error {
		seat.close()
		return nil
	}}, nil
}
