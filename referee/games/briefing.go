package games

import (
	"fmt"
	"strings"
)

// BriefingLine writes one line of a briefing, formatted as fmt.Sprintf would.
type BriefingLine func(format string, args ...any)

// Verbatim returns the format a BriefingLine writes as text, for lines written once per match
// and shown many times: written with no arguments, they skip formatting.
func Verbatim(text string) string { return strings.ReplaceAll(text, "%", "%%") }

// Brief lays out a briefing as every game's reads: the seat's fixed text (the rules, written
// once per match), a section headed situationHeading that situation writes, then "What you may
// do now", which options writes.
func Brief(fixed, situationHeading string, situation, options func(line BriefingLine)) string {
	var b strings.Builder
	b.Grow(len(fixed) + 1024) // the fixed text and the lines below, in one allocation
	line := func(format string, args ...any) {
		if len(args) == 0 && strings.IndexByte(format, '%') < 0 {
			b.WriteString(format) // nothing to format, as in many lines
		} else {
			fmt.Fprintf(&b, format, args...)
		}
		b.WriteByte('\n')
	}
	b.WriteString(fixed)
	b.WriteString(situationHeading)
	b.WriteByte('\n')
	situation(line)
	line("")
	line("What you may do now")
	options(line)
	return b.String()
}
