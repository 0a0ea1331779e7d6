package benchcmd

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/bench"
)

// childStartTimeout bounds waiting for a child process to say where it listens.
const childStartTimeout = 30 * time.Second

// child is a process this command started, serving on addr.
type child struct {
	addr string
	pid  string
	stop func()
}

func (c child) cpu() time.Duration { return bench.CPUOf(c.pid) }
func (c child) rss() uint64        { return bench.RSSOf(c.pid) }

// startChild runs this executable with args and waits for its first line, which ends in
// "listening on HOST:PORT".
func startChild(ctx context.Context, what string, args []string) (child, error) {
	exe, err := os.Executable()
	if err != nil {
		return child{}, fmt.Errorf("bench: the %s runs as this program: %w", what, err)
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return child{}, err
	}
	if err := cmd.Start(); err != nil {
		return child{}, fmt.Errorf("bench: start %s: %w", what, err)
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	select {
	case line := <-lines:
		_, bound, ok := strings.Cut(line, " listening on ")
		if !ok {
			stop()
			return child{}, fmt.Errorf("bench: %s said %q", what, line)
		}
		return child{addr: bound, pid: strconv.Itoa(cmd.Process.Pid), stop: stop}, nil
	case <-time.After(childStartTimeout):
		stop()
		return child{}, fmt.Errorf("bench: %s did not start in %s", what, childStartTimeout)
	}
}

// childBots serves each bot as `parley agent NAME --delay LATENCY` in a process of its own,
// started from this executable, so that what the bench measures of its own process is the
// referee's and the NATS server's, and the bots' CPU is counted from their processes. With
// profile set, each bot writes a CPU profile to profile.botN (N from 1).
func childBots(ctx context.Context, profile string) bench.Serve {
	n := 0
	return func(addr string, latency time.Duration) (bench.Bot, error) {
		name, settings, err := builtin.SplitAddress(addr)
		if err != nil {
			return bench.Bot{}, err
		}
		args := []string{"agent", name, "--listen", "127.0.0.1:0", "--delay", latency.String()}
		for k, vs := range settings {
			for _, v := range vs {
				args = append(args, "--set", k+"="+v)
			}
		}
		if n++; profile != "" {
			args = append(args, "--cpuprofile", fmt.Sprintf("%s.bot%d", profile, n))
		}
		c, err := startChild(ctx, "bot "+addr, args)
		if err != nil {
			return bench.Bot{}, err
		}
		return bench.Bot{Addr: agentconn.GRPCPrefix + c.addr, Stop: c.stop, CPU: c.cpu, RSS: c.rss}, nil
	}
}

// childEcho serves the floor's echo call in a process of its own (`parley bench echo`).
func childEcho(ctx context.Context) (bench.Echo, error) {
	c, err := startChild(ctx, "echo server", []string{"bench", "echo", "--listen", "127.0.0.1:0"})
	if err != nil {
		return bench.Echo{}, err
	}
	return bench.Echo{Addr: c.addr, CPU: c.cpu, Stop: c.stop}, nil
}

// newEchoCmd is `parley bench echo`, the floor's server: hidden, started by the bench itself.
func newEchoCmd(deps *cli.Deps) *cobra.Command {
	var listen string
	cmd := &cobra.Command{
		Use:    "echo --listen ADDR",
		Short:  "Serve the bench's floor call (a bare gRPC echo) until interrupted",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lis, err := net.Listen("tcp", listen)
			if err != nil {
				return cli.Usagef("--listen %s: %v", listen, err)
			}
			fmt.Fprintf(deps.Out, "echo listening on %s\n", lis.Addr())
			return bench.ServeEcho(cmd.Context(), lis)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:0", "address to serve on")
	return cmd
}
