package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/parley-arena/parley/services/analytics/metrics"
)

// WriteText writes sections as aligned plain-text tables, for the terminal.
func WriteText(w io.Writer, sections []Section) error {
	game := ""
	for _, s := range sections {
		if s.Game != game {
			game = s.Game
			fmt.Fprintf(w, "== %s ==\n\n", game)
		}
		fmt.Fprintf(w, "%s\n", s.Title)
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		writeRow := func(cells []string) {
			// Left-align the first column by padding it; tabwriter aligns the rest right.
			for i, c := range cells {
				if i > 0 {
					fmt.Fprint(tw, "\t")
				}
				fmt.Fprint(tw, c)
			}
			fmt.Fprint(tw, "\t\n")
		}
		width := 0
		for _, r := range append([][]string{s.Header}, s.Rows...) {
			if len(r) > 0 {
				width = max(width, utf8.RuneCountInString(r[0]))
			}
		}
		pad := func(r []string) []string {
			out := append([]string(nil), r...)
			if len(out) > 0 {
				out[0] += strings.Repeat(" ", width-utf8.RuneCountInString(out[0]))
			}
			return out
		}
		writeRow(pad(s.Header))
		for _, r := range s.Rows {
			writeRow(pad(r))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

// WriteMarkdown writes a Markdown report: title, figures (links to files beside it), tables.
func WriteMarkdown(w io.Writer, title string, intro []string, figures []Figure, sections []Section) error {
	fmt.Fprintf(w, "# %s\n\n", title)
	for _, l := range intro {
		fmt.Fprintf(w, "%s  \n", l)
	}
	fmt.Fprintln(w)
	for _, f := range figures {
		fmt.Fprintf(w, "![%s](%s)\n\n(%s; [SVG](%s))\n\n", f.Title, f.PNG, f.Title, f.SVG)
	}
	game := ""
	for _, s := range sections {
		if s.Game != game {
			game = s.Game
			fmt.Fprintf(w, "## %s\n\n", game)
		}
		fmt.Fprintf(w, "### %s\n\n", s.Title)
		if s.Note != "" {
			fmt.Fprintf(w, "%s\n\n", s.Note)
		}
		md := func(cells []string) {
			esc := make([]string, len(cells))
			for i, c := range cells {
				esc[i] = strings.ReplaceAll(c, "|", "\\|")
			}
			fmt.Fprintf(w, "| %s |\n", strings.Join(esc, " | "))
		}
		md(s.Header)
		sep := make([]string, len(s.Header))
		for i := range sep {
			sep[i] = "---"
			if i > 0 {
				sep[i] = "---:"
			}
		}
		fmt.Fprintf(w, "|%s|\n", strings.Join(sep, "|"))
		for _, r := range s.Rows {
			md(r)
		}
		fmt.Fprintln(w)
	}
	return nil
}

var htmlPage = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}}</title>
<style>
body { font-family: sans-serif; margin: 2em auto; padding: 0 1em; max-width: 72em; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
td { text-align: right; } td:first-child, th:first-child { text-align: left; }
th { background: #f3f3f3; }
figure { display: inline-block; max-width: 100%; margin: 0 1em 1em 0; }
figure img { max-width: min(36em, 100%); height: auto; border: 1px solid #eee; }
.scroll { overflow-x: auto; }
p.note { color: #555; font-size: 0.9em; }
</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{range .Intro}}<p>{{.}}</p>
{{end}}
{{if .Figures}}<h2>Figures</h2>
{{range .Figures}}<figure><img src="{{.PNG}}" alt="{{.Title}}"><figcaption>{{.Title}} (<a href="{{.SVG}}">SVG</a>)</figcaption></figure>
{{end}}{{end}}
{{range .Games}}<h2>{{.Game}}</h2>
{{range .Sections}}<h3>{{.Title}}</h3>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
<div class="scroll"><table>
<thead><tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Rows}}<tr>{{range .}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
{{end}}{{end}}
</body>
</html>
`))

// WriteHTML writes a self-contained HTML page (no script, no remote resource) showing the
// figures, which it links as files beside it, and the tables.
func WriteHTML(w io.Writer, title string, intro []string, figures []Figure, sections []Section) error {
	type game struct {
		Game     string
		Sections []Section
	}
	var games []game
	for _, s := range sections {
		if len(games) == 0 || games[len(games)-1].Game != s.Game {
			games = append(games, game{Game: s.Game})
		}
		games[len(games)-1].Sections = append(games[len(games)-1].Sections, s)
	}
	return htmlPage.Execute(w, map[string]any{"Title": title, "Intro": intro, "Figures": figures, "Games": games})
}

// WriteSectionCSV writes one section as CSV: its header, then its rows.
func WriteSectionCSV(w io.Writer, s Section) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(s.Header); err != nil {
		return err
	}
	if err := cw.WriteAll(s.Rows); err != nil {
		return err
	}
	return cw.Error()
}

// MatchRecord is one match as the raw exports write it: one row per match for pandas or R.
type MatchRecord struct {
	MatchID      string       `json:"match_id"`
	TournamentID string       `json:"tournament_id,omitempty"`
	Game         string       `json:"game"`
	Seed         uint64       `json:"seed"`
	Cause        string       `json:"cause"`
	Void         bool         `json:"void"`
	Agreement    bool         `json:"agreement"`
	Turns        int32        `json:"turns"`
	Seats        []SeatRecord `json:"seats"`
	// Values maps "name" (whole-match values) or "name@seat" to the value.
	Values map[string]float64 `json:"values"`
}

// SeatRecord is one seat of a MatchRecord.
type SeatRecord struct {
	Seat    int32   `json:"seat"`
	Name    string  `json:"name"`
	Agent   string  `json:"agent"`
	Label   string  `json:"label"`
	Payoff  float64 `json:"payoff"`
	Faulted bool    `json:"faulted"`
}

// Records turns rows into export records; label names the agent of a seat (as in tables).
func Records(rows []metrics.Row, label func(r metrics.Row, seat int) string) []MatchRecord {
	out := make([]MatchRecord, 0, len(rows))
	for _, r := range rows {
		rec := MatchRecord{
			MatchID: r.MatchID, TournamentID: r.TournamentID, Game: r.Game, Seed: r.Seed,
			Cause: causeName(r.Cause.String()), Void: r.Void(), Agreement: r.Agreement, Turns: r.Turns,
			Values: make(map[string]float64, len(r.Values)),
		}
		for i, s := range r.Seats {
			rec.Seats = append(rec.Seats, SeatRecord{Seat: s.Seat, Name: s.Name, Agent: s.AgentKey(), Label: label(r, i), Payoff: s.Payoff, Faulted: s.Faulted})
		}
		for _, v := range r.Values {
			rec.Values[valueKey(v)] = v.Value
		}
		out = append(out, rec)
	}
	return out
}

func valueKey(v metrics.Value) string {
	if v.Seat == metrics.WholeMatch {
		return v.Name
	}
	return fmt.Sprintf("%s@%d", v.Name, v.Seat)
}

// WriteJSONL writes one JSON object per match.
func WriteJSONL(w io.Writer, recs []MatchRecord) error {
	enc := json.NewEncoder(w)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// WriteMatchesCSV writes one line per match: fixed columns, then seat columns
// (seat<i>_label, seat<i>_agent, seat<i>_payoff), then one column per value key, sorted.
func WriteMatchesCSV(w io.Writer, recs []MatchRecord) error {
	seats := 0
	keys := map[string]bool{}
	fixed := map[string]bool{"agreement": true, "turns": true} // already columns of their own
	for _, r := range recs {
		seats = max(seats, len(r.Seats))
		for k := range r.Values {
			keys[k] = !fixed[k]
		}
	}
	valueCols := make([]string, 0, len(keys))
	for k, ok := range keys {
		if ok {
			valueCols = append(valueCols, k)
		}
	}
	sortStrings(valueCols)
	header := []string{"match_id", "tournament_id", "game", "seed", "cause", "void", "agreement", "turns"}
	for i := range seats {
		header = append(header, fmt.Sprintf("seat%d_label", i), fmt.Sprintf("seat%d_agent", i), fmt.Sprintf("seat%d_payoff", i))
	}
	header = append(header, valueCols...)
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range recs {
		line := []string{r.MatchID, r.TournamentID, r.Game, fmt.Sprint(r.Seed), r.Cause, fmt.Sprint(r.Void), fmt.Sprint(r.Agreement), fmt.Sprint(r.Turns)}
		for i := range seats {
			if i < len(r.Seats) {
				s := r.Seats[i]
				line = append(line, s.Label, s.Agent, fmt.Sprint(s.Payoff))
			} else {
				line = append(line, "", "", "")
			}
		}
		for _, k := range valueCols {
			if v, ok := r.Values[k]; ok {
				line = append(line, fmt.Sprint(v))
			} else {
				line = append(line, "")
			}
		}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}
