package gateway

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/time/rate"

	"github.com/parley-arena/parley/referee/policy"
)

// keyedLimiter is a rate limit per key (a client address, a team), with at most max keys kept:
// when full, keys unused for a while are forgotten first, so that a flood of new addresses
// cannot grow it without end.
type keyedLimiter struct {
	limit rate.Limit
	burst int
	max   int

	mu        sync.Mutex
	byKey     map[string]*limited
	lastSweep time.Time // a full map is swept at most once a second: a flood of new keys pays nothing more
}

type limited struct {
	l    *rate.Limiter
	used time.Time
}

// newKeyedLimiter allows perMinute events a minute per key, burst at once (0: unlimited).
func newKeyedLimiter(perMinute float64, burst int) *keyedLimiter {
	if perMinute <= 0 {
		return nil
	}
	return &keyedLimiter{limit: rate.Limit(perMinute / 60), burst: max(burst, 1), max: 100_000, byKey: map[string]*limited{}}
}

// allow reports whether key may go on now (always, for a nil limiter).
func (k *keyedLimiter) allow(key string) bool {
	if k == nil {
		return true
	}
	now := time.Now()
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.byKey[key]
	if !ok {
		if len(k.byKey) >= k.max && now.Sub(k.lastSweep) >= time.Second {
			k.lastSweep = now
			for key, e := range k.byKey {
				if now.Sub(e.used) > time.Minute {
					delete(k.byKey, key)
				}
			}
		}
		if len(k.byKey) >= k.max {
			return false // every key busy: nobody new until some go quiet
		}
		e = &limited{l: rate.NewLimiter(k.limit, k.burst)}
		k.byKey[key] = e
	}
	e.used = now
	return e.l.Allow()
}

// callers tells who asks: a spectator (no token), a team (its token) or the organiser (the
// admin token), and applies the quotas of starting things and of failed tokens.
type callers struct {
	teams        Teams
	adminToken   string
	starts       *keyedLimiter
	authFailures *keyedLimiter
	perMinute    int
}

// bearer returns the request's bearer token ("" when it has none).
func bearer(h http.Header) (string, error) {
	auth := h.Get("Authorization")
	if auth == "" {
		return "", nil
	}
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || strings.TrimSpace(token) == "" {
		return "", connect.NewError(connect.CodeUnauthenticated, errors.New(`the Authorization header must be "Bearer TOKEN"`))
	}
	return strings.TrimSpace(token), nil
}

// of returns who sends a request with header h from client: Unauthenticated (401) for a
// token that is neither the admin's nor a team's, ResourceExhausted (429) once a client has
// failed too often.
func (c *callers) of(ctx context.Context, h http.Header, client string) (policy.Caller, error) {
	caller := policy.Caller{Role: policy.Spectator, Client: client}
	token, err := bearer(h)
	switch {
	case err != nil:
		return caller, c.failed(client, err)
	case token == "":
		return caller, nil
	case c.adminToken != "" && subtle.ConstantTimeCompare([]byte(token), []byte(c.adminToken)) == 1:
		caller.Role = policy.Organiser
		return caller, nil
	case c.teams == nil:
		return caller, c.failed(client, connect.NewError(connect.CodeUnauthenticated, errors.New("the token is not valid")))
	}
	team, err := c.teams.Authenticate(ctx, token)
	if err != nil {
		return caller, c.failed(client, fromGRPC(err))
	}
	caller.Role, caller.Team = policy.Team, team
	return caller, nil
}

// failed counts a failed token attempt of client and returns err, or ResourceExhausted once
// the client has failed too often.
func (c *callers) failed(client string, err error) error {
	if connect.CodeOf(err) != connect.CodeUnauthenticated {
		return err
	}
	if !c.authFailures.allow(client) {
		return connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("too many failed token attempts from %s; wait a minute", client))
	}
	return err
}

// start checks that caller may start one more match or tournament now.
func (c *callers) start(caller policy.Caller) error {
	key := "client " + caller.Client
	switch caller.Role {
	case policy.Organiser:
		return nil
	case policy.Team:
		key = "team " + caller.Team
	}
	if !c.starts.allow(key) {
		return connect.NewError(connect.CodeResourceExhausted, fmt.Errorf("%s may start at most %d matches, tournaments or seat reservations a minute (starts_per_minute); wait a little", key, c.perMinute))
	}
	return nil
}

// starting returns ctx for a call that starts something on caller's behalf: checked against
// the starts quota, and carrying the caller to the referee.
func (g *Gateway) starting(ctx context.Context, h http.Header, peer string) (context.Context, error) {
	caller, err := g.callers.of(ctx, h, clientAddr(peer))
	if err != nil {
		return nil, err
	}
	if err := g.callers.start(caller); err != nil {
		return nil, err
	}
	return policy.Outgoing(ctx, caller), nil
}

// calling passes who calls on to the service without counting a start (a cancellation).
func (g *Gateway) calling(ctx context.Context, h http.Header, peer string) (context.Context, error) {
	caller, err := g.callers.of(ctx, h, clientAddr(peer))
	if err != nil {
		return nil, err
	}
	return policy.Outgoing(ctx, caller), nil
}

// seatReservations is the route of the human hub (mounted through Config.Mount) that reserves a
// seat for a match not started yet.
const seatReservations = "/api/v1/seats"

// quotaSeatReservations counts each seat reservation as a start of its caller: a reserved seat
// is held for its match a while, and the hub holds a bounded number for everyone.
func (g *Gateway) quotaSeatReservations(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != seatReservations {
			next.ServeHTTP(w, r)
			return
		}
		if _, err := g.starting(r.Context(), r.Header, r.RemoteAddr); err != nil {
			writeErr(w, err)
			return
		}
		if g.cfg.SeatBudget == nil {
			next.ServeHTTP(w, r)
			return
		}
		caller, err := g.callers.of(r.Context(), r.Header, clientAddr(r.RemoteAddr))
		if err != nil {
			writeErr(w, err)
			return
		}
		release, err := g.cfg.SeatBudget(caller)
		if err != nil {
			writeErr(w, connect.NewError(connect.CodeResourceExhausted, err))
			return
		}
		rec := &statusRecorder{ResponseWriter: w, code: http.StatusOK}
		next.ServeHTTP(rec, r)
		if rec.code >= 300 {
			release()
			return
		}
		hold := g.cfg.SeatHold
		if hold <= 0 {
			hold = 15 * time.Minute
		}
		time.AfterFunc(hold, release) // the seat is dropped by then, or its match holds it
	})
}

// statusRecorder remembers the status a handler answered with.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.code = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
