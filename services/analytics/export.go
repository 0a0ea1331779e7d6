package analytics

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Format is a file format of Export.
type Format string

// Export formats.
const (
	// CSV: a header line, then one line per match (RFC 4180).
	CSV Format = "csv"
	// JSONL: one JSON object per match per line, keys in the CSV's column order, absent values
	// left out.
	JSONL Format = "jsonl"
)

// ParseFormat reads a format name ("csv" or "jsonl").
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(s)); f {
	case CSV, JSONL:
		return f, nil
	}
	return "", fmt.Errorf("analytics: unknown export format %q (want csv or jsonl)", s)
}

// Export writes the rows f selects as a flat table, one line per match, for pandas, R and
// spreadsheets. Columns:
//
//   - match_id, tournament_id, game, rules_version, seed, cause, agreement, void, turns;
//   - seat<i>_name and seat<i>_agent (the agent key, name@version) for every seat i;
//   - every metric value: a whole-match value under its name (e.g. final_price), a seat's
//     value as <name>_seat<i> (e.g. payoff_seat0); whole-match values first, each group in
//     natural order (price_2 before price_10);
//   - for seats whose agents reported usage: seat<i>_model, seat<i>_prompt_tokens,
//     seat<i>_completion_tokens, seat<i>_retries, seat<i>_format_failures, seat<i>_calls.
//
// A value a match does not have is an empty CSV cell, or a key left out in JSONL. In JSONL
// the seed is a string, since it may exceed what a float64 holds exactly.
func (s *Store) Export(ctx context.Context, w io.Writer, f Filter, format Format) error {
	rows, err := s.Rows(ctx, f)
	if err != nil {
		return err
	}
	return WriteRows(w, rows, format)
}

// WriteRows writes rows as Export does.
func WriteRows(w io.Writer, rows []metrics.Row, format Format) error {
	cols, records := flatten(rows)
	switch format {
	case CSV:
		cw := csv.NewWriter(w)
		if err := cw.Write(cols); err != nil {
			return fmt.Errorf("analytics: export: %w", err)
		}
		line := make([]string, len(cols))
		for _, rec := range records {
			for i, c := range cols {
				line[i] = rec[c].text
			}
			if err := cw.Write(line); err != nil {
				return fmt.Errorf("analytics: export: %w", err)
			}
		}
		cw.Flush()
		if err := cw.Error(); err != nil {
			return fmt.Errorf("analytics: export: %w", err)
		}
		return nil
	case JSONL:
		bw := bufio.NewWriter(w)
		for _, rec := range records {
			bw.WriteByte('{')
			first := true
			for _, c := range cols {
				cell, ok := rec[c]
				if !ok {
					continue
				}
				if !first {
					bw.WriteByte(',')
				}
				first = false
				key, _ := json.Marshal(c)
				bw.Write(key)
				bw.WriteByte(':')
				bw.WriteString(cell.json)
			}
			bw.WriteString("}\n")
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("analytics: export: %w", err)
		}
		return nil
	}
	return fmt.Errorf("analytics: unknown export format %q (want csv or jsonl)", format)
}

// cell is one value as CSV text and as a JSON value.
type cell struct{ text, json string }

func strCell(s string) cell {
	j, _ := json.Marshal(s)
	return cell{text: s, json: string(j)}
}

func numCell(v float64) cell {
	t := strconv.FormatFloat(v, 'g', -1, 64)
	j := t
	if j == "NaN" || strings.Contains(j, "Inf") {
		j = "null"
	}
	return cell{text: t, json: j}
}

func boolCell(b bool) cell {
	if b {
		return cell{text: "true", json: "true"}
	}
	return cell{text: "false", json: "false"}
}

// flatten turns rows into named cells and the ordered list of columns.
func flatten(rows []metrics.Row) ([]string, []map[string]cell) {
	fixed := []string{"match_id", "tournament_id", "game", "rules_version", "seed", "cause", "agreement", "void", "turns"}
	isFixed := make(map[string]bool, len(fixed))
	for _, n := range fixed {
		isFixed[n] = true
	}
	maxSeats := 0
	wholeNames := map[string]bool{}
	seatNames := map[string]bool{}
	usageSeats := map[int32]bool{}
	records := make([]map[string]cell, len(rows))
	for i, r := range rows {
		rec := map[string]cell{
			"match_id": strCell(r.MatchID), "tournament_id": strCell(r.TournamentID), "game": strCell(r.Game),
			"rules_version": strCell(r.RulesVersion), "cause": strCell(r.Cause.String()),
			"agreement": boolCell(r.Agreement), "void": boolCell(r.Void()), "turns": numCell(float64(r.Turns)),
		}
		seed := strconv.FormatUint(r.Seed, 10)
		rec["seed"] = cell{text: seed, json: strconv.Quote(seed)}
		maxSeats = max(maxSeats, len(r.Seats))
		for _, s := range r.Seats {
			rec[fmt.Sprintf("seat%d_name", s.Seat)] = strCell(s.Name)
			rec[fmt.Sprintf("seat%d_agent", s.Seat)] = strCell(s.AgentKey())
		}
		for _, v := range r.Values {
			name := v.Name
			if v.Seat == metrics.WholeMatch {
				if isFixed[name] {
					continue // agreement and turns: the fixed columns say it
				}
				wholeNames[name] = true
			} else {
				seatNames[name] = true
				name = fmt.Sprintf("%s_seat%d", v.Name, v.Seat)
			}
			rec[name] = numCell(v.Value)
		}
		for _, u := range r.Usage {
			usageSeats[u.GetSeat()] = true
			t := u.GetTotal()
			p := fmt.Sprintf("seat%d_", u.GetSeat())
			rec[p+"model"] = strCell(t.GetModel())
			rec[p+"prompt_tokens"] = numCell(float64(t.GetPromptTokens()))
			rec[p+"completion_tokens"] = numCell(float64(t.GetCompletionTokens()))
			rec[p+"retries"] = numCell(float64(t.GetRetries()))
			rec[p+"format_failures"] = numCell(float64(t.GetFormatFailures()))
			rec[p+"calls"] = numCell(float64(t.GetCalls()))
		}
		records[i] = rec
	}
	var cols []string
	add := func(name string) { cols = append(cols, name) }
	for _, n := range fixed {
		add(n)
	}
	for i := range maxSeats {
		add(fmt.Sprintf("seat%d_name", i))
		add(fmt.Sprintf("seat%d_agent", i))
	}
	for _, n := range naturalSorted(wholeNames) {
		add(n)
	}
	for _, n := range naturalSorted(seatNames) {
		for i := range maxSeats {
			add(fmt.Sprintf("%s_seat%d", n, i))
		}
	}
	for _, seat := range slices.Sorted(maps.Keys(usageSeats)) {
		p := fmt.Sprintf("seat%d_", seat)
		for _, n := range []string{"model", "prompt_tokens", "completion_tokens", "retries", "format_failures", "calls"} {
			add(p + n)
		}
	}
	return cols, records
}

// naturalSorted returns the keys sorted with runs of digits compared as numbers.
func naturalSorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	slices.SortFunc(out, naturalCompare)
	return out
}

func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da != "" && db != "" {
			na, _ := strconv.ParseUint(da, 10, 64)
			nb, _ := strconv.ParseUint(db, 10, 64)
			if na != nb {
				if na < nb {
					return -1
				}
				return 1
			}
			a, b = a[len(da):], b[len(db):]
			continue
		}
		if a[0] != b[0] {
			if a[0] < b[0] {
				return -1
			}
			return 1
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitPrefix(s string) string {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i]
}
