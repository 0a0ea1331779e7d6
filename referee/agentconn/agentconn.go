// Package agentconn turns an agent address into a gRPC client: "grpc://host:port" dials a
// running agent; "builtin:NAME?key=value&..." starts a built-in Go agent as a real gRPC server
// on a loopback port, so built-in agents are reached exactly like any other. A language model
// is one of them: "builtin:llm?model=M&base_url=URL&style=json&persona=cunning" (see
// agents/llm; its API key comes from the environment, never from the address). "human",
// "human:NAME" and "human:NAME?ticket=ID" seat a person: a human.Seat of the hub in ctx
// (human.FromContext), served the same way, and played from a browser (see agents/human).
// "bot:TEAM/NAME[@VERSION]" is a bot a team registered (see WithBots): a dial-out bot is
// reached through the gateway holding its link, one with a grpc:// endpoint is dialled only
// where the organiser allows it.
package agentconn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/human"
	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Conn is a connection to one agent.
type Conn struct {
	// Client calls the agent.
	Client agentv1.AgentServiceClient
	// Target is the host:port dialled.
	Target string
	// Spec is the address as given.
	Spec string

	// Label, for a registered bot, is how tables name it: "team/name@version". Empty for
	// other agents.
	Label string

	// Human is the seat a person plays, for a human address; nil otherwise.
	Human *human.Seat

	conn *grpc.ClientConn
	stop context.CancelFunc // stops a built-in agent's server
	done chan error         // its Serve result
}

// ErrBadAddress is wrapped by errors about an address that cannot be parsed.
var ErrBadAddress = errors.New("bad agent address")

// badAddressError is an error of another package about an address, made to match
// ErrBadAddress.
type badAddressError struct{ error }

func (e badAddressError) Is(target error) bool { return target == ErrBadAddress }
func (e badAddressError) Unwrap() error        { return e.error }

// Open connects to the agent at spec. A built-in agent's server runs until Close.
func Open(ctx context.Context, spec string) (*Conn, error) {
	switch {
	case strings.HasPrefix(spec, "builtin:"):
		return openBuiltin(ctx, spec)
	case human.IsAddress(spec):
		seat, err := human.FromContext(ctx).Open(spec)
		if errors.Is(err, human.ErrBadAddress) {
			return nil, badAddressError{err}
		} else if err != nil {
			return nil, err
		}
		c, err := serveLocal(ctx, spec, seat, nil)
		if err != nil {
			seat.Close()
			return nil, err
		}
		c.Human = seat
		return c, nil
	case strings.HasPrefix(spec, BotPrefix):
		return openBot(ctx, spec)
	case strings.HasPrefix(spec, "grpc://"):
		return dialTarget(spec)
	default:
		return nil, fmt.Errorf("%w %q: want builtin:NAME (one of %s), grpc://host:port, bot:TEAM/NAME or human[:NAME]", ErrBadAddress, spec, strings.Join(builtin.Names(), ", "))
	}
}

// dialTarget checks a grpc://host:port address and returns a client of it.
func dialTarget(spec string) (*Conn, error) {
	target := strings.TrimPrefix(spec, "grpc://")
	_, port, err := net.SplitHostPort(target)
	if err == nil {
		// SplitHostPort takes anything after the last colon as the port ("1/agent" too).
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return nil, fmt.Errorf("%w %q: want grpc://host:port", ErrBadAddress, spec)
	}
	return dial(spec, target)
}

func openBuiltin(ctx context.Context, spec string) (*Conn, error) {
	name, query, _ := strings.Cut(strings.TrimPrefix(spec, "builtin:"), "?")
	settings, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("%w %q: settings must be key=value&key=value", ErrBadAddress, spec)
	}
	agent, err := builtin.New(name, settings)
	if err != nil {
		return nil, err
	}
	var release func() error
	if c, ok := agent.(io.Closer); ok {
		// Agents holding resources (the LLM agent's HTTP connections) release them.
		release = c.Close
	}
	return serveLocal(ctx, spec, agent, release)
}

// serveLocal serves an in-process agent as a gRPC server on a loopback port until Close, then
// calls release (may be nil).
func serveLocal(ctx context.Context, spec string, agent sdk.Agent, release func() error) (*Conn, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("start agent %s: %w", spec, err)
	}
	srvCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() {
		err := sdk.ServeListener(srvCtx, lis, agent, sdk.WithGracePeriod(time.Second))
		if release != nil {
			err = errors.Join(err, release())
		}
		done <- err
	}()
	c, err := dial(spec, lis.Addr().String())
	if err != nil {
		stop()
		<-done
		return nil, err
	}
	c.stop, c.done = stop, done
	return c, nil
}

func dial(spec, target string) (*Conn, error) {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", spec, err)
	}
	return &Conn{Client: agentv1.NewAgentServiceClient(conn), Target: target, Spec: spec, conn: conn}, nil
}

// Describe asks the agent who it is, within timeout. An error here means the agent cannot be
// reached or does not speak the agent protocol; the message says which address failed.
func (c *Conn) Describe(ctx context.Context, timeout time.Duration) (*gamev1.AgentInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.Client.Describe(ctx, &agentv1.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("agent %s is unreachable or not a Parley agent: %w", c.Spec, err)
	}
	return resp.GetAgent(), nil
}

// ClientConn is the gRPC connection to the agent, for services other than the agent protocol
// on the same server (health checks).
func (c *Conn) ClientConn() grpc.ClientConnInterface { return c.conn }

// Close closes the connection and stops a built-in agent's server. A human seat is closed
// first, so that an Act still waiting for the person returns at once.
func (c *Conn) Close() error {
	if c.Human != nil {
		c.Human.Close()
	}
	if c.conn == nil {
		return nil // a dial-out bot's link belongs to the gateway
	}
	err := c.conn.Close()
	if c.stop != nil {
		c.stop()
		if serr := <-c.done; serr != nil && err == nil {
			err = serr
		}
	}
	return err
}

// OpenAll opens every spec; on error it closes those already open.
func OpenAll(ctx context.Context, specs []string) ([]*Conn, error) {
	conns := make([]*Conn, 0, len(specs))
	for _, s := range specs {
		c, err := Open(ctx, s)
		if err != nil {
			CloseAll(conns)
			return nil, err
		}
		conns = append(conns, c)
	}
	return conns, nil
}

// CloseAll closes every connection.
func CloseAll(conns []*Conn) {
	for _, c := range conns {
		c.Close()
	}
}
