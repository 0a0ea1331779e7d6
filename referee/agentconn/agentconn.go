// Package agentconn turns agent addresses into gRPC clients, through one Resolver the binary
// builds and hands to every part that opens agents (nothing finds agents through a global or
// a context value):
//
//   - "grpc://host:port" dials a running agent, where the resolver's dial rule allows it;
//   - "builtin:NAME?key=value&..." is a built-in agent this process serves (Resolver.Builtins);
//   - "human", "human:NAME" and "human:NAME?ticket=ID" seat a person (Resolver.Humans);
//   - "bot:TEAM/NAME[@VERSION]" is a bot a team registered (Resolver.Bots): a dial-out bot is
//     reached through the link its gateway holds, one with a grpc:// endpoint is dialled only
//     where the organiser allows it.
//
// The package knows the address forms and nothing of the agents behind them: the binary plugs
// the built-in agents, the human seats and the bot registry in. It also gives the resolver a
// Pool, so that every match at one address shares one connection (and one Describe) rather
// than dialling its own; and a Conn asks its agent over one Play stream for the whole match
// where the agent serves it (Act otherwise).
package agentconn

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"
	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
)

// Address prefixes.
const (
	BuiltinPrefix = "builtin:"
	GRPCPrefix    = "grpc://"
	BotPrefix     = "bot:"
	HumanAddress  = "human"
)

// Errors wrapped by the errors of this package.
var (
	// ErrBadAddress: an address that cannot be parsed or names nothing that exists.
	ErrBadAddress = errors.New("bad agent address")
	// ErrNotServed: the address is well formed, but this process does not serve what it names
	// (no human seats here, no bot registry).
	ErrNotServed = errors.New("not served here")
	// ErrDialRefused: the organiser does not let the referee dial the address.
	ErrDialRefused = errors.New("dialling this address is not allowed")
)

// Local is an agent this process serves for one connection: a built-in agent, a person's seat.
type Local struct {
	// Client calls the agent.
	Client agentv1.AgentServiceClient
	// Close stops serving it.
	Close func() error
	// Seat is set when a person plays the agent.
	Seat HumanSeat
	// Info, when set, is what the agent answers to Describe, known without asking (an agent
	// of this process): Describe through the Conn answers it without a call, with Observing.
	Info *gamev1.AgentInfo
	// Observing is how the agent takes its observations (DescribeResponse.observing), with
	// Info.
	Observing *agentv1.Observing
	// Reusable says the agent may play match after match (it keeps nothing between calls):
	// closed, its Conn is then kept by the Resolver's Pool, with its Play stream, for the next
	// Open of the same address.
	Reusable bool
}

// HumanSeat is a seat a person plays from a web page.
type HumanSeat interface {
	// Path is the seat's page, relative to where the seats are served.
	Path() string
	// End tells the person how the match ended.
	End(*matchv1.Outcome)
}

// LocalAgents serves agents of one address form in this process.
type LocalAgents interface {
	// Open starts serving the agent at addr.
	Open(ctx context.Context, addr string) (*Local, error)
	// Check returns the error Open would return for addr without serving anything or using
	// anything up (a reserved seat's ticket). Errors about the address wrap ErrBadAddress.
	Check(addr string) error
}

// Reserver is implemented by LocalAgents that seat people: Reserve holds a fresh seat for addr
// ("human" or "human:NAME") and returns the address that opens that very seat and the page
// where the person plays it (a path on the server that serves the seats).
type Reserver interface {
	Reserve(addr string) (seat, link string, err error)
}

// Lister is implemented by LocalAgents that can list the agents they serve (the built-in
// ones), for people choosing one.
type Lister interface {
	List() []*refereev1.BuiltinAgent
}

// BotDirectory finds registered bots and reaches those that dial out (the bot registry on
// NATS implements it).
type BotDirectory interface {
	// Bot returns the registered bot team/name.
	Bot(ctx context.Context, team, name string) (*registryv1.Bot, error)
	// Link returns a client reaching the dial-out bot team/name through its link.
	Link(team, name string) agentv1.AgentServiceClient
}

// DialRule decides where the referee may dial. A nil rule allows every address.
type DialRule interface {
	// Check refuses a target (host:port) before anything is dialled.
	Check(target string) error
	// DialContext connects to target, at an address its host resolves to that the rule
	// allows: the address is checked where it is dialled, so a name the rule allows cannot be
	// pointed at another address between the check and the dial (DNS rebinding).
	DialContext(ctx context.Context, target string) (net.Conn, error)
}

// Resolver opens agent addresses. The zero Resolver dials grpc:// addresses and refuses the
// other forms as not served.
type Resolver struct {
	// Builtins serves "builtin:" addresses; nil: refused.
	Builtins LocalAgents
	// Humans seats people ("human..." addresses); nil: refused.
	Humans LocalAgents
	// Bots finds registered bots ("bot:" addresses); nil: refused.
	Bots BotDirectory
	// Dial decides which grpc:// addresses may be dialled, given ones and the endpoints teams
	// registered alike.
	Dial DialRule
	// AllowBotDial lets a registered bot's grpc:// endpoint be dialled at all (the team chose
	// the address): off, such bots cannot play.
	AllowBotDial bool
	// Options are added to every client dialled (message size limits).
	Options []grpc.DialOption
	// Pool, when set, keeps dialled connections for every match that plays at the same
	// target (see Pool); nil: each Open dials a connection of its own, closed with the Conn.
	Pool *Pool
}

// Conn is a connection to one agent.
type Conn struct {
	// Client calls the agent.
	Client agentv1.AgentServiceClient
	// Addr is the address as given.
	Addr string
	// Target says what is called: host:port, or the dial-out link.
	Target string
	// Label, for a registered bot, is how tables name it: "team/name@version".
	Label string
	// Seat is set when a person plays the agent.
	Seat HumanSeat

	conn  *grpc.ClientConn // the dialled connection (its own or a pooled one); nil in process
	close func() error     // closes its own connection, gives a pooled one back, or stops a local agent
}

// IsHuman reports whether addr names a person's seat.
func IsHuman(addr string) bool {
	return addr == HumanAddress || strings.HasPrefix(addr, HumanAddress+":") || strings.HasPrefix(addr, HumanAddress+"?")
}

// Open connects to the agent at addr.
func (r *Resolver) Open(ctx context.Context, addr string) (*Conn, error) {
	switch {
	case strings.HasPrefix(addr, BuiltinPrefix):
		return r.openLocal(ctx, r.Builtins, addr, "built-in agents")
	case IsHuman(addr):
		return r.openLocal(ctx, r.Humans, addr, "human seats")
	case strings.HasPrefix(addr, BotPrefix):
		return r.openBot(ctx, addr)
	case strings.HasPrefix(addr, GRPCPrefix):
		target, err := parseTarget(addr)
		if err != nil {
			return nil, err
		}
		if err := r.dialAllowed(addr, target); err != nil {
			return nil, err
		}
		return r.dial(addr, target)
	default:
		return nil, fmt.Errorf("%w %q: want builtin:NAME, grpc://host:port, bot:TEAM/NAME or human[:NAME]", ErrBadAddress, addr)
	}
}

// Check returns the error Open would return for addr, as far as it can be known without
// connecting: the form, the settings of a built-in agent, whether a seat can be given, the
// registered bot and the dial rule. It serves, dials and uses up nothing.
func (r *Resolver) Check(ctx context.Context, addr string) error {
	switch {
	case strings.HasPrefix(addr, BuiltinPrefix):
		return checkLocal(r.Builtins, addr, "built-in agents")
	case IsHuman(addr):
		return checkLocal(r.Humans, addr, "human seats")
	case strings.HasPrefix(addr, BotPrefix):
		_, err := r.lookupBot(ctx, addr)
		return err
	case strings.HasPrefix(addr, GRPCPrefix):
		target, err := parseTarget(addr)
		if err != nil {
			return err
		}
		return r.dialAllowed(addr, target)
	default:
		_, err := r.Open(ctx, addr) // the form's error
		return err
	}
}

func checkLocal(l LocalAgents, addr, what string) error {
	if l == nil {
		return fmt.Errorf("agent %s: %s are %w", addr, what, ErrNotServed)
	}
	return l.Check(addr)
}

func (r *Resolver) openLocal(ctx context.Context, l LocalAgents, addr, what string) (*Conn, error) {
	if l == nil {
		return nil, checkLocal(l, addr, what)
	}
	key, keep := localKeyOf(l, addr)
	keep = keep && r.Pool != nil
	if keep {
		if c := r.Pool.takeLocal(key); c != nil {
			return c, nil
		}
	}
	loc, err := l.Open(ctx, addr) // its errors are Check's: checking first would build the agent twice
	if err != nil {
		return nil, err
	}
	client := loc.Client
	var described *describeCache
	if loc.Info != nil {
		described = &describeCache{AgentServiceClient: client, resp: &agentv1.DescribeResponse{Agent: loc.Info, Observing: loc.Observing}}
		client = described
	}
	seat := newSeatClient(client, &streams{}, nil)
	var once sync.Once
	stop := func() (err error) {
		once.Do(func() {
			seat.close()
			if described != nil {
				described.forget() // a stopped agent describes itself no more
			}
			err = loc.Close()
		})
		return err
	}
	c := &Conn{Client: seat, Addr: addr, Target: "in process", Seat: loc.Seat, close: stop}
	if keep && loc.Reusable && loc.Seat == nil {
		r.Pool.lendLocal(key, c, seat, stop)
		c.close = func() error { return r.Pool.putLocal(c) }
	}
	return c, nil
}

// parseTarget checks a grpc://host:port address and returns host:port.
func parseTarget(addr string) (string, error) {
	target := strings.TrimPrefix(addr, GRPCPrefix)
	_, port, err := net.SplitHostPort(target)
	if err == nil {
		// SplitHostPort takes anything after the last colon as the port ("1/agent" too).
		_, err = strconv.ParseUint(port, 10, 16)
	}
	if err != nil {
		return "", fmt.Errorf("%w %q: want grpc://host:port", ErrBadAddress, addr)
	}
	return target, nil
}

func (r *Resolver) dialAllowed(addr, target string) error {
	if r.Dial == nil {
		return nil
	}
	if err := r.Dial.Check(target); err != nil {
		return fmt.Errorf("agent %s: %w: %w", addr, ErrDialRefused, err)
	}
	return nil
}

func (r *Resolver) dial(addr, target string) (*Conn, error) {
	if r.Pool != nil {
		return r.dialPooled(addr, target)
	}
	conn, err := newClient(target, r.Dial, r.Options)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	seat := newSeatClient(agentv1.NewAgentServiceClient(conn), &streams{}, nil)
	return &Conn{Client: seat, Addr: addr, Target: target, conn: conn, close: func() error {
		seat.close()
		return conn.Close()
	}}, nil
}

// windowSize is the HTTP/2 flow-control window of a connection to an agent and of each of its
// streams. A window of fixed size turns off gRPC's bandwidth estimate, whose PING (sent for a
// message received while none is in flight: on a stream of moves, nearly every one) and its
// answer cost every move frames to write and read on both sides. The largest observation
// (512 KiB, games.MaxObservationBytes) fits in it twice.
const windowSize = 1 << 20

// newClient makes the plaintext gRPC client of an agent at target (agents are reached on the
// organiser's own network, or through a bot's link). With a dial rule, the rule's dialer
// resolves the host and connects (gRPC's passthrough resolver hands it the name as given).
func newClient(target string, dial DialRule, opts []grpc.DialOption) (*grpc.ClientConn, error) {
	base := []grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithInitialWindowSize(windowSize), grpc.WithInitialConnWindowSize(windowSize),
	}
	if dial != nil {
		base = append(base, grpc.WithContextDialer(dial.DialContext))
		target = "passthrough:///" + target
	}
	return grpc.NewClient(target, append(base, opts...)...)
}

// Describe asks the agent who it is, within timeout. An error here means the agent cannot be
// reached or does not speak the agent protocol; the message names the call and the address.
func (c *Conn) Describe(ctx context.Context, timeout time.Duration) (*gamev1.AgentInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := c.Client.Describe(ctx, &agentv1.DescribeRequest{})
	if err != nil {
		return nil, fmt.Errorf("agent %s failed Describe: unreachable or not a Parley agent: %w", c.Addr, err)
	}
	return resp.GetAgent(), nil
}

// ClientConn is the dialled gRPC connection, for services other than the agent protocol on
// the same server (health checks); nil for agents served in process and dial-out bots.
func (c *Conn) ClientConn() grpc.ClientConnInterface {
	if c.conn == nil {
		return nil // not a nil *grpc.ClientConn in an interface
	}
	return c.conn
}

// Close closes the connection (a pooled one is given back to the pool), or stops serving a
// local agent. A person's seat is closed first, so that an Act still waiting for the person
// returns at once.
func (c *Conn) Close() error {
	if c.close == nil {
		return nil
	}
	return c.close()
}

// OpenAll opens every address; on error it closes those already open.
func (r *Resolver) OpenAll(ctx context.Context, addrs []string) ([]*Conn, error) {
	conns := make([]*Conn, 0, len(addrs))
	for _, a := range addrs {
		c, err := r.Open(ctx, a)
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

// Clients returns the clients of conns, in order.
func Clients(conns []*Conn) []agentv1.AgentServiceClient {
	out := make([]agentv1.AgentServiceClient, len(conns))
	for i, c := range conns {
		out[i] = c.Client
	}
	return out
}

// Labels returns the labels to record for conns: each given one (given may be nil), or where
// none was given, the connection's own (a registered bot's "team/name@version"). It returns
// nil when no seat has one.
func Labels(conns []*Conn, given []string) []string {
	out := make([]string, len(conns))
	labelled := false
	for i, c := range conns {
		if i < len(given) && given[i] != "" {
			out[i] = given[i]
		} else {
			out[i] = c.Label
		}
		labelled = labelled || out[i] != ""
	}
	if !labelled {
		return nil
	}
	return out
}
