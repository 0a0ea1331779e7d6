package healthcmd

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/parley-arena/parley/cmd/parley/internal/cli"
)

func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out strings.Builder
	cmd := NewCmd(&cli.Deps{Out: &out, Err: &out, Getenv: func(string) string { return "" }})
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	hs := health.NewServer()
	healthpb.RegisterHealthServer(srv, hs)
	go func() { _ = srv.Serve(lis) }()
	defer srv.Stop()
	addr := lis.Addr().String()

	if out, err := run(t, addr); err != nil || !strings.Contains(out, "healthy") {
		t.Errorf("serving server: %v %q", err, out)
	}
	if _, err := run(t, "grpc://"+addr); err != nil {
		t.Errorf("grpc:// form: %v", err)
	}
	hs.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	if _, err := run(t, addr); err == nil || !strings.Contains(err.Error(), "NOT_SERVING") {
		t.Errorf("not serving: want an error naming NOT_SERVING, got %v", err)
	}
	srv.Stop()
	if _, err := run(t, addr, "--timeout", "1s"); err == nil {
		t.Error("stopped server: want an error")
	}
}

func TestHTTP(t *testing.T) {
	code := http.StatusOK
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
	defer ts.Close()
	if _, err := run(t, ts.URL+"/healthz"); err != nil {
		t.Errorf("200: %v", err)
	}
	code = http.StatusServiceUnavailable
	if _, err := run(t, ts.URL+"/healthz"); err == nil || !strings.Contains(err.Error(), "503") {
		t.Errorf("503: want an error naming the status, got %v", err)
	}
	if _, err := run(t, ts.URL, "--timeout", "0s"); !cliUsage(err) {
		t.Errorf("--timeout 0: want a usage error, got %v", err)
	}
}

func cliUsage(err error) bool { return cli.ExitCode(err) == 2 }
