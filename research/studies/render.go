package studies

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Render prints each table in the paper's layout: the row keys, then for every column the
// paper's number and ours side by side, then how many matches stand behind our cells (one
// number for the row, or each cell's own when they differ). A cell with another reading
// (Measure.Alt) has it on a line under its row, explained under the table.
func Render(w io.Writer, s *Study, results []TableResult) error {
	for _, tr := range results {
		t := tr.Table
		fmt.Fprintf(w, "%s: %s\n", t.ID, t.Caption)
		fmt.Fprintf(w, "paper: %s in %s (%s)\n", t.ID, s.Paper, s.Title)
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
		head := append([]string(nil), t.RowKeys...)
		sub := make([]string, len(t.RowKeys))
		for _, c := range t.Columns {
			label := c.Label
			if c.Group != "" {
				label = c.Group + ": " + label
			}
			head = append(head, label, "")
			sub = append(sub, "paper", "ours")
		}
		head = append(head, "n")
		sub = append(sub, "")
		fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
		fmt.Fprintln(tw, strings.Join(sub, "\t")+"\t")
		why := map[string]int{}
		var order []string
		var altNotes []string
		for i, r := range t.Rows {
			cells := append([]string(nil), r.Keys...)
			// One n for the row when its cells rest on the same matches; else each cell says.
			ns := map[int]bool{}
			for j := range t.Columns {
				if our := tr.Ours[i][j]; our.OK && our.N > 0 {
					ns[our.N] = true
				}
			}
			n := 0
			var alt []string
			for j, c := range t.Columns {
				dec := decimals(r, c)
				cells = append(cells, paperText(r, c, dec))
				our := tr.Ours[i][j]
				alt = append(alt, "", altText(our.Alt, dec, len(ns) > 1))
				if m, ok := t.measureFor(r, c); ok && m.Alt != nil && m.AltNote != "" && !slices.Contains(altNotes, c.Label+": "+m.AltNote) {
					altNotes = append(altNotes, c.Label+": "+m.AltNote)
				}
				if !our.OK {
					cells = append(cells, "–")
					if our.Why != "" {
						if why[our.Why] == 0 {
							order = append(order, our.Why)
						}
						why[our.Why]++
					}
					continue
				}
				n = max(n, our.N)
				text := oursText(our, dec)
				if c.SE && our.HasSE {
					text += " ±" + strconv.FormatFloat(our.SE, 'f', dec, 64)
				}
				if c.Unit == "bool" && !our.Pair && (our.Value == 0 || our.Value == 1) {
					text = formatValue(our.Value == 1, dec)
				}
				if tr, ok := truncated(r.Paper[c.Key], our, dec); ok {
					text += " (truncated: " + tr + ")"
				}
				if len(ns) > 1 && our.N > 0 {
					text += " (" + strconv.Itoa(our.N) + ")"
				}
				if our.Fallbacks > 0 {
					text += " f" + strconv.Itoa(our.Fallbacks)
				}
				cells = append(cells, text)
			}
			if len(ns) > 1 {
				cells = append(cells, "per cell")
			} else {
				cells = append(cells, strconv.Itoa(n))
			}
			fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
			if slices.ContainsFunc(alt, func(s string) bool { return s != "" }) {
				line := make([]string, len(r.Keys))
				line[0] = "  alt. reading"
				fmt.Fprintln(tw, strings.Join(append(line, alt...), "\t")+"\t\t")
			}
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		for _, reason := range order {
			fmt.Fprintf(w, "  – %d %s: %s\n", why[reason], plural(why[reason], "cell", "cells"), reason)
		}
		writeGames(w, tr.Games)
		for _, note := range altNotes {
			fmt.Fprintf(w, "  alt. reading, %s\n", note)
		}
		for _, note := range t.Notes {
			fmt.Fprintf(w, "  note: %s\n", note)
		}
		fmt.Fprintln(w)
	}
	return nil
}

// writeGames says, under a table, how many of its games had a fallback move and which were
// left out of its cells, and why.
func writeGames(w io.Writer, g GameCounts) {
	if g.Played == 0 {
		return
	}
	read := g.Played - g.Void - len(g.CutByBudget) - g.FallbackLeftOut
	if !g.Counted {
		read -= g.FaultEnded
	}
	switch g.WithFallback {
	case 0:
		fmt.Fprintf(w, "  fallbacks: none of the %d %s the cells read had a fallback move\n", read, plural(read, "game", "games"))
	default:
		fmt.Fprintf(w, "  fallbacks: %d of the %d %s the cells read had a fallback move (the game's default, played for a\n"+
			"    model whose answer could not be used); fN after a number: N of its games did (--exclude-fallback-games)\n",
			g.WithFallback, read, plural(read, "game", "games"))
	}
	if g.FaultEnded > 0 {
		if g.Counted {
			fmt.Fprintf(w, "  counted: %d %s an agent's failure ended (failed runs, as the study counts them)\n", g.FaultEnded, plural(g.FaultEnded, "game", "games"))
		} else {
			fmt.Fprintf(w, "  left out: %d %s an agent's failure ended (a fallback or a fault ended it: no decision to count)\n", g.FaultEnded, plural(g.FaultEnded, "game", "games"))
		}
	}
	if g.FallbackLeftOut > 0 {
		fmt.Fprintf(w, "  left out: %d other %s with a fallback move (--exclude-fallback-games)\n", g.FallbackLeftOut, plural(g.FallbackLeftOut, "game", "games"))
	}
	if n := len(g.CutByBudget); n > 0 {
		fmt.Fprintf(w, "  left out: %d %s a token budget cut short: %s\n", n, plural(n, "game", "games"), listIDs(g.CutByBudget, 3))
	}
	if g.Void > 0 {
		fmt.Fprintf(w, "  left out: %d void %s (not the agents' doing: a provider that kept failing, an interruption)\n", g.Void, plural(g.Void, "game", "games"))
	}
}

// listIDs lists at most n ids, then how many more.
func listIDs(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return strings.Join(ids[:n], ", ") + fmt.Sprintf(" and %d more", len(ids)-n)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// paperText writes the paper's cell as printed.
func paperText(r Row, c Column, dec int) string {
	v, ok := r.Paper[c.Key]
	if !ok {
		return ""
	}
	text := formatValue(v, dec)
	switch r.Qualifier[c.Key] {
	case "":
	case "greater than":
		text = "> " + text
	case "about":
		text = "~" + text
	default:
		text = r.Qualifier[c.Key] + " " + text
	}
	return text
}

func formatValue(v any, dec int) string {
	switch x := v.(type) {
	case nil:
		return "?"
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case int:
		return strconv.FormatFloat(float64(x), 'f', dec, 64)
	case float64:
		return strconv.FormatFloat(x, 'f', dec, 64)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = formatValue(e, dec)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprint(v)
}

// truncated writes our number cut (not rounded) to the digits the paper prints it with, when
// that, and not our rounded number, is the paper's: the paper then truncated. The paper's
// digits are those of its number as the data file writes it, or the column's decimals: a file
// drops trailing zeros (0.5310 reads as 0.531).
func truncated(paper any, c Cell, decimals int) (string, bool) {
	p, ok := paper.(float64)
	if i, isInt := paper.(int); isInt {
		p, ok = float64(i), true
	}
	if !ok || c.Pair || !c.OK {
		return "", false
	}
	printed := strconv.FormatFloat(p, 'f', -1, 64)
	dec := 0
	if i := strings.IndexByte(printed, '.'); i >= 0 {
		dec = len(printed) - i - 1
	}
	// The column's digits first: a number that matches at fewer digits either way (0.531 for
	// our 0.53107) may still be the paper's 0.5310, truncated.
	for _, d := range []int{max(dec, decimals), dec} {
		scale := math.Pow(10, float64(d))
		rounded := math.Round(c.Value*scale) / scale
		cut := math.Trunc(c.Value*scale) / scale
		if rounded == p {
			return "", false
		}
		if cut == p {
			return strconv.FormatFloat(cut, 'f', d, 64), true
		}
	}
	return "", false
}

// altText writes a cell's other reading, with its matches when cells say theirs.
func altText(c *Cell, dec int, withN bool) string {
	if c == nil {
		return ""
	}
	if !c.OK {
		return "–"
	}
	text := oursText(*c, dec)
	if withN {
		text += " (" + strconv.Itoa(c.N) + ")"
	}
	return text
}

func oursText(c Cell, dec int) string {
	if c.Pair {
		return "(" + strconv.FormatFloat(c.Value, 'f', dec, 64) + ", " + strconv.FormatFloat(c.Value2, 'f', dec, 64) + ")"
	}
	return strconv.FormatFloat(c.Value, 'f', dec, 64)
}

// WriteFallbacks prints, for each model (a seat label's slot), its moves, how many were
// fallbacks (by cause) and in how many games, over every game of res, void ones included.
// name writes a slot for people (its model, say); nil writes the slot.
func WriteFallbacks(w io.Writer, res Results, name func(slot string) string) {
	type tally struct {
		games, withFallback              int
		moves, fallbacks, budget, faults int
	}
	by := map[string]*tally{}
	seen := map[string]bool{}
	for _, id := range slices.Sorted(maps.Keys(res)) {
		for _, r := range res[id] {
			if seen[r.MatchID] {
				continue
			}
			seen[r.MatchID] = true
			for _, s := range r.Seats {
				slot := SlotOf(s.Label)
				var u *agentv1.Usage
				for _, su := range r.Usage {
					if su.GetSeat() == s.Seat {
						u = su.GetTotal()
					}
				}
				if slot == "" || u.GetModel() == "" {
					continue // not a model's seat: it reported no usage
				}
				t := by[slot]
				if t == nil {
					t = &tally{}
					by[slot] = t
				}
				moves, _ := r.Value(metrics.ValueMoves, s.Seat)
				f, budget := int(u.GetFallbacks()), int(u.GetBudgetFallbacks())
				fault := 0
				if f == 0 && s.Faulted {
					fault = 1 // a default played for a failing agent (a timeout, say)
				}
				t.games++
				t.moves += int(moves)
				t.fallbacks += f
				t.budget += budget
				t.faults += fault
				if f+fault > 0 {
					t.withFallback++
				}
			}
		}
	}
	if len(by) == 0 {
		return
	}
	fmt.Fprintln(w, "Fallbacks by model (moves the model did not make: the game's default was played for it)")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tmoves\tfallbacks\tof them: budget\tother faults\tgames with one\tgames\t")
	for _, slot := range slices.Sorted(maps.Keys(by)) {
		t := by[slot]
		label := slot
		if name != nil {
			label = name(slot)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t\n", label, t.moves, t.fallbacks, t.budget, t.faults, t.withFallback, t.games)
	}
	tw.Flush()
	fmt.Fprintln(w)
}
