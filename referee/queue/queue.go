// Package queue is the referee's work queue over NATS JetStream: match requests that any
// number of referee workers share, and the bookkeeping that makes every requested match count
// exactly once. The referee's StartMatch puts single matches into it; tournaments put theirs.
//
// # Streams and subjects
//
//   - PARLEY_REQUESTS (work-queue retention) holds one MatchRequest per match on
//     parley.request.<lane>.<match_id>, with Nats-Msg-Id <tournament_id>/<match_id> so a
//     request published twice is stored once. The lane is its owner's (LaneOf). Every referee
//     worker pulls from the lanes' durable consumers "referees-<lane>" in turn, so a request is
//     given to one worker at a time, leaves the stream when acknowledged, and one owner's
//     backlog holds back another owner's match by at most one match per worker and busy lane.
//   - PARLEY_TOURNAMENTS (limits retention) holds the MatchRetried records on
//     parley.retry.<match_id> (and the tournaments' schedules, see services/tournament).
//   - Match events go to PARLEY_MATCHES as for every match (package bus).
//
// # Exactly-once effect
//
// A worker keeps the request alive while its match runs (InProgress every AckWait/3) and
// acknowledges it, waiting for the server's reply, only after the match's whole record is
// stored (bus.MatchSettler). A request can still come back: its worker crashed, lost the
// broker, or was stopped. The worker that takes it then looks at the record under the
// request's id, following MatchRetried records from one id to the next:
//
//   - no match_started: run the match under that id;
//   - match_ended stored: the match already counts; acknowledge and do nothing;
//   - match_started but no match_ended (the previous referee died mid-match): store a
//     MatchRetried naming the retry id <match_id>-r<k>, then close the partial record with a
//     void MatchEnded that continues its seq (message id <match_id>/<seq>, so two closers store
//     one), and run the match again under the retry id.
//
// A worker that is shut down mid-match lets the runner end the match void, stores the
// MatchRetried before that MatchEnded, and gives the request back (Nak), so the same rule
// applies. A match id therefore never holds two records, a void interrupted match stays in the
// record (listed, left out of rates), and the match that counts is the last of its retry chain.
// Whoever waits for a match sees each void match_ended and looks up its MatchRetried to know
// whether to wait for a rerun (see Latest).
//
// A referee cut off from the broker for longer than AckWait while its match goes on is
// treated as dead: if it comes back, the stream refuses what it then sends of the match, since
// a record has one writer (bus.MatchSettler), and its worker learns that the record is not its
// own. (Late events of a referee older than that rule could still follow a void ending; every
// reader of the record stops at match_ended.)
//
// A request that can never run (unknown game, bad parameters, an agent address that does not
// parse) is recorded as a match that starts and ends void at once, with the reason, and
// acknowledged, so whoever waits for it finishes. So is one whose runs were interrupted
// MaxReruns times: its last run is closed void naming no rerun. Reruns are for interruptions
// only; what would fail the same way again (an agent's fault, a rules error, an event too large
// for the bus, which the runner prevents) ends the match once, with its cause.
package queue

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/matchid"
	"github.com/parley-arena/parley/internal/natsname"
)

const (
	// DefaultAckWait is how long a request may go without a sign of life from its worker
	// before JetStream gives it to another one. Workers signal every third of it.
	DefaultAckWait = 30 * time.Second
)

// Config tunes the shared consumer.
type Config struct {
	// AckWait: see DefaultAckWait (zero means that). Whoever calls EnsureQueue last sets it
	// for every worker.
	AckWait time.Duration
}

// EnsureConsumers creates, or updates to the settings here, the request and tournament
// streams and the consumers of the queue's lanes (see Lanes), which every worker shares. Every
// worker calls it; it is idempotent.
func EnsureConsumers(ctx context.Context, js jetstream.JetStream, cfg Config) ([]jetstream.Consumer, error) {
	if cfg.AckWait <= 0 {
		cfg.AckWait = DefaultAckWait
	}
	if err := EnsureStreams(ctx, js); err != nil {
		return nil, err
	}
	return ensureLanes(ctx, js, cfg)
}

// streamConfigs are the settings of the request and tournament streams, kept on replicas
// servers of a cluster.
func streamConfigs(replicas int) []jetstream.StreamConfig {
	return []jetstream.StreamConfig{{
		Name:        natsname.RequestStream,
		Description: "Parley match requests: a work queue shared by every referee worker",
		Subjects:    []string{natsname.AllRequests},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.WorkQueuePolicy,
		Duplicates:  bus.DuplicateWindow,
		Replicas:    replicas,
		AllowDirect: bus.DirectGets(replicas),
	}, {
		Name:        natsname.TournamentStream,
		Description: "Parley tournament schedules and reruns of interrupted matches",
		Subjects:    []string{natsname.AllTournaments, natsname.AllRetries, natsname.AllCancels},
		Storage:     jetstream.FileStorage,
		Retention:   jetstream.LimitsPolicy,
		Duplicates:  bus.DuplicateWindow,
		Replicas:    replicas,
		AllowDirect: bus.DirectGets(replicas),
	}}
}

// ensureStream creates a stream, or updates it when its settings differ from cfg's. A stream
// already as cfg says is left alone: every worker and scheduler calls this at start, and an
// update that changes nothing still rewrites the stream's configuration (and races, inside
// nats-server, with consumers being created on the stream at the same moment).
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	if st, err := js.Stream(ctx, cfg.Name); err == nil {
		info, err := st.Info(ctx) // fresh: the handle may be a kept one
		if err == nil {
			have := info.Config
			if have.Description == cfg.Description && slices.Equal(have.Subjects, cfg.Subjects) && have.Storage == cfg.Storage &&
				have.Retention == cfg.Retention && have.Duplicates == cfg.Duplicates && have.Replicas == cfg.Replicas &&
				have.AllowDirect == cfg.AllowDirect {
				return nil
			}
		}
	}
	if _, err := js.CreateOrUpdateStream(ctx, cfg); err != nil {
		return fmt.Errorf("queue: stream %s: %w", cfg.Name, err)
	}
	return nil
}

// requestMsgID de-duplicates a request: the same tournament's request for the same match
// id, published twice, is stored once; another's request for that id is not taken for it.
func requestMsgID(req *queuev1.MatchRequest) string {
	return req.GetTournamentId() + "/" + req.GetMatchId()
}

// Enqueue puts a match request into the work queue. Publishing one twice within the
// duplicate window stores it once.
func Enqueue(ctx context.Context, js jetstream.JetStream, req *queuev1.MatchRequest) error {
	return enqueue(ctx, js, req, requestMsgID(req))
}

// ErrRerunsSpent reports a match whose retry chain already holds MaxReruns runs.
var ErrRerunsSpent = errors.New("queue: the match was run too many times")

// Replay requests req's match once more after the run that counts for it ended void for a
// cause outside the match (a model provider that kept failing): it names the rerun
// (MatchRetried, so that the void run's readers and Latest follow the chain to it, as for an
// interrupted run) and puts the request back into the work queue, whose worker follows the
// chain and plays the rerun. It returns the rerun's id, or ErrRerunsSpent (wrapped) when the
// chain is as long as MaxReruns allows. The caller checks that the last run is such a void
// one; Replay does not judge.
func Replay(ctx context.Context, js jetstream.JetStream, req *queuev1.MatchRequest, reason string) (string, error) {
	last, runs := req.GetMatchId(), 1
	for ; runs <= MaxReruns+1; runs++ {
		retry, ok, err := LookupRetry(ctx, js, last)
		if err != nil {
			return "", err
		}
		if !ok {
			break
		}
		last = retry.GetRetryMatchId()
	}
	if runs > MaxReruns {
		return "", fmt.Errorf("%w: %s was played %d times", ErrRerunsSpent, req.GetMatchId(), runs)
	}
	next := RetryID(req.GetMatchId(), runs)
	if err := storeRetry(ctx, js, &queuev1.MatchRetried{
		MatchId: last, RetryMatchId: next, TournamentId: req.GetTournamentId(), Reason: reason,
	}); err != nil {
		return "", err
	}
	// Its own message id: the first request's may still be within the duplicate window.
	return next, enqueue(ctx, js, req, requestMsgID(req)+"/"+next)
}

func enqueue(ctx context.Context, js jetstream.JetStream, req *queuev1.MatchRequest, msgID string) error {
	if err := bus.ValidMatchID(req.GetMatchId()); err != nil {
		return fmt.Errorf("queue: request: %w", err)
	}
	data, err := proto.Marshal(req)
	if err != nil {
		return fmt.Errorf("queue: request %s: %w", req.GetMatchId(), err)
	}
	if _, err := js.Publish(ctx, natsname.RequestSubject(LaneOf(req.GetOwner()), req.GetMatchId()), data,
		jetstream.WithMsgID(msgID), jetstream.WithExpectStream(natsname.RequestStream)); err != nil {
		return fmt.Errorf("queue: request %s: %w", req.GetMatchId(), err)
	}
	return nil
}

// Taken reports whether match id matchID is taken: a request for it waits in the work
// queue or is being played (a request leaves the queue once its match is recorded), or a
// match was recorded under it. A rerun (<id>-r<k>) waits as its requested match's request,
// which stays queued until a worker has played it.
func Taken(ctx context.Context, js jetstream.JetStream, matchID string) (bool, error) {
	queued, err := Queued(ctx, js, matchID)
	if err != nil || queued {
		return queued, err
	}
	if requested := matchid.Requested(matchID); requested != matchID {
		if queued, err := Queued(ctx, js, requested); err != nil || queued {
			return queued, err
		}
	}
	state, err := stateOf(ctx, js, matchID)
	return state != stateNone, err
}

// Queued reports whether a request for matchID is in the work queue: waiting, or taken by a
// worker that plays it now.
func Queued(ctx context.Context, js jetstream.JetStream, matchID string) (bool, error) {
	_, queued, err := Request(ctx, js, matchID)
	return queued, err
}

// storeRetry stores a MatchRetried record and waits for the server to confirm it.
func storeRetry(ctx context.Context, js jetstream.JetStream, r *queuev1.MatchRetried) error {
	data, err := proto.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := js.Publish(ctx, natsname.RetrySubject(r.GetMatchId()), data,
		jetstream.WithMsgID("retry/"+r.GetMatchId()), jetstream.WithExpectStream(natsname.TournamentStream)); err != nil {
		return fmt.Errorf("queue: retry record of %s: %w", r.GetMatchId(), err)
	}
	return nil
}

// LookupRetry returns the MatchRetried record of matchID, if one was stored.
func LookupRetry(ctx context.Context, js jetstream.JetStream, matchID string) (*queuev1.MatchRetried, bool, error) {
	msg, ok, err := bus.LastMsg(ctx, js, natsname.TournamentStream, natsname.RetrySubject(matchID))
	if err != nil || !ok {
		return nil, false, err
	}
	r := new(queuev1.MatchRetried)
	if err := proto.Unmarshal(msg.Data, r); err != nil {
		return nil, false, fmt.Errorf("queue: retry record of %s: %w", matchID, err)
	}
	return r, true, nil
}

// matchState is how far a match id's record got.
type matchState int

const (
	stateNone  matchState = iota // no match_started
	stateOpen                    // match_started, no match_ended
	stateEnded                   // match_ended stored
)

// stateOf looks up how far a match's record got: one lookup of its last event of any kind,
// which for a match never started (the common case) or ended (its last event the ending) is
// all it takes. Any event stored counts as started: a record is never begun twice.
func stateOf(ctx context.Context, js jetstream.JetStream, matchID string) (matchState, error) {
	last, any, err := bus.LastMsg(ctx, js, natsname.MatchStream, natsname.MatchFilter(matchID))
	switch {
	case err != nil:
		return 0, err
	case !any:
		return stateNone, nil
	case last.Subject == endedSubject(matchID):
		return stateEnded, nil
	}
	// Events after an ending are late ones of a referee that was cut off: look for the
	// ending itself.
	_, ended, err := bus.LastMsg(ctx, js, natsname.MatchStream, endedSubject(matchID))
	if err != nil {
		return 0, err
	}
	if ended {
		return stateEnded, nil
	}
	return stateOpen, nil
}

// Subjects of a match's first and last events.
func startedSubject(matchID string) string {
	return natsname.MatchSubject(matchID, natsname.StartedEvent)
}

func endedSubject(matchID string) string { return natsname.MatchSubject(matchID, natsname.EndedEvent) }

// EnsureStreams creates the request and tournament streams when they are missing (not the
// workers' consumer, whose settings are theirs), with as many replicas as the match stream: on
// a cluster that keeps the match records through the loss of a server, the queue and the
// retry records survive it too.
func EnsureStreams(ctx context.Context, js jetstream.JetStream) error {
	replicas, err := bus.StreamReplicas(ctx, js)
	if err != nil {
		return err
	}
	for _, cfg := range streamConfigs(replicas) {
		if err := ensureStream(ctx, js, cfg); err != nil {
			return err
		}
	}
	return nil
}

// Ended returns the MatchEnded of matchID, when it is stored.
func Ended(ctx context.Context, js jetstream.JetStream, matchID string) (*eventsv1.MatchEnded, bool, error) {
	msg, ended, err := bus.LastMsg(ctx, js, natsname.MatchStream, endedSubject(matchID))
	if err != nil || !ended {
		return nil, false, err
	}
	evs, err := bus.Decode(msg.Header, msg.Data)
	if err != nil {
		return nil, false, fmt.Errorf("queue: match_ended of %s: %w", matchID, err)
	}
	// The message's subject names its last event.
	return evs[len(evs)-1].GetMatchEnded(), true, nil
}

// Owner returns the tournament a recorded match belongs to (its MatchStarted.tournament_id;
// "" for a single match), and whether the match was started at all.
func Owner(ctx context.Context, js jetstream.JetStream, matchID string) (string, bool, error) {
	// A start is the first event of the message that carries it, found on match_started, or
	// on match_ended for a match stored in one message (bus.MatchSettler).
	for _, subject := range []string{startedSubject(matchID), endedSubject(matchID)} {
		msg, found, err := bus.LastMsg(ctx, js, natsname.MatchStream, subject)
		if err != nil {
			return "", false, err
		}
		if !found {
			continue
		}
		evs, err := bus.Decode(msg.Header, msg.Data)
		if err != nil {
			return "", false, fmt.Errorf("queue: %s: %w", subject, err)
		}
		if start := evs[0].GetMatchStarted(); start != nil {
			return start.GetTournamentId(), true, nil
		}
	}
	return "", false, nil
}

// Latest follows the retry chain from matchID (a requested match's id, of tournament
// tournamentID or "") to the match that counts now, and returns its id and, when it has ended,
// its MatchEnded. A record under the id that belongs to no match of that tournament is never
// taken for its match: the chain goes on past it (see Worker), and until it does the match has
// not ended.
func Latest(ctx context.Context, js jetstream.JetStream, matchID, tournamentID string) (string, *eventsv1.MatchEnded, error) {
	id := matchID
	for range MaxReruns + 2 {
		retry, ok, err := LookupRetry(ctx, js, id)
		if err != nil {
			return "", nil, err
		}
		if ok {
			id = retry.GetRetryMatchId()
			continue
		}
		end, _, err := Ended(ctx, js, id)
		if err != nil || end == nil {
			return id, nil, err
		}
		if owner, _, err := Owner(ctx, js, id); err != nil || owner != tournamentID {
			return id, nil, err // a foreign record: the worker chains past it
		}
		if end.GetOutcome().GetCause() != matchv1.EndCause_END_CAUSE_VOID {
			return id, end, nil
		}
		// An interrupted match names its rerun before its void ending is stored: look again.
		if retry, ok, err := LookupRetry(ctx, js, id); err != nil || ok {
			if err != nil {
				return "", nil, err
			}
			id = retry.GetRetryMatchId()
			continue
		}
		return id, end, nil
	}
	return id, nil, nil
}

// EndedFilter selects the match_ended events of every match.
var EndedFilter = natsname.EventFilter(natsname.EndedEvent)

// Waiting returns how many match requests the work queue holds (waiting, or being played).
func Waiting(ctx context.Context, js jetstream.JetStream) (int, error) {
	st, err := js.Stream(ctx, natsname.RequestStream)
	if err != nil {
		return 0, fmt.Errorf("queue: stream %s: %w", natsname.RequestStream, err)
	}
	info, err := st.Info(ctx) // fresh: the handle may be a kept one
	if err != nil {
		return 0, fmt.Errorf("queue: stream %s: %w", natsname.RequestStream, err)
	}
	return int(info.State.Msgs), nil
}
