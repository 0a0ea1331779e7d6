package games_test

import (
	"strings"
	"testing"

	"github.com/parley-arena/parley/referee/games"
)

func TestBriefLines(t *testing.T) {
	got := games.Brief("Rules\n", "Now", func(line games.BriefingLine) {
		line("- turn %d of %d", 2, 8)
		line("- nothing to format")
		line(games.Verbatim("- 100% of %d, as written"))
	}, func(line games.BriefingLine) {
		line("- 50%% each")
	})
	want := strings.Join([]string{
		"Rules",
		"Now",
		"- turn 2 of 8",
		"- nothing to format",
		"- 100% of %d, as written",
		"",
		"What you may do now",
		"- 50% each",
		"",
	}, "\n")
	if got != want {
		t.Errorf("briefing\n%q\nwant\n%q", got, want)
	}
}
