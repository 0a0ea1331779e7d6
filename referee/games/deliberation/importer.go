package deliberation

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Files of a game folder in the LLM-Deliberation authors' format.
const (
	configFile      = "config.txt"
	scoresDir       = "scores_files"
	openingFile     = "initial_deal.txt"
	globalFile      = "global_instructions.txt"
	instructionsDir = "individual_instructions"
	cooperativeDir  = "cooperative"
)

// ImportError is a problem in a game folder, located by file and line.
type ImportError struct {
	// File is the file's path as the folder was named, e.g. "games/base/scores_files/mayor.txt".
	File string
	// Line is 1-based; 0 when the problem is the file as a whole.
	Line int
	// Problem says what is wrong and what would be right.
	Problem string
}

func (e *ImportError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("deliberation: %s:%d: %s", e.File, e.Line, e.Problem)
	}
	return fmt.Sprintf("deliberation: %s: %s", e.File, e.Problem)
}

// Import reads a game folder in the authors' format from fsys (its root is the folder; dir names
// it in errors and in Scenario.source):
//
//   - config.txt: one line per party, comma-separated: display name, file stem, role (p1, p2,
//     player or target), then incentive and model, which are agent settings and ignored;
//   - scores_files/STEM.txt: one line per issue (A first) of comma-separated whole points for
//     its options, then a line with the party's threshold;
//   - initial_deal.txt: the opening deal, e.g. "A1,B1,C4,D1,E5";
//   - global_instructions.txt (optional): the public scenario text, where lines like
//     `Issue A: "Name"` and `A1: name ...` give the issues' and options' display names;
//   - individual_instructions/cooperative/STEM.txt (optional): the party's private briefing,
//     its #A1_NUM and #A_MAX_NUM placeholders filled in from its score sheet.
//
// Parsing is lenient with spacing, blank lines, a byte-order mark, Windows line ends and a
// missing final newline. Option counts come from the score sheets; names the prose does not
// give are written "option N". Seats are ordered p1, p2, then the others in config order.
// Errors are *ImportError values naming the file and line.
func Import(fsys fs.FS, dir string) (*deliberationv1.Scenario, error) {
	im := &importer{read: func(file string) ([]byte, error) { return fs.ReadFile(fsys, file) }, dir: dir}
	return im.run()
}

// ImportFiles is Import for a host that reads files by path (games.ReadFile, e.g. os.ReadFile):
// the folder's files are read as dir joined with their names.
func ImportFiles(read games.ReadFile, dir string) (*deliberationv1.Scenario, error) {
	im := &importer{read: func(file string) ([]byte, error) { return read(filepath.Join(dir, filepath.FromSlash(file))) }, dir: dir}
	return im.run()
}

type importer struct {
	read func(file string) ([]byte, error) // file: a slash-separated path in the folder
	dir  string
}

// line is one non-blank line of a file, with its 1-based number.
type line struct {
	n    int
	text string
}

func (im *importer) name(file string) string {
	if im.dir == "" {
		return file
	}
	return path.Join(im.dir, file)
}

func (im *importer) errorf(file string, n int, format string, args ...any) error {
	return &ImportError{File: im.name(file), Line: n, Problem: fmt.Sprintf(format, args...)}
}

// lines returns a file's non-blank lines, trimmed.
func (im *importer) lines(file string) ([]line, error) {
	b, err := im.read(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, im.errorf(file, 0, "missing: a game folder holds %s, %s/<stem>.txt for every party in %s, and %s", configFile, scoresDir, configFile, openingFile)
		}
		return nil, im.errorf(file, 0, "cannot be read: %v", err)
	}
	if !utf8.Valid(b) {
		return nil, im.errorf(file, 0, "is not UTF-8 text")
	}
	text := strings.TrimPrefix(string(b), "\uFEFF")
	var out []line
	for i, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, line{n: i + 1, text: l})
		}
	}
	return out, nil
}

// configLine is one party of config.txt.
type configLine struct {
	n          int
	name, stem string
	role       deliberationv1.PartyRole
}

func (im *importer) run() (*deliberationv1.Scenario, error) {
	cfg, err := im.config()
	if err != nil {
		return nil, err
	}
	sc := &deliberationv1.Scenario{Source: im.dir}
	if sc.Source == "" {
		sc.Source = "imported folder"
	}
	// Score sheets, in config order; every sheet must have the shape of the first.
	var shape []int
	var shapeFile string
	sheets := make(map[string]*deliberationv1.Party, len(cfg))
	for _, c := range cfg {
		file := path.Join(scoresDir, c.stem+".txt")
		party, rows, err := im.sheet(file, shape, shapeFile)
		if err != nil {
			return nil, err
		}
		if shape == nil {
			shape, shapeFile = rows, file
		}
		party.Id, party.Name, party.Role = c.stem, c.name, c.role
		sheets[c.stem] = party
	}
	// Seat order: p1, p2, then the rest in config order.
	order := slices.Clone(cfg)
	rank := func(r deliberationv1.PartyRole) int {
		switch r {
		case deliberationv1.PartyRole_PARTY_ROLE_P1:
			return 0
		case deliberationv1.PartyRole_PARTY_ROLE_P2:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(order, func(a, b configLine) int { return rank(a.role) - rank(b.role) })
	for _, c := range order {
		sc.Parties = append(sc.Parties, sheets[c.stem])
	}
	if len(shape) > MaxIssues {
		return nil, im.errorf(shapeFile, 0, "scores %d issues; at most %d are allowed", len(shape), MaxIssues)
	}
	prose, err := im.lines(globalFile)
	if err != nil {
		var ie *ImportError
		if !errors.As(err, &ie) || !strings.HasPrefix(ie.Problem, "missing") {
			return nil, err
		}
		prose = nil // the scenario text is optional
	}
	sc.Issues = issuesFromProse(prose, shape)
	sc.Title, sc.Text = titleOf(prose), proseText(prose)
	// The opening deal.
	opening, err := im.lines(openingFile)
	if err != nil {
		return nil, err
	}
	if len(opening) != 1 {
		n := 0
		if len(opening) > 1 {
			n = opening[1].n
		}
		return nil, im.errorf(openingFile, n, "want one line holding the opening deal, e.g. %s", exampleDeal(issuesOf(sc)))
	}
	d, err := parseDeal(issuesOf(sc), opening[0].text)
	if err != nil {
		return nil, im.errorf(openingFile, opening[0].n, "%v", err)
	}
	sc.OpeningDeal = dealString(issuesOf(sc), d)
	// Briefings.
	for _, party := range sc.Parties {
		file := path.Join(instructionsDir, cooperativeDir, party.GetId()+".txt")
		b, err := im.read(file)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return nil, im.errorf(file, 0, "cannot be read: %v", err)
		case !utf8.Valid(b):
			return nil, im.errorf(file, 0, "is not UTF-8 text")
		}
		text, perr := fillPlaceholders(strings.TrimPrefix(string(b), "\uFEFF"), sc.GetIssues(), party)
		if perr != nil {
			return nil, im.errorf(file, lineOf(string(b), perr.at), "%v", perr.msg)
		}
		party.Briefing = strings.TrimSpace(text)
	}
	if err := CheckScenario(sc); err != nil {
		return nil, &ImportError{File: im.name("."), Problem: strings.TrimPrefix(err.Error(), "deliberation: ")}
	}
	return sc, nil
}

// config reads config.txt.
func (im *importer) config() ([]configLine, error) {
	lines, err := im.lines(configFile)
	if err != nil {
		return nil, err
	}
	var out []configLine
	roles := map[deliberationv1.PartyRole]int{}
	for _, l := range lines {
		fields := strings.Split(l.text, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if len(fields) < 3 || fields[0] == "" || fields[1] == "" {
			return nil, im.errorf(configFile, l.n, "want NAME,STEM,ROLE[,INCENTIVE,MODEL] (e.g. Mayor,mayor,player,cooperative,gpt-4), got %q", l.text)
		}
		c := configLine{n: l.n, name: fields[0], stem: fields[1]}
		switch strings.ToLower(fields[2]) {
		case "p1":
			c.role = deliberationv1.PartyRole_PARTY_ROLE_P1
		case "p2":
			c.role = deliberationv1.PartyRole_PARTY_ROLE_P2
		case "player":
			c.role = deliberationv1.PartyRole_PARTY_ROLE_PLAYER
		case "target":
			c.role = deliberationv1.PartyRole_PARTY_ROLE_TARGET
		default:
			return nil, im.errorf(configFile, l.n, "role %q is not one of p1, p2, player, target", fields[2])
		}
		if strings.ContainsAny(c.stem, `/\`) || c.stem == "." || c.stem == ".." {
			return nil, im.errorf(configFile, l.n, "file stem %q must be a plain file name", c.stem)
		}
		if c.role == deliberationv1.PartyRole_PARTY_ROLE_P1 || c.role == deliberationv1.PartyRole_PARTY_ROLE_P2 {
			if roles[c.role] > 0 {
				return nil, im.errorf(configFile, l.n, "a second party with role %s (line %d has it already); exactly one party is p1 and one p2", fields[2], roles[c.role])
			}
			roles[c.role] = l.n
		}
		for _, o := range out {
			if strings.EqualFold(o.stem, c.stem) || strings.EqualFold(o.name, c.name) {
				return nil, im.errorf(configFile, l.n, "party %q (%s) repeats the name or file stem of line %d", c.name, c.stem, o.n)
			}
		}
		out = append(out, c)
	}
	switch {
	case roles[deliberationv1.PartyRole_PARTY_ROLE_P1] == 0 || roles[deliberationv1.PartyRole_PARTY_ROLE_P2] == 0:
		return nil, im.errorf(configFile, 0, "exactly one party must have role p1 and one role p2")
	case len(out) < MinParties || len(out) > MaxParties:
		return nil, im.errorf(configFile, 0, "lists %d parties; a game has %d to %d", len(out), MinParties, MaxParties)
	}
	return out, nil
}

// sheet reads one score sheet. shape, when set, is the number of options of each issue in
// the first sheet read (shapeFile); a sheet of another shape is an error.
func (im *importer) sheet(file string, shape []int, shapeFile string) (*deliberationv1.Party, []int, error) {
	lines, err := im.lines(file)
	if err != nil {
		return nil, nil, err
	}
	if len(lines) < 2 {
		return nil, nil, im.errorf(file, 0, "want one line of comma-separated points per issue, then a line with the threshold; found %d non-blank lines", len(lines))
	}
	party := &deliberationv1.Party{}
	var rows []int
	for i, l := range lines[:len(lines)-1] {
		var pts []int32
		for _, f := range strings.Split(l.text, ",") {
			x, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return nil, nil, im.errorf(file, l.n, "issue %s: want whole numbers separated by commas, got %q", IssueID(min(i, 25)), l.text)
			}
			if x < -MaxPoints || x > MaxPoints {
				return nil, nil, im.errorf(file, l.n, "issue %s: %d is out of range (at most %d in absolute value)", IssueID(min(i, 25)), x, MaxPoints)
			}
			pts = append(pts, int32(x))
		}
		if len(pts) > MaxOptions {
			return nil, nil, im.errorf(file, l.n, "issue %s has %d options; at most %d are allowed", IssueID(min(i, 25)), len(pts), MaxOptions)
		}
		if shape != nil && (i >= len(shape) || shape[i] != len(pts)) {
			if i >= len(shape) {
				return nil, nil, im.errorf(file, l.n, "scores more issues than %s (%d)", im.name(shapeFile), len(shape))
			}
			return nil, nil, im.errorf(file, l.n, "issue %s has %d options here but %d in %s", IssueID(i), len(pts), shape[i], im.name(shapeFile))
		}
		rows = append(rows, len(pts))
		party.Points = append(party.Points, &deliberationv1.IssuePoints{Points: pts})
	}
	if shape != nil && len(rows) != len(shape) {
		return nil, nil, im.errorf(file, lines[len(lines)-1].n, "scores %d issues, but %s scores %d (the last line is the threshold)", len(rows), im.name(shapeFile), len(shape))
	}
	last := lines[len(lines)-1]
	t, err := strconv.Atoi(last.text)
	if err != nil {
		return nil, nil, im.errorf(file, last.n, "the last line is the threshold, one whole number; got %q", last.text)
	}
	if t < -MaxPoints || t > MaxPoints {
		return nil, nil, im.errorf(file, last.n, "threshold %d is out of range", t)
	}
	party.Threshold = int32(t)
	return party, rows, nil
}

var (
	issueLineRe  = regexp.MustCompile(`^[-*\s]*Issue\s+([A-Z])\s*[:.)]\s*(.*)$`)
	optionLineRe = regexp.MustCompile(`^[-*\s]*([A-Z])(\d{1,2})(\s*[:.)-]\s*|\s+)(.*)$`)
	quotedRe     = regexp.MustCompile(`^"([^"]+)"`)
)

// issuesFromProse builds the issues from the score sheets' shape, naming them and their
// options from the scenario text where it names them.
func issuesFromProse(prose []line, shape []int) []*gamev1.Issue {
	issueNames := map[string]string{}
	optionNames := map[string]string{}
	for _, l := range prose {
		if m := issueLineRe.FindStringSubmatch(l.text); m != nil {
			if _, seen := issueNames[m[1]]; !seen {
				issueNames[m[1]] = shortName(m[2], true)
			}
			continue
		}
		if m := optionLineRe.FindStringSubmatch(l.text); m != nil {
			id := m[1] + m[2]
			if _, seen := optionNames[id]; !seen {
				// `A1 "water-based": ...` names the option in quotes; after `A1:` quotes are
				// part of the text (`E1: "SportCo" pays ...`).
				optionNames[id] = shortName(m[4], strings.TrimSpace(m[3]) == "")
			}
		}
	}
	out := make([]*gamev1.Issue, len(shape))
	for i, k := range shape {
		id := IssueID(i)
		is := &gamev1.Issue{Id: id, Label: issueNames[id]}
		if is.Label == "" {
			is.Label = "issue " + id
		}
		for o := range k {
			oid := (Issue{ID: id}).OptionID(o)
			label := optionNames[oid]
			if label == "" {
				label = "option " + strconv.Itoa(o+1)
			}
			is.Options = append(is.Options, &gamev1.Option{Id: oid, Label: label})
		}
		out[i] = is
	}
	return out
}

// shortName makes a display name of the start of a line of prose: a leading quoted name when
// quoted is set, else the text up to "==>" or the first sentence end, without quotes, at most
// about 60 characters.
func shortName(s string, quoted bool) string {
	s = strings.TrimSpace(s)
	if m := quotedRe.FindStringSubmatch(s); m != nil && quoted {
		return strings.TrimSpace(m[1])
	}
	if i := strings.Index(s, "==>"); i >= 0 {
		s = s[:i]
	}
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "."))
	s = strings.ReplaceAll(s, `"`, "")
	if utf8.RuneCountInString(s) > 60 {
		r := []rune(s)[:60]
		cut := strings.LastIndex(string(r), " ")
		if cut < 20 {
			cut = len(string(r))
		}
		s = strings.TrimSpace(string(r)[:cut]) + "..."
	}
	return s
}

// titleOf takes a title from the scenario text: its first sentence, shortened.
func titleOf(prose []line) string {
	if len(prose) == 0 {
		return "imported game"
	}
	first := prose[0].text
	if i := strings.Index(first, ". "); i >= 0 {
		first = first[:i]
	}
	return shortName(first, false)
}

func proseText(prose []line) string {
	parts := make([]string, len(prose))
	for i, l := range prose {
		parts[i] = l.text
	}
	text := strings.Join(parts, "\n")
	if len(text) > MaxTextLen {
		text = text[:MaxTextLen]
		for !utf8.ValidString(text) {
			text = text[:len(text)-1]
		}
	}
	return text
}

var placeholderRe = regexp.MustCompile(`#([A-Z])(\d+|_MAX)_NUM`)

type placeholderError struct {
	at  int
	msg string
}

// fillPlaceholders replaces #B2_NUM with the party's points for B2 and #B_MAX_NUM with its
// highest points on issue B.
func fillPlaceholders(text string, issues []*gamev1.Issue, party *deliberationv1.Party) (string, *placeholderError) {
	var bad *placeholderError
	out := placeholderRe.ReplaceAllStringFunc(text, func(m string) string {
		sub := placeholderRe.FindStringSubmatch(m)
		i := int(sub[1][0] - 'A')
		if i >= len(issues) {
			if bad == nil {
				bad = &placeholderError{at: strings.Index(text, m), msg: fmt.Sprintf("placeholder %s names issue %s, but the score sheets have %d issues", m, sub[1], len(issues))}
			}
			return m
		}
		pts := party.GetPoints()[i].GetPoints()
		if sub[2] == "_MAX" {
			return strconv.Itoa(int(slices.Max(pts)))
		}
		k, _ := strconv.Atoi(sub[2])
		if k < 1 || k > len(pts) {
			if bad == nil {
				bad = &placeholderError{at: strings.Index(text, m), msg: fmt.Sprintf("placeholder %s names option %s%d, but issue %s has %d options", m, sub[1], k, sub[1], len(pts))}
			}
			return m
		}
		return strconv.Itoa(int(pts[k-1]))
	})
	if bad != nil {
		return "", bad
	}
	return out, nil
}

// lineOf returns the 1-based line of byte offset at in text.
func lineOf(text string, at int) int {
	if at < 0 {
		return 0
	}
	return strings.Count(text[:at], "\n") + 1
}

// exampleDeal writes the deal of every first option, as an example.
func exampleDeal(issues []Issue) string {
	return dealString(issues, make(Deal, len(issues)))
}
