package deliberation

import (
	"strings"

	rules "github.com/parley-arena/parley/referee/games/deliberation"
)

// The LLM-Deliberation platform's own readings of an answer (its public part is
// metrics/deliberation's PublicPart). The study's tables were computed from them, so the record
// keeps them as the platform's moves; Parley's own reading, by the language-model agent's
// deliberation style, is the import's audit.

// StudyDeal is the deal the study's scoring code reads in a public answer: for every issue,
// the first place where its letter is followed by a digit from 1 to 5 (line breaks removed;
// tags and words around play no part), the option being that digit; no deal unless every
// issue has one and each names an option the issue has.
func StudyDeal(s *rules.Setup, public string) (rules.Deal, bool) {
	text := strings.ReplaceAll(public, "\n", "")
	d := make(rules.Deal, len(s.Issues))
	for i, is := range s.Issues {
		k := firstOption(text, is.ID[0])
		if k < 1 || k > len(is.Options) {
			return nil, false
		}
		d[i] = k - 1
	}
	return d, true
}

// firstOption returns the digit after the first occurrence of letter followed by a digit from
// 1 to 5 (the only options the study's code reads), or 0 when there is none.
func firstOption(text string, letter byte) int {
	for i := 0; i+1 < len(text); i++ {
		if text[i] == letter && text[i+1] >= '1' && text[i+1] <= '5' {
			return int(text[i+1] - '0')
		}
	}
	return 0
}
