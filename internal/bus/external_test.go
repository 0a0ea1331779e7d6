package bus

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

const natsServerModule = "github.com/nats-io/nats-server/v2"

// TestExternalServer runs the round trip against a nats-server process, built
// from the module version in go.mod, reached by URL.
func TestExternalServer(t *testing.T) {
	srv := startNATSServer(t)

	b := openEmbedded(t, Config{URL: srv.url})
	if b.Embedded() || b.URL() != srv.url {
		t.Fatalf("Embedded() = %v, URL() = %q; want false, %q", b.Embedded(), b.URL(), srv.url)
	}
	checkRoundTrip(t, b)

	// The server dies mid-match: Flush reports it within its ctx.
	p := NewPublisher(b)
	evs := syntheticMatch("m-killed", 10)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := recordAll(ctx, p, evs[:5]); err != nil {
		t.Fatalf("recording before kill: %v", err)
	}
	srv.kill(t)
	for _, ev := range evs[5:] {
		if err := p.Record(ctx, ev); err != nil {
			t.Logf("Record after kill: %v", err)
		}
	}
	fctx, fcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer fcancel()
	start := time.Now()
	err := p.Flush(fctx)
	if err == nil {
		t.Fatal("Flush after the server was killed returned nil")
	}
	if elapsed := time.Since(start); elapsed > 3*time.Second {
		t.Fatalf("Flush took %s, want at most its 2s ctx", elapsed)
	}
	t.Logf("Flush after kill: %v", err)
}

// natsServerProc is a running nats-server process.
type natsServerProc struct {
	url    string
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	log    *os.File
}

// startNATSServer starts nats-server with JetStream on a free loopback port
// and waits until it accepts clients. It is killed at cleanup.
func startNATSServer(t *testing.T) *natsServerProc {
	t.Helper()
	bin := natsServerBinary(t)
	dir := t.TempDir()
	port := freePort(t)
	logFile, err := os.Create(filepath.Join(dir, "nats-server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-js", "-sd", filepath.Join(dir, "store"), "-p", strconv.Itoa(port), "-a", "127.0.0.1")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", bin, err)
	}
	s := &natsServerProc{
		url:    fmt.Sprintf("nats://127.0.0.1:%d", port),
		cmd:    cmd,
		exited: make(chan struct{}),
		log:    logFile,
	}
	go func() {
		_ = cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		s.kill(t)
		logFile.Close()
	})

	// Poll until a client gets in, the process dies, or time runs out.
	deadline := time.After(testTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		nc, err := nats.Connect(s.url, nats.Timeout(time.Second), nats.NoReconnect())
		if err == nil {
			nc.Close()
			return s
		}
		select {
		case <-s.exited:
			t.Fatalf("nats-server exited before accepting clients:\n%s", s.output())
		case <-deadline:
			t.Fatalf("nats-server not accepting clients at %s after %s (last error: %v):\n%s", s.url, testTimeout, err, s.output())
		case <-tick.C:
		}
	}
}

// kill stops the process and waits for it; calling it again is harmless.
func (s *natsServerProc) kill(t *testing.T) {
	select {
	case <-s.exited:
		return
	default:
	}
	if err := s.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("killing nats-server: %v", err)
	}
	<-s.exited
}

func (s *natsServerProc) output() string {
	b, err := os.ReadFile(s.log.Name())
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return string(b)
}

// natsServerBinary builds the nats-server command at the module version
// go.mod requires, once per version: the binary is kept in os.TempDir(). It
// needs no network when the module is in the module cache, as it is for any
// build of this package.
func natsServerBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	version := moduleVersion(t, goTool, natsServerModule)
	dir := os.TempDir()
	name := fmt.Sprintf("parley-test-nats-server-%s-%s-%s", version, runtime.GOOS, runtime.GOARCH)
	if version == "" {
		// Replaced by a local directory: no version to key a cache on.
		dir, name = t.TempDir(), "nats-server"
	}
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	bin := filepath.Join(dir, name)
	if fi, err := os.Stat(bin); err == nil && fi.Mode().IsRegular() && fi.Size() > 0 {
		return bin
	}

	// Build to a private name, then rename: concurrent test processes never
	// see a half-written binary.
	tmp, err := os.CreateTemp(dir, name+".*.tmp")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	out, err := exec.Command(goTool, "build", "-o", tmp.Name(), natsServerModule).CombinedOutput()
	if err != nil {
		t.Fatalf("building nats-server %s for the external-server test failed (%v); it needs the go tool and the module in the module cache (go mod download %s):\n%s",
			version, err, natsServerModule, out)
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// moduleVersion returns the version of module path that go.mod selects, or
// "" when it is replaced by a directory. (Test binaries carry no module
// versions in their build info, so ask the go tool.)
func moduleVersion(t *testing.T, goTool, path string) string {
	t.Helper()
	out, err := exec.Command(goTool, "list", "-m",
		"-f", "{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m %s: %v\n%s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
