// Package healthcmd is `parley health`: a readiness probe for container health checks, so the
// one parley image needs no extra probe binary.
package healthcmd

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
)

// NewCmd returns the health command.
func NewCmd(deps *cli.Deps) *cobra.Command {
	var (
		timeout time.Duration
		service string
	)
	cmd := &cobra.Command{
		Use:   "health ADDR",
		Short: "Check that a Parley service or agent is up (exit status 0 when it is)",
		Long: `Check one service: an http:// or https:// URL must answer GET with a 2xx status (the
gateway's /healthz); anything else (host:port or grpc://host:port) must answer the standard
gRPC health check with SERVING (referee, analytics, agents of every SDK). Prints one line and
exits 0 when healthy, 1 when not. Meant for container health checks.`,
		Example: `  parley health http://127.0.0.1:8080/healthz
  parley health 127.0.0.1:7070
  parley health grpc://bot:50051 --timeout 2s`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout <= 0 {
				return cli.Usagef("--timeout must be positive, got %s", timeout)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			addr := args[0]
			var err error
			if strings.HasPrefix(addr, "http://") || strings.HasPrefix(addr, "https://") {
				err = checkHTTP(ctx, addr)
			} else {
				err = checkGRPC(ctx, strings.TrimPrefix(addr, "grpc://"), service)
			}
			if err != nil {
				return fmt.Errorf("%s is not healthy: %w", addr, err)
			}
			fmt.Fprintf(deps.Out, "%s is healthy\n", addr)
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 3*time.Second, "how long to wait for an answer")
	cmd.Flags().StringVar(&service, "service", "", "gRPC health service name to ask about (empty: the whole server)")
	return cmd
}

func checkHTTP(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("GET answered %s", resp.Status)
	}
	return nil
}

func checkGRPC(ctx context.Context, target, service string) error {
	conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	if err != nil {
		return err
	}
	if s := resp.GetStatus(); s != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("health status %s", s)
	}
	return nil
}
