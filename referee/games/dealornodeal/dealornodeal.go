// Package dealornodeal implements Deal or No Deal (specs/deal-or-no-deal.md): Alice (seat 0)
// and Bob (seat 1) split a pool of items of a few types (book, hat, ball by default); each has
// private whole values per type, the pool being worth the same to both (10 in the corpus), and
// sees only its own. They talk and propose divisions in alternating turns until one accepts
// the other's standing proposal. The game plays on the shared bargaining engine
// (referee/games/bargain), which enforces the turn rules; this package reads divisions, scores
// deals, keeps each side's values to itself and writes the briefing.
//
// Rules, as this package enforces them:
//
//   - Alice moves on odd turns, Bob on even turns, turns 1 to max_turns (default 40: 20 rounds
//     of one turn each).
//   - propose puts a division on the table: an Allocation whose two shares receive every item,
//     {item: count} per seat, each amount whole and at least 0, Alice's and Bob's amounts of
//     each type adding up exactly to the pool's count (a seat that receives nothing may be left
//     out). It replaces the mover's own earlier proposal and declines the opponent's.
//   - accept takes the opponent's proposal of the turn just before: the division is carried out
//     and the game ends (END_CAUSE_AGREEMENT).
//   - pass is a turn of talk only: no proposal, nothing accepted (whatever stood lapses).
//   - Messages are free text to the other player. There is no reject move: walking away is
//     letting the turns run out.
//   - Scores: a player's score is the sum over types of the items it gets times its own value.
//     Without agreement within max_turns turns both score 0 (END_CAUSE_TURN_LIMIT).
//
// Each seat's observation holds only its own values (view and briefing); the division
// proposals and the summary of the end name items, never scores. The set-up is given as
// parameters (counts, alice_values, bob_values) or drawn from a corpus file (corpus, with
// datapoint or the seed; see Load and package corpus).
//
// The default move, for a seat whose agent gives no usable answer, is pass.
package dealornodeal

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

	"google.golang.org/protobuf/proto"

	dondv1 "github.com/parley-arena/parley/gen/go/parley/games/dealornodeal/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/dealornodeal/corpus"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
)

// Name is the game's name in the registry and in observations.
const Name = "dealornodeal"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

var seatNames = [2]string{"Alice", "Bob"}

// Seats.
const (
	Alice games.Seat = bargain.P1
	Bob   games.Seat = bargain.P2
)

// drawSalt separates the corpus draw from any other use of the match seed.
const drawSalt = 0x646f6e64 // "dond"

// New returns Deal or No Deal.
func New() games.Game { return game{} }

type game struct{}

var (
	_ games.Game   = game{}
	_ games.Loader = game{}
)

// Info describes the game and its parameters.
func (game) Info() *gamev1.GameInfo {
	return &gamev1.GameInfo{
		Name:         Name,
		Description:  "Deal or No Deal: Alice and Bob divide a pool of books, hats and balls; each has private values; they talk and propose until one accepts the other's proposal.",
		RulesVersion: RulesVersion,
		Seats:        seatNames[:],
		SeatRoles:    []string{"", ""},
		Params:       games.ParamInfos(Name, nil),
	}
}

// Load reads the corpus named by the corpus parameter and fills in counts and values from one
// of its dialogues (datapoint, or one drawn from seed), unless counts are already set.
func (game) Load(gp *matchv1.GameParams, seed uint64, read games.ReadFile) (*matchv1.GameParams, error) {
	p := gp.GetDealornodeal()
	if p == nil || p.Corpus == nil || len(p.GetCounts()) > 0 {
		return gp, nil
	}
	data, err := read(p.GetCorpus())
	if err != nil {
		return nil, fmt.Errorf("dealornodeal: corpus: %w", err)
	}
	c, err := corpus.Parse(filepath.Base(p.GetCorpus()), data)
	if err != nil {
		return nil, fmt.Errorf("dealornodeal: %w", err)
	}
	points := c.Datapoints()
	idx := p.GetDatapoint()
	switch {
	case p.Datapoint == nil:
		idx = int32(rand.New(rand.NewPCG(seed, drawSalt)).IntN(len(points))) + 1
	case idx < 1 || int(idx) > len(points):
		return nil, fmt.Errorf("dealornodeal: datapoint %d: %s has dialogues 1 to %d", idx, p.GetCorpus(), len(points))
	}
	dp := points[idx-1]
	out := proto.CloneOf(gp)
	q := out.GetDealornodeal()
	q.Datapoint = proto.Int32(idx)
	q.Source = proto.String(dp.Source)
	q.Counts = int64s(dp.Game.Counts)
	q.AliceValues = int64s(dp.Game.Values[0])
	q.BobValues = int64s(dp.Game.Values[1])
	if len(q.Items) == 0 {
		q.Items = slices.Clone(corpus.Items[:])
	}
	return out, nil
}

func int64s(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

func ints(xs []int64) []int {
	out := make([]int, len(xs))
	for i, x := range xs {
		out[i] = int(x)
	}
	return out
}

// Resolve validates params and fills in the defaults Params declares (counts and both seats'
// values are declared together: all given, or all defaults).
func (game) Resolve(gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	out, _, err := resolve(gp)
	return out, err
}

// resolve fills in gp's defaults and reads the result, checking the rules across fields.
func resolve(gp *matchv1.GameParams) (*matchv1.GameParams, *setup, error) {
	if err := bargain.CheckFamily(gp, Name); err != nil {
		return nil, nil, err
	}
	in := gp.GetDealornodeal()
	if in != nil && in.Corpus != nil && len(in.GetCounts()) == 0 {
		return nil, nil, fmt.Errorf("dealornodeal: corpus %q was not loaded: `parley play` reads it; other callers must send counts and values", in.GetCorpus())
	}
	out, err := games.FillParams(Name, gp)
	if err != nil {
		return nil, nil, err
	}
	s, err := newSetup(out.GetDealornodeal())
	if err != nil {
		return nil, nil, err
	}
	return out, s, nil
}

// DefaultMaxTurns is the declared default turn limit, for programs that offer it as a flag.
func DefaultMaxTurns() int32 {
	r, _ := game{}.Resolve(nil) // the suite checks the defaults resolve
	return r.GetDealornodeal().GetMaxTurns()
}

// NewState starts a match from resolved params; the seed is not used by the rules.
func (game) NewState(gp *matchv1.GameParams, _ uint64) (games.State, error) {
	if err := games.CheckResolved(Name, gp); err != nil {
		return nil, err
	}
	s, err := newSetup(gp.GetDealornodeal())
	if err != nil {
		return nil, err
	}
	r := &rules{s: s}
	r.text = [2]string{r.rulesText(Alice), r.rulesText(Bob)}
	return bargain.New[division](bargain.Config{
		Game:     Name,
		Title:    "Deal or No Deal",
		MaxTurns: s.maxTurns,
		Pass:     true,
		Names:    seatNames,
	}, r)
}

// setup is what a match knows from its resolved parameters; never changed.
type setup struct {
	params   *dondv1.Params
	items    []string
	game     solution.Game
	maxTurns int32
}

// Setup returns the items and the solution model of params (resolving them), for agents,
// metrics and analyses.
func Setup(gp *matchv1.GameParams) (items []string, g solution.Game, err error) {
	_, s, err := resolve(gp)
	if err != nil {
		return nil, solution.Game{}, err
	}
	return slices.Clone(s.items), s.game, nil
}

// newSetup reads resolved params: the rules across fields the declarations cannot say.
func newSetup(p *dondv1.Params) (*setup, error) {
	n := len(p.Items)
	for i, it := range p.Items {
		if slices.Contains(p.Items[:i], it) {
			return nil, fmt.Errorf("dealornodeal: item %q is listed twice", it)
		}
	}
	for _, l := range []struct {
		name string
		xs   []int64
	}{{"counts", p.Counts}, {"alice_values", p.AliceValues}, {"bob_values", p.BobValues}} {
		if len(l.xs) != n {
			return nil, fmt.Errorf("dealornodeal: %s has %d entries for %d item types (%s)", l.name, len(l.xs), n, strings.Join(p.Items, ", "))
		}
	}
	g := solution.Game{Counts: ints(p.Counts), Values: [2][]int{ints(p.AliceValues), ints(p.BobValues)}}
	if err := g.Check(); err != nil {
		return nil, fmt.Errorf("dealornodeal: %w", err)
	}
	return &setup{params: p, items: p.Items, game: g, maxTurns: p.GetMaxTurns()}, nil
}
