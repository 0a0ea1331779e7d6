package upcmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gofrs/flock"
)

// Files that say who owns the data directory.
const (
	// LockFile is locked (an OS file lock) by the `parley up` that owns the directory for as
	// long as it runs; the OS lets go of it when the process ends, however it ends.
	LockFile = "up.lock"
	// OwnerFile names the owner for whoever finds the directory locked: its pid, then its URL
	// once it serves. Only the lock's holder writes it; it may be stale, the lock never is.
	OwnerFile = "up.owner"
)

// dirLock is a held lock on a data directory.
type dirLock struct {
	lock  *flock.Flock
	owner string
}

// lockDataDir takes the data directory for this process, before anything in it is opened, or
// returns an error that names the running owner. It does not wait: a
// second `parley up` on the same directory must stop at once, having touched nothing.
func lockDataDir(dir string) (*dirLock, error) {
	l := flock.New(filepath.Join(dir, LockFile))
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", l.Path(), err)
	}
	if !ok {
		owner := "another parley up"
		if b, err := os.ReadFile(filepath.Join(dir, OwnerFile)); err == nil && len(strings.TrimSpace(string(b))) > 0 {
			owner = "the parley up running as " + strings.TrimSpace(string(b))
		}
		return nil, fmt.Errorf("data directory %s is in use by %s; stop it or give another --data-dir", dir, owner)
	}
	d := &dirLock{lock: l, owner: filepath.Join(dir, OwnerFile)}
	d.announce("")
	return d, nil
}

// announce writes the owner file: this process's pid, and url once known. A failure to write
// it only makes a second instance's message vaguer.
func (d *dirLock) announce(url string) {
	text := fmt.Sprintf("pid %d", os.Getpid())
	if url != "" {
		text += " at " + url
	}
	_ = os.WriteFile(d.owner, []byte(text+"\n"), 0o644)
}

// release lets go of the directory. The lock file stays (removing it would let a third process
// lock a new file while a second still holds the old one); the owner file goes.
func (d *dirLock) release() {
	_ = os.Remove(d.owner)
	_ = d.lock.Unlock()
}
