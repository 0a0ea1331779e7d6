package agentconn_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/teams/botlink"
	"github.com/parley-arena/parley/teams/registry"
)

// countingListener counts the connections it accepts, and closes them.
func countingListener(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	var n atomic.Int32
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return lis.Addr().String(), &n
}

// The referee never dials an address a team registered unless the organiser allows it; an
// address the organiser gives is dialled as before.
func TestRegisteredEndpointNeedsAllowDial(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	b, err := bus.Open(ctx, bus.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	store, err := registry.Open(ctx, b.JetStream())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := store.AddTeam(ctx, "team"); err != nil {
		t.Fatal(err)
	}
	// The "internal" service a team might point the referee at.
	internal, accepted := countingListener(t)
	if _, err := store.Register(ctx, "team", &registryv1.RegisterBotRequest{
		Name: "probe", Version: "1", Games: []string{"ultimatum"}, Endpoint: "grpc://" + internal,
	}); err != nil {
		t.Fatal(err)
	}

	dir, err := botlink.OpenDirectory(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	refused := &agentconn.Resolver{Bots: dir}
	_, err = refused.Open(ctx, "bot:team/probe")
	if !errors.Is(err, agentconn.ErrDialRefused) || !strings.Contains(err.Error(), agentconn.AllowBotDialFlag) {
		t.Fatalf("open without the flag: %v; want a refusal naming %s", err, agentconn.AllowBotDialFlag)
	}

	allowed := &agentconn.Resolver{Bots: dir, AllowBotDial: true}
	c, err := allowed.Open(ctx, "bot:team/probe@1")
	if err != nil {
		t.Fatal(err)
	}
	if c.Label != "team/probe@1" {
		t.Errorf("label %q", c.Label)
	}
	_, _ = c.Describe(ctx, time.Second) // not an agent; what matters is that it was dialled
	c.Close()
	dialled := accepted.Load()
	if dialled == 0 {
		t.Error("with the flag the registered endpoint was not dialled")
	}

	// Without a registry: not served here.
	if _, err := (&agentconn.Resolver{}).Open(ctx, "bot:team/probe"); !errors.Is(err, agentconn.ErrNotServed) || !strings.Contains(err.Error(), "registry") {
		t.Errorf("open with no registry: %v", err)
	}
	// For unknown, retired or mis-versioned bots: a clear bad-address error.
	for _, tc := range []struct {
		addr string
		want string
	}{
		{"bot:team/nobody", "not registered"},
		{"bot:team/probe@2", "version 1"},
		{"bot:team", "bot:TEAM/NAME"},
		{"bot:Team/x", "team name"},
	} {
		_, err := allowed.Open(ctx, tc.addr)
		if !errors.Is(err, agentconn.ErrBadAddress) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("open %s: %v; want a bad address mentioning %q", tc.addr, err, tc.want)
		}
	}
	if _, err := store.Update(ctx, "team", "probe", func(b *registryv1.Bot) error { b.Retired = true; return nil }); err != nil {
		t.Fatal(err)
	}
	if _, err := allowed.Open(ctx, "bot:team/probe"); err == nil || !strings.Contains(err.Error(), "retired") {
		t.Errorf("open a retired bot: %v", err)
	}
	if n := accepted.Load(); n != dialled {
		t.Errorf("refused opens dialled the endpoint (%d connections, %d before)", n, dialled)
	}
}
