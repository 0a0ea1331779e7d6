package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	refereev1 "github.com/parley-arena/parley/gen/go/parley/referee/v1"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/referee/agentconn"
)

// Agents serves "builtin:NAME?key=value&..." addresses for the referee: each one a fresh agent
// of the catalogue (its own state, its own seeded randomness), reached over loopback gRPC for
// as long as its connection is open. With a Host, every agent is served by that one server
// (the binary makes one and closes it at exit); without, each gets a server of its own.
type Agents struct {
	// Host serves the agents; nil: a server on a port of its own per agent.
	Host *sdk.Host
}

var (
	_ agentconn.LocalAgents = Agents{}
	_ agentconn.Lister      = Agents{}
)

// List lists the catalogue.
func (Agents) List() []*refereev1.BuiltinAgent {
	var out []*refereev1.BuiltinAgent
	for _, e := range Catalog() {
		out = append(out, &refereev1.BuiltinAgent{Name: e.Name, Summary: e.Summary, Settings: e.Settings})
	}
	return out
}

// Open starts the built-in agent addr names.
func (l Agents) Open(_ context.Context, addr string) (*agentconn.Local, error) {
	a, err := parse(addr)
	if err != nil {
		return nil, err
	}
	serve := sdk.Loopback
	if l.Host != nil {
		serve = l.Host.Serve
	}
	client, stop, err := serve(a)
	if err != nil {
		release(a)
		return nil, fmt.Errorf("start agent %s: %w", addr, err)
	}
	return &agentconn.Local{Client: client, Info: sdk.InfoOf(a), Observing: sdk.ObservingOf(a), Reusable: sdk.IsStateless(a), Close: func() error { return errors.Join(stop(), release(a)) }}, nil
}

// Check builds the agent addr names, to see its settings are right, and lets it go.
func (Agents) Check(addr string) error {
	a, err := parse(addr)
	if err != nil {
		return err
	}
	return release(a)
}

// SplitAddress splits "builtin:NAME?key=value&..." (the prefix optional) into the agent's
// name and settings.
func SplitAddress(addr string) (name string, settings url.Values, err error) {
	name, query, _ := strings.Cut(strings.TrimPrefix(addr, agentconn.BuiltinPrefix), "?")
	if settings, err = url.ParseQuery(query); err != nil {
		return "", nil, fmt.Errorf("%w %q: settings must be key=value&key=value", agentconn.ErrBadAddress, addr)
	}
	return name, settings, nil
}

func parse(addr string) (sdk.Agent, error) {
	name, settings, err := SplitAddress(addr)
	if err != nil {
		return nil, err
	}
	a, err := New(name, settings)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", agentconn.ErrBadAddress, err)
	}
	return a, nil
}

// release lets an agent holding resources (the LLM agent's HTTP connections) free them.
func release(a sdk.Agent) error {
	if c, ok := a.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Background serves the built-in agent addr names as a bot of its own on a free loopback
// port, taking latency more per move (a bot with a fixed thinking time, for load tests; 0: it
// answers at once). It returns the bot's grpc:// address and stop.
func Background(addr string, latency time.Duration) (string, func(), error) {
	a, err := parse(addr)
	if err != nil {
		return "", nil, err
	}
	name, _, _ := SplitAddress(addr) // parsed above
	served := a
	if latency > 0 {
		served = sdk.Delay(a, latency)
	}
	bound, stop, err := sdk.Background("127.0.0.1:0", served,
		sdk.WithInfo(&gamev1.AgentInfo{Name: "slow-" + name, Version: "1"}), sdk.WithGracePeriod(time.Second))
	if err != nil {
		release(a)
		return "", nil, err
	}
	return agentconn.GRPCPrefix + bound, func() { stop(); release(a) }, nil
}
