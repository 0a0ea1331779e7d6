// Package human seats a person in a match. A Seat is an sdk.Agent whose Act publishes the
// observation to a waiting browser and blocks until the person submits an action, or until the
// move's deadline passes: then Act returns the context's error, and the referee applies the
// game's default move and records the fault, as for any agent that answers too late.
//
// Seats live in a Hub, which serves them over HTTP (see Hub.ServeHTTP): each seat has one
// unguessable token, and whoever holds the token plays the seat. Agent addresses name human
// seats as "human" or "human:NAME" (a fresh seat; its token is read from the Seat, e.g. by
// `parley play`, which prints the seat's URL) or "human:NAME?ticket=ID" (the seat a browser
// reserved with POST /api/v1/seats, which returned both the token and this address).
package human

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// Errors returned by Hub and Seat methods.
var (
	// ErrBadAddress is wrapped by errors about a human agent address that cannot be used.
	ErrBadAddress = errors.New("bad human agent address")
	// ErrClosed is returned by Act once the seat is closed (its match is over or stopped).
	ErrClosed = errors.New("human: seat closed")
	// ErrFull is returned when the hub already holds as many seats as it may.
	ErrFull = errors.New("human: too many seats open")
	// ErrNotServed is returned by Open when nothing serves the hub's seats over HTTP (Mount
	// was never called), so no person could ever reach the seat.
	ErrNotServed = errors.New("human: no web page serves human seats in this process: play with `parley up` (the form's human seats) or `parley play --agent human`")
	// ErrNoTicket is wrapped when an address names a ticket the hub does not hold (unknown,
	// expired, or already used by another match).
	ErrNoTicket = errors.New("human: no such ticket")
)

// Defaults of a Hub.
const (
	// DefaultMaxSeats is how many seats (open, reserved or lingering) a hub holds at most.
	DefaultMaxSeats = 256
	// DefaultTicketTTL is how long a reserved seat waits for a match to use it.
	DefaultTicketTTL = 15 * time.Minute
	// DefaultLinger is how long a closed seat stays readable, so the page shows the outcome.
	DefaultLinger = 10 * time.Minute
	// DefaultMaxStreams is how many live streams one seat serves at once.
	DefaultMaxStreams = 4
	// MaxActionBytes is the largest action body the hub reads.
	MaxActionBytes = 64 << 10
)

// Hub holds the human seats of a process and serves them over HTTP. Its methods are safe for
// concurrent use.
type Hub struct {
	maxSeats   int
	ticketTTL  time.Duration
	linger     time.Duration
	maxStreams int
	keepAlive  time.Duration
	now        func() time.Time
	logger     *slog.Logger

	mu      sync.Mutex
	seats   map[string]*Seat // by token
	tickets map[string]*Seat // reserved seats not yet used, by ticket id

	handler http.Handler
	served  atomic.Bool // set once the hub's routes are served
}

// Option configures a Hub.
type Option func(*Hub)

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option { return func(h *Hub) { h.logger = l } }

// WithClock sets the clock (default time.Now).
func WithClock(now func() time.Time) Option { return func(h *Hub) { h.now = now } }

// WithMaxSeats sets how many seats the hub holds at most (default DefaultMaxSeats).
func WithMaxSeats(n int) Option { return func(h *Hub) { h.maxSeats = n } }

// WithTicketTTL sets how long a reserved seat waits for its match (default DefaultTicketTTL).
func WithTicketTTL(d time.Duration) Option { return func(h *Hub) { h.ticketTTL = d } }

// WithLinger sets how long a closed seat stays readable (default DefaultLinger).
func WithLinger(d time.Duration) Option { return func(h *Hub) { h.linger = d } }

// WithMaxStreams sets how many live streams one seat serves at once (default
// DefaultMaxStreams).
func WithMaxStreams(n int) Option { return func(h *Hub) { h.maxStreams = n } }

// WithKeepAlive sets the interval of keep-alive comments on live streams (default 15s).
func WithKeepAlive(d time.Duration) Option { return func(h *Hub) { h.keepAlive = d } }

// NewHub returns an empty hub.
func NewHub(opts ...Option) *Hub {
	h := &Hub{
		maxSeats:   DefaultMaxSeats,
		ticketTTL:  DefaultTicketTTL,
		linger:     DefaultLinger,
		maxStreams: DefaultMaxStreams,
		keepAlive:  15 * time.Second,
		now:        time.Now,
		logger:     slog.New(slog.DiscardHandler),
		seats:      make(map[string]*Seat),
		tickets:    make(map[string]*Seat),
	}
	for _, o := range opts {
		o(h)
	}
	h.handler = h.routes(http.NewServeMux())
	return h
}

// IsAddress reports whether an agent address names a human seat.
func IsAddress(spec string) bool {
	return spec == "human" || strings.HasPrefix(spec, "human:") || strings.HasPrefix(spec, "human?")
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$`)

// ParseAddress splits a human agent address ("human", "human:NAME", "human:NAME?ticket=ID")
// into the person's name (may be empty) and the ticket (empty for a fresh seat).
func ParseAddress(spec string) (name, ticket string, err error) {
	if !IsAddress(spec) {
		return "", "", fmt.Errorf("%w %q: want human, human:NAME or human:NAME?ticket=ID", ErrBadAddress, spec)
	}
	rest := strings.TrimPrefix(spec, "human")
	rest = strings.TrimPrefix(rest, ":")
	name, query, _ := strings.Cut(rest, "?")
	if name != "" && !nameRE.MatchString(name) {
		return "", "", fmt.Errorf("%w %q: a name is 1 to 32 letters, digits, '.', '_' or '-'", ErrBadAddress, spec)
	}
	settings, err := url.ParseQuery(query)
	if err != nil {
		return "", "", fmt.Errorf("%w %q: settings must be key=value", ErrBadAddress, spec)
	}
	for k := range settings {
		if k != "ticket" {
			return "", "", fmt.Errorf("%w %q: unknown setting %q (the only one is ticket)", ErrBadAddress, spec, k)
		}
	}
	return name, settings.Get("ticket"), nil
}

// Open returns the seat an agent address names: a fresh seat for "human" and "human:NAME",
// the reserved one for "human:NAME?ticket=ID" (a ticket is used once). It fails with
// ErrNotServed until the hub's routes are served (Mount or ServeHTTP).
func (h *Hub) Open(spec string) (*Seat, error) {
	name, ticket, err := ParseAddress(spec)
	if err != nil {
		return nil, err
	}
	if !h.served.Load() {
		return nil, ErrNotServed
	}
	if ticket == "" {
		return h.NewSeat(name)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.tickets[ticket]
	if !ok {
		return nil, noTicket(ticket)
	}
	delete(h.tickets, ticket)
	s.mu.Lock()
	s.reserved = false
	s.mu.Unlock()
	return s, nil
}

// Check returns the error Open would return for spec, without opening a seat or using its
// ticket: whoever queues a match for another part of the process to play checks its human
// addresses first.
func (h *Hub) Check(spec string) error {
	name, ticket, err := ParseAddress(spec)
	switch {
	case err != nil:
		return err
	case !h.served.Load():
		return ErrNotServed
	case ticket == "":
		return checkName(name)
	}
	h.mu.Lock()
	_, ok := h.tickets[ticket]
	h.mu.Unlock()
	if !ok {
		return noTicket(ticket)
	}
	return nil
}

func noTicket(ticket string) error {
	return fmt.Errorf("%w %q: reserve a seat with POST /api/v1/seats and use the address it returns, once", ErrNoTicket, ticket)
}

func checkName(name string) error {
	if name != "" && !nameRE.MatchString(name) {
		return fmt.Errorf("%w: name %q: 1 to 32 letters, digits, '.', '_' or '-'", ErrBadAddress, name)
	}
	return nil
}

// NewSeat opens a fresh seat for a person called name (may be empty).
func (h *Hub) NewSeat(name string) (*Seat, error) {
	if err := checkName(name); err != nil {
		return nil, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.addLocked(name, false)
}

// Reserve opens a seat for a match not started yet. It returns the seat and the agent address
// that seats it ("human:NAME?ticket=ID"); the seat is dropped if no match opens that address
// within the hub's ticket lifetime.
func (h *Hub) Reserve(name string) (*Seat, string, error) {
	if err := checkName(name); err != nil {
		return nil, "", err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	s, err := h.addLocked(name, true)
	if err != nil {
		return nil, "", err
	}
	ticket := randomID(9)
	h.tickets[ticket] = s
	time.AfterFunc(h.ticketTTL, func() {
		h.mu.Lock()
		_, unused := h.tickets[ticket]
		delete(h.tickets, ticket)
		h.mu.Unlock()
		if unused {
			s.Close()
			h.remove(s)
		}
	})
	addr := "human"
	if name != "" {
		addr += ":" + name
	}
	return s, addr + "?ticket=" + ticket, nil
}

func (h *Hub) addLocked(name string, reserved bool) (*Seat, error) {
	if len(h.seats) >= h.maxSeats && !h.evictLocked() {
		return nil, ErrFull
	}
	s := &Seat{
		hub:      h,
		token:    randomID(18),
		name:     name,
		reserved: reserved,
		done:     make(chan struct{}),
		changed:  make(chan struct{}),
		turn:     make(chan struct{}, 1),
	}
	h.seats[s.token] = s
	return s, nil
}

// evictLocked drops the seat that closed first, to make room; false if none is closed.
func (h *Hub) evictLocked() bool {
	var oldest *Seat
	for _, s := range h.seats {
		s.mu.Lock()
		closed, at := s.closed, s.closedAt
		s.mu.Unlock()
		if closed && (oldest == nil || at.Before(oldest.closedAt)) {
			oldest = s
		}
	}
	if oldest == nil {
		return false
	}
	delete(h.seats, oldest.token)
	return true
}

// Seat returns the seat with the token, if the hub holds it.
func (h *Hub) Seat(token string) (*Seat, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s, ok := h.seats[token]
	return s, ok
}

// AuthorizeSeat reports whether token is the token of the seat `seat` of match matchID, so
// that its bearer may see the match as that seat's player (the gateway's seat views). A seat
// knows its match from its first observation on.
func (h *Hub) AuthorizeSeat(_ context.Context, matchID string, seat int32, token string) bool {
	s, ok := h.Seat(token)
	if !ok {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last != nil && s.last.GetMatchId() == matchID && s.last.GetSeat() == seat
}

// Len returns the number of seats the hub holds.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.seats)
}

func (h *Hub) remove(s *Seat) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seats[s.token] == s {
		delete(h.seats, s.token)
	}
}

// randomID returns n random bytes, base64url-encoded.
func randomID(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never returns an error (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

// State says what a seat is doing.
type State string

// The states of a seat.
const (
	// StateWaiting: nothing to answer now (before the first move, or others are moving).
	StateWaiting State = "waiting"
	// StateActing: an observation waits for the person's action.
	StateActing State = "acting"
	// StateEnded: the match is over (or stopped); nothing more will be asked.
	StateEnded State = "ended"
)

// Seat is one person's seat in one match. It implements sdk.Agent and sdk.Describer.
type Seat struct {
	hub   *Hub
	token string
	name  string
	turn  chan struct{} // held by the Act in progress, so Acts take turns
	done  chan struct{} // closed by Close

	mu       sync.Mutex
	reserved bool
	pending  *pending
	last     *agentv1.Observation // the latest observation, answered or not
	note     string               // what just happened, for the page
	outcome  *matchv1.Outcome
	closed   bool
	closedAt time.Time
	version  uint64
	changed  chan struct{} // closed and replaced at every change
	streams  int
}

type pending struct {
	obs   *agentv1.Observation
	reply chan *agentv1.Action // buffered: one action
}

// Token returns the seat's secret token. Whoever holds it plays the seat.
func (s *Seat) Token() string { return s.token }

// Name returns the person's name (may be empty).
func (s *Seat) Name() string { return s.name }

// Path returns the path of the seat's page: /seat/TOKEN.
func (s *Seat) Path() string { return "/seat/" + s.token }

// Describe says who sits in the seat: a person, by name when given.
func (s *Seat) Describe() *gamev1.AgentInfo {
	name := "human"
	if s.name != "" {
		name += ":" + s.name
	}
	return &gamev1.AgentInfo{
		Name:        name,
		Description: "A person playing in a web browser.",
	}
}

// Act shows obs to the person and waits for their action. When ctx ends first (the move's
// deadline), it returns ctx's error and the referee applies the default move; when the seat
// is closed, ErrClosed. Concurrent calls take turns.
func (s *Seat) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	select {
	case s.turn <- struct{}{}:
		defer func() { <-s.turn }()
	case <-ctx.Done():
		return nil, fmt.Errorf("human: %w", ctx.Err())
	case <-s.done:
		return nil, ErrClosed
	}
	p := &pending{obs: obs, reply: make(chan *agentv1.Action, 1)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrClosed
	}
	s.pending, s.last, s.note = p, obs, ""
	s.changedLocked()
	s.mu.Unlock()

	select {
	case a := <-p.reply:
		return a, nil
	case <-ctx.Done():
	case <-s.done:
	}
	s.mu.Lock()
	if s.pending == p {
		s.pending = nil
		if ctx.Err() != nil {
			s.note = "Time ran out before you answered: the referee applied your default move."
		}
		s.changedLocked()
	}
	s.mu.Unlock()
	select {
	case a := <-p.reply: // submitted just as time ran out: the answer stands
		return a, nil
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("human: %w", err)
	}
	return nil, ErrClosed
}

// Submit hands the person's action to the waiting Act and returns the observation it answers.
// turn and attempt, when non-zero, must be those of that observation. It fails with ErrNotActing when no observation
// waits and ErrStale when the action answers another one.
func (s *Seat) Submit(a *agentv1.Action, turn, attempt int32) (answered *agentv1.Observation, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	switch {
	case s.closed:
		return nil, ErrClosed
	case p == nil:
		return nil, ErrNotActing
	case turn != 0 && turn != p.obs.GetTurn(), attempt != 0 && attempt != p.obs.GetAttempt():
		return nil, fmt.Errorf("%w: the seat is to answer turn %d, attempt %d", ErrStale, p.obs.GetTurn(), p.obs.GetAttempt())
	}
	p.reply <- a // buffered, and pending is cleared below: never blocks
	s.pending = nil
	s.note = "Your action was sent to the referee."
	s.changedLocked()
	return p.obs, nil
}

// Errors of Submit.
var (
	// ErrNotActing: the seat has no observation to answer now.
	ErrNotActing = errors.New("human: not your turn: nothing to answer now")
	// ErrStale: the action answers an observation that is no longer the current one.
	ErrStale = errors.New("human: stale action")
)

// End records how the match ended, for the seat's page. The seat stays open until Close.
func (s *Seat) End(outcome *matchv1.Outcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcome = outcome
	s.changedLocked()
}

// Close ends the seat: a waiting Act returns ErrClosed, the page is told the match is over,
// and the hub drops the seat after its linger time. Safe to call more than once.
func (s *Seat) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed, s.closedAt, s.pending = true, s.hub.now(), nil
	close(s.done)
	s.changedLocked()
	reserved := s.reserved
	s.mu.Unlock()
	if reserved {
		return nil // the ticket's timer drops it
	}
	time.AfterFunc(s.hub.linger, func() { s.hub.remove(s) })
	return nil
}

func (s *Seat) changedLocked() {
	s.version++
	close(s.changed)
	s.changed = make(chan struct{})
}

// Snapshot is what a seat's page is told: the seat's state with the latest observation.
type Snapshot struct {
	State State
	// Observation is the latest observation (the one to answer when State is StateActing).
	Observation *agentv1.Observation
	// Outcome is how the match ended, when known.
	Outcome *matchv1.Outcome
	// Note says what just happened, e.g. that time ran out.
	Note string
	// Name is the person's name.
	Name string
	// Version increases with every change.
	Version uint64
}

// Snapshot returns the seat's current state and a channel closed at its next change.
func (s *Seat) Snapshot() (Snapshot, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	snap := Snapshot{Observation: s.last, Outcome: s.outcome, Note: s.note, Name: s.name, Version: s.version}
	switch {
	case s.closed || s.outcome != nil:
		snap.State = StateEnded
	case s.pending != nil:
		snap.State = StateActing
	default:
		snap.State = StateWaiting
	}
	return snap, s.changed
}
