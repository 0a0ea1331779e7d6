// Package sdktest hosts agents in a test's own process, over real gRPC on a loopback port,
// for as long as the test runs: the one helper every test that needs a bot of its own uses.
package sdktest

import (
	"testing"
	"time"

	"github.com/parley-arena/parley/agents/sdk"
	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// gracePeriod lets calls in flight finish when the test ends.
const gracePeriod = 100 * time.Millisecond

// Addr serves a on a free loopback port until the test ends and returns its agent address,
// "grpc://127.0.0.1:PORT".
func Addr(t testing.TB, a sdk.Agent, opts ...sdk.Option) string {
	t.Helper()
	addr, stop, err := sdk.Background("127.0.0.1:0", a, append([]sdk.Option{sdk.WithGracePeriod(gracePeriod)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return "grpc://" + addr
}

// Client serves a on a free loopback port until the test ends and returns a client of it.
func Client(t testing.TB, a sdk.Agent, opts ...sdk.Option) agentv1.AgentServiceClient {
	t.Helper()
	client, stop, err := sdk.Loopback(a, append([]sdk.Option{sdk.WithGracePeriod(gracePeriod)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("stop agent: %v", err)
		}
	})
	return client
}
