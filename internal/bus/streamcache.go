package bus

import (
	"context"
	"sync"

	"github.com/nats-io/nats.go/jetstream"
)

// StreamCache is a JetStream whose Stream keeps each stream's handle once made: making one
// costs a STREAM.INFO request, and code that looks up messages by subject (LastMsg) on every
// match would pay it on every lookup. A kept handle's CachedInfo is as of when it was made
// (or the stream last created or updated through the cache); call Info for fresh settings. A
// stream found deleted is forgotten, so its next handle is made afresh.
type StreamCache struct {
	jetstream.JetStream

	mu      sync.Mutex
	streams map[string]jetstream.Stream
}

// NewStreamCache wraps js.
func NewStreamCache(js jetstream.JetStream) *StreamCache {
	return &StreamCache{JetStream: js, streams: make(map[string]jetstream.Stream)}
}

// Stream returns the kept handle of the stream name, making it the first time.
func (c *StreamCache) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	c.mu.Lock()
	st := c.streams[name]
	c.mu.Unlock()
	if st != nil {
		return st, nil
	}
	st, err := c.JetStream.Stream(ctx, name)
	if err != nil {
		return nil, err
	}
	return c.keep(name, st), nil
}

func (c *StreamCache) keep(name string, st jetstream.Stream) jetstream.Stream {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.streams[name] = st
	return st
}

// Forget drops the handle of the stream name (after an error saying the stream is gone).
func (c *StreamCache) Forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, name)
}

// CreateStream creates a stream and keeps its handle.
func (c *StreamCache) CreateStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	st, err := c.JetStream.CreateStream(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return c.keep(cfg.Name, st), nil
}

// UpdateStream updates a stream and keeps its new handle.
func (c *StreamCache) UpdateStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	st, err := c.JetStream.UpdateStream(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return c.keep(cfg.Name, st), nil
}

// CreateOrUpdateStream creates or updates a stream and keeps its handle.
func (c *StreamCache) CreateOrUpdateStream(ctx context.Context, cfg jetstream.StreamConfig) (jetstream.Stream, error) {
	st, err := c.JetStream.CreateOrUpdateStream(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return c.keep(cfg.Name, st), nil
}

// DeleteStream deletes a stream and forgets its handle.
func (c *StreamCache) DeleteStream(ctx context.Context, name string) error {
	c.Forget(name)
	return c.JetStream.DeleteStream(ctx, name)
}

// forgetGone drops the handle of stream after a failed lookup: the stream may be gone, or
// its settings changed; the next handle is made afresh.
func forgetGone(js jetstream.JetStream, stream string) {
	if c, ok := js.(*StreamCache); ok {
		c.Forget(stream)
	}
}
