package report

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/parley-arena/parley/services/analytics/metrics"
	"github.com/parley-arena/parley/services/analytics/metrics/bargaining"
	"github.com/parley-arena/parley/services/analytics/tables"
)

// Figure is one figure written as an SVG and a PNG file.
type Figure struct {
	// Title says what it shows.
	Title string
	// SVG and PNG are the files' names, relative to the report's directory.
	SVG, PNG string
}

// maxTrajectories bounds the matches drawn in one trajectory plot.
const maxTrajectories = 60

// Figures draws the figures of every game into dir and returns them: for a two-player game
// the win-rate and the mean-payoff heat maps of the chosen seat (rows: the agent in seat 1,
// columns: the agent in seat 0), and, where the game's metrics record a path (buyer/seller:
// price_1, price_2, ...), the path of every match over its proposals (at most 60 matches,
// in match-id order).
func Figures(dir string, games []*tables.Game, rows []metrics.Row) ([]Figure, error) {
	var out []Figure
	for _, g := range games {
		if p := g.Pairs; p != nil && len(p.Rows) > 0 && len(p.Cols) > 0 {
			win := grid{rows: p.Rows, cols: p.Cols, z: make([][]float64, len(p.Rows))}
			pay := grid{rows: p.Rows, cols: p.Cols, z: make([][]float64, len(p.Rows))}
			for i := range p.Rows {
				win.z[i] = make([]float64, len(p.Cols))
				pay.z[i] = make([]float64, len(p.Cols))
				for j := range p.Cols {
					win.z[i][j] = value(p.Cells[i][j].WinRate)
					pay.z[i][j] = value(p.Cells[i][j].Payoff[p.Seat])
				}
			}
			for _, h := range []struct {
				kind, title string
				grid        grid
				pct         bool
			}{
				{"winrate", fmt.Sprintf("%s: win rate of %s (decisive matches)", g.Game, p.SeatName), win, true},
				{"payoff", fmt.Sprintf("%s: mean payoff of %s", g.Game, p.SeatName), pay, false},
			} {
				f, err := heatmap(dir, fileName(g.Game, "heatmap-"+h.kind), h.title, h.grid, g, h.pct)
				if err != nil {
					return nil, err
				}
				out = append(out, f)
			}
		}
		var gameRows []metrics.Row
		for _, r := range rows {
			if r.Game == g.Game && !r.Void() {
				gameRows = append(gameRows, r)
			}
		}
		f, ok, err := trajectory(dir, g.Game, gameRows)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	return out, nil
}

func fileName(game, kind string) string {
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, game)
	return clean + "-" + kind
}

func value(m tables.Mean) float64 {
	v, ok := m.Value()
	if !ok {
		return math.NaN()
	}
	return v
}

// grid is a heat map's data: z[row][col], rows drawn bottom to top in reverse so that the
// first row is at the top, as in a table.
type grid struct {
	rows, cols []string
	z          [][]float64
}

func (g grid) Dims() (c, r int)   { return len(g.cols), len(g.rows) }
func (g grid) Z(c, r int) float64 { return g.z[len(g.rows)-1-r][c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

func heatmap(dir, name, title string, g grid, game *tables.Game, isPct bool) (Figure, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "agent in " + seatName(game, 0)
	p.Y.Label.Text = "agent in " + seatName(game, 1)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, line := range g.z {
		for _, v := range line {
			if !math.IsNaN(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if isPct {
		lo, hi = 0, 1
	}
	if math.IsInf(lo, 1) {
		lo, hi = 0, 1
	}
	if hi <= lo {
		hi = lo + 1
	}
	pal := moreland.SmoothBlueRed()
	pal.SetMin(lo)
	pal.SetMax(hi)
	colors := pal.Palette(255)
	h := plotter.NewHeatMap(g, colors)
	h.Min, h.Max = lo, hi
	h.NaN = color.Gray{Y: 0xdd}
	p.Add(h)

	var xys plotter.XYs
	var labels []string
	var inks []color.Color
	for r := range g.rows {
		for c := range g.cols {
			v := g.z[r][c]
			text := "–"
			bg := h.NaN
			switch {
			case math.IsNaN(v):
			case isPct:
				text = fmt.Sprintf("%.0f%%", 100*v)
			default:
				text = num(v)
			}
			if !math.IsNaN(v) {
				bg = cellColor(colors, v, lo, hi)
			}
			xys = append(xys, plotter.XY{X: float64(c), Y: float64(len(g.rows) - 1 - r)})
			labels = append(labels, text)
			inks = append(inks, InkOn(bg))
		}
	}
	l, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return Figure{}, fmt.Errorf("report: %s: %w", name, err)
	}
	for i := range l.TextStyle {
		l.TextStyle[i].XAlign = -0.5
		l.TextStyle[i].YAlign = -0.5
		l.TextStyle[i].Color = inks[i] // readable on its cell: white on the dark ends, black between
	}
	p.Add(l)
	var xt, yt []plot.Tick
	for c, n := range g.cols {
		xt = append(xt, plot.Tick{Value: float64(c), Label: n})
	}
	for r, n := range g.rows {
		yt = append(yt, plot.Tick{Value: float64(len(g.rows) - 1 - r), Label: n})
	}
	p.X.Tick.Marker = plot.ConstantTicks(xt)
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
	p.X.Min, p.X.Max = -0.5, float64(len(g.cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(g.rows))-0.5
	side := vg.Length(max(len(g.cols), len(g.rows)))*1.3*vg.Inch + 2*vg.Inch
	return save(dir, name, title, p, side, side*0.85)
}

// trajectory plots price_k over k for every match that has a price path.
func trajectory(dir, game string, rows []metrics.Row) (Figure, bool, error) {
	p, legend, ok, err := trajectoryPlot(game, rows)
	if !ok || err != nil {
		return Figure{}, false, err
	}
	f, err := saveWithLegend(dir, fileName(game, "trajectories"), p.Title.Text, p, legend, 7*vg.Inch, 4.5*vg.Inch)
	return f, err == nil, err
}

// trajectoryPlot draws trajectory's plot and the legend that goes below it; false when no
// match has a price path.
func trajectoryPlot(game string, rows []metrics.Row) (*plot.Plot, *plot.Legend, bool, error) {
	sort.Slice(rows, func(i, j int) bool { return rows[i].MatchID < rows[j].MatchID })
	p := plot.New()
	p.Title.Text = game + ": price path of each match"
	p.X.Label.Text = "proposal (odd: seller, even: buyer)"
	p.Y.Label.Text = "price"
	pal := moreland.SmoothBlueRed()
	pal.SetMax(1)
	drawn := 0
	maxK, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	type drawnLine struct {
		id     string
		thumbs []plot.Thumbnailer
	}
	var lines []drawnLine
	for _, r := range rows {
		if drawn == maxTrajectories {
			break
		}
		var xys plotter.XYs
		for k := 1; ; k++ {
			v, ok := r.Value(bargaining.PriceName(k), metrics.WholeMatch)
			if !ok {
				break
			}
			xys = append(xys, plotter.XY{X: float64(k), Y: v})
		}
		if len(xys) == 0 {
			continue
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, nil, false, fmt.Errorf("report: trajectory: %w", err)
		}
		// Blue to red in match order, skipping the palette's light grey middle, which would
		// not show on the white plot.
		at := 0.7 * float64(drawn) / float64(max(1, min(len(rows), maxTrajectories)-1))
		if at > 0.35 {
			at += 0.3
		}
		c := colorAt(pal, at)
		line.Color, points.Color = c, c
		points.Radius = vg.Points(2)
		p.Add(line, points)
		lines = append(lines, drawnLine{r.MatchID, []plot.Thumbnailer{line, points}})
		for _, xy := range xys {
			maxK, lo, hi = max(maxK, xy.X), min(lo, xy.Y), max(hi, xy.Y)
		}
		drawn++
	}
	if drawn == 0 {
		return nil, nil, false, nil
	}
	p.Add(plotter.NewGrid())
	// The legend names the matches by colour: every one when few, else the first and the last
	// (the colours run from blue to red in match-id order). It goes below the plot, in the
	// size of the axes' labels, so that it covers no line and reads where the figure is shown
	// small.
	legend := plot.NewLegend()
	legend.Left = true
	legend.Top = true
	legend.TextStyle.Font.Size = vg.Points(11)
	legend.Padding = vg.Points(2)
	if len(lines) <= maxLegendEntries {
		for _, l := range lines {
			legend.Add(l.id, l.thumbs...)
		}
	} else {
		legend.Add("first: "+lines[0].id, lines[0].thumbs...)
		legend.Add(fmt.Sprintf("… %d more, blue to red …", len(lines)-2))
		legend.Add("last: "+lines[len(lines)-1].id, lines[len(lines)-1].thumbs...)
	}
	padAxes(p, maxK, lo, hi)
	return p, &legend, true, nil
}

// maxLegendEntries is the most matches a trajectory plot's legend names one by one.
const maxLegendEntries = 8

// padAxes leaves room around the data (proposals 1..maxK, prices lo..hi) so no point is cut
// at the plot's edge.
func padAxes(p *plot.Plot, maxK, lo, hi float64) {
	span := max(hi-lo, 1)
	p.X.Min, p.X.Max = 0.5, maxK+0.5
	p.Y.Min, p.Y.Max = lo-0.08*span, hi+0.08*span
	var ticks []plot.Tick
	step := max(1, int(math.Ceil(maxK/12)))
	for k := 1; k <= int(maxK); k += step {
		ticks = append(ticks, plot.Tick{Value: float64(k), Label: fmt.Sprint(k)})
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
}

// cellColor is the palette's colour of v in [lo, hi], as plotter.HeatMap picks it.
func cellColor(colors palette.Palette, v, lo, hi float64) color.Color {
	cs := colors.Colors()
	i := int((v-lo)/(hi-lo)*float64(len(cs)-1) + 0.5)
	return cs[max(0, min(len(cs)-1, i))]
}

// InkOn is the text colour for a background: black or white, whichever contrasts more by
// WCAG 2's contrast ratio (one of them always reaches 4.58:1, above AA's 4.5).
func InkOn(bg color.Color) color.Color {
	l := Luminance(bg)
	if (l+0.05)/0.05 >= 1.05/(l+0.05) {
		return color.Black
	}
	return color.White
}

// Luminance is WCAG 2's relative luminance of a colour.
func Luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

func colorAt(m palette.ColorMap, v float64) color.Color {
	c, err := m.At(v)
	if err != nil {
		return color.Black
	}
	return c
}

// saveWithLegend saves p at w by h with legend in a strip of its own below it.
func saveWithLegend(dir, name, title string, p *plot.Plot, legend *plot.Legend, w, h vg.Length) (Figure, error) {
	const margin = 6 // points around the legend
	r := legend.Rectangle(draw.Canvas{})
	strip := r.Max.Y - r.Min.Y + 2*margin
	f := Figure{Title: title, SVG: name + ".svg", PNG: name + ".png"}
	for _, file := range []string{f.SVG, f.PNG} {
		c, err := draw.NewFormattedCanvas(w, h+strip, strings.TrimPrefix(filepath.Ext(file), "."))
		if err != nil {
			return Figure{}, fmt.Errorf("report: figure %s: %w", file, err)
		}
		dc := draw.New(c)
		p.Draw(draw.Crop(dc, 0, 0, strip, 0))
		legend.Draw(draw.Crop(dc, 3*margin, -margin, margin, -(h + margin)))
		if err := writeFigure(filepath.Join(dir, file), c); err != nil {
			return Figure{}, err
		}
	}
	return f, nil
}

// writeFigure writes a drawn canvas to path.
func writeFigure(path string, c io.WriterTo) error {
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("report: figure %s: %w", path, err)
	}
	if _, err := c.WriteTo(out); err != nil {
		out.Close()
		return fmt.Errorf("report: figure %s: %w", path, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("report: figure %s: %w", path, err)
	}
	return nil
}

func save(dir, name, title string, p *plot.Plot, w, h vg.Length) (Figure, error) {
	f := Figure{Title: title, SVG: name + ".svg", PNG: name + ".png"}
	for _, file := range []string{f.SVG, f.PNG} {
		if err := p.Save(w, h, filepath.Join(dir, file)); err != nil {
			return Figure{}, fmt.Errorf("report: figure %s: %w", file, err)
		}
	}
	return f, nil
}
