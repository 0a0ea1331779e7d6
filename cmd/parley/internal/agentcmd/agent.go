// Package agentcmd is `parley agent NAME`: serve one built-in agent over gRPC; `parley agent
// llm` serves a language model with flags of its own.
package agentcmd

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
)

type options struct {
	name       string
	mode       sdk.Mode
	settings   []string
	delay      time.Duration
	cpuProfile string
}

// NewCmd returns the agent command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	o := &options{}
	var names []string
	for _, e := range builtin.Catalog() {
		names = append(names, fmt.Sprintf("  %-8s %s\n           settings: %s", e.Name, e.Summary, e.Settings))
	}
	cmd := &cobra.Command{
		Use:   "agent NAME (--listen ADDR | --dial-out URL --token T --bot NAME) [--set key=value]...",
		Short: "Serve a built-in agent over gRPC, or dial out to a gateway",
		Long:  "Serve a built-in agent as a gRPC AgentService (with health checking and reflection)\nuntil interrupted, or, with --dial-out, connect it to a gateway as a team's registered bot\n(no open port needed). Built-in agents:\n\n" + strings.Join(names, "\n"),
		Example: `  parley agent fair --listen 127.0.0.1:50051
  parley agent random --listen :50052 --set seed=7
  PARLEY_TOKEN=pt_... parley agent fair --dial-out http://127.0.0.1:8080 --bot fair`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.name = args[0]
			return run(cmd.Context(), deps, o)
		},
	}
	o.mode.Bind(cmd.Flags(), "127.0.0.1:50051")
	cmd.Flags().StringArrayVar(&o.settings, "set", nil, "agent setting key=value (repeatable)")
	cmd.Flags().DurationVar(&o.delay, "delay", 0, "wait this long before each answer (a bot with a fixed thinking time, for load tests)")
	cmd.Flags().StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the agent's process to `FILE` until it stops (parley bench --load asks its bots for one)")
	cmd.AddCommand(newLLMCmd(deps))
	return cmd
}

func run(ctx context.Context, deps *cli.Deps, o *options) error {
	settings := url.Values{}
	for _, kv := range o.settings {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return cli.Usagef("--set %q: want key=value", kv)
		}
		settings.Set(k, v)
	}
	if o.delay < 0 {
		return cli.Usagef("--delay must not be negative, got %s", o.delay)
	}
	agent, err := builtin.New(o.name, settings)
	if err != nil {
		return cli.Usagef("%v", err)
	}
	if o.cpuProfile != "" {
		out, err := os.Create(o.cpuProfile)
		if err != nil {
			return err
		}
		defer out.Close()
		if err := pprof.StartCPUProfile(out); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	opts := []sdk.Option{sdk.WithLogger(deps.Logger(0))}
	if o.delay > 0 {
		agent = sdk.Delay(agent, o.delay)
	}
	if d := o.mode.DialOut; d.URL != "" {
		if d.Token == "" || d.Bot == "" {
			return cli.Usagef("--dial-out needs --token (or $PARLEY_TOKEN) and --bot")
		}
		d.Reconnect = true
		d.OnWelcome = func(address string) { fmt.Fprintf(deps.Out, "agent %s connected as %s\n", o.name, address) }
		return sdk.Dial(ctx, d, agent, opts...)
	}
	lis, err := net.Listen("tcp", o.mode.Listen)
	if err != nil {
		return cli.Usagef("--listen %s: %v", o.mode.Listen, err)
	}
	fmt.Fprintf(deps.Out, "agent %s listening on %s\n", o.name, lis.Addr())
	return sdk.ServeListener(ctx, lis, agent, opts...)
}
