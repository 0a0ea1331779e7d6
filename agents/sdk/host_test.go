package sdk_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// choosing is an agent that chooses option and describes itself as name.
func choosing(name, option string) sdk.Agent {
	return described{
		AgentFunc: func(context.Context, *agentv1.Observation) (*agentv1.Action, error) {
			return &agentv1.Action{Move: &gamev1.Move{Kind: &gamev1.Move_Choose{Choose: &gamev1.Choose{Option: option}}}}, nil
		},
		info: &gamev1.AgentInfo{Name: name},
	}
}

// A host serves many agents on one server: each client reaches its own agent only, and a
// released agent is no longer reached while the others still are.
func TestHost(t *testing.T) {
	h := sdk.NewHost()
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	type served struct {
		client  agentv1.AgentServiceClient
		release func() error
	}
	var agents []served
	for _, name := range []string{"a", "b", "c"} {
		c, release, err := h.Serve(choosing(name, "option-"+name))
		if err != nil {
			t.Fatal(err)
		}
		agents = append(agents, served{c, release})
	}
	if h.Len() != 3 {
		t.Errorf("the host serves %d agents, want 3", h.Len())
	}
	// Calls to all of them at once, each answered by its own agent.
	var wg sync.WaitGroup
	for range 10 {
		for i, name := range []string{"a", "b", "c"} {
			wg.Go(func() {
				resp, err := agents[i].client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}})
				if err != nil || resp.GetAction().GetMove().GetChoose().GetOption() != "option-"+name {
					t.Errorf("agent %s answered %v, %v", name, resp.GetAction(), err)
				}
				info, err := agents[i].client.Describe(ctx, &agentv1.DescribeRequest{})
				if err != nil || info.GetAgent().GetName() != name {
					t.Errorf("agent %s described itself as %v, %v", name, info.GetAgent(), err)
				}
			})
		}
	}
	wg.Wait()
	if err := agents[1].release(); err != nil {
		t.Fatal(err)
	}
	if _, err := agents[1].client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}}); status.Code(err) != codes.Unavailable {
		t.Errorf("a call to a released agent: %v, want Unavailable", err)
	}
	if resp, err := agents[2].client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}}); err != nil || resp.GetAction().GetMove().GetChoose().GetOption() != "option-c" {
		t.Errorf("another agent after one was released: %v, %v", resp, err)
	}
	if h.Len() != 2 {
		t.Errorf("the host serves %d agents after one was released, want 2", h.Len())
	}
	if err := h.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := agents[0].client.Act(ctx, &agentv1.ActRequest{Observation: &agentv1.Observation{}}); err == nil {
		t.Error("a call after the host closed succeeded")
	}
	if _, _, err := h.Serve(choosing("d", "x")); !errors.Is(err, sdk.ErrHostClosed) {
		t.Errorf("Serve after Close: %v, want ErrHostClosed", err)
	}
}

// A host closed before serving anything never starts a server.
func TestHostClosedUnused(t *testing.T) {
	h := sdk.NewHost()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := h.Serve(choosing("a", "x")); !errors.Is(err, sdk.ErrHostClosed) {
		t.Errorf("Serve after Close: %v, want ErrHostClosed", err)
	}
}
