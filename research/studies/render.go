package studies

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
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
				if tr, ok := truncated(r.Paper[c.Key], our); ok {
					text += " (truncated: " + tr + ")"
				}
				if len(ns) > 1 && our.N > 0 {
					text += " (" + strconv.Itoa(our.N) + ")"
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
// that, and not our rounded number, is the paper's: the paper then truncated.
func truncated(paper any, c Cell) (string, bool) {
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
	scale := math.Pow(10, float64(dec))
	rounded := math.Round(c.Value*scale) / scale
	cut := math.Trunc(c.Value*scale) / scale
	if rounded == p || cut != p {
		return "", false
	}
	return strconv.FormatFloat(cut, 'f', dec, 64), true
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
