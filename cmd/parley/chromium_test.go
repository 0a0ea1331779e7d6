package main

import (
	"context"
	"os/exec"
	"testing"

	"github.com/chromedp/chromedp"
)

// headlessChromium starts Debian's chromium, headless with a throwaway profile and a window of
// the given size, under parent; it is stopped when the test ends. It returns the allocator's
// context (pass it to chromedp.NewContext) and the binary used.
func headlessChromium(t *testing.T, parent context.Context, width, height int) (context.Context, string) {
	t.Helper()
	bin := ""
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			bin = p
			break
		}
	}
	if bin == "" {
		t.Fatal("chromium is not installed: run `make deps` (it installs Debian's chromium)")
	}
	actx, cancel := chromedp.NewExecAllocator(parent,
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(width, height),
	)
	t.Cleanup(cancel)
	return actx, bin
}
