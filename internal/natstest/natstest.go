// Package natstest runs a real nats-server process for tests. It is for tests only: nothing
// outside _test.go files should import it.
//
// The server is built with the go tool from the nats-server module at the version go.mod
// requires, once per version (the binary is cached in os.TempDir()). That needs no network
// when the module is in the module cache, as it is for any build of this module.
package natstest

import (
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

// module is the module path nats-server is built from.
const module = "github.com/nats-io/nats-server/v2"

// startTimeout bounds waiting for a started server to accept clients.
const startTimeout = 30 * time.Second

// Server is a running nats-server process with JetStream.
type Server struct {
	// URL is where clients reach the server: nats://127.0.0.1:PORT.
	URL string

	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	log    string        // file with the process's stdout and stderr
}

// Start starts nats-server with JetStream (its store in a temporary directory) on a free
// loopback port and waits until it accepts clients. It is killed at cleanup.
func Start(t testing.TB) *Server {
	t.Helper()
	return start(t, binary(t), t.TempDir(), FreePort(t))
}

// StartWithMaxPayload is Start with the server's payload limit set to maxPayload bytes (its
// default is 1 MiB), for tests of what happens to messages a smaller limit cannot carry.
func StartWithMaxPayload(t testing.TB, maxPayload int) *Server {
	t.Helper()
	dir := t.TempDir()
	conf := filepath.Join(dir, "nats.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("max_payload: %d\n", maxPayload)), 0o644); err != nil {
		t.Fatal(err)
	}
	return start(t, binary(t), dir, FreePort(t), "-c", conf)
}

// start runs bin as a JetStream server with its files in dir, clients on port, and extra
// arguments, and waits until it accepts clients.
func start(t testing.TB, bin, dir string, port int, extra ...string) *Server {
	t.Helper()
	s := &Server{
		URL:    fmt.Sprintf("nats://127.0.0.1:%d", port),
		exited: make(chan struct{}),
		log:    filepath.Join(dir, "nats-server.log"),
	}
	logFile, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-js", "-sd", filepath.Join(dir, "store"), "-p", strconv.Itoa(port), "-a", "127.0.0.1"}, extra...)
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = logFile, logFile
	if err := s.cmd.Start(); err != nil {
		logFile.Close()
		t.Fatalf("starting %s: %v", bin, err)
	}
	go func() {
		_ = s.cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()
	t.Cleanup(func() { s.Kill(t) })

	// Poll until a client gets in, the process dies, or time runs out.
	deadline := time.After(startTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		nc, err := nats.Connect(s.URL, nats.Timeout(time.Second), nats.NoReconnect())
		if err == nil {
			nc.Close()
			return s
		}
		select {
		case <-s.exited:
			t.Fatalf("nats-server exited before accepting clients:\n%s", s.output())
		case <-deadline:
			t.Fatalf("nats-server not accepting clients at %s after %s (last error: %v):\n%s", s.URL, startTimeout, err, s.output())
		case <-tick.C:
		}
	}
}

// Cluster is n nats-server processes on loopback, routed to each other, with clustered
// JetStream.
type Cluster struct {
	// Servers in start order.
	Servers []*Server
}

// URL lists every server, comma-separated, as NATS clients (and --nats) take it.
func (c *Cluster) URL() string {
	urls := make([]string, len(c.Servers))
	for i, s := range c.Servers {
		urls[i] = s.URL
	}
	return strings.Join(urls, ",")
}

// StartCluster starts n (at least 3, for a JetStream quorum that survives a lost server)
// clustered nats-server processes and waits until JetStream answers through each of them.
// They are killed at cleanup.
func StartCluster(t testing.TB, n int) *Cluster {
	t.Helper()
	if n < 3 {
		t.Fatalf("natstest: a JetStream cluster needs at least 3 servers, not %d", n)
	}
	bin := binary(t)
	ports, routePorts := make([]int, n), make([]int, n)
	routes := make([]string, n)
	for i := range n {
		ports[i], routePorts[i] = FreePort(t), FreePort(t)
		routes[i] = fmt.Sprintf("nats://127.0.0.1:%d", routePorts[i])
	}
	c := &Cluster{}
	for i := range n {
		c.Servers = append(c.Servers, start(t, bin, t.TempDir(), ports[i],
			"-n", fmt.Sprintf("parley-test-%d", i),
			"--cluster_name", "parley-test",
			"--cluster", routes[i],
			"--routes", strings.Join(routes, ",")))
	}
	// JetStream answers once the servers have met and elected a meta leader.
	deadline := time.Now().Add(startTimeout)
	for _, s := range c.Servers {
		for {
			err := jetStreamReady(s.URL)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("clustered JetStream not ready at %s after %s: %v\n%s", s.URL, startTimeout, err, s.output())
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return c
}

// jetStreamReady asks the server at url for the account's JetStream information.
func jetStreamReady(url string) error {
	nc, err := nats.Connect(url, nats.Timeout(time.Second), nats.NoReconnect())
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := nc.JetStream(nats.MaxWait(2 * time.Second))
	if err != nil {
		return err
	}
	_, err = js.AccountInfo()
	return err
}

// Kill stops the process and waits for it; calling it again is harmless.
func (s *Server) Kill(t testing.TB) {
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

// output is what the process has printed so far, for failure messages.
func (s *Server) output() string {
	b, err := os.ReadFile(s.log)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	return string(b)
}

// binary builds the nats-server command at the module version go.mod requires, once per
// version: the binary is kept in os.TempDir(), shared by every test process.
func binary(t testing.TB) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	version := moduleVersion(t, goTool, module)
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
	out, err := exec.Command(goTool, "build", "-o", tmp.Name(), module).CombinedOutput()
	if err != nil {
		t.Fatalf("building nats-server %s failed (%v); it needs the go tool and the module in the module cache (go mod download %s):\n%s",
			version, err, module, out)
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// moduleVersion returns the version of module path that go.mod selects, or
// "" when it is replaced by a directory. (Test binaries carry no module
// versions in their build info, so ask the go tool.)
func moduleVersion(t testing.TB, goTool, path string) string {
	t.Helper()
	out, err := exec.Command(goTool, "list", "-m",
		"-f", "{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go list -m %s: %v\n%s", path, err, out)
	}
	return strings.TrimSpace(string(out))
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
