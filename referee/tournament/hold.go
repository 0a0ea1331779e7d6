package tournament

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/timestamppb"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	tournamentv1 "github.com/parley-arena/parley/gen/go/parley/tournament/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/match"
	"github.com/parley-arena/parley/referee/queue"
)

// Errors returned, wrapped, by this package.
var (
	// ErrInvalidID reports a tournament id that cannot be a subject token.
	ErrInvalidID = errors.New("tournament: invalid id")
	// ErrNotFound reports a tournament with no stored spec.
	ErrNotFound = errors.New("tournament: not found")
	// ErrSpecMismatch reports a tournament id already used by a different tournament.
	ErrSpecMismatch = errors.New("tournament: id already used by a different tournament")
	// ErrEndpointFailing reports a tournament stopped because its last matches were voided, one
	// after another, by model providers that kept failing (HoldConfig.MaxEndpointFailures).
	ErrEndpointFailing = errors.New("tournament: the model endpoint keeps failing")
)

// retryDelay is how long Run waits after a transient failure of the broker.
const retryDelay = 2 * time.Second

// DefaultConcurrency is how many matches a tournament keeps requested at once by default.
const DefaultConcurrency = 4

// DefaultMaxEndpointFailures is what the commands that play tournaments take for
// EndpointStreak.Max: more than the matches in flight at DefaultConcurrency, so one
// moment's outage that voids them all does not stop a run, and few enough that a dead
// endpoint costs a couple of move timeouts per match in flight.
const DefaultMaxEndpointFailures = 5

// HoldConfig tunes Hold.
type HoldConfig struct {
	// Concurrency is the most matches requested and not yet ended at any time (default
	// DefaultConcurrency).
	Concurrency int
	// Matches prepares each match as it is requested (launch.Preparer.Setup: its limits, the
	// policy's bound on its time). Required.
	Matches *launch.Preparer
	// Params, when set, gives a match's parameters from its seed as asked for, and Matches
	// prepares them for that match (files they name read, a corpus drawn from with the seed):
	// for games whose parameters differ per match. Nil: the spec's, resolved once when the
	// tournament was prepared, for every match.
	Params func(seed uint64) (*matchv1.GameParams, error)
	// Progress, when set, is called after each scheduled match has ended, in the caller's
	// goroutine order (never concurrently).
	Progress func(Progress)
	// Now is the clock for the spec's creation time (default time.Now).
	Now func() time.Time
	// Fresh says the caller has just stored the spec for the first time (StoreSpec said so),
	// so no match of it can have been requested yet. Run also knows it when it stores the
	// spec itself. A fresh tournament's matches are requested without looking each one up.
	Fresh bool
	// Endpoints, when set, stops Hold with ErrEndpointFailing once its Max matches in a row
	// ended void because a model provider kept failing (match.VoidedByProvider): past that,
	// every match left would burn its time for nothing. One streak may run through several
	// Holds (the set-ups of one reproduction). The matches requested meanwhile are left to the
	// workers (a resumed Hold finds them).
	Endpoints *EndpointStreak
	// ReplayProviderVoids: a resumed tournament requests again (queue.Replay) every match whose
	// run that counts was voided by a failing model provider, once per Hold, so its cell fills
	// in once the provider answers. A service resuming at start-up leaves it unset: only the
	// person who resumes a run decides to pay for its matches again.
	ReplayProviderVoids bool
	// AgentIdentity, when set, is what of an entrant's address makes it the same agent across
	// resumes (a language model's endpoint is not part of it): the stored spec and the one asked
	// for are the same tournament when their entrants' identities are equal, and the matches
	// requested from then on go to the addresses asked for. Nil: the whole address.
	AgentIdentity func(address string) string
}

// Progress reports one scheduled match that ended.
type Progress struct {
	// Done of Total scheduled matches have ended.
	Done, Total int
	// Match is the scheduled match.
	Match *tournamentv1.ScheduledMatch
	// RecordedAs is the id of the match that counts (a rerun's id after interruptions).
	RecordedAs string
	// Outcome is its outcome.
	Outcome *matchv1.Outcome
}

// Run stores spec (or finds it stored, when resuming a tournament with the same id), requests
// its matches, at most cfg.Concurrency at a time, and waits until each has ended: it consumes
// parley.match.*.match_ended from the match stream and, on a void ending, follows the match's
// MatchRetried record to its rerun. Matches already ended (a resumed tournament) are not
// requested again. Referee workers must take the requests: Run does not run matches.
//
// It returns ErrSpecMismatch when the id is taken by a different tournament, and ctx's error
// when ctx ends first.
func Hold(ctx context.Context, b *bus.Bus, spec *tournamentv1.TournamentSpec, cfg HoldConfig) error {
	js := b.JetStream()
	if cfg.Matches == nil {
		return errors.New("tournament: no match preparer")
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if err := queue.EnsureStreams(ctx, js); err != nil {
		return err
	}
	fresh, err := storeSpec(ctx, js, spec, cfg.Now, cfg.AgentIdentity)
	if err != nil {
		return err
	}
	fresh = fresh || cfg.Fresh
	// Follow endings from now on, before any request is made, so none is missed. The stream
	// of endings is the fast path; every pollEvery without one, the matches waited for are
	// looked up one by one, which also covers a follower that stalls while the cluster fails
	// over (its server gone, its consumer with it).
	follow, err := followEndings(ctx, js)
	if err != nil {
		return err
	}
	defer func() {
		if follow != nil {
			follow.Stop()
		}
	}()

	total := len(spec.GetMatches())
	waiting := map[string]*tournamentv1.ScheduledMatch{} // current match id -> scheduled match
	done := 0
	finish := func(m *tournamentv1.ScheduledMatch, id string, out *matchv1.Outcome) {
		done++
		if cfg.Progress != nil {
			cfg.Progress(Progress{Done: done, Total: total, Match: m, RecordedAs: id, Outcome: out})
		}
	}
	// settled finishes a match as it ends (not one a resume finds ended), counting the streak.
	settled := func(m *tournamentv1.ScheduledMatch, id string, out *matchv1.Outcome) error {
		if cfg.Endpoints != nil && cfg.Endpoints.Max > 0 {
			if err := cfg.Endpoints.count(ctx, js, id, out); err != nil {
				return err
			}
		}
		finish(m, id, out)
		return nil
	}
	// ended settles the MatchEnded of a match waited for (and ignores any other).
	ended := func(id string, end *eventsv1.MatchEnded) error {
		m, ok := waiting[id]
		if !ok {
			return nil
		}
		if end.GetOutcome().GetCause() != matchv1.EndCause_END_CAUSE_VOID {
			// The common case in one lookup: a match of this tournament that ended for good
			// (a match interrupted, or a record of another, goes the long way below).
			var owner string
			if err := retrying(ctx, func() (err error) {
				owner, _, err = queue.Owner(ctx, js, id)
				return err
			}); err != nil {
				return err
			}
			if owner == spec.GetTournamentId() {
				delete(waiting, id)
				return settled(m, id, end.GetOutcome())
			}
		}
		// Whose ending is it? A record of another under the scheduled id is passed over: the
		// worker runs the match under the next id of its chain.
		var latest string
		var last *eventsv1.MatchEnded
		if err := retrying(ctx, func() (err error) {
			latest, last, err = queue.Latest(ctx, js, id, spec.GetTournamentId())
			return err
		}); err != nil {
			return err
		}
		delete(waiting, id)
		if last == nil || latest != id {
			waiting[latest] = m
			return nil
		}
		out := end.GetOutcome()
		if out.GetCause() == matchv1.EndCause_END_CAUSE_VOID {
			// An interrupted match names its rerun before its void ending is stored.
			var retry *queuev1.MatchRetried
			var ok bool
			if err := retrying(ctx, func() (err error) {
				retry, ok, err = queue.LookupRetry(ctx, js, id)
				return err
			}); err != nil {
				return err
			}
			if ok {
				waiting[retry.GetRetryMatchId()] = m
				return nil
			}
		}
		return settled(m, id, out)
	}
	next := 0
	for done < total {
		if f := cfg.Endpoints; f != nil && f.Max > 0 && f.inRow >= f.Max {
			return fmt.Errorf("%w: %d matches in a row were voided by it (the last, %s: %s); %d of %d matches of %s ended",
				ErrEndpointFailing, f.inRow, f.lastID, f.last, done, total, spec.GetTournamentId())
		}
		// Request matches until Concurrency are outstanding.
		for next < total && len(waiting) < cfg.Concurrency {
			m := spec.GetMatches()[next]
			next++
			id := m.GetMatchId()
			if !fresh {
				// A resumed tournament: the match may have ended, or be running.
				var end *eventsv1.MatchEnded
				if err := retrying(ctx, func() (err error) {
					id, end, err = queue.Latest(ctx, js, m.GetMatchId(), spec.GetTournamentId())
					return err
				}); err != nil {
					return err
				}
				if end != nil {
					if cfg.ReplayProviderVoids && end.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_VOID {
						var rerun string
						if err := retrying(ctx, func() (err error) {
							rerun, err = replayProviderVoid(ctx, js, spec, m, id, cfg)
							return err
						}); err != nil {
							return err
						}
						if rerun != "" {
							waiting[rerun] = m
							continue
						}
					}
					finish(m, id, end.GetOutcome())
					continue
				}
			}
			waiting[id] = m
			if err := retrying(ctx, func() error { return request(ctx, js, spec, m, cfg, !fresh) }); err != nil {
				return err
			}
		}
		if done == total {
			break
		}

		if follow == nil {
			follow, _ = followEndings(ctx, js) // on failure, poll and try again next time
		}
		var msg jetstream.Msg
		err := context.DeadlineExceeded
		nctx, cancel := context.WithTimeout(ctx, pollEvery)
		if follow != nil {
			msg, err = follow.Next(jetstream.NextContext(nctx))
		} else {
			<-nctx.Done()
		}
		cancel()
		if ctx.Err() != nil {
			return fmt.Errorf("tournament %s: %d of %d matches ended: %w", spec.GetTournamentId(), done, total, context.Cause(ctx))
		}
		if err != nil {
			if follow != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, nats.ErrTimeout) {
				// The follower broke: another starts next time; meanwhile look up what it
				// may have missed.
				follow.Stop()
				follow = nil
			}
			if err := retrying(ctx, func() error { return pollEndings(ctx, js, waiting, ended) }); err != nil {
				return err
			}
			continue
		}
		evs, err := bus.Decode(msg.Headers(), msg.Data())
		if err != nil {
			continue // not ours to judge; the record's readers will report it
		}
		// The message's subject names its last event: the ending.
		ev := evs[len(evs)-1]
		if err := ended(ev.GetMatchId(), ev.GetMatchEnded()); err != nil {
			return err
		}
	}
	return nil
}

// retrying calls f until it succeeds, fails in a way that waiting will not mend, or ctx
// ends, waiting retryDelay after each transient failure.
func retrying(ctx context.Context, f func() error) error {
	for {
		err := f()
		if err == nil || ctx.Err() != nil || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(retryDelay):
		}
	}
}

// transient reports whether err is one a NATS cluster gives for a while when it loses a
// server: requests that time out or find nobody to answer while a new leader is elected, a
// connection moving to another server.
func transient(err error) bool {
	var api *jetstream.APIError
	if errors.As(err, &api) && api.Code == 503 {
		return true // JetStream temporarily unavailable
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrNoResponders) || errors.Is(err, jetstream.ErrNoStreamResponse) ||
		errors.Is(err, nats.ErrDisconnected) || errors.Is(err, nats.ErrConnectionReconnecting)
}

// pollEvery is how long Run waits for an ending on the stream before it looks up the matches
// it waits for.
const pollEvery = 3 * time.Second

// followEndings returns an iterator over the match_ended events stored from now on.
func followEndings(ctx context.Context, js jetstream.JetStream) (jetstream.MessagesContext, error) {
	cons, err := js.OrderedConsumer(ctx, natsname.MatchStream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{queue.EndedFilter},
		DeliverPolicy:  jetstream.DeliverNewPolicy,
		// By default it retries for ever, deaf to Next's context, when its consumer is lost
		// with a server; Run polls instead and starts another.
		MaxResetAttempts: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("tournament: follow match endings: %w", err)
	}
	it, err := cons.Messages()
	if err != nil {
		return nil, fmt.Errorf("tournament: follow match endings: %w", err)
	}
	return it, nil
}

// pollEndings looks up the ending of every match in waiting and passes those found to ended.
func pollEndings(ctx context.Context, js jetstream.JetStream, waiting map[string]*tournamentv1.ScheduledMatch,
	ended func(string, *eventsv1.MatchEnded) error) error {
	ids := make([]string, 0, len(waiting))
	for id := range waiting {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		end, ok, err := queue.Ended(ctx, js, id)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := ended(id, end); err != nil {
			return err
		}
	}
	return nil
}

// EndpointStreak counts the matches ended in a row that a failing model provider voided
// (HoldConfig.Endpoints). Not safe for Holds running at once.
type EndpointStreak struct {
	// Max is how many in a row stop a Hold; 0 never does.
	Max          int
	inRow        int
	lastID, last string // the last one's id and summary
}

// count notes how match id ended: a void one is read to learn whether its provider voided it.
func (f *EndpointStreak) count(ctx context.Context, js jetstream.JetStream, id string, out *matchv1.Outcome) error {
	if out.GetCause() != matchv1.EndCause_END_CAUSE_VOID {
		f.inRow = 0
		return nil
	}
	var events []*eventsv1.MatchEvent
	if err := retrying(ctx, func() (err error) {
		events, err = bus.ReadMatch(ctx, js, id)
		return err
	}); err != nil {
		return err
	}
	if !match.VoidedByProvider(events) {
		f.inRow = 0
		return nil
	}
	f.inRow++
	// One line: it ends up in one.
	f.lastID, f.last = id, match.Clip(strings.Join(strings.Fields(strings.TrimPrefix(out.GetSummary(), "Void: ")), " "), 300)
	return nil
}

// replayProviderVoid requests scheduled match m again when its run that counts, id, was voided
// by a failing model provider, and returns the rerun's id; "" when it was voided otherwise, or
// has been run as often as the queue allows.
func replayProviderVoid(ctx context.Context, js jetstream.JetStream, spec *tournamentv1.TournamentSpec, m *tournamentv1.ScheduledMatch,
	id string, cfg HoldConfig) (string, error) {
	events, err := bus.ReadMatch(ctx, js, id)
	if err != nil || !match.VoidedByProvider(events) {
		return "", err
	}
	req, err := matchRequest(spec, m, cfg)
	if err != nil {
		return "", err
	}
	rerun, err := queue.Replay(ctx, js, req, "its model provider kept failing; played again on resume")
	if errors.Is(err, queue.ErrRerunsSpent) {
		return "", nil
	}
	return rerun, err
}

// request publishes the request of one scheduled match. When resuming, it does not when the
// request is still in the work queue (waiting, or taken by a worker that runs it now): a
// request published again after the duplicate window would be stored twice, and its second
// taker would close the running match as interrupted.
func request(ctx context.Context, js jetstream.JetStream, spec *tournamentv1.TournamentSpec, m *tournamentv1.ScheduledMatch,
	cfg HoldConfig, resuming bool) error {
	if resuming {
		if queued, err := queue.Queued(ctx, js, m.GetMatchId()); err != nil {
			return err
		} else if queued {
			return nil
		}
	}
	req, err := matchRequest(spec, m, cfg)
	if err != nil {
		return err
	}
	return queue.Enqueue(ctx, js, req)
}

// matchRequest prepares the request of one scheduled match.
func matchRequest(spec *tournamentv1.TournamentSpec, m *tournamentv1.ScheduledMatch, cfg HoldConfig) (*queuev1.MatchRequest, error) {
	agents := make([]string, len(m.GetEntrants()))
	labels := make([]string, len(m.GetEntrants()))
	for i, e := range m.GetEntrants() {
		if int(e) >= len(spec.GetEntrants()) || e < 0 {
			return nil, fmt.Errorf("tournament: match %s names entrant %d of %d", m.GetMatchId(), e, len(spec.GetEntrants()))
		}
		agents[i] = spec.GetEntrants()[e].GetAddress()
		labels[i] = spec.GetEntrants()[e].GetLabel()
	}
	req := launch.Request{
		Game: spec.GetGame(), Params: spec.GetParams(), Resolved: true, Seed: m.GetSeed(), SeedGiven: true,
		Agents: agents, Labels: labels, Limits: spec.GetLimits(), MatchID: m.GetMatchId(),
		TournamentID: spec.GetTournamentId(), RevealPrivate: spec.GetRevealPrivate(), Owner: spec.GetOwner(),
	}
	if cfg.Params != nil {
		params, err := cfg.Params(m.GetSeed())
		if err != nil {
			return nil, fmt.Errorf("tournament: params of match %s: %w", m.GetMatchId(), err)
		}
		req.Params, req.Resolved = params, false
	}
	prepared, err := cfg.Matches.Setup(req)
	if err != nil {
		return nil, fmt.Errorf("tournament: match %s: %w", m.GetMatchId(), err)
	}
	return prepared.Request(), nil
}

// StoreSpec stores spec, or checks that the one stored under its id is the same tournament
// (ErrSpecMismatch otherwise, wrapped); Run does it first, this is for callers that need the
// spec stored before Hold starts. fresh says this call stored it (pass it on as HoldConfig.Fresh).
func StoreSpec(ctx context.Context, js jetstream.JetStream, spec *tournamentv1.TournamentSpec) (fresh bool, err error) {
	if err := queue.EnsureStreams(ctx, js); err != nil {
		return false, err
	}
	return storeSpec(ctx, js, spec, time.Now, nil)
}

// storeSpec stores spec, or checks that the one stored under its id is the same tournament;
// fresh says it stored it.
func storeSpec(ctx context.Context, js jetstream.JetStream, spec *tournamentv1.TournamentSpec, now func() time.Time,
	identity func(string) string) (fresh bool, err error) {
	stored, err := LoadSpec(ctx, js, spec.GetTournamentId())
	switch {
	case err == nil:
		if diff := specDifference(identified(stored, identity), identified(spec, identity)); diff != "" {
			return false, fmt.Errorf("%w: %s is stored with %s", ErrSpecMismatch, spec.GetTournamentId(), diff)
		}
		spec.Created = stored.GetCreated()
		return false, nil
	case !errors.Is(err, ErrNotFound):
		return false, err
	}
	if spec.GetCreated() == nil {
		spec.Created = timestamppb.New(now())
	}
	head, parts := splitSchedule(spec)
	// The parts first, the spec last: a spec found stored has its whole schedule.
	for n, part := range parts {
		if _, err := publishSpec(ctx, js, natsname.TournamentSchedulePartSubject(spec.GetTournamentId(), n), fmt.Sprintf("schedule/%s/%d", spec.GetTournamentId(), n), part); err != nil {
			return false, err
		}
	}
	ack, err := publishSpec(ctx, js, natsname.TournamentSpecSubject(spec.GetTournamentId()), "spec/"+spec.GetTournamentId(), head)
	if err != nil {
		return false, err
	}
	// Another caller storing the same spec at the same moment got it stored once: only the
	// one whose message was not a duplicate goes on as fresh.
	return !ack.Duplicate, nil
}

// schedulePartBytes is the most a stored message of a tournament's schedule holds: well inside
// what any NATS server carries (1 MiB by default; the bus works with servers of 64 KiB).
const schedulePartBytes = 32 << 10

// splitSchedule returns what is stored of spec: spec itself when it is small, otherwise a copy
// without its matches (saying how many parts hold them) and the parts, each a TournamentSpec
// holding only the next matches, at most schedulePartBytes each. So no message grows with
// the tournament.
func splitSchedule(spec *tournamentv1.TournamentSpec) (head *tournamentv1.TournamentSpec, parts []*tournamentv1.TournamentSpec) {
	if proto.Size(spec) <= schedulePartBytes {
		return spec, nil
	}
	part := &tournamentv1.TournamentSpec{}
	size := 0
	for _, m := range spec.GetMatches() {
		n := proto.Size(m) + 4 // the field's tag and length
		if size+n > schedulePartBytes && len(part.Matches) > 0 {
			parts = append(parts, part)
			part, size = &tournamentv1.TournamentSpec{}, 0
		}
		part.Matches = append(part.Matches, m)
		size += n
	}
	parts = append(parts, part)
	head = proto.CloneOf(spec)
	head.Matches, head.ScheduleParts, head.ScheduledMatches = nil, uint32(len(parts)), uint32(len(spec.GetMatches()))
	return head, parts
}

// publishSpec stores one message of a tournament's spec (the spec or a part of its schedule).
func publishSpec(ctx context.Context, js jetstream.JetStream, subject, id string, m *tournamentv1.TournamentSpec) (*jetstream.PubAck, error) {
	data, err := proto.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("tournament: spec: %w", err)
	}
	ack, err := js.Publish(ctx, subject, data, jetstream.WithMsgID(id), jetstream.WithExpectStream(natsname.TournamentStream))
	if err != nil {
		return nil, fmt.Errorf("tournament: store spec of %s: %w", m.GetTournamentId(), err)
	}
	return ack, nil
}

// identified is spec with each entrant's address reduced to its identity (nil: spec itself).
func identified(spec *tournamentv1.TournamentSpec, identity func(string) string) *tournamentv1.TournamentSpec {
	if identity == nil {
		return spec
	}
	out := proto.CloneOf(spec)
	for _, e := range out.GetEntrants() {
		e.Address = identity(e.GetAddress())
	}
	return out
}

// specDifference names the settings in which two specs of one tournament id differ, with the
// stored value first ("seed 7 (asked: 12), games_per_assignment 5 (asked: 10)"), or "" when
// they are the same tournament. Its creation time is not a setting.
func specDifference(stored, asked *tournamentv1.TournamentSpec) string {
	a, b := stored.ProtoReflect(), asked.ProtoReflect()
	var diffs []string
	fields := a.Descriptor().Fields()
	for i := range fields.Len() {
		f := fields.Get(i)
		name := string(f.Name())
		if name == "created" || name == "schedule_parts" || name == "scheduled_matches" {
			continue
		}
		va, vb := a.Get(f), b.Get(f)
		if va.Equal(vb) {
			continue
		}
		switch {
		case name == "owner": // an address is not told to another caller
			diffs = append(diffs, "started by another caller")
		case name == "matches":
			diffs = append(diffs, fmt.Sprintf("another schedule (%d matches; asked: %d)", len(stored.GetMatches()), len(asked.GetMatches())))
		case f.Kind() == protoreflect.MessageKind || f.IsList() || f.IsMap():
			diffs = append(diffs, "other "+name)
		default:
			diffs = append(diffs, fmt.Sprintf("%s %v (asked: %v)", name, va, vb))
		}
	}
	return strings.Join(diffs, ", ")
}

// LoadSpec returns the stored spec of a tournament, its schedule put back together; the error
// wraps ErrNotFound when there is none.
func LoadSpec(ctx context.Context, js jetstream.JetStream, tournamentID string) (*tournamentv1.TournamentSpec, error) {
	if err := bus.ValidMatchID(tournamentID); err != nil {
		return nil, fmt.Errorf("%w %q", ErrInvalidID, tournamentID)
	}
	spec, err := loadSpecMsg(ctx, js, natsname.TournamentSpecSubject(tournamentID))
	if errors.Is(err, ErrNotFound) {
		return nil, fmt.Errorf("%w: no tournament %q", ErrNotFound, tournamentID)
	}
	if err != nil {
		return nil, fmt.Errorf("tournament: spec of %s: %w", tournamentID, err)
	}
	for n := range int(spec.GetScheduleParts()) {
		part, err := loadSpecMsg(ctx, js, natsname.TournamentSchedulePartSubject(tournamentID, n))
		if err != nil {
			return nil, fmt.Errorf("tournament: part %d of %d of the schedule of %s: %w", n+1, spec.GetScheduleParts(), tournamentID, err)
		}
		spec.Matches = append(spec.Matches, part.GetMatches()...)
	}
	if spec.GetScheduleParts() > 0 && len(spec.GetMatches()) != int(spec.GetScheduledMatches()) {
		return nil, fmt.Errorf("tournament: the schedule of %s holds %d matches, its spec says %d", tournamentID, len(spec.GetMatches()), spec.GetScheduledMatches())
	}
	spec.ScheduleParts, spec.ScheduledMatches = 0, 0
	return spec, nil
}

// loadSpecMsg reads the last message on subject of the tournaments' stream; ErrNotFound when
// there is none.
func loadSpecMsg(ctx context.Context, js jetstream.JetStream, subject string) (*tournamentv1.TournamentSpec, error) {
	msg, ok, err := bus.LastMsg(ctx, js, natsname.TournamentStream, subject)
	if errors.Is(err, jetstream.ErrStreamNotFound) || err == nil && !ok {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	m := new(tournamentv1.TournamentSpec)
	if err := proto.Unmarshal(msg.Data, m); err != nil {
		return nil, err
	}
	return m, nil
}

// EachSpec calls f with the spec of every stored tournament, in no particular order; none when
// no tournament was ever stored. Each is the stored message alone: a schedule stored in parts
// (ScheduleParts > 0) is not read, so its Matches is empty; LoadSpec gives the whole schedule.
func EachSpec(ctx context.Context, js jetstream.JetStream, f func(*tournamentv1.TournamentSpec)) error {
	err := readAll(ctx, js, natsname.TournamentStream, natsname.AllTournamentSpecs, func(data []byte) {
		spec := new(tournamentv1.TournamentSpec)
		if proto.Unmarshal(data, spec) == nil {
			f(spec)
		}
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	return err
}
