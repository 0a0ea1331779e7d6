package human

import (
	"context"
	"errors"
	"fmt"

	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/referee/agentconn"
)

// Agents returns the hub as the referee's source of human seats: "human..." addresses opened
// through it are seats of this hub, each served over loopback gRPC like any agent.
func (h *Hub) Agents() agentconn.LocalAgents { return hubAgents{h} }

type hubAgents struct{ h *Hub }

var _ agentconn.Reserver = hubAgents{}

// Reserve holds a seat for a person, as POST /api/v1/seats does.
func (a hubAgents) Reserve(addr string) (string, string, error) {
	name, ticket, err := ParseAddress(addr)
	switch {
	case err != nil:
		return "", "", asAgentconn(addr, err)
	case ticket != "":
		return "", "", fmt.Errorf("%w %q: the seat is reserved already", agentconn.ErrBadAddress, addr)
	case !a.h.served.Load():
		return "", "", asAgentconn(addr, ErrNotServed)
	}
	seat, seatAddr, err := a.h.Reserve(name)
	if err != nil {
		return "", "", asAgentconn(addr, err)
	}
	return seatAddr, seat.Path(), nil
}

func (a hubAgents) Check(addr string) error { return asAgentconn(addr, a.h.Check(addr)) }

func (a hubAgents) Open(_ context.Context, addr string) (*agentconn.Local, error) {
	seat, err := a.h.Open(addr)
	if err != nil {
		return nil, asAgentconn(addr, err)
	}
	client, stop, err := sdk.Loopback(seat)
	if err != nil {
		seat.Close()
		return nil, fmt.Errorf("seat %s: %w", addr, err)
	}
	return &agentconn.Local{Client: client, Seat: seat, Close: func() error {
		seat.Close() // first, so that an Act waiting for the person returns at once
		return stop()
	}}, nil
}

// asAgentconn makes the hub's errors about addresses match agentconn's.
func asAgentconn(addr string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNotServed):
		return fmt.Errorf("agent %s: %w: %w", addr, agentconn.ErrNotServed, err)
	case errors.Is(err, ErrBadAddress), errors.Is(err, ErrNoTicket):
		return fmt.Errorf("%w: %w", agentconn.ErrBadAddress, err)
	}
	return err
}
