// Command shot screenshots a URL in headless chromium (dev helper, not part of the build).
package main

import (
	"context"
	"flag"
	"log"
	"os"
	"time"

	"github.com/chromedp/chromedp"
)

func main() {
	wait := flag.Duration("wait", 2*time.Second, "")
	js := flag.String("js", "", "script to run before the screenshot")
	w := flag.Int("w", 1280, "")
	h := flag.Int("h", 1200, "")
	flag.Parse()
	url, out := flag.Arg(0), flag.Arg(1)
	dir, _ := os.MkdirTemp("", "shot")
	defer os.RemoveAll(dir)
	opts := []chromedp.ExecAllocatorOption{chromedp.ExecPath("/usr/bin/chromium"), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.UserDataDir(dir), chromedp.WindowSize(*w, *h)}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	go func() {
		for m, err := range chromedp.Console(bctx) {
			if err != nil {
				return
			}
			log.Printf("console: %+v", m)
		}
	}()
	if err := chromedp.Do(bctx, chromedp.Navigate(url), chromedp.Sleep(*wait)); err != nil {
		log.Fatal(err)
	}
	if *js != "" {
		res, err := chromedp.Run(bctx, chromedp.Evaluate[any](*js, chromedp.EvalAwaitPromise))
		log.Printf("js: %v %v", res, err)
		chromedp.Do(bctx, chromedp.Sleep(*wait))
	}
	buf, err := chromedp.Run(bctx, chromedp.FullScreenshot(90))
	if err != nil {
		log.Fatal(err)
	}
	os.WriteFile(out, buf, 0o644)
}
