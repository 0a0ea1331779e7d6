package human_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parley-arena/parley/agents/human"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/ultimatum"
)

// A human address seats a person in the hub the resolver was given; the referee reaches the
// seat over gRPC like any agent, and the person's action comes back as Act's answer.
func TestOpenHuman(t *testing.T) {
	hub := human.NewHub()
	r := &agentconn.Resolver{Humans: hub.Agents()}
	ctx := context.Background()
	_, err := r.Open(ctx, "human")
	if !errors.Is(err, human.ErrNotServed) || !errors.Is(err, agentconn.ErrNotServed) {
		t.Errorf("Open(human) with no page serving the seats = %v, want ErrNotServed", err)
	}
	hub.Mount(http.NewServeMux())
	c, err := r.Open(ctx, "human:alice")
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	seat, _ := c.Seat.(*human.Seat)
	if seat == nil || hub.Len() != 1 {
		c.Close()
		t.Fatalf("Seat = %v, hub holds %d seats; want the seat in the hub", c.Seat, hub.Len())
	}
	info, err := c.Describe(ctx, testTimeout)
	if err != nil || info.GetName() != "human:alice" {
		t.Errorf("Describe = %v, %v; want human:alice", info, err)
	}
	st, err := games.Start(ultimatum.New(), nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		// The person answers once the observation is shown.
		for {
			snap, changed := seat.Snapshot()
			if snap.State == human.StateActing {
				seat.Submit(&agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Reject{Reject: &gamev1.Reject{}}}}, 0, 0)
				return
			}
			<-changed
		}
	}()
	actCtx, cancel := context.WithTimeout(ctx, testTimeout)
	defer cancel()
	resp, err := c.Client.Act(actCtx, &agentv1.ActRequest{Observation: st.Observe(0)})
	if err != nil || resp.GetAction().GetMove().GetReject() == nil {
		t.Fatalf("Act = %v, %v; want the person's reject", resp, err)
	}

	// Past the deadline, the referee sees DeadlineExceeded (a timeout fault).
	short, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel2()
	_, err = c.Client.Act(short, &agentv1.ActRequest{Observation: st.Observe(0)})
	if status.Code(err) != codes.DeadlineExceeded {
		t.Errorf("Act past the deadline: %v, want DeadlineExceeded", err)
	}

	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if snap, _ := seat.Snapshot(); snap.State != human.StateEnded {
		t.Errorf("after Close the seat is %q, want ended", snap.State)
	}
}

func TestOpenHumanTicket(t *testing.T) {
	hub := human.NewHub()
	hub.Mount(http.NewServeMux())
	r := &agentconn.Resolver{Humans: hub.Agents()}
	ctx := context.Background()
	seat, addr, err := hub.Reserve("bob")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(ctx, addr); err != nil {
		t.Fatalf("Check(%q): %v", addr, err)
	}
	c, err := r.Open(ctx, addr)
	if err != nil {
		t.Fatalf("Open(%q) after Check: %v", addr, err)
	}
	defer c.Close()
	if c.Seat != seat {
		t.Errorf("Open(%q) gave another seat than the one reserved", addr)
	}
	if _, err := r.Open(ctx, addr); !errors.Is(err, human.ErrNoTicket) {
		t.Errorf("second Open(%q) = %v, want ErrNoTicket (a ticket is used once)", addr, err)
	}
	for _, bad := range []string{"human:no spaces", "human:x?seat=1", "human:" + string(make([]byte, 40))} {
		if _, err := r.Open(ctx, bad); !errors.Is(err, agentconn.ErrBadAddress) {
			t.Errorf("Open(%q) = %v, want ErrBadAddress", bad, err)
		}
	}
}
