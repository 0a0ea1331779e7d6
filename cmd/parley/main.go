// Command parley is the Parley arena: one binary, many roles. See `parley --help`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/cmd/parley/internal/root"
	"github.com/parley-arena/parley/referee/families"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	// One server hosts every built-in agent this process plays, and one pool keeps the
	// connections to the agents it dials, for all of its matches.
	host := sdk.NewHost()
	deps := cli.DefaultDeps(families.New(), builtin.Agents{Host: host})
	err := root.NewCmd(deps).ExecuteContext(ctx)
	stop()
	deps.Pool.Close()
	host.Close()
	if err != nil {
		fmt.Fprintf(os.Stderr, "parley: %v\n", err)
	}
	os.Exit(cli.ExitCode(err))
}
