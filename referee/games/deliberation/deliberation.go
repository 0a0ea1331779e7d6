// Package deliberation implements the multi-party, multi-issue deliberation games of
// specs/deliberation.md: parties settle a project by choosing one option on each issue, each with
// a private score sheet and a private minimum score (its threshold, also what it gets when no deal
// passes). The lead party p1 opens with a fixed deal, everyone talks in turns, and p1 closes by
// tabling the final deal; nobody votes by hand: the referee computes every party's vote from its
// score sheet.
//
// Rules, as this package enforces them:
//
//   - Seats: p1 in seat 0, p2 in seat 1, then the other parties in the scenario's order. The
//     scenario (game=base|game1|game2|game3, shipped, or game=PATH, a folder in the original
//     authors' format, see Import) gives the parties, their score sheets and thresholds, the
//     issues and their options, and the opening deal.
//   - A complete deal picks exactly one option on every issue; it is a game.v1 Deal whose
//     choices name issues by letter ("A") and options by letter and number ("A2").
//   - Turn 1 (phase "opening"): p1's only legal move is propose with the opening deal, and the
//     action carries one public message.
//   - Then discussion_turns turns (phase "discussion"), in blocks of n: each block is an order of
//     all n parties drawn from the match seed (the k-th block from a generator seeded with the
//     seed and k), drawn again until its first speaker is not the party that spoke just before
//     and its last speaker is not p1; when the turns are not a multiple of n, the last block is
//     the start of such an order, with the same two rules. On its turn a party plays say with
//     exactly one public message, which may carry one complete deal (non-binding). Each speaker
//     is told when the turn is its last discussion turn. With speaking_order the speakers are
//     fixed in advance instead, in any order (an imported match's).
//   - In the solo baseline (solo_turns = k > 0), the k turns between the opening and the final
//     deal are all p1's, and nobody else ever speaks.
//   - Last turn (phase "final"): p1 proposes the final deal, or rejects (tables no deal), with
//     one public message. Then every party's vote is computed: yes when its score for the deal
//     reaches its threshold; p1 also says yes when every other party does and its score plus
//     p1_bonus reaches its threshold. The deal passes with at least `quorum` yes-votes, every
//     veto holder's among them (ProposalResolved records the votes).
//   - Payoffs: when the deal passes, every party's deal score (p1 plus p1_bonus when all n said
//     yes); otherwise, or with no deal, every party's threshold.
//
// A deal naming an unknown option, missing an issue or naming two options of one issue is
// refused with the reason (REJECTION_CODE_INVALID_TERMS); so is any other move or message. The
// default moves, for a seat whose agent gives no usable answer: on the opening turn, the opening
// deal; in the discussion, a message "(no message)" without a deal; on the final turn, reject,
// which ends the match with no deal.
//
// Privacy: each seat's observation holds its own score sheet, threshold and briefing, and p1's
// alone its bonus; nothing private to another seat. Every message is public. A seat's history
// shows the latest history_window messages; its view lists every statement.
//
// Events: PhaseStarted when a phase begins (the opening among the opening events), ChanceDrawn
// with each block's speaking order, ProposalResolved with the computed votes on the final deal.
package deliberation

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	deliberationv1 "github.com/parley-arena/parley/gen/go/parley/games/deliberation/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Name is the game's name in the registry and in observations.
const Name = "deliberation"

// RulesVersion changes whenever a rule, a default or the wording the agents see changes in a
// way that could change play.
const RulesVersion = "1"

// Phase names, as in Observation.phase and PhaseStarted.phase.
const (
	PhaseOpening    = "opening"
	PhaseDiscussion = "discussion"
	PhaseSolo       = "solo"
	PhaseFinal      = "final"
)

// DefaultText is the text of the messages a default move sends.
const DefaultText = "(no message)"

// FolderFunc opens a game folder named by the game parameter. The rules do no I/O themselves;
// a program that wants Resolve itself to import folders passes one (e.g. over os.DirFS).
// Hosts that start matches can instead call Load (games.Loader) with their ReadFile.
type FolderFunc func(path string) (fs.FS, error)

// Option configures the game.
type Option func(*game)

// WithFolders lets game=PATH import a folder in the authors' format through open.
func WithFolders(open FolderFunc) Option { return func(g *game) { g.open = open } }

// New returns the deliberation game. A folder named by game=PATH is imported by Load (the
// host reads the files) or, with WithFolders, by Resolve; otherwise only the shipped scenarios
// and params that carry their scenario resolve.
func New(opts ...Option) games.Game {
	g := &game{}
	for _, o := range opts {
		o(g)
	}
	return g
}

type game struct {
	open FolderFunc
}

var (
	_ games.Loader     = (*game)(nil)
	_ games.SeatLister = (*game)(nil)
	_ games.TermsNamer = (*game)(nil)
	_ games.State      = (*match)(nil)
	_ games.Opener     = (*match)(nil)
)

// Info describes the game, its seats (for the base scenario) and its parameters.
func (g *game) Info() *gamev1.GameInfo {
	defaults := g.defaultSetup()
	names, roles := seatsOf(defaults)
	return &gamev1.GameInfo{
		Name:         Name,
		Description:  "Multi-party deliberation: six parties with private score sheets talk in turns over five issues; the lead party tables the final deal and votes are computed from the score sheets. Shipped scenarios: " + strings.Join(ShippedNames(), ", ") + ".",
		RulesVersion: RulesVersion,
		Seats:        names,
		SeatRoles:    roles,
		Params:       games.ParamInfos(Name, defaults.Params()),
	}
}

// defaultSetup is the base scenario with the default parameters.
func (g *game) defaultSetup() *Setup {
	s, err := resolve(nil, g.load)
	if err != nil {
		panic(err) // the shipped scenario is valid; a failure is a programming error
	}
	return s
}

// seatsOf names the seats after the parties, with roles p1, p2 and "".
func seatsOf(s *Setup) (names, roles []string) {
	names = s.Names()
	roles = make([]string, len(names))
	roles[0], roles[1] = "p1", "p2"
	return names, roles
}

// Seats names the seats after the parties of resolved params (the base scenario's when the
// params are not valid).
func (g *game) Seats(params *matchv1.GameParams) (names, roles []string) {
	s, err := NewSetup(params)
	if err != nil {
		s = g.defaultSetup()
	}
	return seatsOf(s)
}

// Load imports the folder game names, when it names no shipped scenario and the params carry
// no scenario yet, reading its files with read; the params returned hold the scenario, so the
// rules never read a file and the record is self-contained.
func (g *game) Load(params *matchv1.GameParams, _ uint64, read games.ReadFile) (*matchv1.GameParams, error) {
	if err := checkBranch(params); err != nil {
		return nil, err
	}
	p := params.GetDeliberation()
	if p == nil || p.Game == nil || p.GetScenario() != nil {
		return params, nil
	}
	name := strings.TrimSpace(p.GetGame())
	if _, ok := Shipped(name); ok || name == "" {
		return params, nil
	}
	if _, err := read(filepath.Join(name, configFile)); err != nil {
		return nil, fmt.Errorf("deliberation: game %q is not one of %s, nor a game folder (%s: %v)", name, strings.Join(ShippedNames(), ", "), filepath.Join(name, configFile), err)
	}
	sc, err := ImportFiles(read, name)
	if err != nil {
		return nil, err
	}
	out := proto.CloneOf(params)
	out.GetDeliberation().Scenario = sc
	return out, nil
}

// NameTerms writes deals with their option names, e.g. "A1,B2 (A1 on the water; B2 kept in
// balance)", for transcripts; other terms are left to games.DescribeProposal.
func (g *game) NameTerms(params *matchv1.GameParams) func(*gamev1.Proposal) string {
	s, err := NewSetup(params)
	if err != nil {
		return nil
	}
	return func(p *gamev1.Proposal) string {
		d, err := s.DealFromProto(p.GetDeal())
		if err != nil {
			return ""
		}
		return "deal " + s.DealText(d)
	}
}

// Resolve validates params, imports or looks up the scenario and fills in every default.
func (g *game) Resolve(params *matchv1.GameParams) (*matchv1.GameParams, error) {
	if err := checkBranch(params); err != nil {
		return nil, err
	}
	s, err := resolve(params.GetDeliberation(), g.load)
	if err != nil {
		return nil, err
	}
	return s.Params(), nil
}

// load finds the scenario a game parameter names: a shipped one, else a folder.
func (g *game) load(name string) (*deliberationv1.Scenario, error) {
	if sc, ok := Shipped(name); ok {
		return sc, nil
	}
	if g.open == nil {
		return nil, fmt.Errorf("deliberation: game %q is not one of %s, and a game folder must be loaded first (parley play and parley analyze read it)", name, strings.Join(ShippedNames(), ", "))
	}
	fsys, err := g.open(name)
	if err != nil {
		return nil, fmt.Errorf("deliberation: game %q is not one of %s, nor a readable folder: %w", name, strings.Join(ShippedNames(), ", "), err)
	}
	if _, err := fs.Stat(fsys, configFile); err != nil {
		return nil, fmt.Errorf("deliberation: game %q is not one of %s, nor a game folder (it has no %s)", name, strings.Join(ShippedNames(), ", "), configFile)
	}
	return Import(fsys, name)
}

// NewState starts a match from resolved params. The seed drives the speaking orders.
func (g *game) NewState(params *matchv1.GameParams, seed uint64) (games.State, error) {
	if err := games.CheckResolved(Name, params); err != nil {
		return nil, err
	}
	s, err := NewSetup(params)
	if err != nil {
		return nil, err
	}
	return newMatch(s, seed), nil
}

// Schedule returns the speaker of every talk turn of a match (the discussion, or p1's solo
// turns) in order: the fixed speaking order when the params give one, else drawn from the
// seed.
func Schedule(s *Setup, seed uint64) []int {
	if s.Solo > 0 {
		return make([]int, s.Solo) // p1, seat 0, every time
	}
	if s.Order != nil {
		return slices.Clone(s.Order)
	}
	var out []int
	prev := 0 // p1 spoke the opening
	for b := 0; len(out) < s.Discussion; b++ {
		size := min(s.N(), s.Discussion-len(out))
		order := drawBlock(s.N(), size, prev, seed, b)
		out = append(out, order...)
		prev = order[len(order)-1]
	}
	return out
}

// orderSalt separates the speaking-order draws from any other use of the match seed.
const orderSalt = 0x64656c6962657261 // "delibera"

// drawBlock draws block b's speaking order: the first size seats of a uniformly random order of
// the n seats, drawn again until its first seat is not prev and its last is not p1 (seat 0).
func drawBlock(n, size, prev int, seed uint64, b int) []int {
	rng := newRand(seed, orderSalt^uint64(b))
	for range 10_000 {
		order := rng.Perm(n)[:size]
		if order[0] != prev && order[size-1] != 0 {
			return order
		}
	}
	// Unreachable in practice (each try succeeds with probability above 1/3 for n >= 3); keep
	// the rules total anyway: a fixed valid order.
	var first int
	for first = 1; first == prev; first++ {
	}
	order := []int{first}
	if size > 2 {
		order = append(order, 0)
	}
	for seat := 1; seat < n && len(order) < size; seat++ {
		if !slices.Contains(order, seat) {
			order = append(order, seat)
		}
	}
	return order
}
