package report

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/parley-arena/parley/services/analytics/tables"
)

// Limits of the matrix-game file format (referee/games/gamefile).
const (
	maxActionID    = 32
	maxActionLabel = 64
)

// MetaGameYAML writes a meta-game as a matrix-game file in the format of
// referee/games/gamefile (kind: matrix): the row and the column player each choose an agent
// variant; a cell holds the two variants' mean payoffs when they meet (tables.MetaGame),
// rounded to 4 decimals so the file's numbers stay exact and small. An action's id is its
// agent's label reduced to letters, digits, '_' and '-' (made unique), its label the agent's
// label. The equilibrium analysis reads the file like any matrix game, which answers which
// variant is the rational choice.
func MetaGameYAML(m *tables.MetaGame, tournamentID string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Meta-game of tournament %s (%s): each player picks an agent variant to send.\n", tournamentID, m.Game)
	fmt.Fprintf(&b, "# A cell is the mean payoffs of the row's and the column's agent when they meet, both seat\n")
	fmt.Fprintf(&b, "# orders weighted equally; the diagonal is self-play. Written by parley report.\n")
	b.WriteString("kind: matrix\n")
	fmt.Fprintf(&b, "title: %s\n", strconv.Quote(truncate("Meta-game: "+m.Game+" "+tournamentID, maxActionLabel)))
	fmt.Fprintf(&b, "description: %s\n", strconv.Quote(fmt.Sprintf(
		"Which agent variant to send to a %s match, from tournament %s: payoffs are the variants' mean payoffs against each other.", m.Game, tournamentID)))
	ids := actionIDs(m.Agents)
	var actions []string
	for i, a := range m.Agents {
		actions = append(actions, fmt.Sprintf("{id: %s, label: %s}", strconv.Quote(ids[i]), strconv.Quote(truncate(a, maxActionLabel))))
	}
	list := "[" + strings.Join(actions, ", ") + "]"
	fmt.Fprintf(&b, "rows: %s\ncols: %s\npayoffs:\n", list, list)
	for i, line := range m.Payoffs {
		var cells []string
		for _, c := range line {
			cells = append(cells, fmt.Sprintf("[%s, %s]", exact(c[0]), exact(c[1])))
		}
		fmt.Fprintf(&b, "  - [%s]   # %s\n", strings.Join(cells, ", "), m.Agents[i])
	}
	return b.Bytes()
}

func exact(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "" || s == "-" || s == "-0" {
		return "0"
	}
	return s
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

func actionIDs(labels []string) []string {
	used := map[string]bool{}
	out := make([]string, len(labels))
	for i, l := range labels {
		id := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
				return r
			}
			return '_'
		}, l)
		id = truncate(id, maxActionID-4)
		if id == "" {
			id = "agent"
		}
		base := id
		for k := 2; used[id]; k++ {
			id = fmt.Sprintf("%s_%d", base, k)
		}
		used[id] = true
		out[i] = id
	}
	return out
}
