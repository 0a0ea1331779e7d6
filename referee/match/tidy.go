package match

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
)

// Bounds on what an agent says of itself (DescribeResponse in agent.proto): it is recorded and
// shown to every other seat, so it must neither run long nor break lines.
const (
	maxAgentField       = 64
	maxAgentDescription = 1 << 10
	maxAgentGames       = 32
)

// tidyAgent returns a copy of a with every text one line, cut to its bound.
func tidyAgent(a *gamev1.AgentInfo) *gamev1.AgentInfo {
	out := &gamev1.AgentInfo{
		Name:        oneLine(a.GetName(), maxAgentField),
		Version:     oneLine(a.GetVersion(), maxAgentField),
		Author:      oneLine(a.GetAuthor(), maxAgentField),
		Description: oneLine(a.GetDescription(), maxAgentDescription),
	}
	for _, g := range a.GetGames()[:min(len(a.GetGames()), maxAgentGames)] {
		out.Games = append(out.Games, oneLine(g, maxAgentField))
	}
	return out
}

// oneLine turns control, format and line-breaking characters (and bytes that are not UTF-8)
// into spaces and cuts the result to n bytes.
func oneLine(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r == utf8.RuneError || unicode.In(r, unicode.Cc, unicode.Cf, unicode.Zl, unicode.Zp) {
			return ' '
		}
		return r
	}, Clip(s, 4*n)) // cut first: what follows is cut again, and the work stays small
	return Clip(s, n)
}

// Clip cuts s to at most n bytes on a rune boundary, ending in "…" when it cuts, for texts
// that go into a record whose events are bounded.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := max(n-len("…"), 0)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// shown is s as the briefing names it: as is when it is plain (letters, digits, spaces and
// a few marks), quoted otherwise, so that nothing an agent calls itself reads as the
// briefing's own words.
func shown(s string) string {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(" .-_/@+#'", r) {
			return strconv.Quote(s)
		}
	}
	return s
}
