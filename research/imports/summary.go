package imports

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
)

// Summary counts what an import did.
type Summary struct {
	mu sync.Mutex
	// Imported counts the matches stored by this import; Stored those found already stored
	// (the same files imported before), which are left as they are.
	Imported, Stored int
	// Void counts the void matches among both, by cause (a Game's Void up to its first ':').
	Void map[string]int
	// Refused lists the files and archive entries not imported, sorted by path.
	Refused []Refusal
	// Disagreements counts the disagreements of Parley's reading with the platform's, by kind
	// ("parse", "refused", "outcome") and tag.
	Disagreements map[string]map[string]int
	// Tournaments are the tournaments of the import, one per source folder and game.
	Tournaments []TournamentInfo
	// Parse is the parse report: per model and prompt style, how Parley's parser read the
	// answers; sorted by model and style.
	Parse []*ParseStats

	parse map[[2]string]*ParseStats
}

// TournamentInfo is one tournament of an import.
type TournamentInfo struct {
	ID, Game string
	Matches  int
}

// ParseStats is how Parley's parser read the answers of one model in one prompt style.
type ParseStats struct {
	Model, Style string
	// Answers read, and those read as the same move as the platform's.
	Answers, Agreed int
	// Examples holds the first disagreement of each tag met, by tag.
	Examples map[string]Example
}

// Example is one answer Parley's parser read otherwise than the platform.
type Example struct {
	// Path of the game's file and the answer's turn.
	Path string
	Turn int32
	// Platform and Parley are the two readings; Answer is the answer, cut to 300 bytes.
	Platform, Parley, Answer string
}

func newSummary() *Summary {
	return &Summary{Void: map[string]int{}, Disagreements: map[string]map[string]int{}, parse: map[[2]string]*ParseStats{}}
}

func (s *Summary) refuse(r Refusal) {
	s.mu.Lock()
	s.Refused = append(s.Refused, r)
	s.mu.Unlock()
}

// count adds a match read; stored says it was in the store already.
func (s *Summary) count(m *Match, stored bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if stored {
		s.Stored++
	} else {
		s.Imported++
	}
	if m.Game.Void != "" {
		cause, _, _ := strings.Cut(m.Game.Void, ":")
		s.Void[cause]++
	}
	for _, d := range m.Audit.GetDisagreements() {
		kind := KindName(d.GetKind())
		if s.Disagreements[kind] == nil {
			s.Disagreements[kind] = map[string]int{}
		}
		s.Disagreements[kind][d.GetTag()]++
	}
	// The parse report, per model and style.
	byTurn := map[int32]*eventsv1.ImportDisagreement{}
	for _, d := range m.Audit.GetDisagreements() {
		if d.GetKind() == eventsv1.DisagreementKind_DISAGREEMENT_KIND_PARSE {
			byTurn[d.GetTurn()] = d
		}
	}
	for i, t := range m.Game.Turns {
		key := [2]string{m.Game.Seats[t.Seat].Model, m.Game.Style}
		ps := s.parse[key]
		if ps == nil {
			ps = &ParseStats{Model: key[0], Style: key[1], Examples: map[string]Example{}}
			s.parse[key] = ps
		}
		ps.Answers++
		d, differs := byTurn[int32(i+1)]
		if !differs {
			ps.Agreed++
			continue
		}
		if _, seen := ps.Examples[d.GetTag()]; !seen {
			path := ""
			if st := m.Events[0].GetMatchStarted(); st != nil {
				path = st.GetImported().GetSourceFile()
			}
			ps.Examples[d.GetTag()] = Example{Path: path, Turn: int32(i + 1), Platform: d.GetPlatform(), Parley: d.GetParley(), Answer: clipText(t.Answer, 300)}
		}
	}
}

func (s *Summary) finish() {
	slices.SortFunc(s.Refused, func(a, b Refusal) int { return strings.Compare(a.Path, b.Path) })
	keys := slices.SortedFunc(maps.Keys(s.parse), func(a, b [2]string) int {
		return strings.Compare(a[0]+"\x00"+a[1], b[0]+"\x00"+b[1])
	})
	s.Parse = s.Parse[:0]
	for _, k := range keys {
		s.Parse = append(s.Parse, s.parse[k])
	}
}

// KindName is a disagreement kind's short name: "parse", "refused", "outcome".
func KindName(k eventsv1.DisagreementKind) string {
	return strings.ToLower(strings.TrimPrefix(k.String(), "DISAGREEMENT_KIND_"))
}

// Write prints the summary: tournaments, counts, disagreements by kind and tag, the refused
// files one per line, and with parseReport the parse report.
func (s *Summary) Write(w io.Writer, parseReport bool) error {
	ew := &errWriter{w: w}
	for _, t := range s.Tournaments {
		ew.printf("tournament %s: %s, %d %s\n", t.ID, t.Game, t.Matches, plural(t.Matches, "match", "matches"))
	}
	void := 0
	for _, n := range s.Void {
		void += n
	}
	ew.printf("imported %d, already stored %d, void %d, refused %d\n", s.Imported, s.Stored, void, len(s.Refused))
	for _, cause := range slices.Sorted(maps.Keys(s.Void)) {
		ew.printf("  void: %d %s\n", s.Void[cause], cause)
	}
	for _, kind := range []string{"parse", "refused", "outcome"} {
		tags := s.Disagreements[kind]
		total := 0
		for _, n := range tags {
			total += n
		}
		ew.printf("disagreements (%s): %d", kind, total)
		for i, tag := range slices.Sorted(maps.Keys(tags)) {
			sep := ", "
			if i == 0 {
				sep = ": "
			}
			ew.printf("%s%s %d", sep, tag, tags[tag])
		}
		ew.printf("\n")
	}
	for _, r := range s.Refused {
		ew.printf("refused: %s\n", r)
	}
	if parseReport {
		ew.printf("\nparse report: answers Parley's parser reads as the same move as the platform did, per model and prompt style\n")
		for _, p := range s.Parse {
			pct := 0.0
			if p.Answers > 0 {
				pct = 100 * float64(p.Agreed) / float64(p.Answers)
			}
			ew.printf("%s (%s): %d of %d answers read alike (%.1f%%)\n", p.Model, p.Style, p.Agreed, p.Answers, pct)
			for _, tag := range slices.Sorted(maps.Keys(p.Examples)) {
				e := p.Examples[tag]
				ew.printf("  %s, e.g. %s turn %d: platform %q, Parley %q\n    answer: %q\n", tag, e.Path, e.Turn, e.Platform, e.Parley, e.Answer)
			}
		}
	}
	return ew.err
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// clipMark ends a text clipText cut.
const clipMark = " …[cut]"

// clipText cuts s to at most n bytes at a rune boundary, then marks the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + clipMark
}
