//go:build unix

package gateway

import "syscall"

// fileLimit is the process's soft limit on open files (0: unknown). Go raises it to the hard
// limit at start.
func fileLimit() int {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil || l.Cur > 1<<30 {
		return 0
	}
	return int(l.Cur)
}
