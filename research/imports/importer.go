package imports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/tournament"
)

// Importer reads a study's published runs and stores them as matches, one tournament per
// source folder. Set its fields before Import; it is not for concurrent Imports.
type Importer struct {
	// Format reads the study's logs.
	Format Format
	// Games resolves the Parley games the logs name.
	Games *games.Registry
	// Prefix starts every tournament id ("na" gives na-section_one-logs-trading_section_one).
	Prefix string
	// Workers read and convert files at once (default: GOMAXPROCS).
	Workers int
	// Refused, when set, is told of every file not imported, as it happens (one line each).
	Refused func(Refusal)
}

// Refusal is a file, or an archive entry, the import could not use.
type Refusal struct {
	Path, Reason string
}

func (r Refusal) String() string { return r.Path + ": " + r.Reason }

// folderKey is one tournament: a source folder and a game.
type folderKey struct{ folder, game string }

// planned is what the first pass keeps of a game: enough to schedule its match.
type planned struct {
	key    folderKey
	path   string
	sha    string
	labels []string
	params *matchv1.GameParams
}

// Import reads paths (see Walk), stores every game as a match on b, each source folder's games
// as one tournament, and returns the summary. Files it cannot use are refused one by one (see
// Refusal) and the import goes on; the error is for the store failing, a tournament id taken by
// another tournament, or ctx ending.
//
// It reads everything twice: first to plan the tournaments, whose specs are stored before any
// of their matches (so tournament views find them), then to store the matches; memory holds a
// few files and a line per game, whatever the import's size. A match already stored (the same
// file imported before) is left as it is.
func (im *Importer) Import(ctx context.Context, b *bus.Bus, paths []string) (*Summary, error) {
	sum := newSummary()
	refuse := func(r Refusal) {
		sum.refuse(r)
		if im.Refused != nil {
			im.Refused(r)
		}
	}
	// Pass 1: plan.
	var mu sync.Mutex
	var plan []planned
	refused := map[string]bool{}
	err := im.each(ctx, paths, 0, refuse, func(f File, aux AuxReader) error {
		p, err := im.plan(f, aux)
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			refused[f.SHA256+"\x00"+f.Path] = true
			refuse(Refusal{f.Path, plainErr(err)})
			return nil
		}
		plan = append(plan, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	specs, ids := im.specs(plan)
	for _, spec := range specs {
		if _, err := tournament.StoreSpec(ctx, b.JetStream(), spec); err != nil {
			if errors.Is(err, tournament.ErrSpecMismatch) {
				return nil, fmt.Errorf("imports: tournament %s is already stored with other games: import these under another --prefix: %w", spec.GetTournamentId(), err)
			}
			return nil, err
		}
		sum.Tournaments = append(sum.Tournaments, TournamentInfo{ID: spec.GetTournamentId(), Game: spec.GetGame(), Matches: len(spec.GetMatches())})
	}
	// Pass 2: store.
	settler := bus.NewPublisher(b).SettleEachMatch()
	settler.Linger = time.Minute // hold a match's events until its end: one message per match
	err = im.each(ctx, paths, storers, func(Refusal) {}, func(f File, aux AuxReader) error {
		key := f.SHA256 + "\x00" + f.Path
		id, ok := ids[key]
		if !ok {
			if !refused[key] {
				refuse(Refusal{f.Path, "the file changed during the import"})
			}
			return nil
		}
		m, err := im.convert(f, aux, id.match, id.tournament)
		if err != nil {
			refuse(Refusal{f.Path, plainErr(err)})
			return nil
		}
		stored, err := bus.MatchExists(ctx, b, m.ID)
		if err != nil {
			return err
		}
		if !stored {
			if err := store(ctx, settler, m.Events); err != nil {
				return fmt.Errorf("imports: store %s (%s): %w", m.ID, f.Path, err)
			}
		}
		sum.count(m, stored)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sum.finish()
	return sum, nil
}

func store(ctx context.Context, settler *bus.MatchSettler, events []*eventsv1.MatchEvent) error {
	for _, ev := range events {
		if err := settler.Record(ctx, ev); err != nil {
			return err
		}
	}
	return settler.Settle(ctx, events[0].GetMatchId())
}

// storers is how many matches the second pass stores at once: storing waits for the broker
// more than it computes.
const storers = 16

// each walks paths and calls fn with every game log, Workers at a time, or at least atLeast.
func (im *Importer) each(ctx context.Context, paths []string, atLeast int, refuse func(Refusal), fn func(File, AuxReader) error) error {
	workers := im.Workers
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(workers, atLeast)
	type job struct {
		f   File
		aux AuxReader
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	jobs := make(chan job, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for j := range jobs {
				if ctx.Err() != nil {
					continue
				}
				if err := fn(j.f, j.aux); err != nil {
					cancel(err)
				}
			}
		})
	}
	werr := Walk(ctx, paths, im.Format, func(f File, aux AuxReader) error {
		select {
		case jobs <- job{f, aux}:
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}, func(p, reason string) { refuse(Refusal{p, reason}) })
	close(jobs)
	wg.Wait()
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if werr != nil {
		return werr
	}
	return ctx.Err()
}

// read reads, checks and resolves one game.
func (im *Importer) read(f File, aux AuxReader) (*Game, games.Game, *matchv1.GameParams, error) {
	g, err := im.Format.Read(f, aux)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := g.check(); err != nil {
		return nil, nil, nil, err
	}
	game, err := im.Games.Lookup(g.Game)
	if err != nil {
		return nil, nil, nil, err
	}
	params, err := game.Resolve(g.Params)
	if err != nil {
		return nil, nil, nil, err
	}
	if names, _ := games.Seats(game, params); len(names) != len(g.Seats) {
		return nil, nil, nil, fmt.Errorf("%d players; %s has %d seats", len(g.Seats), g.Game, len(names))
	}
	return g, game, params, nil
}

func (im *Importer) plan(f File, aux AuxReader) (planned, error) {
	g, _, params, err := im.read(f, aux)
	if err != nil {
		return planned{}, err
	}
	labels := make([]string, len(g.Seats))
	for i, s := range g.Seats {
		labels[i] = s.Label()
	}
	return planned{key: folderKey{im.Format.Folder(f.Name), g.Game}, path: f.Path, sha: f.SHA256, labels: labels, params: params}, nil
}

// Convert reads one game's log into the match the import stores, with its tournament and match
// ids as given. It stores nothing.
func (im *Importer) Convert(f File, aux AuxReader, matchID, tournamentID string) (*Match, error) {
	return im.convert(f, aux, matchID, tournamentID)
}

func (im *Importer) convert(f File, aux AuxReader, matchID, tournamentID string) (*Match, error) {
	g, game, params, err := im.read(f, aux)
	if err != nil {
		return nil, err
	}
	tagger, _ := im.Format.(RefusalTagger)
	audit, err := Audit(g, game, params, im.Format.Parse, tagger)
	if err != nil {
		return nil, err
	}
	events, err := Record(matchID, tournamentID, im.Format.Study(), f, g, game, params, audit)
	if err != nil {
		return nil, err
	}
	for _, ev := range events {
		if n := proto.Size(ev); n > maxEventBytes {
			return nil, fmt.Errorf("event %d would be %d bytes; the store takes at most %d", ev.GetSeq(), n, maxEventBytes)
		}
	}
	return &Match{ID: matchID, Tournament: tournamentID, Game: g, Audit: audit, Events: events}, nil
}

// maxEventBytes keeps every event within what the store takes (NATS' default payload limit)
// with room for the headers.
const maxEventBytes = 1<<20 - 4<<10

type ids struct{ match, tournament string }

// specs lays out the tournaments of the planned games: one per folder and game, its matches in
// the order of their paths. ids maps each game (sha and path) to its match and tournament ids.
func (im *Importer) specs(plan []planned) ([]*tournamentv1.TournamentSpec, map[string]ids) {
	slices.SortFunc(plan, func(a, b planned) int { return strings.Compare(a.path, b.path) })
	byKey := map[folderKey][]planned{}
	gamesIn := map[string]map[string]bool{}
	for _, p := range plan {
		byKey[p.key] = append(byKey[p.key], p)
		if gamesIn[p.key.folder] == nil {
			gamesIn[p.key.folder] = map[string]bool{}
		}
		gamesIn[p.key.folder][p.key.game] = true
	}
	keys := slices.SortedFunc(maps.Keys(byKey), func(a, b folderKey) int {
		return strings.Compare(a.folder+"\x00"+a.game, b.folder+"\x00"+b.game)
	})
	out := map[string]ids{}
	var specs []*tournamentv1.TournamentSpec
	for _, k := range keys {
		game := ""
		if len(gamesIn[k.folder]) > 1 {
			game = k.game
		}
		tid := TournamentID(im.Prefix, k.folder, game)
		spec := &tournamentv1.TournamentSpec{TournamentId: tid, Game: k.game, Params: byKey[k][0].params}
		entrant := map[string]int32{}
		assignment := map[string]uint32{}
		perAssignment := map[uint32]uint32{}
		for _, p := range byKey[k] {
			seats := make([]int32, len(p.labels))
			for i, l := range p.labels {
				e, ok := entrant[l]
				if !ok {
					e = int32(len(spec.Entrants))
					entrant[l] = e
					spec.Entrants = append(spec.Entrants, &tournamentv1.Entrant{Label: l, Address: "import:" + l})
				}
				seats[i] = e
				if i > 0 && p.labels[0] == l {
					spec.SelfPlay = true
				}
			}
			ak := strings.Join(p.labels, "\x00")
			a, ok := assignment[ak]
			if !ok {
				a = uint32(len(assignment))
				assignment[ak] = a
			}
			mid := MatchID(tid, p.path, p.sha)
			spec.Matches = append(spec.Matches, &tournamentv1.ScheduledMatch{MatchId: mid, Entrants: seats, Assignment: a, GameIndex: perAssignment[a]})
			perAssignment[a]++
			spec.GamesPerAssignment = max(spec.GamesPerAssignment, perAssignment[a])
			out[p.sha+"\x00"+p.path] = ids{match: mid, tournament: tid}
		}
		spec.AssignmentsPossible = uint64(len(assignment))
		specs = append(specs, spec)
	}
	return specs, out
}

// TournamentID names the tournament of a source folder: prefix, then the folder's last three
// steps (enough to tell section_one/.logs/trading_section_one from
// section_one/.logs_error/trading_section_one, and the same however much of the path was
// given), then the game when the folder holds several, in id characters; shortened with a hash
// of the whole when too long.
func TournamentID(prefix, folder, game string) string {
	steps := strings.Split(strings.Trim(path.Clean(folder), "/"), "/")
	steps = slices.DeleteFunc(steps, func(s string) bool { return s == "" || s == "." })
	if len(steps) > 3 {
		steps = steps[len(steps)-3:]
	}
	parts := []string{}
	if prefix != "" {
		parts = append(parts, prefix)
	}
	parts = append(parts, steps...)
	if game != "" {
		parts = append(parts, game)
	}
	id := idText(strings.Join(parts, "-"))
	if id == "" {
		id = "import"
	}
	const room = bus.MaxMatchIDLen - 1 - 16 // a match id adds "-" and 16 hex digits
	if len(id) > room {
		sum := sha256.Sum256([]byte(id))
		id = id[:room-9] + "-" + hex.EncodeToString(sum[:4])
	}
	return id
}

// MatchID names the match of a file in a tournament: the tournament's id and the first 16 hex
// digits of the sha256 of the file's name (its last step) and content sha256. Two runs may log
// the same game to the letter (a model decoding greedily plays the same again), and a study
// counts both: the name tells their files apart, and stays the same however the path is given.
func MatchID(tournamentID, name, sha string) string {
	sum := sha256.Sum256([]byte(path.Base(name) + "\x00" + sha))
	return tournamentID + "-" + hex.EncodeToString(sum[:8])
}

// idText keeps letters, digits, '_' and '-', folding runs of anything else into one '-'.
func idText(s string) string {
	var b strings.Builder
	dash := false
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
			b.WriteRune(c)
			dash = false
		default:
			if !dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}
