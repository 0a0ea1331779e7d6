package analytics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/parley-arena/parley/internal/bus"
	"github.com/parley-arena/parley/internal/natsname"
	"github.com/parley-arena/parley/services/analytics/metrics"
)

// Consumer defaults.
const (
	// DefaultBatch is the most events stored in one transaction.
	DefaultBatch = 256
	// DefaultAckWait is how long JetStream waits for the ack of a delivered event before it
	// delivers it again (to this consumer after a restart).
	DefaultAckWait = 30 * time.Second
	// DefaultIdleWait bounds one wait for new events when none are pending.
	DefaultIdleWait = 5 * time.Second
	// ingestTimeout bounds storing one batch once it is fetched; the batch is finished even
	// when the consumer is asked to stop, so that what was fetched is committed and acked.
	ingestTimeout = time.Minute
)

// ConsumerConfig tunes a Consumer. Zero fields take the defaults above.
type ConsumerConfig struct {
	// Durable is the durable consumer's name; two processes with one name share its work (and
	// should then share one database).
	Durable string
	// Batch is the most events stored per transaction.
	Batch int
	// AckWait is JetStream's redelivery delay for unacked events.
	AckWait time.Duration
	// IdleWait bounds one wait for new events.
	IdleWait time.Duration
}

func (c ConsumerConfig) withDefaults() ConsumerConfig {
	if c.Durable == "" {
		c.Durable = natsname.AnalyticsConsumer
	}
	if c.Batch <= 0 {
		c.Batch = DefaultBatch
	}
	if c.AckWait <= 0 {
		c.AckWait = DefaultAckWait
	}
	if c.IdleWait <= 0 {
		c.IdleWait = DefaultIdleWait
	}
	return c
}

// ConsumerStats counts what a Consumer did since it was made.
type ConsumerStats struct {
	// Batches committed; Delivered events received (redeliveries included); Stored events new
	// to the store; Duplicates events it already had; Malformed events that could not be
	// decoded (acked and skipped; a message that cannot be read at all counts as one); Computed
	// match rows written.
	Batches, Delivered, Stored, Duplicates, Malformed, Computed int
}

// Consumer feeds a Store from the durable JetStream consumer of every match event.
type Consumer struct {
	js    jetstream.JetStream
	store *Store
	reg   *metrics.Registry
	log   *slog.Logger
	cfg   ConsumerConfig

	mu    sync.Mutex
	stats ConsumerStats

	// afterCommit, when set (by tests), runs after each batch is committed and before it is
	// acked; when it returns false, Run returns errStopped without acking: a crash between
	// the commit and the acks.
	afterCommit func(batch int) bool
}

// errStopped is returned by Run when afterCommit stopped it.
var errStopped = errors.New("analytics: stopped before acking (test hook)")

// NewConsumer returns a Consumer storing into store, with the family metrics of reg (nil: the
// common values only). A nil logger discards logs.
func NewConsumer(js jetstream.JetStream, store *Store, reg *metrics.Registry, logger *slog.Logger, cfg ConsumerConfig) *Consumer {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Consumer{js: js, store: store, reg: reg, log: logger, cfg: cfg.withDefaults()}
}

// Stats returns the counts so far.
func (c *Consumer) Stats() ConsumerStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stats
}

// Ensure creates the durable consumer, or updates it to this configuration, and returns it.
func (c *Consumer) Ensure(ctx context.Context) (jetstream.Consumer, error) {
	cons, err := c.js.CreateOrUpdateConsumer(ctx, natsname.MatchStream, jetstream.ConsumerConfig{
		Durable:       c.cfg.Durable,
		Description:   "Parley analytics: every match event into the analytics database",
		DeliverPolicy: jetstream.DeliverAllPolicy,
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       c.cfg.AckWait,
		MaxDeliver:    -1,
		FilterSubject: natsname.AllMatches,
		MaxAckPending: max(4*c.cfg.Batch, 1000),
	})
	if err != nil {
		return nil, fmt.Errorf("analytics: consumer %s on %s: %w", c.cfg.Durable, natsname.MatchStream, err)
	}
	return cons, nil
}

// Pending reports how many events the durable consumer has not yet had acked: those not yet
// delivered plus those delivered and awaiting their ack. Zero means caught up.
func (c *Consumer) Pending(ctx context.Context) (uint64, error) {
	cons, err := c.js.Consumer(ctx, natsname.MatchStream, c.cfg.Durable)
	if err != nil {
		return 0, fmt.Errorf("analytics: consumer %s: %w", c.cfg.Durable, err)
	}
	info, err := cons.Info(ctx)
	if err != nil {
		return 0, fmt.Errorf("analytics: consumer %s: %w", c.cfg.Durable, err)
	}
	return info.NumPending + uint64(info.NumAckPending), nil
}

// Run consumes events until ctx ends (then it returns nil) or something fails that retrying
// will not mend. Each batch is stored in one transaction and acked after the commit; a batch
// fetched when ctx ends is still stored and acked.
func (c *Consumer) Run(ctx context.Context) error {
	cons, err := c.Ensure(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	c.log.Info("analytics consuming", "durable", c.cfg.Durable, "stream", natsname.MatchStream, "db", c.store.Path())
	for batch := 1; ctx.Err() == nil; batch++ {
		msgs, err := c.fetch(ctx, cons)
		if ctx.Err() != nil && len(msgs) == 0 {
			return nil
		}
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			continue
		}
		if err := c.handle(ctx, batch, msgs); err != nil {
			return err
		}
	}
	return nil
}

// fetch returns the next events: all that are waiting (up to a batch) at once, or else the
// first to arrive within IdleWait together with any that came with it. None, with no error,
// when IdleWait passed or ctx ended.
func (c *Consumer) fetch(ctx context.Context, cons jetstream.Consumer) ([]jetstream.Msg, error) {
	msgs, err := c.noWait(cons, c.cfg.Batch)
	if err != nil {
		// A server of the cluster lost, a consumer leader being elected: it may pass.
		return nil, c.transient(ctx, err)
	}
	if len(msgs) > 0 {
		return msgs, nil
	}
	wait, cancel := context.WithTimeout(ctx, c.cfg.IdleWait)
	defer cancel()
	first, err := cons.Next(jetstream.FetchContext(wait))
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return nil, nil
	case errors.Is(err, nats.ErrTimeout), errors.Is(err, context.DeadlineExceeded), errors.Is(err, jetstream.ErrNoMessages):
		return nil, nil
	default:
		return nil, c.transient(ctx, fmt.Errorf("analytics: fetch: %w", err))
	}
	rest, err := c.noWait(cons, c.cfg.Batch-1)
	if err != nil {
		// Store what we have; the rest comes again.
		c.log.Warn("analytics fetch", "err", err)
	}
	return append([]jetstream.Msg{first}, rest...), nil
}

// noWait fetches the events waiting now, up to n.
func (c *Consumer) noWait(cons jetstream.Consumer, n int) ([]jetstream.Msg, error) {
	if n <= 0 {
		return nil, nil
	}
	b, err := cons.FetchNoWait(n)
	if err != nil {
		return nil, fmt.Errorf("analytics: fetch: %w", err)
	}
	var out []jetstream.Msg
	for m := range b.Messages() {
		out = append(out, m)
	}
	if err := b.Error(); err != nil && !errors.Is(err, jetstream.ErrNoMessages) && !errors.Is(err, nats.ErrTimeout) {
		if len(out) > 0 {
			return out, nil
		}
		return nil, fmt.Errorf("analytics: fetch: %w", err)
	}
	return out, nil
}

// transient waits a little after a fetch failure that may pass (a reconnect) and reports
// nothing; it returns the error when the connection is closed for good.
func (c *Consumer) transient(ctx context.Context, err error) error {
	if errors.Is(err, nats.ErrConnectionClosed) || errors.Is(err, jetstream.ErrConsumerDeleted) {
		return err
	}
	c.log.Warn("analytics fetch failed; retrying", "err", err)
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return nil
}

// handle stores one batch and acks it.
func (c *Consumer) handle(ctx context.Context, batch int, msgs []jetstream.Msg) error {
	var ds []Delivered
	var malformed int
	for _, m := range msgs {
		var streamSeq uint64
		if md, err := m.Metadata(); err == nil {
			streamSeq = md.Sequence.Stream
		}
		evs, err := bus.Decode(m.Headers(), m.Data())
		if err != nil {
			malformed++
			c.log.Error("analytics: malformed message skipped", "subject", m.Subject(), "stream_seq", streamSeq, "err", err)
			continue
		}
		for _, ev := range evs {
			if err := bus.ValidMatchID(ev.GetMatchId()); err != nil || ev.GetSeq() == 0 {
				// Nothing to store it under; it stays in the stream for anyone to inspect.
				malformed++
				c.log.Error("analytics: malformed event skipped", "subject", m.Subject(), "stream_seq", streamSeq, "seq", ev.GetSeq(), "err", err)
				continue
			}
			ds = append(ds, Delivered{Event: ev, StreamSeq: streamSeq})
		}
	}
	// Finish the batch even if ctx ends now: what was fetched is committed, then acked.
	ictx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ingestTimeout)
	defer cancel()
	st, err := c.store.Ingest(ictx, c.reg, ds)
	if err != nil {
		// Nothing was committed; the events come again after AckWait. Nak them so they come
		// back at once to whoever runs next.
		for _, m := range msgs {
			_ = m.Nak()
		}
		return err
	}
	c.mu.Lock()
	c.stats.Batches++
	c.stats.Delivered += len(ds) + malformed
	c.stats.Stored += st.Stored
	c.stats.Duplicates += st.Duplicates
	c.stats.Malformed += malformed
	c.stats.Computed += len(st.Computed)
	c.mu.Unlock()
	for _, id := range st.Computed {
		c.log.Debug("match computed", "match_id", id)
	}
	if c.afterCommit != nil && !c.afterCommit(batch) {
		return errStopped
	}
	for _, m := range msgs {
		if err := m.Ack(); err != nil {
			// The event comes again and is ignored then.
			c.log.Warn("analytics ack failed", "subject", m.Subject(), "err", err)
		}
	}
	return nil
}
