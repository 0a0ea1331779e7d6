package coalition

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	coalitionv1 "github.com/parley-arena/parley/gen/go/parley/games/coalition/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/coalition/solution"
	"google.golang.org/protobuf/proto"
)

// Limits the rules rely on beyond what Params declares (the declaration holds the rest).
const (
	// MinPlayers and MaxPlayers bound the number of players (players' declared min_count and
	// max_count).
	MinPlayers = 2
	MaxPlayers = 8
	// MaxValue keeps every amount exactly representable in the float64 payoffs of the record,
	// and sums of amounts far from overflow (values' declared max).
	MaxValue int64 = 1 << 53
	// MaxUnitLen is the longest unit (unit's declared max_len), in characters; resource names
	// agents write are held to it.
	MaxUnitLen = 32
)

// defaultPlayers are the published set-up's (players' declared default).
var defaultPlayers = [...]string{"A", "B", "C"}

// Setup is a resolved coalition game: its players, the value of every coalition and the
// limits of play. A Setup is never changed once made.
type Setup struct {
	// Players are the seat names, in rotation order.
	Players []string
	// Values holds the value of every coalition, indexed by solution.Coalition (bit i for
	// player i); Values[0], the empty coalition, is 0.
	Values []int64
	// Rounds of phase 1 and the binding proposals allowed in phase 2.
	Rounds, MaxProposals int32
	// Unit is the display unit, also the resource name of amounts in proposals.
	Unit string
}

// NewSetup resolves a coalition game's parameters (nil or no branch: the defaults) into a
// Setup, or says which parameter is wrong and what would be legal.
func NewSetup(gp *matchv1.GameParams) (*Setup, error) {
	filled, err := games.FillParams(Name, gp)
	if err != nil {
		return nil, err
	}
	p := filled.GetCoalition()
	if len(gp.GetCoalition().GetValues()) == 0 && !slices.Equal(p.GetPlayers(), defaultPlayers[:]) {
		return nil, fmt.Errorf("coalition: values must be given when the players are not A, B, C (e.g. values=%s+%s:100)", p.GetPlayers()[0], p.GetPlayers()[1])
	}
	return read(p)
}

// read makes a Setup of params filled in and checked against their declaration: what is left
// are the rules across fields (names twice, coalitions of the players).
func read(p *coalitionv1.Params) (*Setup, error) {
	s := &Setup{Rounds: p.GetRounds(), MaxProposals: p.GetMaxProposals(), Unit: p.GetUnit(), Players: slices.Clone(p.GetPlayers())}
	for i, name := range s.Players {
		if slices.Contains(s.Players[:i], name) {
			return nil, fmt.Errorf("coalition: player %q is named twice", name)
		}
	}
	values := p.GetValues()
	s.Values = make([]int64, 1<<len(s.Players))
	given := make(map[solution.Coalition]string, len(values))
	for _, key := range slices.Sorted(maps.Keys(values)) {
		c, err := ParseCoalition(key, s.Players)
		if err != nil {
			return nil, fmt.Errorf("coalition: values: %w", err)
		}
		if other, dup := given[c]; dup {
			return nil, fmt.Errorf("coalition: values: %q and %q name the same coalition %s", other, key, s.Name(c))
		}
		given[c] = key
		s.Values[c] = values[key]
	}
	return s, nil
}

// checkWord insists on one plain word, because names are typed back by agents in proposals and
// value keys, and spliced into briefings.
func checkWord(what, w string, maxLen int) error {
	if !utf8.ValidString(w) {
		return fmt.Errorf("coalition: %s must be valid UTF-8", what)
	}
	if w == "" {
		return fmt.Errorf("coalition: %s must not be empty", what)
	}
	if n := utf8.RuneCountInString(w); n > maxLen {
		return fmt.Errorf("coalition: %s %q is longer than %d characters", what, w, maxLen)
	}
	for i, r := range w {
		if !(unicode.IsLetter(r) || (i > 0 && (unicode.IsDigit(r) || r == '_' || r == '-'))) {
			return fmt.Errorf("coalition: %s must be one word of letters, digits, '_' or '-' starting with a letter, got %q", what, w)
		}
	}
	return nil
}

// ParseCoalition reads a coalition written as its members' names joined by "+" ("A+B"), or,
// when every player's name is one character, also run together ("AB").
func ParseCoalition(key string, players []string) (solution.Coalition, error) {
	var names []string
	switch {
	case strings.Contains(key, "+"):
		names = strings.Split(key, "+")
	case singleChars(players):
		for _, r := range key {
			names = append(names, string(r))
		}
	default:
		names = []string{key}
	}
	if len(names) == 0 {
		return 0, fmt.Errorf("an empty coalition has no value to set")
	}
	var c solution.Coalition
	for _, name := range names {
		i := slices.Index(players, strings.TrimSpace(name))
		switch {
		case i < 0:
			return 0, fmt.Errorf("%q names %q, who is not a player (players: %s)", key, name, strings.Join(players, ", "))
		case c.Has(i):
			return 0, fmt.Errorf("%q names %s twice", key, players[i])
		}
		c |= solution.CoalitionOf(i)
	}
	return c, nil
}

func singleChars(players []string) bool {
	for _, p := range players {
		if utf8.RuneCountInString(p) != 1 {
			return false
		}
	}
	return true
}

// keyOf writes c as a values key: names run together when all are one character, else
// joined by "+".
func (s *Setup) keyOf(c solution.Coalition) string {
	if singleChars(s.Players) {
		return strings.ReplaceAll(s.Name(c), "+", "")
	}
	return s.Name(c)
}

// Name writes c with the players' names joined by "+", e.g. "A+B".
func (s *Setup) Name(c solution.Coalition) string { return c.Name(s.Players) }

// N returns the number of players.
func (s *Setup) N() int { return len(s.Players) }

// Grand returns the coalition of all players.
func (s *Setup) Grand() solution.Coalition { return solution.Grand(s.N()) }

// Game returns the characteristic function as a solution.Game.
func (s *Setup) Game() *solution.Game {
	g, err := solution.NewInt(s.N(), s.Values)
	if err != nil {
		panic(err) // a Setup is valid by construction
	}
	return g
}

// Coalitions returns every non-empty coalition, smallest first, and among those of one size in
// the order of their members (A+B before A+C before B+C).
func (s *Setup) Coalitions() []solution.Coalition {
	out := make([]solution.Coalition, 0, 1<<s.N()-1)
	for c := solution.Coalition(1); c <= s.Grand(); c++ {
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b solution.Coalition) int {
		if a.Size() != b.Size() {
			return a.Size() - b.Size()
		}
		return slices.Compare(a.Members(), b.Members())
	})
	return out
}

// Params returns the resolved parameters, every field set and every coalition's value listed.
func (s *Setup) Params() *matchv1.GameParams {
	values := make(map[string]int64, len(s.Values)-1)
	for c := solution.Coalition(1); c <= s.Grand(); c++ {
		values[s.keyOf(c)] = s.Values[c]
	}
	return &matchv1.GameParams{Family: &matchv1.GameParams_Coalition{Coalition: &coalitionv1.Params{
		Players:      slices.Clone(s.Players),
		Values:       values,
		Rounds:       proto.Int32(s.Rounds),
		MaxProposals: proto.Int32(s.MaxProposals),
		Unit:         proto.String(s.Unit),
	}}}
}

// SetupFromView rebuilds the Setup of a match from a seat's view, for agents.
func SetupFromView(v *coalitionv1.View) (*Setup, error) {
	s := &Setup{Players: slices.Clone(v.GetPlayers()), Rounds: v.GetRounds(), MaxProposals: v.GetMaxProposals(), Unit: v.GetUnit()}
	n := s.N()
	if n < 1 || n > MaxPlayers {
		return nil, fmt.Errorf("coalition: the view names %d players", n)
	}
	s.Values = make([]int64, 1<<n)
	for _, cv := range v.GetValues() {
		var c solution.Coalition
		for _, m := range cv.GetMembers() {
			if m < 0 || int(m) >= n {
				return nil, fmt.Errorf("coalition: the view's values name seat %d of %d", m, n)
			}
			c |= solution.CoalitionOf(int(m))
		}
		if c == 0 {
			return nil, fmt.Errorf("coalition: the view gives a value to the empty coalition")
		}
		s.Values[c] = cv.GetValue()
	}
	return s, nil
}

// Amount writes an amount with the unit, e.g. "250 g".
func (s *Setup) Amount(x int64) string { return strconv.FormatInt(x, 10) + " " + s.Unit }

// splitText writes a split as "A+B: A 400 g, B 350 g".
func (s *Setup) splitText(c solution.Coalition, amounts []int64) string {
	parts := make([]string, 0, c.Size())
	for _, i := range c.Members() {
		parts = append(parts, s.Players[i]+" "+s.Amount(amounts[i]))
	}
	return s.Name(c) + ": " + strings.Join(parts, ", ")
}
