package agentconn

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
)

// Pool defaults.
const (
	// DefaultPoolIdle is how long a pooled connection nobody uses is kept once the pool dials
	// another target (a pool that dials nothing new keeps its few connections; gRPC itself
	// lets an unused one go idle and drops its transport).
	DefaultPoolIdle = 2 * time.Minute
	// DefaultPoolSize bounds the connections a pool keeps; past it, the ones idle longest are
	// closed first (connections in use are never closed).
	DefaultPoolSize = 256
)

// ErrPoolClosed is returned by opening through a closed pool.
var ErrPoolClosed = errors.New("agentconn: pool closed")

// Pool keeps the gRPC connections a Resolver dials, one per target, for every match that plays
// there, instead of a connection (two TCP handshakes, HTTP/2 set-up, two transports' buffers
// and goroutines) per agent per match. A connection also remembers what its agent answered to
// Describe, until the connection is lost (the agent may have restarted as another version).
// It also keeps, between matches, the Conns of local agents that may play match after match
// (Local.Reusable), with their Play streams: a stream opened and torn down per seat and match
// was a tenth of a short match's cost. Whoever owns the resolver creates the pool and closes
// it when done: Close closes every connection, in use or not, and the local Conns kept.
type Pool struct {
	// Idle is how long an unused connection is kept when the pool dials another target
	// (0: DefaultPoolIdle).
	Idle time.Duration
	// Size bounds the connections kept (0: DefaultPoolSize).
	Size int

	mu     sync.Mutex
	conns  map[string]*pooled
	closed bool

	// Conns of reusable local agents (Local.Reusable): those lent to a match, and those kept
	// between matches, by key, oldest first; at most Size kept, none past Idle.
	lent       map[*Conn]*localConn
	idleLocals map[localKey][]*localConn
	nIdle      int
}

// NewPool returns an empty pool with the default settings.
func NewPool() *Pool { return &Pool{} }

// pooled is one shared connection.
type pooled struct {
	target string
	cc     *grpc.ClientConn
	client *describeCache
	// streams says whether the agent serves Play, for every Conn on the connection; park
	// keeps the Play streams its Conns are done with, when the agent's streams span matches.
	streams streams
	park    *streamPark
	refs    int       // Conns open on it
	idle    time.Time // when refs last fell to 0
	stop    context.CancelFunc
}

// acquire returns the connection to target, dialling it under the rule with opts the first
// time, and counts one more user of it.
func (p *Pool) acquire(target string, dial DialRule, opts []grpc.DialOption) (*pooled, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrPoolClosed
	}
	if c := p.conns[target]; c != nil {
		c.refs++
		return c, nil
	}
	p.evictLocked(time.Now())
	cc, err := newClient(target, dial, opts)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	c := &pooled{target: target, cc: cc, refs: 1, stop: stop, park: &streamPark{ctx: ctx, idle: p.idle()}}
	c.client = &describeCache{AgentServiceClient: agentv1.NewAgentServiceClient(cc)}
	// A connection lost takes its streams with it; the agent may come back as another.
	go c.client.forgetOnReconnect(ctx, cc, c.park.clear)
	if p.conns == nil {
		p.conns = make(map[string]*pooled)
	}
	p.conns[target] = c
	return c, nil
}

// localKey names the agents one LocalAgents serves at one address.
type localKey struct {
	l    LocalAgents
	addr string
}

// localKeyOf returns the key of addr as l serves it, and whether Conns to it may be kept: only
// when l can be told from other LocalAgents (its value is comparable).
func localKeyOf(l LocalAgents, addr string) (localKey, bool) {
	return localKey{l: l, addr: addr}, reflect.ValueOf(l).Comparable()
}

// localConn is a Conn to a reusable local agent.
type localConn struct {
	key   localKey
	conn  *Conn
	seat  *seatClient
	stop  func() error // closes it for good
	since time.Time    // when it was last put back
}

// lendLocal counts c, just opened to a reusable local agent, as lent; stop closes it for good.
func (p *Pool) lendLocal(key localKey, c *Conn, seat *seatClient, stop func() error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.lent == nil {
		p.lent = make(map[*Conn]*localConn)
	}
	p.lent[c] = &localConn{key: key, conn: c, seat: seat, stop: stop}
}

// takeLocal lends a kept Conn to key's agent, if there is one, the last one put back first.
func (p *Pool) takeLocal(key localKey) *Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.idleLocals[key]
	if p.closed || len(kept) == 0 {
		return nil
	}
	lc := kept[len(kept)-1]
	p.idleLocals[key] = kept[:len(kept)-1]
	p.nIdle--
	p.lent[lc.conn] = lc
	lc.seat.newMatch()
	return lc.conn
}

// putLocal takes back a lent Conn, keeping it for the next match when the pool has room, or
// closes it. Closing it again does nothing.
func (p *Pool) putLocal(c *Conn) error {
	p.mu.Lock()
	lc := p.lent[c]
	if lc == nil {
		p.mu.Unlock()
		return nil
	}
	delete(p.lent, c)
	now := time.Now()
	stale := p.dropStaleLocalsLocked(now)
	size := p.Size
	if size <= 0 {
		size = DefaultPoolSize
	}
	if p.closed || p.nIdle >= size {
		stale = append(stale, lc)
	} else {
		lc.since = now
		if p.idleLocals == nil {
			p.idleLocals = make(map[localKey][]*localConn)
		}
		p.idleLocals[lc.key] = append(p.idleLocals[lc.key], lc)
		p.nIdle++
	}
	p.mu.Unlock()
	return closeLocals(stale)
}

// idle is how long an unused connection, local Conn or parked stream is kept.
func (p *Pool) idle() time.Duration {
	if p.Idle <= 0 {
		return DefaultPoolIdle
	}
	return p.Idle
}

// dropStaleLocalsLocked removes the kept Conns idle for longer than Idle and returns them.
func (p *Pool) dropStaleLocalsLocked(now time.Time) []*localConn {
	idleFor := p.idle()
	var stale []*localConn
	for key, kept := range p.idleLocals {
		n := 0
		for n < len(kept) && now.Sub(kept[n].since) > idleFor {
			n++
		}
		if n == 0 {
			continue
		}
		stale = append(stale, kept[:n]...)
		p.idleLocals[key] = slices.Delete(kept, 0, n)
		p.nIdle -= n
	}
	return stale
}

// closeLocals closes Conns of local agents for good.
func closeLocals(lcs []*localConn) error {
	var errs []error
	for _, lc := range lcs {
		errs = append(errs, lc.stop())
	}
	return errors.Join(errs...)
}

// release counts one user less of c.
func (p *Pool) release(c *pooled) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.refs--
	if c.refs == 0 {
		c.idle = time.Now()
	}
}

// evictLocked closes the connections idle for longer than Idle, and, while more than Size
// remain, those idle longest.
func (p *Pool) evictLocked(now time.Time) {
	idleFor, size := p.idle(), p.Size
	if size <= 0 {
		size = DefaultPoolSize
	}
	var idle []*pooled
	for _, c := range p.conns {
		if c.refs > 0 {
			continue
		}
		if now.Sub(c.idle) > idleFor {
			p.closeLocked(c)
			continue
		}
		idle = append(idle, c)
	}
	slices.SortFunc(idle, func(a, b *pooled) int { return a.idle.Compare(b.idle) })
	for len(p.conns) >= size && len(idle) > 0 {
		p.closeLocked(idle[0])
		idle = idle[1:]
	}
}

func (p *Pool) closeLocked(c *pooled) {
	delete(p.conns, c.target)
	c.stop()
	c.cc.Close()
}

// Len returns how many connections the pool holds.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// Close closes every connection of the pool; opening through it fails from then on.
func (p *Pool) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, c := range p.conns {
		p.closeLocked(c)
	}
	var kept []*localConn
	for _, lcs := range p.idleLocals {
		kept = append(kept, lcs...)
	}
	p.idleLocals, p.nIdle = nil, 0
	return closeLocals(kept) // lent ones close when their match closes them
}

// dialPooled opens addr over the pool's connection to target.
func (r *Resolver) dialPooled(addr, target string) (*Conn, error) {
	c, err := r.Pool.acquire(target, r.Dial, r.Options)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w", addr, err)
	}
	var once sync.Once
	seat := newSeatClient(c.client, &c.streams, c.park)
	return &Conn{Client: seat, Addr: addr, Target: target, conn: c.cc, close: func() error {
		once.Do(func() {
			seat.close()
			r.Pool.release(c)
		})
		return nil
	}}, nil
}

// describeCache is an agent client that asks Describe over the network once per connection:
// the answer is kept until the connection leaves the ready state (lost, or idle), since an
// agent that comes back may be another version. An agent of this process is described from
// the start, for good.
type describeCache struct {
	agentv1.AgentServiceClient

	mu   sync.Mutex
	resp *agentv1.DescribeResponse
	gen  uint64 // counts the times the connection left the ready state
}

func (d *describeCache) Describe(ctx context.Context, in *agentv1.DescribeRequest, opts ...grpc.CallOption) (*agentv1.DescribeResponse, error) {
	d.mu.Lock()
	resp, gen := d.resp, d.gen
	d.mu.Unlock()
	if resp != nil {
		return proto.CloneOf(resp), nil
	}
	resp, err := d.AgentServiceClient.Describe(ctx, in, opts...)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	if d.gen == gen { // else the answer may come from the agent as it was before a reconnect
		d.resp = proto.CloneOf(resp)
	}
	d.mu.Unlock()
	return resp, nil
}

// known returns the kept answer, or nil; it must not be changed.
func (d *describeCache) known() *agentv1.DescribeResponse {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.resp
}

// forget drops the kept answer.
func (d *describeCache) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.resp = nil
	d.gen++
}

// forgetOnReconnect drops the kept answer, and calls also, whenever cc leaves the ready state,
// until ctx ends.
func (d *describeCache) forgetOnReconnect(ctx context.Context, cc *grpc.ClientConn, also func()) {
	for {
		s := cc.GetState()
		if !cc.WaitForStateChange(ctx, s) {
			return
		}
		if s == connectivity.Ready { // it left the ready state, however briefly
			d.forget()
			also()
		}
	}
}
