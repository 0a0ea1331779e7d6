package bus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// healChild marks the child process TestStoreHealsAfterDescriptorsRunOut runs itself in: it
// lowers its own file limit, which must not touch the test binary running everything else.
const healChild = "PARLEY_BUS_TEST_HEAL_CHILD"

// TestStoreHealsAfterDescriptorsRunOut runs the embedded server out of file descriptors while
// matches are recorded (a competitor takes every descriptor the moment one is free, as an
// accept loop under a connection flood does), until a stream's write fails and the server
// disables it. Ready must then say so; once the descriptors are free again the store must take
// writes with no restart, and keep what it held.
func TestStoreHealsAfterDescriptorsRunOut(t *testing.T) {
	if os.Getenv(healChild) == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStoreHealsAfterDescriptorsRunOut$", "-test.v")
		cmd.Env = append(os.Environ(), healChild+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("the child failed: %v\n%s", err, out)
		}
		return
	}
	lim := syscall.Rlimit{}
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = 256
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot lower the file limit: %v", err)
	}
	b := openEmbedded(t, Config{StoreDir: t.TempDir(), HealthEvery: 20 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	js := b.JetStream()
	publish := func(i int) error {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		_, err := js.Publish(pctx, fmt.Sprintf("parley.match.heal-%d.action_taken", i), make([]byte, 256<<10))
		return err
	}
	if err := b.Ready(); err != nil {
		t.Fatalf("a fresh store is not ready: %v", err)
	}

	began := time.Now()
	// Take every descriptor, and every one freed from now on.
	stop, held := make(chan struct{}), make(chan []*os.File)
	go func() {
		var got []*os.File
		for {
			select {
			case <-stop:
				held <- got
				return
			default:
			}
			if f, err := os.Open(os.DevNull); err == nil {
				got = append(got, f)
			} else {
				runtime.Gosched()
			}
		}
	}()
	stored, failed := 0, false
	for i := range 4000 { // 1 GiB at most: the 8 MiB blocks need new files long before
		if err := publish(i); err != nil {
			failed = true
			break
		}
		stored++
	}
	waitReady := func(want bool) error {
		for ctx.Err() == nil {
			if err := b.Ready(); (err == nil) == want {
				return err
			}
			runtime.Gosched()
		}
		return ctx.Err()
	}
	var notReady error
	if failed {
		notReady = waitReady(false)
	}
	close(stop)
	for _, f := range <-held {
		f.Close()
	}
	if !failed {
		t.Fatalf("%d messages stored with no descriptor free and no write failed: the test did not reach the failure", stored)
	}
	if !errors.Is(notReady, ErrNotReady) {
		t.Fatalf("after a failed write Ready says %v, want ErrNotReady", notReady)
	}
	t.Logf("%s: %d messages stored, then a write failed; Ready said: %v", time.Since(began), stored, notReady)

	if err := waitReady(true); err != nil {
		t.Fatalf("the store never took writes again: %v", err)
	}
	t.Logf("%s: ready again", time.Since(began))
	if err := publish(-1); err != nil {
		t.Fatalf("a write after the store healed: %v", err)
	}
	if b.Healed() < 1 {
		t.Errorf("the store is ready without having been reopened (Healed %d)", b.Healed())
	}
	if n := streamMsgs(t, b); n < uint64(stored)+1 {
		t.Errorf("the stream holds %d messages after healing, want at least the %d stored before and the one after", n, stored)
	}
}

// A stream folder the server has not loaded (as a stream being added is, for a moment) makes
// the server's own check fail: Ready says not ready once two checks in a row find it, not
// after one, and ready again once it is gone.
func TestReadyOutlastsAStreamBeingAdded(t *testing.T) {
	b := openEmbedded(t, Config{StoreDir: t.TempDir(), HealthEvery: time.Hour})
	cfg := b.srv.JetStreamConfig()
	if cfg == nil {
		t.Fatal("no JetStream")
	}
	adding := filepath.Join(cfg.StoreDir, "$G", "streams", "ADDING")
	if err := os.MkdirAll(adding, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.storeHealth(); err == nil || !strings.Contains(err.Error(), "could not be recovered") {
		t.Fatalf("the server's check with a stream folder it has not loaded: %v", err)
	}
	var w storeWatch
	b.checkStore(&w)
	if err := b.Ready(); err != nil {
		t.Errorf("after one check finding the folder: %v, want ready", err)
	}
	b.checkStore(&w)
	if err := b.Ready(); !errors.Is(err, ErrNotReady) {
		t.Errorf("after two checks finding the folder: %v, want ErrNotReady", err)
	}
	if err := os.Remove(adding); err != nil {
		t.Fatal(err)
	}
	b.checkStore(&w)
	if err := b.Ready(); err != nil {
		t.Errorf("once the folder is gone: %v, want ready", err)
	}
}
