package tournament

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
)

// DefaultMaxAssignments bounds the seat assignments a tournament plays; beyond it a seeded
// sample is drawn (see Plan).
const DefaultMaxAssignments = 720

// maxRetrySuffix is the room left in a match id for a retry suffix ("-r20").
const maxRetrySuffix = 8

// ErrPlan is wrapped by errors about a tournament that cannot be planned.
var ErrPlan = errors.New("tournament: cannot plan")

// PlanConfig is what a tournament plays.
type PlanConfig struct {
	// ID of the tournament; match ids are derived from it.
	ID string
	// Game and its parameters (resolved).
	Game   string
	Params *matchv1.GameParams
	// Seats is the game's number of seats.
	Seats int
	// Entrants are the agents, with unique labels.
	Entrants []*tournamentv1.Entrant
	// GamesPerAssignment is N: matches per seat assignment (at least 1).
	GamesPerAssignment int
	// Seed every match seed derives from.
	Seed uint64
	// SelfPlay lets one agent hold several seats of a match.
	SelfPlay bool
	// MaxAssignments bounds the seat assignments played (0: DefaultMaxAssignments).
	MaxAssignments int
	// Limits on agents.
	Limits *matchv1.Limits
	// RevealPrivate lets spectators see the private parts of every match.
	RevealPrivate bool
}

// Plan lays out a tournament. The seat assignments are every ordered choice of distinct
// entrants for the seats (for two seats: every ordered pair, so both seat orders), or with
// SelfPlay every tuple of entrants; in lexicographic order of entrant indices. When there are
// more than MaxAssignments, a sample of MaxAssignments of them is drawn without replacement
// from a generator seeded with Seed (Floyd's algorithm over the assignments' ranks) and played
// in rank order, and TournamentSpec.assignments_possible says how many there were.
//
// Game k (0-based) of assignment a has seed MatchSeed(Seed, a, k): every game draws its own
// chances, private values included, so that no entrant meets in one game a private value it
// saw, or analytics published, in another (an entrant that was the seller of game k of one
// assignment would otherwise know the seller's cost as the buyer of game k of the next).
// Matches are requested game by game (game 0 of every assignment,
// then game 1, ...), so a tournament stopped early still covers every assignment.
// Match ids are <ID>-<SeedTag>-a<assignment>-g<game>, zero-padded.
func Plan(cfg PlanConfig) (*tournamentv1.TournamentSpec, error) {
	k, n := len(cfg.Entrants), cfg.Seats
	switch {
	case bus.ValidMatchID(cfg.ID) != nil:
		return nil, fmt.Errorf("%w: tournament id %q: %w", ErrPlan, cfg.ID, ErrInvalidID)
	case n < 1:
		return nil, fmt.Errorf("%w: the game has no seats", ErrPlan)
	case cfg.GamesPerAssignment < 1:
		return nil, fmt.Errorf("%w: games per assignment must be at least 1", ErrPlan)
	case k == 0:
		return nil, fmt.Errorf("%w: no agents", ErrPlan)
	case !cfg.SelfPlay && k < n:
		return nil, fmt.Errorf("%w: %s has %d seats and distinct agents must fill them, but only %d agents were given (add agents, or allow self-play)", ErrPlan, cfg.Game, n, k)
	}
	labels := map[string]bool{}
	for _, e := range cfg.Entrants {
		if labels[e.GetLabel()] {
			return nil, fmt.Errorf("%w: two agents are labelled %q", ErrPlan, e.GetLabel())
		}
		labels[e.GetLabel()] = true
	}
	total, ok := assignmentCount(k, n, cfg.SelfPlay)
	if !ok {
		return nil, fmt.Errorf("%w: too many seat assignments to count", ErrPlan)
	}
	maxA := uint64(cfg.MaxAssignments)
	if maxA == 0 {
		maxA = DefaultMaxAssignments
	}
	ranks := sampleRanks(total, maxA, cfg.Seed)

	spec := &tournamentv1.TournamentSpec{
		TournamentId:        cfg.ID,
		Game:                cfg.Game,
		Params:              cfg.Params,
		Entrants:            cfg.Entrants,
		GamesPerAssignment:  uint32(cfg.GamesPerAssignment),
		Seed:                cfg.Seed,
		Limits:              cfg.Limits,
		SelfPlay:            cfg.SelfPlay,
		AssignmentsPossible: total,
		RevealPrivate:       cfg.RevealPrivate,
	}
	aw, gw := digits(len(ranks)-1), digits(cfg.GamesPerAssignment-1)
	for g := range cfg.GamesPerAssignment {
		for a, r := range ranks {
			seed := MatchSeed(cfg.Seed, a, g)
			id := fmt.Sprintf("%s-%s-a%0*d-g%0*d", cfg.ID, SeedTag(cfg.Seed), aw, a, gw, g)
			if len(id) > bus.MaxMatchIDLen-maxRetrySuffix {
				return nil, fmt.Errorf("%w: tournament id %q is too long for its match ids", ErrPlan, cfg.ID)
			}
			spec.Matches = append(spec.Matches, &tournamentv1.ScheduledMatch{
				MatchId:    id,
				Entrants:   unrank(r, k, n, cfg.SelfPlay),
				Seed:       seed,
				Assignment: uint32(a),
				GameIndex:  uint32(g),
			})
		}
	}
	return spec, nil
}

// SeedTag is the part of a tournament's match ids that its seed sets: "s" and 6 hex digits of
// a hash of it. An agent is never told a match's seed (its private draws follow from it), so
// whatever an agent keeps by match id, a reply cache above all, must find the seed in the id:
// without it one tournament id played again with another seed (in a fresh store, where no
// stored spec refuses it) would replay the first seed's replies. A hash tells no more than
// the default tournament ids already do, which name the seed.
func SeedTag(seed uint64) string {
	sum := sha256.Sum256(binary.BigEndian.AppendUint64([]byte("parley/tournament-seed/"), seed))
	return "s" + hex.EncodeToString(sum[:3])
}

// MatchSeed is the seed of game k of assignment a of a tournament seeded with seed: a
// SplitMix64 step from seed, a and k, halved so it also reads as a positive int64. Assignment 0
// keeps the seeds of the plans made before assignments had their own (reproduce's set-ups,
// whose models keep no memory between matches, still share them across assignments).
func MatchSeed(seed uint64, a, k int) uint64 {
	z := seed + uint64(a)*0xD1B54A32D192ED03 + uint64(k+1)*0x9E3779B97F4A7C15
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
	z = (z ^ (z >> 27)) * 0x94D049BB133111EB
	return (z ^ (z >> 31)) >> 1
}

// assignmentCount is k!/(k-n)! (distinct) or k^n (self-play), and false on overflow.
func assignmentCount(k, n int, selfPlay bool) (uint64, bool) {
	total := uint64(1)
	for i := range n {
		f := uint64(k)
		if !selfPlay {
			f = uint64(k - i)
		}
		hi, lo := bits.Mul64(total, f)
		if hi != 0 {
			return 0, false
		}
		total = lo
	}
	return total, true
}

// sampleRanks returns every rank below total when there are at most limit, otherwise limit
// distinct ranks drawn with Floyd's algorithm from a generator seeded with seed, sorted.
func sampleRanks(total, limit, seed uint64) []uint64 {
	if total <= limit {
		out := make([]uint64, total)
		for i := range out {
			out[i] = uint64(i)
		}
		return out
	}
	rng := rand.New(rand.NewPCG(seed, 0x7061726c6579)) // "parley"
	chosen := make(map[uint64]bool, limit)
	for j := total - limit; j < total; j++ {
		t := rng.Uint64N(j + 1)
		if chosen[t] {
			t = j
		}
		chosen[t] = true
	}
	out := make([]uint64, 0, limit)
	for r := range chosen {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// unrank returns the seat assignment of rank r in lexicographic order: a tuple of n entrant
// indices out of k, distinct unless selfPlay.
func unrank(r uint64, k, n int, selfPlay bool) []int32 {
	out := make([]int32, n)
	if selfPlay {
		for i := n - 1; i >= 0; i-- {
			out[i] = int32(r % uint64(k))
			r /= uint64(k)
		}
		return out
	}
	// Mixed radix: position i chooses among the k-i entrants not yet used.
	radix := make([]uint64, n)
	for i := range n {
		radix[i] = uint64(k - i)
	}
	digit := make([]uint64, n)
	for i := n - 1; i >= 0; i-- {
		digit[i] = r % radix[i]
		r /= radix[i]
	}
	left := make([]int32, k)
	for i := range left {
		left[i] = int32(i)
	}
	for i := range n {
		out[i] = left[digit[i]]
		left = slices.Delete(left, int(digit[i]), int(digit[i])+1)
	}
	return out
}

// digits is the number of decimal digits of n (at least 1).
func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}
