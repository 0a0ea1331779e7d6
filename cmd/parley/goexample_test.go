package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// goExample is the Go example bot (agents/sdk/example), built once, next to parleyBin.
var goExample struct {
	once sync.Once
	path string
	err  error
}

// buildGoExample builds the Go example bot and returns the binary's path.
func buildGoExample(t *testing.T) string {
	t.Helper()
	goExample.once.Do(func() {
		goExample.path = filepath.Join(filepath.Dir(parleyBin), "parley-example-go")
		cmd := exec.Command(goTool(), "build", "-o", goExample.path, "./agents/sdk/example")
		cmd.Dir = repoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			goExample.err = fmt.Errorf("go build ./agents/sdk/example: %v\n%s", err, out)
		}
	})
	if goExample.err != nil {
		t.Fatal(goExample.err)
	}
	return goExample.path
}
