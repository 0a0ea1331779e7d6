package tournament

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	analyticsv1 "github.com/parley-arena/parley/gen/go/parley/analytics/v1"
	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/policy"
	"github.com/parley-arena/parley/referee/queue"
	"github.com/parley-arena/parley/referee/record"
)

const (
	// agentCheckTimeout bounds checking that the entrants' addresses open.
	agentCheckTimeout = 10 * time.Second
)

// Standings is where the standings of a tournament come from: the analytics service (its
// gRPC client, or its Server in the same process).
type Standings interface {
	GetStandings(ctx context.Context, req *analyticsv1.GetStandingsRequest, opts ...grpc.CallOption) (*analyticsv1.GetStandingsResponse, error)
}

// ServiceConfig is what a Service needs.
type ServiceConfig struct {
	// Bus holds the schedules and the work queue. Required.
	Bus *bus.Bus
	// Matches checks entrants and resolves parameters as every match is prepared. Required.
	Matches *launch.Preparer
	// Standings answers how a tournament stands (nil: GetTournament gives the schedule only).
	Standings Standings
	// Concurrency is the default of StartTournamentRequest.concurrency (0: DefaultConcurrency).
	Concurrency int
	// Logger (nil: discard).
	Logger *slog.Logger
}

// Service implements parley.tournament.v1.TournamentService: it plans tournaments, stores
// their schedules and requests their matches from the referees' work queue in the
// background, resuming at start the tournaments it was asked for before. Make one with
// NewService; Close it.
type Service struct {
	tournamentv1.UnimplementedTournamentServiceServer

	cfg ServiceConfig
	log *slog.Logger

	ctx    context.Context // parent of the tournaments' requesting; cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	running map[string]context.CancelFunc           // stops the requesting of a tournament this service holds
	specs   map[string]*tournamentv1.TournamentSpec // stored specs never change: read once
}

// maxCachedSpecs bounds the schedules kept in memory for GetTournament.
const maxCachedSpecs = 64

var _ tournamentv1.TournamentServiceServer = (*Service)(nil)

// NewService checks cfg, resumes every tournament stored with matches left to request, and
// returns the service. ctx bounds the start-up only.
func NewService(ctx context.Context, cfg ServiceConfig) (*Service, error) {
	switch {
	case cfg.Bus == nil:
		return nil, errors.New("tournament: no NATS connection")
	case cfg.Matches == nil:
		return nil, errors.New("tournament: no match preparer")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	bg, cancel := context.WithCancel(context.Background())
	s := &Service{cfg: cfg, log: cfg.Logger, ctx: bg, cancel: cancel, running: map[string]context.CancelFunc{}, specs: map[string]*tournamentv1.TournamentSpec{}}
	if err := s.resume(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("tournament: resume: %w", err)
	}
	return s, nil
}

// Close stops requesting matches (a new Service resumes where this one stopped) and waits.
func (s *Service) Close() {
	s.cancel()
	s.wg.Wait()
}

func badRequest(format string, args ...any) error {
	return status.Errorf(codes.InvalidArgument, format, args...)
}

// StartTournament prepares the tournament (Prepare), stores its schedule and starts requesting
// its matches.
func (s *Service) StartTournament(ctx context.Context, m *tournamentv1.StartTournamentRequest) (*tournamentv1.StartTournamentResponse, error) {
	caller := policy.FromIncoming(ctx)
	spec, err := Prepare(ctx, s.cfg.Matches, m, caller)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	undo, err := HoldBudget(s.cfg.Matches, caller, spec, int(m.GetConcurrency()))
	if err != nil {
		return nil, status.Error(codes.ResourceExhausted, err.Error())
	}
	resp, err := s.start(ctx, m, spec)
	if err != nil {
		undo()
	}
	return resp, err
}

// start stores a prepared tournament's schedule and request, and starts requesting its
// matches.
func (s *Service) start(ctx context.Context, m *tournamentv1.StartTournamentRequest, spec *tournamentv1.TournamentSpec) (*tournamentv1.StartTournamentResponse, error) {
	id := spec.GetTournamentId()
	if err := s.cfg.Bus.Ready(); err != nil {
		return nil, status.Errorf(codes.Unavailable, "%v; try again shortly", err)
	}
	js := s.cfg.Bus.JetStream()
	fresh, err := StoreSpec(ctx, js, spec)
	switch {
	case errors.Is(err, ErrSpecMismatch):
		return nil, status.Error(codes.AlreadyExists, err.Error()) // names each setting that differs
	case err != nil:
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	stored := proto.CloneOf(m)
	stored.TournamentId, stored.Seed, stored.GamesPerAssignment = id, spec.GetSeed(), spec.GetGamesPerAssignment()
	data, err := proto.Marshal(stored)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	if _, err := js.Publish(ctx, natsname.TournamentRequestSubject(id), data, jetstream.WithMsgID("request/"+id),
		jetstream.WithExpectStream(natsname.TournamentStream)); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	s.run(spec, int(m.GetConcurrency()), fresh)
	s.log.Info("tournament started", "tournament_id", id, "game", spec.GetGame(), "matches", len(spec.GetMatches()))
	return &tournamentv1.StartTournamentResponse{TournamentId: id, Matches: uint32(len(spec.GetMatches()))}, nil
}

// Entrants fills in each entrant's label, when not given, from its registered bot's
// team/name@version or its address without "builtin:", and checks that labels are unique.
func Entrants(in []*tournamentv1.Entrant, registered []string) ([]*tournamentv1.Entrant, error) {
	var out []*tournamentv1.Entrant
	seen := map[string]bool{}
	for i, e := range in {
		label := e.GetLabel()
		if label == "" && i < len(registered) {
			label = registered[i]
		}
		if label == "" {
			label = strings.TrimPrefix(e.GetAddress(), "builtin:")
		}
		if seen[label] {
			return nil, invalid(fmt.Errorf("two agents are labelled %q; give them different labels", label))
		}
		seen[label] = true
		out = append(out, &tournamentv1.Entrant{Label: label, Address: e.GetAddress()})
	}
	return out, nil
}

// run requests spec's matches in the background until they have all ended or the service
// closes; it does nothing when this service already does so.
func (s *Service) run(spec *tournamentv1.TournamentSpec, concurrency int, fresh bool) {
	if concurrency <= 0 {
		concurrency = s.cfg.Concurrency
	}
	if pol := s.cfg.Matches.Policy; pol != nil && pol.MaxConcurrency > 0 {
		concurrency = min(concurrency, pol.MaxConcurrency)
	}
	id := spec.GetTournamentId()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running[id] != nil {
		return
	}
	hctx, stop := context.WithCancel(s.ctx)
	s.running[id] = stop
	s.wg.Go(func() {
		defer stop()
		defer func() {
			s.mu.Lock()
			delete(s.running, id)
			s.mu.Unlock()
			s.cfg.Matches.Budgets.ReleaseTournament(id) // what its ended matches did not give back
		}()
		err := Hold(hctx, s.cfg.Bus, spec, HoldConfig{Concurrency: concurrency, Fresh: fresh, Matches: s.cfg.Matches})
		switch {
		case err == nil:
			s.log.Info("tournament complete", "tournament_id", id)
		case hctx.Err() != nil && s.ctx.Err() == nil:
			s.log.Info("tournament cancelled", "tournament_id", id)
		case s.ctx.Err() != nil:
			s.log.Info("tournament paused: the service stops; it resumes with the next one", "tournament_id", id)
		default:
			s.log.Error("tournament stopped", "tournament_id", id, "err", err)
		}
	})
}

// resume resumes every tournament started through a Service (its StartTournamentRequest is
// stored); Run finds the ended matches and requests only the others.
func (s *Service) resume(ctx context.Context) error {
	js := s.cfg.Bus.JetStream()
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
		if _, cancelled, err := queue.Cancelled(ctx, js, "", r.GetTournamentId()); err != nil || cancelled {
			if err != nil {
				s.log.Warn("tournament not resumed", "tournament_id", r.GetTournamentId(), "err", err)
			}
			continue
		}
		spec, err := LoadSpec(ctx, js, r.GetTournamentId())
		if err != nil {
			s.log.Warn("tournament not resumed", "tournament_id", r.GetTournamentId(), "err", err)
			continue
		}
		s.run(spec, int(r.GetConcurrency()), false)
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

// spec returns a tournament's stored schedule, read once.
func (s *Service) spec(ctx context.Context, id string) (*tournamentv1.TournamentSpec, error) {
	s.mu.Lock()
	spec, ok := s.specs[id]
	s.mu.Unlock()
	if ok {
		return spec, nil
	}
	spec, err := LoadSpec(ctx, s.cfg.Bus.JetStream(), id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.specs) >= maxCachedSpecs {
		for k := range s.specs { // any one: they are all cheap to read again
			delete(s.specs, k)
			break
		}
	}
	s.specs[id] = spec
	s.mu.Unlock()
	return spec, nil
}

// GetTournament returns a tournament's schedule, as the public may see it, and its standings.
func (s *Service) GetTournament(ctx context.Context, req *tournamentv1.GetTournamentRequest) (*tournamentv1.GetTournamentResponse, error) {
	spec, err := s.spec(ctx, req.GetTournamentId())
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrInvalidID):
		return nil, status.Errorf(codes.NotFound, "no tournament %q", req.GetTournamentId())
	case err != nil:
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	st := &analyticsv1.Standings{TournamentId: spec.GetTournamentId(), Game: spec.GetGame()}
	if s.cfg.Standings != nil {
		resp, err := s.cfg.Standings.GetStandings(ctx, &analyticsv1.GetStandingsRequest{TournamentId: spec.GetTournamentId()})
		switch {
		case status.Code(err) == codes.NotFound: // no match has ended yet
		case err != nil:
			return nil, status.Errorf(codes.Unavailable, "standings of %s: %v", spec.GetTournamentId(), status.Convert(err).Message())
		default:
			st = resp.GetStandings()
		}
	}
	st.Matches = uint32(len(spec.GetMatches()))
	st.Complete = st.GetEnded() >= st.GetMatches()
	if req.GetStandingsOnly() {
		return &tournamentv1.GetTournamentResponse{Standings: st}, nil
	}
	return &tournamentv1.GetTournamentResponse{Spec: PublicSpec(spec), Standings: st}, nil
}

// CancelTournament cancels a tournament for its owner or the organiser: the cancellation is
// recorded (workers end its matches; it is never resumed) and this service stops requesting
// its matches, giving back what it held of its owner's budgets.
func (s *Service) CancelTournament(ctx context.Context, req *tournamentv1.CancelTournamentRequest) (*tournamentv1.CancelTournamentResponse, error) {
	caller := policy.FromIncoming(ctx)
	spec, err := s.spec(ctx, req.GetTournamentId())
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrInvalidID):
		return nil, status.Errorf(codes.NotFound, "no tournament %q", req.GetTournamentId())
	case err != nil:
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	by, ok := caller.Cancels(spec.GetOwner())
	if !ok {
		return nil, status.Errorf(codes.PermissionDenied, "only who started tournament %s, or the organiser, may cancel it", spec.GetTournamentId())
	}
	id := spec.GetTournamentId()
	// Stop requesting first, so that the endings of the cancelled matches request no others.
	s.mu.Lock()
	if stop := s.running[id]; stop != nil {
		stop()
	}
	s.mu.Unlock()
	js := s.cfg.Bus.JetStream()
	// Counted before the cancelled matches end.
	left := 0
	for _, m := range spec.GetMatches() {
		if _, end, err := queue.Latest(ctx, js, m.GetMatchId(), id); err != nil || end == nil {
			left++
		}
	}
	if err := queue.Cancel(ctx, js, &queuev1.Cancelled{TournamentId: id, By: by}); err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	s.log.Info("tournament cancelled", "tournament_id", id, "by", by, "matches_left", left)
	return &tournamentv1.CancelTournamentResponse{MatchesLeft: uint32(left)}, nil
}

// PublicSpec is a tournament's schedule without what would let a player learn a seat's private
// draws before they are played: the seeds (every match's draws follow from its seed) and the
// parameters private to a seat; nor its owner (who may be a network address).
func PublicSpec(spec *tournamentv1.TournamentSpec) *tournamentv1.TournamentSpec {
	out := proto.CloneOf(spec)
	out.Seed, out.Owner = 0, ""
	out.Params = record.PublicParams(out.GetParams())
	for _, m := range out.GetMatches() {
		m.Seed = 0
	}
	return out
}

// ListTournaments lists the stored tournaments, newest first.
func (s *Service) ListTournaments(ctx context.Context, req *tournamentv1.ListTournamentsRequest) (*tournamentv1.ListTournamentsResponse, error) {
	size := int(req.GetPageSize())
	switch {
	case size < 0:
		return nil, badRequest("page_size must be 0 or more, got %d", size)
	case size == 0:
		size = 50
	case size > 500:
		size = 500
	}
	var all []*tournamentv1.TournamentSummary
	err := EachSpec(ctx, s.cfg.Bus.JetStream(), func(spec *tournamentv1.TournamentSpec) {
		sum := &tournamentv1.TournamentSummary{
			TournamentId: spec.GetTournamentId(), Game: spec.GetGame(), Matches: uint32(len(spec.GetMatches())), Created: spec.GetCreated(),
		}
		if spec.GetScheduleParts() > 0 { // the stored message alone: its schedule is stored in parts
			sum.Matches = spec.GetScheduledMatches()
		}
		for _, e := range spec.GetEntrants() {
			sum.Labels = append(sum.Labels, e.GetLabel())
		}
		all = append(all, sum)
	})
	if err != nil {
		return nil, status.Error(codes.Unavailable, err.Error())
	}
	slices.SortStableFunc(all, func(a, b *tournamentv1.TournamentSummary) int {
		if c := b.GetCreated().AsTime().Compare(a.GetCreated().AsTime()); c != 0 {
			return c
		}
		return strings.Compare(a.GetTournamentId(), b.GetTournamentId())
	})
	from := 0
	if tok := req.GetPageToken(); tok != "" {
		i := slices.IndexFunc(all, func(t *tournamentv1.TournamentSummary) bool { return t.GetTournamentId() == tok })
		if i < 0 {
			return nil, badRequest("page_token %q is not a tournament of this listing", tok)
		}
		from = i + 1
	}
	to := min(from+size, len(all))
	resp := &tournamentv1.ListTournamentsResponse{Tournaments: all[from:to]}
	if to < len(all) {
		resp.NextPageToken = all[to-1].GetTournamentId()
	}
	return resp, nil
}
