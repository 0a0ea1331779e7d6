// Package matchid names the runs of a requested match: the first is played under the id the
// match was requested with, every later one (a run interrupted, or voided by a model provider
// and replayed) under <id>-r<k>. Whoever needs to know that two runs play the same scheduled
// match (a reply cache scoped by match) reads it from the id alone, since an agent is told
// nothing else about the match it plays.
package matchid

import (
	"fmt"
	"strings"
)

// Rerun is the id of the k-th rerun (k >= 1) of the match requested as id.
func Rerun(id string, k int) string { return fmt.Sprintf("%s-r%d", id, k) }

// Requested is the id a run's match was requested with: id without its rerun suffixes. An id
// chosen by hand that happens to end in -r<digits> reads as a rerun too; the cost is that two
// such matches share a match-scoped cache.
func Requested(id string) string {
	for {
		i := strings.LastIndex(id, "-r")
		if i <= 0 || i+2 == len(id) || strings.Trim(id[i+2:], "0123456789") != "" {
			return id
		}
		id = id[:i]
	}
}
