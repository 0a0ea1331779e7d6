package agentconn

import (
	"strings"
	"testing"
)

// commonLines agrees with a plain byte-by-byte reading wherever the strings part, at and
// around the edges of the chunks it compares whole.
func TestCommonLines(t *testing.T) {
	plain := func(a, b string) int {
		end := 0
		for i := 0; i < len(a) && i < len(b) && a[i] == b[i]; i++ {
			if a[i] == '\n' {
				end = i + 1
			}
		}
		return end
	}
	base := strings.Repeat("a line of rules text, forty bytes long\n", 30)
	for _, at := range []int{0, 1, 39, 40, 41, 255, 256, 257, 511, 512, 513, len(base) - 1} {
		changed := base[:at] + "#" + base[at+1:]
		for _, pair := range [][2]string{{base, changed}, {changed, base}, {base, base[:at]}, {base[:at], base}} {
			if got, want := commonLines(pair[0], pair[1]), plain(pair[0], pair[1]); got != want {
				t.Errorf("parting at byte %d (%d and %d bytes): %d, want %d", at, len(pair[0]), len(pair[1]), got, want)
			}
		}
	}
	if got := commonLines(base, base); got != len(base) {
		t.Errorf("equal strings: %d, want %d", got, len(base))
	}
}
