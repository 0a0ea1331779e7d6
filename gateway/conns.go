package gateway

import (
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of the connection limits when the policy does not set them.
const (
	DefaultConnsPerClient = 64
	DefaultReservedFiles  = 1024
	DefaultReadTimeout    = 15 * time.Second
	// fdCheckEvery is how often the process's open descriptors are counted.
	fdCheckEvery = time.Second
)

// connLimiter is a listener that keeps the edge's connections within the process's file
// limit: at most perClient open from one address, at most total in all, and none new while
// the process as a whole is short of descriptors — the store, agents' connections and logs keep
// reserve of them. With total reached, a newcomer takes the oldest connection of the address
// holding the most (when that is more than the newcomer would hold), so that however many
// connections a few addresses open, another address still gets in. A connection over a bound
// is answered with one HTTP error and closed.
type connLimiter struct {
	net.Listener
	perClient, total int
	limit, reserve   int // the file limit (0: unknown) and the descriptors kept for the rest
	log              *slog.Logger

	mu    sync.Mutex
	open  int
	byKey map[string][]*limitedConn // oldest first

	short    atomic.Bool // the process's open descriptors reach limit - reserve/2
	refused  atomic.Int64
	stop     chan struct{}
	stopOnce sync.Once
}

// connLimits are the bounds of the edge's listener, from the policy and the file limit.
type connLimits struct {
	perClient, total, limit, reserve int
}

// edgeLimits works out the listener's bounds: the policy's, within the file limit less the
// reserve (at most half the limit).
func edgeLimits(perClient, total, reserved int) connLimits {
	if perClient <= 0 {
		perClient = DefaultConnsPerClient
	}
	if reserved <= 0 {
		reserved = DefaultReservedFiles
	}
	l := connLimits{perClient: perClient, total: total, limit: fileLimit()}
	if l.limit > 0 {
		l.reserve = min(reserved, l.limit/2)
		if l.total <= 0 || l.total > l.limit-l.reserve {
			l.total = l.limit - l.reserve
		}
	}
	return l
}

// Listener returns lis bounded by the policy's connection limits (max_conns_per_client,
// max_conns, reserved_files): serve the gateway on it.
func (g *Gateway) Listener(lis net.Listener) net.Listener {
	var perClient, total, reserved int
	if p := g.cfg.Policy; p != nil {
		perClient, total, reserved = p.MaxConnsPerClient, p.MaxConns, p.ReservedFiles
	}
	l := edgeLimits(perClient, total, reserved)
	c := &connLimiter{
		Listener: lis, perClient: l.perClient, total: l.total, limit: l.limit, reserve: l.reserve,
		log: g.log, byKey: map[string][]*limitedConn{}, stop: make(chan struct{}),
	}
	if l.limit > 0 && openFiles() >= 0 {
		go c.watchFiles()
	}
	g.log.Info("edge connection limits", "per_client", l.perClient, "total", l.total, "file_limit", l.limit, "reserved_files", l.reserve)
	return c
}

// ReadHeaderTimeout is how long a client may take to send a request's headers; its body gets
// as long again (see limitBody).
func (g *Gateway) ReadHeaderTimeout() time.Duration { return g.readTimeout() }

func (g *Gateway) readTimeout() time.Duration {
	if p := g.cfg.Policy; p != nil && p.ReadTimeout > 0 {
		return p.ReadTimeout
	}
	return DefaultReadTimeout
}

// watchFiles counts the process's open descriptors every fdCheckEvery until Close.
func (c *connLimiter) watchFiles() {
	tick := time.NewTicker(fdCheckEvery)
	defer tick.Stop()
	for {
		n := openFiles()
		short := n >= c.limit-c.reserve/2
		if was := c.short.Swap(short); was != short {
			if short {
				c.log.Warn("descriptors run short: refusing new connections", "open", n, "limit", c.limit)
			} else {
				c.log.Warn("descriptors free again: taking connections", "open", n, "limit", c.limit)
			}
		}
		select {
		case <-c.stop:
			return
		case <-tick.C:
		}
	}
}

// Accept returns the next connection within the bounds, refusing the others as they come.
func (c *connLimiter) Accept() (net.Conn, error) {
	for {
		conn, err := c.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: conn, key: clientAddr(conn.RemoteAddr().String())}
		lc.release = func() { c.release(lc) }
		why, status, evicted := c.admit(lc)
		if evicted != nil {
			evicted.Conn.Close() // its server side sees the connection end
		}
		if why == "" {
			return lc, nil
		}
		c.refused.Add(1)
		refuseConn(conn, status, why)
	}
}

// admit takes a slot for lc, or says why not with the HTTP status to answer. With every slot
// taken it frees the oldest connection of the address holding the most, and returns it to be
// closed.
func (c *connLimiter) admit(lc *limitedConn) (why string, status int, evicted *limitedConn) {
	if c.short.Load() {
		return "the server is short of file descriptors; try again shortly", 503, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	mine := len(c.byKey[lc.key])
	if mine >= c.perClient {
		return fmt.Sprintf("too many connections from this address (at most %d, max_conns_per_client); close some first", c.perClient), 429, nil
	}
	if c.total > 0 && c.open >= c.total {
		heaviest := ""
		for key, conns := range c.byKey {
			if len(conns) > len(c.byKey[heaviest]) {
				heaviest = key
			}
		}
		if len(c.byKey[heaviest]) <= mine+1 {
			return fmt.Sprintf("the server holds as many connections as it takes (%d); try again shortly", c.total), 503, nil
		}
		evicted = c.byKey[heaviest][0]
		evicted.once.Do(func() { c.forget(evicted) })
	}
	c.open++
	c.byKey[lc.key] = append(c.byKey[lc.key], lc)
	return "", 0, evicted
}

func (c *connLimiter) release(lc *limitedConn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forget(lc)
}

// forget gives lc's slot back; c.mu is held.
func (c *connLimiter) forget(lc *limitedConn) {
	conns := c.byKey[lc.key]
	for i, o := range conns {
		if o == lc {
			conns = append(conns[:i], conns[i+1:]...)
			c.open--
			break
		}
	}
	if len(conns) == 0 {
		delete(c.byKey, lc.key)
	} else {
		c.byKey[lc.key] = conns
	}
}

// Close stops watching descriptors and closes the listener.
func (c *connLimiter) Close() error {
	c.stopOnce.Do(func() { close(c.stop) })
	return c.Listener.Close()
}

// refuseConn answers a connection it will not serve with one HTTP error and closes it, without
// waiting on a client that does not read.
func refuseConn(conn net.Conn, status int, why string) {
	body := fmt.Sprintf(`{"code":"resource_exhausted","message":%q}`, why)
	if status == 503 {
		body = fmt.Sprintf(`{"code":"unavailable","message":%q}`, why)
	}
	_ = conn.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	_, _ = fmt.Fprintf(conn, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		status, statusText(status), len(body), body)
	_ = conn.Close()
}

func statusText(status int) string {
	if status == 429 {
		return "Too Many Requests"
	}
	return "Service Unavailable"
}

// limitedConn gives its slot back once, when closed (or when another takes it).
type limitedConn struct {
	net.Conn
	key     string
	once    sync.Once
	release func()
}

func (c *limitedConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}

// openFiles counts the process's open descriptors (-1 where it cannot be told).
func openFiles() int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return -1
	}
	defer d.Close()
	n := 0
	for {
		names, err := d.Readdirnames(4096)
		n += len(names)
		if err != nil || len(names) == 0 {
			break
		}
	}
	return n - 1 // the directory itself
}
