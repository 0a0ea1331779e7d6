package gateway

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"connectrpc.com/connect"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/gen/go/parley/tournament/v1/tournamentv1connect"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/record"
	"github.com/parley-arena/parley/services/tournament"
)

// Limits of StartTournament.
const (
	defaultGamesPerAssignment = 10
	maxGamesPerAssignment     = 1000
	maxScheduled              = 20_000
	maxConcurrency            = 64
	// agentCheckTimeout bounds checking that the entrants' addresses open.
	agentCheckTimeout = 10 * time.Second
)

// tournamentService implements parley.tournament.v1.TournamentService.
type tournamentService struct {
	tournamentv1connect.UnimplementedTournamentServiceHandler
	g *Gateway
}

var _ tournamentv1connect.TournamentServiceHandler = (*tournamentService)(nil)

func invalid(format string, args ...any) error {
	return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf(format, args...))
}

// StartTournament plans the tournament, stores its schedule and starts requesting its matches.
func (s *tournamentService) StartTournament(ctx context.Context, req *connect.Request[tournamentv1.StartTournamentRequest]) (*connect.Response[tournamentv1.StartTournamentResponse], error) {
	g, m := s.g, req.Msg
	game, err := g.cfg.Games.Lookup(m.GetGame())
	if err != nil {
		return nil, invalid("%v", err)
	}
	params, err := game.Resolve(m.GetParams())
	if err != nil {
		return nil, invalid("%v", err)
	}
	seats, _ := games.Seats(game, params)
	for _, e := range m.GetEntrants() {
		if err := g.checkAgents(e.GetAddress()); err != nil {
			return nil, err
		}
	}
	entrants, err := checkEntrants(g.withBots(ctx), m.GetEntrants())
	if err != nil {
		return nil, err
	}
	n := m.GetGamesPerAssignment()
	switch {
	case n == 0:
		n = defaultGamesPerAssignment
	case n > maxGamesPerAssignment:
		return nil, invalid("games_per_assignment must be at most %d, got %d", maxGamesPerAssignment, n)
	}
	seed := m.GetSeed()
	if seed == 0 {
		var b [8]byte
		_, _ = rand.Read(b[:])
		seed = binary.LittleEndian.Uint64(b[:])>>1 | 1
	}
	id := m.GetTournamentId()
	if id == "" {
		var b [3]byte
		_, _ = rand.Read(b[:])
		id = fmt.Sprintf("%s-%d-%s", game.Info().GetName(), seed, hex.EncodeToString(b[:]))
	}
	spec, err := tournament.Plan(tournament.PlanConfig{
		ID: id, Game: game.Info().GetName(), Params: params, Seats: len(seats), Entrants: entrants,
		GamesPerAssignment: int(n), Seed: seed, SelfPlay: m.GetSelfPlay(), MaxAssignments: int(m.GetMaxAssignments()),
		Limits: m.GetLimits(), RevealPrivate: m.GetRevealPrivate(),
	})
	if err != nil {
		return nil, invalid("%v", err)
	}
	if len(spec.GetMatches()) > maxScheduled {
		return nil, invalid("the tournament would schedule %d matches; at most %d (fewer games per assignment, or max_assignments)", len(spec.GetMatches()), maxScheduled)
	}
	js := g.cfg.Bus.JetStream()
	err = tournament.StoreSpec(ctx, js, spec)
	switch {
	case errors.Is(err, tournament.ErrSpecMismatch):
		return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("tournament id %q is taken by a different tournament", id))
	case err != nil:
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	stored := proto.CloneOf(m)
	stored.TournamentId, stored.Seed, stored.GamesPerAssignment = id, seed, n
	data, err := proto.Marshal(stored)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	if _, err := js.Publish(ctx, natsname.TournamentRequestSubject(id), data, jetstream.WithMsgID("request/"+id),
		jetstream.WithExpectStream(natsname.TournamentStream)); err != nil {
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	g.runTournament(spec, int(m.GetConcurrency()))
	g.log.Info("tournament started", "tournament_id", id, "game", spec.GetGame(), "matches", len(spec.GetMatches()))
	return connect.NewResponse(&tournamentv1.StartTournamentResponse{TournamentId: id, Matches: uint32(len(spec.GetMatches()))}), nil
}

// checkEntrants fills in default labels, checks that labels are unique and that every address
// opens (a built-in agent's settings parse), without keeping it open.
func checkEntrants(ctx context.Context, in []*tournamentv1.Entrant) ([]*tournamentv1.Entrant, error) {
	if len(in) == 0 {
		return nil, invalid("give the agents taking part (entrants)")
	}
	ctx, cancel := context.WithTimeout(ctx, agentCheckTimeout)
	defer cancel()
	var out []*tournamentv1.Entrant
	seen := map[string]bool{}
	for _, e := range in {
		registered, err := probeAgent(ctx, e.GetAddress())
		if err != nil {
			return nil, err
		}
		label := e.GetLabel()
		if label == "" {
			label = registered // a registered bot's team/name@version
		}
		if label == "" {
			label = strings.TrimPrefix(e.GetAddress(), "builtin:")
		}
		if seen[label] {
			return nil, invalid("two agents are labelled %q; give them different labels", label)
		}
		seen[label] = true
		out = append(out, &tournamentv1.Entrant{Label: label, Address: e.GetAddress()})
	}
	return out, nil
}

// runTournament requests spec's matches in the background until they have all ended or the
// gateway closes; it does nothing when this gateway already does so.
func (g *Gateway) runTournament(spec *tournamentv1.TournamentSpec, concurrency int) {
	if concurrency <= 0 {
		concurrency = g.cfg.TournamentConcurrency
	}
	concurrency = min(concurrency, maxConcurrency)
	id := spec.GetTournamentId()
	g.runMu.Lock()
	defer g.runMu.Unlock()
	if g.running[id] {
		return
	}
	g.running[id] = true
	g.wg.Go(func() {
		defer func() {
			g.runMu.Lock()
			delete(g.running, id)
			g.runMu.Unlock()
		}()
		err := tournament.Run(g.ctx, g.cfg.Bus, spec, tournament.RunConfig{Concurrency: concurrency})
		switch {
		case err == nil:
			g.log.Info("tournament complete", "tournament_id", id)
		case g.ctx.Err() != nil:
			g.log.Info("tournament paused: the gateway stops; it resumes with the next one", "tournament_id", id)
		default:
			g.log.Error("tournament stopped", "tournament_id", id, "err", err)
		}
	})
}

// resumeTournaments resumes every tournament a gateway started (its StartTournamentRequest is
// stored); Run finds the ended matches and requests only the others.
func (g *Gateway) resumeTournaments(ctx context.Context) error {
	js := g.cfg.Bus.JetStream()
	var reqs []*tournamentv1.StartTournamentRequest
	err := readAll(ctx, js, natsname.TournamentStream, natsname.AllTournamentRequests, func(data []byte) {
		r := new(tournamentv1.StartTournamentRequest)
		if proto.Unmarshal(data, r) == nil {
			reqs = append(reqs, r)
		}
	})
	if err != nil {
		return err
	}
	for _, r := range reqs {
		spec, err := tournament.LoadSpec(ctx, js, r.GetTournamentId())
		if err != nil {
			g.log.Warn("tournament not resumed", "tournament_id", r.GetTournamentId(), "err", err)
			continue
		}
		g.runTournament(spec, int(r.GetConcurrency()))
	}
	return nil
}

// readAll calls f with the data of the last message of every subject filter matches in
// stream.
func readAll(ctx context.Context, js jetstream.JetStream, stream, filter string, f func([]byte)) error {
	cons, err := js.OrderedConsumer(ctx, stream, jetstream.OrderedConsumerConfig{
		FilterSubjects:    []string{filter},
		DeliverPolicy:     jetstream.DeliverLastPerSubjectPolicy,
		InactiveThreshold: 30 * time.Second,
	})
	if err != nil {
		return err
	}
	info := cons.CachedInfo()
	if info == nil || info.NumPending == 0 {
		return nil
	}
	it, err := cons.Messages()
	if err != nil {
		return err
	}
	defer it.Stop()
	for {
		msg, err := it.Next(jetstream.NextContext(ctx))
		if err != nil {
			return err
		}
		f(msg.Data())
		md, err := msg.Metadata()
		if err != nil || md.NumPending == 0 {
			return err
		}
	}
}

// GetTournament returns a tournament's schedule and standings.
func (s *tournamentService) GetTournament(ctx context.Context, req *connect.Request[tournamentv1.GetTournamentRequest]) (*connect.Response[tournamentv1.GetTournamentResponse], error) {
	t, err := s.g.tracker.get(ctx, req.Msg.GetTournamentId())
	if err != nil {
		return nil, err
	}
	st, err := t.standings(ctx)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&tournamentv1.GetTournamentResponse{Spec: publicSpec(t.spec), Standings: st}), nil
}

// publicSpec is a tournament's schedule without what would let a player learn a seat's private
// draws before they are played: the seeds (every match's draws follow from its seed) and the
// parameters private to a seat.
func publicSpec(spec *tournamentv1.TournamentSpec) *tournamentv1.TournamentSpec {
	out := proto.CloneOf(spec)
	out.Seed = 0
	out.Params = record.PublicParams(out.GetParams())
	for _, m := range out.GetMatches() {
		m.Seed = 0
	}
	return out
}

// ListTournaments lists the stored tournaments, newest first.
func (s *tournamentService) ListTournaments(ctx context.Context, req *connect.Request[tournamentv1.ListTournamentsRequest]) (*connect.Response[tournamentv1.ListTournamentsResponse], error) {
	size := int(req.Msg.GetPageSize())
	switch {
	case size < 0:
		return nil, invalid("page_size must be 0 or more, got %d", size)
	case size == 0:
		size = 50
	case size > 500:
		size = 500
	}
	var all []*tournamentv1.TournamentSummary
	err := readAll(ctx, s.g.cfg.Bus.JetStream(), natsname.TournamentStream, natsname.AllTournamentSpecs, func(data []byte) {
		spec := new(tournamentv1.TournamentSpec)
		if proto.Unmarshal(data, spec) != nil {
			return
		}
		sum := &tournamentv1.TournamentSummary{
			TournamentId: spec.GetTournamentId(), Game: spec.GetGame(), Matches: uint32(len(spec.GetMatches())), Created: spec.GetCreated(),
		}
		for _, e := range spec.GetEntrants() {
			sum.Labels = append(sum.Labels, e.GetLabel())
		}
		all = append(all, sum)
	})
	if err != nil {
		return nil, connect.NewError(connect.CodeUnavailable, err)
	}
	slices.SortStableFunc(all, func(a, b *tournamentv1.TournamentSummary) int {
		if c := b.GetCreated().AsTime().Compare(a.GetCreated().AsTime()); c != 0 {
			return c
		}
		return strings.Compare(a.GetTournamentId(), b.GetTournamentId())
	})
	from := 0
	if tok := req.Msg.GetPageToken(); tok != "" {
		i := slices.IndexFunc(all, func(t *tournamentv1.TournamentSummary) bool { return t.GetTournamentId() == tok })
		if i < 0 {
			return nil, invalid("page_token %q is not a tournament of this listing", tok)
		}
		from = i + 1
	}
	to := min(from+size, len(all))
	resp := &tournamentv1.ListTournamentsResponse{Tournaments: all[from:to]}
	if to < len(all) {
		resp.NextPageToken = all[to-1].GetTournamentId()
	}
	return connect.NewResponse(resp), nil
}
