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
	"strconv"
	"strings"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"

	dondv1 "github.com/parley-arena/parley/gen/go/parley/games/dealornodeal/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/games/bargain"
	"github.com/parley-arena/parley/referee/games/dealornodeal/corpus"
	"github.com/parley-arena/parley/referee/games/dealornodeal/solution"
	"google.golang.org/protobuf/proto"
)

// Name is the game's name in the registry and in observations.
const Name = "dealornodeal"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

// Parameter defaults: the corpus README's example dialogue.
const DefaultMaxTurns int32 = 40

var (
	defaultItems  = []string{"book", "hat", "ball"}
	defaultCounts = []int64{1, 2, 2}
	defaultAlice  = []int64{2, 3, 1}
	defaultBob    = []int64{8, 1, 0}
	seatNames     = [2]string{"Alice", "Bob"}
)

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
	ints := func(xs []int64) string {
		parts := make([]string, len(xs))
		for i, x := range xs {
			parts[i] = strconv.FormatInt(x, 10)
		}
		return strings.Join(parts, ",")
	}
	return &gamev1.GameInfo{
		Name:         Name,
		Description:  "Deal or No Deal: Alice and Bob divide a pool of books, hats and balls; each has private values; they talk and propose until one accepts the other's proposal.",
		RulesVersion: RulesVersion,
		Seats:        seatNames[:],
		SeatRoles:    []string{"", ""},
		Params: []*gamev1.ParamInfo{
			{Name: "items", Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: strings.Join(defaultItems, ","),
				Description: fmt.Sprintf("Item types, comma-separated one-word names (1 to %d).", solution.MaxTypes)},
			{Name: "counts", Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: ints(defaultCounts),
				Description: fmt.Sprintf("Count of each item type in the pool, comma-separated, each 1 to %d.", solution.MaxCount)},
			{Name: "alice_values", Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: ints(defaultAlice),
				Description: "Alice's value of one item of each type (private to Alice), comma-separated whole numbers from 0."},
			{Name: "bob_values", Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: ints(defaultBob),
				Description: "Bob's value of one item of each type (private to Bob); the pool must be worth the same to both."},
			{Name: "max_turns", Kind: gamev1.ParamKind_PARAM_KIND_INT, DefaultValue: strconv.Itoa(int(DefaultMaxTurns)),
				Description: fmt.Sprintf("Turns of both players together, Alice first; no agreement by then gives both 0. 1 to %d.", bargain.MaxMaxTurns)},
			{Name: "corpus", Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: "",
				Description: "Path of a Deal-or-No-Deal corpus file (test.txt, data.txt, selfplay.txt, a selection written by `parley analyze dond --write`): the set-up is taken from one of its dialogues instead of counts and values."},
			{Name: "datapoint", Kind: gamev1.ParamKind_PARAM_KIND_INT, DefaultValue: "",
				Description: "With corpus: the dialogue to play, 1-based in file order after pairing its two sides; unset: drawn from the seed."},
			{Name: "source", Kind: gamev1.ParamKind_PARAM_KIND_STRING, DefaultValue: "",
				Description: "Where the set-up came from, in words; set by the corpus loader."},
		},
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

// Resolve validates params and fills in the defaults.
func (game) Resolve(gp *matchv1.GameParams) (*matchv1.GameParams, error) {
	s, err := newSetup(gp)
	if err != nil {
		return nil, err
	}
	return &matchv1.GameParams{Family: &matchv1.GameParams_Dealornodeal{Dealornodeal: s.params}}, nil
}

// NewState starts a match; the seed is not used by the rules.
func (game) NewState(gp *matchv1.GameParams, _ uint64) (games.State, error) {
	s, err := newSetup(gp)
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
	s, err := newSetup(gp)
	if err != nil {
		return nil, solution.Game{}, err
	}
	return slices.Clone(s.items), s.game, nil
}

func newSetup(gp *matchv1.GameParams) (*setup, error) {
	if err := bargain.CheckFamily(gp, Name); err != nil {
		return nil, err
	}
	in := gp.GetDealornodeal()
	if in == nil {
		in = &dondv1.Params{}
	}
	if in.Corpus != nil && len(in.GetCounts()) == 0 {
		return nil, fmt.Errorf("dealornodeal: corpus %q was not loaded: `parley play` reads it; other callers must send counts and values", in.GetCorpus())
	}
	p := proto.CloneOf(in)
	if len(p.Items) == 0 {
		p.Items = slices.Clone(defaultItems)
	}
	given := len(p.Counts) > 0 || len(p.AliceValues) > 0 || len(p.BobValues) > 0
	if !given {
		p.Counts, p.AliceValues, p.BobValues = slices.Clone(defaultCounts), slices.Clone(defaultAlice), slices.Clone(defaultBob)
	}
	lists := []struct {
		name string
		xs   []int64
	}{{"counts", p.Counts}, {"alice_values", p.AliceValues}, {"bob_values", p.BobValues}}
	var missing []string
	for _, l := range lists {
		if len(l.xs) == 0 {
			missing = append(missing, l.name)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("dealornodeal: counts, alice_values and bob_values go together, and %s %s missing: give all three, or none for the default set-up",
			strings.Join(missing, " and "), map[bool]string{true: "is", false: "are"}[len(missing) == 1])
	}
	if p.MaxTurns == nil {
		p.MaxTurns = proto.Int32(DefaultMaxTurns)
	}
	if p.GetMaxTurns() < 1 || p.GetMaxTurns() > bargain.MaxMaxTurns {
		return nil, fmt.Errorf("dealornodeal: max_turns must be from 1 to %d, got %d", bargain.MaxMaxTurns, p.GetMaxTurns())
	}
	n := len(p.Items)
	if n > solution.MaxTypes {
		return nil, fmt.Errorf("dealornodeal: %d item types; at most %d are allowed", n, solution.MaxTypes)
	}
	for i, it := range p.Items {
		if err := bargain.CheckName(Name, "items", it); err != nil {
			return nil, err
		}
		if slices.Contains(p.Items[:i], it) {
			return nil, fmt.Errorf("dealornodeal: item %q is listed twice", it)
		}
	}
	for _, l := range lists {
		if len(l.xs) != n {
			return nil, fmt.Errorf("dealornodeal: %s has %d entries for %d item types (%s)", l.name, len(l.xs), n, strings.Join(p.Items, ", "))
		}
		for _, x := range l.xs {
			if x < 0 || x > solution.MaxValue {
				return nil, fmt.Errorf("dealornodeal: %s entry %d is outside 0 to %d", l.name, x, solution.MaxValue)
			}
		}
	}
	g := solution.Game{Counts: ints(p.Counts), Values: [2][]int{ints(p.AliceValues), ints(p.BobValues)}}
	if err := g.Check(); err != nil {
		return nil, fmt.Errorf("dealornodeal: %w", err)
	}
	return &setup{params: p, items: p.Items, game: g, maxTurns: p.GetMaxTurns()}, nil
}
