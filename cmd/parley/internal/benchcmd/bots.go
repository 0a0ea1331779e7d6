package benchcmd

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/parley-arena/parley/agents/builtin"
	"github.com/parley-arena/parley/internal/bench"
	"github.com/parley-arena/parley/referee/agentconn"
)

// botStartTimeout bounds waiting for a bot process to say where it listens.
const botStartTimeout = 30 * time.Second

// childBots serves each bot as `parley agent NAME --delay LATENCY` in a process of its own,
// started from this executable, so that what the bench measures of its own process is the
// referee's and the NATS server's, and the bots' CPU is counted from their processes.
func childBots(ctx context.Context) (bench.Serve, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("bench: the bots run as this program: %w", err)
	}
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
		cmd := exec.CommandContext(ctx, exe, args...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return bench.Bot{}, err
		}
		if err := cmd.Start(); err != nil {
			return bench.Bot{}, fmt.Errorf("bench: start bot %s: %w", addr, err)
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
				return bench.Bot{}, fmt.Errorf("bench: bot %s said %q", addr, line)
			}
			pid := strconv.Itoa(cmd.Process.Pid)
			return bench.Bot{
				Addr: agentconn.GRPCPrefix + bound, Stop: stop,
				CPU: func() time.Duration { return bench.CPUOf(pid) },
				RSS: func() uint64 { return bench.RSSOf(pid) },
			}, nil
		case <-time.After(botStartTimeout):
			stop()
			return bench.Bot{}, fmt.Errorf("bench: bot %s did not start in %s", addr, botStartTimeout)
		}
	}, nil
}
