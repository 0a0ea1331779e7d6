//go:build !unix

package gateway

// fileLimit is unknown here: only the policy's bounds apply.
func fileLimit() int { return 0 }
