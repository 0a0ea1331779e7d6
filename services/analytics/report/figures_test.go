package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/palette/moreland"

	"github.com/parley-arena/parley/services/analytics/metrics"
)

// contrast is WCAG 2's contrast ratio, worked out here from the definition (sRGB channels
// linearised, luminance weights 0.2126, 0.7152, 0.0722; (L1 + 0.05) / (L2 + 0.05)).
func contrast(a, b color.Color) float64 {
	lum := func(c color.Color) float64 {
		r, g, bl, _ := c.RGBA()
		out := 0.0
		for i, v := range []uint32{r, g, bl} {
			s := float64(v>>8) / 255
			if s <= 0.04045 {
				s /= 12.92
			} else {
				s = math.Pow((s+0.055)/1.055, 2.4)
			}
			out += []float64{0.2126, 0.7152, 0.0722}[i] * s
		}
		return out
	}
	x, y := lum(a), lum(b)
	return (max(x, y) + 0.05) / (min(x, y) + 0.05)
}

// TestHeatMapInk: every colour the heat maps' palette can give a cell has its number in an ink
// that passes WCAG AA (4.5:1): white on the dark blue and red ends, black in the light middle.
func TestHeatMapInk(t *testing.T) {
	pal := moreland.SmoothBlueRed()
	pal.SetMin(0)
	pal.SetMax(1)
	cs := pal.Palette(255).Colors()
	worst := 21.0
	for _, c := range cs {
		worst = min(worst, contrast(c, InkOn(c)))
	}
	if worst < 4.5 {
		t.Errorf("lowest contrast of a cell's number %.2f, want at least 4.5", worst)
	}
	for _, tc := range []struct {
		at   int
		want color.Color
	}{{0, color.White}, {len(cs) - 1, color.White}, {len(cs) / 2, color.Black}} {
		if got := InkOn(cs[tc.at]); got != tc.want {
			t.Errorf("ink on palette colour %d (%v) = %v, want %v", tc.at, cs[tc.at], got, tc.want)
		}
	}
	t.Logf("lowest contrast over the palette: %.2f:1", worst)
}

// TestTrajectoryLegendAndRoom: the price-path plot names its matches in a legend (each when
// few; the first and the last when many) and leaves room around every point, the last
// proposal's included.
func TestTrajectoryLegendAndRoom(t *testing.T) {
	for _, n := range []int{3, 20} {
		var rs []metrics.Row
		for i := range n {
			rs = append(rs, row(fmt.Sprintf("buysell-%02d", i), "a", "b", 10, 10, 60+float64(i), 40, 50, 48))
		}
		p, _, ok, err := trajectoryPlot("buysell", rs)
		if err != nil || !ok {
			t.Fatalf("%d matches: %v %v", n, ok, err)
		}
		// The data run over proposals 1..4 and prices 40..79.
		if !(p.X.Min < 1 && p.X.Max > 4 && p.Y.Min < 40 && p.Y.Max > 60+float64(n-1)) {
			t.Errorf("%d matches: axes x %v..%v, y %v..%v leave no room around proposals 1..4, prices 40..%d", n, p.X.Min, p.X.Max, p.Y.Min, p.Y.Max, 60+n-1)
		}
		dir := t.TempDir()
		f, ok, err := trajectory(dir, "buysell", rs)
		if err != nil || !ok {
			t.Fatal(err)
		}
		svg, err := os.ReadFile(filepath.Join(dir, f.SVG))
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"buysell-00", "buysell-01", "buysell-02"}
		if n > maxLegendEntries {
			want = []string{"first: buysell-00", fmt.Sprintf("last: buysell-%02d", n-1)}
		}
		for _, w := range want {
			if !strings.Contains(string(svg), ">"+w+"<") {
				t.Errorf("%d matches: the legend does not name %q", n, w)
			}
		}
	}
}
