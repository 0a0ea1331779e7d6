package queue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	queuev1 "github.com/parley-arena/parley/gen/go/parley/queue/v1"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"

	eventsv1 "github.com/parley-arena/parley/gen/go/parley/events/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/matchid"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/referee/agentconn"
	"github.com/parley-arena/parley/referee/games"
	"github.com/parley-arena/parley/referee/launch"
	"github.com/parley-arena/parley/referee/match"
)

const (
	// fetchWait is how often an idle worker looks in every lane for requests it was not told
	// of.
	fetchWait = 2 * time.Second
	// retryDelay is how long a request that failed for an infrastructure reason waits before
	// it is offered again.
	retryDelay = 2 * time.Second
	// settleTimeout bounds the bookkeeping done after ctx ends (void endings, acks).
	settleTimeout = 10 * time.Second
	// MaxReruns bounds the retry chain of one request: past it the request is given up and
	// its last match is closed void, naming no rerun.
	MaxReruns = 20
	// maxSummaryBytes bounds the reason a refused request's void record gives.
	maxSummaryBytes = 2 << 10
)

// WorkerConfig configures a Worker.
type WorkerConfig struct {
	// Games reopens each request as the match it was prepared as (launch.Reopen), and Player
	// plays it. Required.
	Games  *games.Registry
	Player *launch.Player
	// Concurrency is how many matches the worker runs at once (default 1).
	Concurrency int
	// AckWait: see QueueConfig.
	AckWait time.Duration
	// Name identifies the worker in logs.
	Name string
	// Timestamps stamps every event with the wall-clock time (see match.WithTimestamps).
	Timestamps bool
}

// Worker is a referee worker: it takes match requests from the shared queue, runs each with
// the match runner and records it to the match stream. Any number of workers, in any number
// of processes, may share one queue; see the package doc for what happens when one dies.
type Worker struct {
	b       *bus.Bus
	js      jetstream.JetStream
	settler *bus.MatchSettler
	cfg     WorkerConfig
	logger  *slog.Logger

	ran     atomic.Int64
	running sync.Map // request id -> its message, for the requests this worker is playing now
	playing sync.Map // request id -> *playing, to end it when it is cancelled
}

// NewWorker returns a worker playing the requests of the queue on b and recording through b.
// A nil logger discards logs.
func NewWorker(b *bus.Bus, cfg WorkerConfig, logger *slog.Logger) *Worker {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Concurrency < 1 {
		cfg.Concurrency = 1
	}
	if cfg.AckWait <= 0 {
		cfg.AckWait = DefaultAckWait
	}
	if cfg.Name != "" {
		logger = logger.With("worker", cfg.Name)
	}
	return &Worker{
		b: b, js: b.JetStream(), cfg: cfg, logger: logger,
		settler: bus.NewPublisher(b).SettleEachMatch(),
	}
}

// Ran returns how many matches this worker has recorded to their end, reruns and void
// records of refused requests included.
func (w *Worker) Ran() int64 { return w.ran.Load() }

// errStopping marks a match cut short because the worker is stopping.
var errStopping = errors.New("queue: worker stopping")

// errNotHere marks a request another worker must play (one with human seats).
var errNotHere = errors.New("queue: the request needs another worker")

// Run takes requests until ctx ends, then lets the matches still running end void, gives
// their requests back to the queue and returns nil. It returns an error only when the queue
// cannot be set up.
func (w *Worker) Run(ctx context.Context) error {
	cons, err := EnsureConsumers(ctx, w.js, Config{AckWait: w.cfg.AckWait})
	if err != nil {
		return err
	}
	ln := newLanes(cons)
	// Told of each request as it is published, an idle worker takes it at once; without a
	// word (a request given back, the subscription cut) it looks again every fetchWait.
	if sub, err := w.b.Conn().Subscribe(natsname.AllRequests, ln.published); err == nil {
		defer func() { _ = sub.Unsubscribe() }()
	} else {
		w.logger.Warn("not told of new requests; looking for them every few seconds", "err", err)
	}
	if sub, err := w.b.Conn().Subscribe(natsname.AllCancels, w.cancelled); err == nil {
		defer func() { _ = sub.Unsubscribe() }()
	} else {
		w.logger.Warn("not told of cancellations; a cancelled match plays on until its end", "err", err)
	}
	w.logger.Info("referee worker ready", "concurrency", w.cfg.Concurrency, "lanes", Lanes)
	defer w.keepAlive()() // stops once every match has ended (the deferred Wait below)
	slots := make(chan struct{}, w.cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	waiting := false // for the store to take writes
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		if err := w.b.Ready(); err != nil {
			// A match taken now could not be recorded: wait until the store takes writes.
			<-slots
			if !waiting {
				w.logger.Warn("not taking requests until the store takes writes", "err", err)
			}
			waiting = true
			select {
			case <-time.After(fetchWait):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		waiting = false
		msg, err := ln.take(ctx)
		if msg != nil {
			wg.Go(func() {
				defer func() { <-slots }()
				w.handle(ctx, msg)
			})
			continue
		}
		<-slots
		if err != nil && ctx.Err() == nil {
			w.logger.Warn("fetching requests", "err", err)
		}
		select {
		case <-ln.wake:
		case <-time.After(fetchWait):
			ln.rescan()
		case <-ctx.Done():
			return nil
		}
	}
}

// handle runs one request and settles its message.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) {
	req := new(queuev1.MatchRequest)
	if err := proto.Unmarshal(msg.Data(), req); err != nil || bus.ValidMatchID(req.GetMatchId()) != nil {
		w.logger.Error("dropping an unreadable request", "subject", msg.Subject(), "err", err)
		_ = msg.TermWithReason("unreadable request")
		return
	}
	logger := w.logger.With("request", req.GetMatchId())
	if _, dup := w.running.LoadOrStore(req.GetMatchId(), msg); dup {
		// Our own keep-alives were lost for a while (the cluster failing over) and the request
		// came back to us. The delivery being played keeps it alive and acknowledges it; this
		// one is left alone, never played a second time.
		logger.Warn("request redelivered while this worker still plays it; keeping the match running")
		return
	}
	mctx, cancelMatch := context.WithCancelCause(ctx)
	w.playing.Store(req.GetMatchId(), &playing{tournamentID: req.GetTournamentId(), cancel: cancelMatch})
	err := w.process(mctx, req, logger)
	w.playing.Delete(req.GetMatchId())
	cancelMatch(nil)
	w.running.Delete(req.GetMatchId())

	settle, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	switch {
	case err == nil:
		if aerr := msg.DoubleAck(settle); aerr != nil {
			// The request comes back; its record is found ended and it is acked then.
			logger.Warn("acknowledging request", "err", aerr)
		}
	case errors.Is(err, errStopping) || ctx.Err() != nil:
		logger.Info("request given back: worker stopping")
		_ = msg.Nak()
	case errors.Is(err, errNotHere):
		logger.Info("request given back for another worker", "err", err)
		_ = msg.NakWithDelay(retryDelay)
	case errors.Is(err, bus.ErrOtherWriter):
		// This worker was taken for dead and the request given to another, whose record the
		// stream keeps: the request is that worker's now, to acknowledge; a Nak from here
		// would offer it to a third while the second still plays it.
		logger.Warn("the match's record has another writer; leaving its request to it", "err", err)
	default:
		logger.Error("request failed; it will be offered again", "err", err)
		_ = msg.NakWithDelay(retryDelay)
	}
}

// keepAlive tells the server every request being played is being worked on, every third of
// AckWait (one goroutine and one ticker for all of them), until the returned function is
// called.
func (w *Worker) keepAlive() func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(w.cfg.AckWait / 3)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				w.running.Range(func(id, msg any) bool {
					if err := msg.(jetstream.Msg).InProgress(); err != nil {
						w.logger.Warn("keeping request alive", "request", id, "err", err)
					}
					return true
				})
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// process applies the package's exactly-once rule to req and runs its match when needed.
func (w *Worker) process(ctx context.Context, req *queuev1.MatchRequest, logger *slog.Logger) error {
	id := req.GetMatchId()
	cancel, cancelled, err := Cancelled(ctx, w.js, req.GetMatchId(), req.GetTournamentId())
	if err != nil {
		return err
	}
	for rerun := 0; ; rerun++ {
		state, err := stateOf(ctx, w.js, id)
		if err != nil {
			return err
		}
		if state == stateNone {
			if cancelled {
				logger.Info("request cancelled before it was played")
				return w.voidAtOnce(ctx, req, id, "Void: "+cancelError(cancel).Error()+" before it started")
			}
			// A rerun is recorded only once its match's start is stored, so there is none.
			return w.run(ctx, req, id, rerun, logger)
		}
		retry, retried, err := LookupRetry(ctx, w.js, id)
		if err != nil {
			return err
		}
		if retried {
			// A worker recorded the rerun but may have died before closing this record.
			if state == stateOpen {
				if err := w.closeVoid(ctx, id, "interrupted before its end; rerun as "+retry.GetRetryMatchId(), retry.GetRetryMatchId()); err != nil {
					return err
				}
			}
			id = retry.GetRetryMatchId()
			continue
		}
		// A record under the id that is not this request's (a match someone else started
		// under it) is left alone: the request runs under the next id of its chain.
		owner, _, err := Owner(ctx, w.js, id)
		if err != nil {
			return err
		}
		if owner != req.GetTournamentId() {
			if rerun >= MaxReruns {
				return w.refuse(ctx, req, RetryID(req.GetMatchId(), rerun+1), fmt.Errorf("%d ids of its chain were taken by other matches", rerun+1))
			}
			next := RetryID(req.GetMatchId(), rerun+1)
			if err := storeRetry(ctx, w.js, &queuev1.MatchRetried{
				MatchId: id, RetryMatchId: next, TournamentId: req.GetTournamentId(),
				Reason: "the id was taken by a match that is not this request's",
			}); err != nil {
				return err
			}
			logger.Warn("the request's id is taken by another match; running it under the next id", "taken", id, "owner", owner, "rerun", next)
			id = next
			continue
		}
		if state == stateEnded {
			logger.Info("request already done", "recorded_as", id)
			return nil
		}
		// Started, never ended: its referee died mid-match.
		if cancelled {
			return w.closeVoid(ctx, id, "interrupted before its end; "+cancelError(cancel).Error(), "")
		}
		reason := "its referee stopped before the match ended"
		if rerun >= MaxReruns {
			// Whatever keeps interrupting it would interrupt one more run too: the void
			// ending names no rerun, so whoever waits for the request is done.
			logger.Error("request given up: too many interrupted runs", "last_match_id", id)
			return w.closeVoid(ctx, id, fmt.Sprintf("interrupted before its end (%s); given up after %d interrupted runs", reason, rerun+1), "")
		}
		next := RetryID(req.GetMatchId(), rerun+1)
		if err := storeRetry(ctx, w.js, &queuev1.MatchRetried{
			MatchId: id, RetryMatchId: next, TournamentId: req.GetTournamentId(), Reason: reason,
		}); err != nil {
			return err
		}
		if err := w.closeVoid(ctx, id, "interrupted before its end ("+reason+"); rerun as "+next, next); err != nil {
			return err
		}
		logger.Warn("closed an interrupted match as void; running it again", "interrupted", id, "rerun", next)
		id = next
	}
}

// RetryID is the id of the k-th rerun of a requested match (matchid.Rerun).
func RetryID(matchID string, k int) string { return matchid.Rerun(matchID, k) }

// closeVoid ends an open record with a void MatchEnded continuing its seq, naming its rerun.
func (w *Worker) closeVoid(ctx context.Context, id, why, rerun string) error {
	events, err := bus.ReadMatch(ctx, w.js, id)
	if err != nil {
		return err
	}
	if len(events) == 0 {
		return fmt.Errorf("tournament: match %s has no events to close", id)
	}
	last := events[len(events)-1]
	if last.GetMatchEnded() != nil {
		return nil
	}
	end := &eventsv1.MatchEvent{
		MatchId: id,
		Seq:     last.GetSeq() + 1,
		Turn:    last.GetTurn(),
		Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{
			Cause:        matchv1.EndCause_END_CAUSE_VOID,
			Summary:      "Void: " + why,
			RerunMatchId: rerun,
		}}},
	}
	return w.settler.Record(ctx, end)
}

// run runs the match of req under id (id differs from req's for a rerun).
func (w *Worker) run(ctx context.Context, req *queuev1.MatchRequest, id string, rerun int, logger *slog.Logger) error {
	logger = logger.With("recorded_as", id)
	m, err := launch.Reopen(w.cfg.Games, req, id)
	if err != nil {
		return w.refuse(ctx, req, id, err)
	}
	// When the worker stops mid-match the runner ends the match void; the rerun is recorded
	// first, so that whoever sees the void ending can follow it.
	var stopped, cancelled atomic.Bool
	next := RetryID(req.GetMatchId(), rerun+1)
	rec := match.RecorderFunc(func(rctx context.Context, ev *eventsv1.MatchEvent) error {
		end := ev.GetMatchEnded()
		if end != nil && errors.Is(context.Cause(ctx), ErrCancelled) {
			// Cancelled: the ending says so (the cause is its reason), and nothing reruns it.
			cancelled.Store(true)
			sctx, cancel := context.WithTimeout(context.WithoutCancel(rctx), settleTimeout)
			defer cancel()
			return w.settler.Record(sctx, ev)
		}
		if end != nil && ctx.Err() != nil &&
			end.GetOutcome().GetCause() == matchv1.EndCause_END_CAUSE_VOID {
			stopped.Store(true)
			sctx, cancel := context.WithTimeout(context.WithoutCancel(rctx), settleTimeout)
			defer cancel()
			// The match's start is stored before its rerun is named (see process).
			if err := w.settler.Settle(sctx, id); err != nil {
				return err
			}
			reason := "its referee was shut down before the match ended"
			if err := storeRetry(sctx, w.js, &queuev1.MatchRetried{
				MatchId: id, RetryMatchId: next, TournamentId: req.GetTournamentId(), Reason: reason,
			}); err != nil {
				return err
			}
			ev = proto.CloneOf(ev)
			ev.GetMatchEnded().GetOutcome().Summary += "; rerun as " + next
			ev.GetMatchEnded().GetOutcome().RerunMatchId = next
			return w.settler.Record(sctx, ev)
		}
		return w.settler.Record(rctx, ev)
	})
	// The runner keeps every event, and agents' replies, within what the bus carries.
	sized := struct {
		match.RecorderFunc
		match.EventSizer
	}{rec, w.settler}
	res, err := w.cfg.Player.Play(ctx, m, sized, launch.PlayOptions{Options: []match.Option{
		match.WithLogger(logger), match.WithTimestamps(w.cfg.Timestamps),
	}})
	switch {
	case errors.Is(err, agentconn.ErrNotServed):
		// A human seat lives in the process serving its page (`parley up`): leave the request
		// to that process's worker.
		return fmt.Errorf("%w: %w", errNotHere, err)
	case errors.Is(err, match.ErrBadSpec), errors.Is(err, agentconn.ErrBadAddress), errors.Is(err, agentconn.ErrDialRefused):
		return w.refuse(ctx, req, id, err)
	case err != nil:
		return err
	}
	w.ran.Add(1)
	if stopped.Load() && !cancelled.Load() {
		return errStopping
	}
	logger.Info("match recorded", "cause", res.Outcome.GetCause().String())
	return nil
}

// refuse records a request that cannot run as a match that starts and ends void at once. A
// request too large to record whole (its parameters, labels or addresses) is recorded
// without them, so that the refusal itself never fails.
func (w *Worker) refuse(ctx context.Context, req *queuev1.MatchRequest, id string, why error) error {
	w.logger.Error("refusing a request", "match_id", id, "err", why)
	return w.voidAtOnce(ctx, req, id, "Void: the referee refused the request: "+why.Error())
}

// voidAtOnce records a request's match as one that starts and ends void at once, summary
// saying why.
func (w *Worker) voidAtOnce(ctx context.Context, req *queuev1.MatchRequest, id, summary string) error {
	seats := make([]*gamev1.SeatInfo, len(req.GetAgents()))
	for i, a := range req.GetAgents() {
		seats[i] = &gamev1.SeatInfo{Seat: int32(i), Name: fmt.Sprintf("P%d", i+1), Agent: &gamev1.AgentInfo{Name: a}}
		if i < len(req.GetLabels()) {
			seats[i].Label = req.GetLabels()[i]
		}
	}
	events := []*eventsv1.MatchEvent{
		{MatchId: id, Seq: 1, Payload: &eventsv1.MatchEvent_MatchStarted{MatchStarted: &eventsv1.MatchStarted{
			Game: req.GetGame(), Params: req.GetParams(), Seed: req.GetSeed(), Seats: seats,
			Limits: req.GetLimits(), TournamentId: req.GetTournamentId(), RevealPrivate: req.GetRevealPrivate(),
		}}},
		{MatchId: id, Seq: 2, Payload: &eventsv1.MatchEvent_MatchEnded{MatchEnded: &eventsv1.MatchEnded{Outcome: &matchv1.Outcome{
			Cause: matchv1.EndCause_END_CAUSE_VOID, Summary: match.Clip(summary, maxSummaryBytes),
		}}}},
	}
	if started, limit := events[0].GetMatchStarted(), w.settler.MaxEventBytes(); limit > 0 && proto.Size(events[0]) > limit {
		started.Game, started.Params = match.Clip(started.Game, 256), nil
		for _, s := range started.Seats {
			s.Label, s.Agent.Name = "", match.Clip(s.Agent.Name, 256)
		}
		events[1].GetMatchEnded().GetOutcome().Summary += " (the request was too large to record whole: its parameters and labels are left out)"
		if proto.Size(events[0]) > limit {
			started.Seats = nil
		}
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	for _, ev := range events {
		if err := w.settler.Record(sctx, ev); err != nil {
			return err
		}
	}
	w.ran.Add(1)
	return nil
}
