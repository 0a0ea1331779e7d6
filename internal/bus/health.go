package bus

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// ErrNotReady is wrapped by Ready's error: the store does not take writes now.
var ErrNotReady = errors.New("bus: the store does not take writes")

const (
	// DefaultHealthEvery is how often the embedded server's store is checked (and healed).
	DefaultHealthEvery = time.Second
	// healProbeFiles is how many descriptors must be free before a broken store is reopened:
	// reopening one with none to spare would break it again at once.
	healProbeFiles = 64
)

// health is what the last check of the store found: nil while it takes writes.
type health struct {
	err atomic.Pointer[error]
}

func (h *health) set(err error) {
	if err == nil {
		h.err.Store(nil)
		return
	}
	h.err.Store(&err)
}

func (h *health) get() error {
	if p := h.err.Load(); p != nil {
		return *p
	}
	return nil
}

// Ready returns nil when the store takes writes, else an error wrapping ErrNotReady that says
// why. It is cheap (what the last check found): call it before accepting work that must be
// stored. For an external server it says whether the connection is up; the embedded server's
// streams are checked every DefaultHealthEvery, and one that a failed write has disabled (a
// file it could not open: the process ran out of descriptors) is reopened as soon as
// descriptors are free again, with no restart.
func (b *Bus) Ready() error {
	if b.nc == nil {
		return fmt.Errorf("%w: not connected", ErrNotReady)
	}
	if st := b.nc.Status(); st != nats.CONNECTED {
		return fmt.Errorf("%w: the connection to NATS is %s", ErrNotReady, strings.ToLower(st.String()))
	}
	return b.health.get()
}

// watchStore checks the embedded server's store every interval until ctx ends, healing it
// when a write has disabled a stream.
func (b *Bus) watchStore(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var w storeWatch
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		b.checkStore(&w)
	}
}

// storeWatch is what watchStore keeps between checks.
type storeWatch struct {
	failed bool // the last check found the store failing
}

// checkStore checks the store once, heals it after a write error, and sets what Ready says.
func (b *Bus) checkStore(w *storeWatch) {
	err := b.storeHealth()
	if err != nil && b.heal(err) {
		err = b.storeHealth()
	}
	// A stream being added is in the store's folder a moment before the server has loaded
	// it, and the server's check takes it for a stream that could not be recovered: a
	// failure counts once the next check finds one too.
	failed := err != nil
	if failed && !w.failed {
		err = nil
	}
	w.failed = failed
	if was := b.health.get(); (was == nil) != (err == nil) {
		if err != nil {
			b.log.Error("the store does not take writes", "err", err)
		} else {
			b.log.Warn("the store takes writes again")
		}
	}
	b.health.set(err)
}

// storeHealth asks the embedded server whether JetStream and every stream take writes. The
// server reads its store's folders to answer, and takes folders it cannot read for empty ones:
// so does this, first, and a failure means the process is out of descriptors.
func (b *Bus) storeHealth() error {
	if cfg := b.srv.JetStreamConfig(); cfg != nil {
		if _, err := os.ReadDir(cfg.StoreDir); err != nil {
			return fmt.Errorf("%w: %v", ErrNotReady, err)
		}
	}
	hs := b.srv.Healthz(&server.HealthzOptions{})
	if hs == nil || hs.Status == "ok" {
		return nil
	}
	msg := hs.Error
	if msg == "" {
		msg = hs.Status
	}
	return fmt.Errorf("%w: %s", ErrNotReady, msg)
}

// heal reopens the embedded server's JetStream (every stream reloaded from its files) after a
// write error disabled a stream, once descriptors are free again; it reports whether it did.
// Writes in flight meanwhile fail and are retried by their writers; nothing stored is lost.
func (b *Bus) heal(cause error) bool {
	if !strings.Contains(cause.Error(), "write error") || !descriptorsFree(healProbeFiles) {
		return false
	}
	cfg := b.srv.JetStreamConfig()
	if cfg == nil {
		return false
	}
	b.log.Warn("reopening the store after a write error", "err", cause)
	// JetStreamConfig's StoreDir ends in the "jetstream" folder EnableJetStream adds itself.
	restart := *cfg
	restart.StoreDir = filepath.Dir(cfg.StoreDir)
	if err := b.srv.ShutdownJetStream(); err != nil {
		b.log.Error("stopping the store to reopen it", "err", err)
		return false
	}
	if err := b.srv.EnableJetStream(&restart); err != nil {
		b.log.Error("reopening the store", "err", err)
		return false
	}
	b.healed.Add(1)
	return true
}

// Healed returns how many times the embedded server's store was reopened after a write error.
func (b *Bus) Healed() int64 { return b.healed.Load() }

// descriptorsFree reports whether n more files can be opened now.
func descriptorsFree(n int) bool {
	var opened []*os.File
	defer func() {
		for _, f := range opened {
			f.Close()
		}
	}()
	for range n {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return false
		}
		opened = append(opened, f)
	}
	return true
}
