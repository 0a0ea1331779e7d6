// Package policy is the organiser's bounds on everything a request, a bot or a file can set,
// and on who may start what. It is checked once, in the one path every door takes to prepare a
// match (referee/launch) and a tournament (services/tournament), whatever the door: the local
// command line, the referee's gRPC API, or the gateway's HTTP API on behalf of a spectator or a
// team. A request over a bound is refused with the bound named.
//
// Three roles: a spectator (anonymous: watches, and starts what the policy lets anyone start),
// a team (its token: its own bots, its own registrations), the organiser (the admin token, or
// the local command line: anything within the runner's hard limits). The gateway tells the
// referee who is asking in the call's metadata (Outgoing, FromIncoming); a call without it is
// the organiser's, for the referee's port is the organiser's (never expose it).
package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/unicode/norm"
	"gopkg.in/yaml.v3"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

// RecordBytesCeiling is the most max_record_bytes may be: the largest record the house's
// services pass to each other whole (GetMatch answers with one).
const RecordBytesCeiling = 64 << 20

// Role is who is asking.
type Role int

// Roles, least trusted first.
const (
	Spectator Role = iota
	Team
	Organiser
)

func (r Role) String() string {
	switch r {
	case Team:
		return "team"
	case Organiser:
		return "organiser"
	default:
		return "spectator"
	}
}

// Caller is who asks for a match or a tournament.
type Caller struct {
	Role Role
	// Team is a team caller's team.
	Team string
	// Client is the network address the request came from (for quotas and logs).
	Client string
}

// Owner names who a caller's matches and tournaments are played for, as the work queue and
// cancellation know them: "organiser", "team:<team>" or "client:<address>" (an anonymous
// caller is its address, as its budget is).
func (c Caller) Owner() string {
	switch c.Role {
	case Organiser:
		return "organiser"
	case Team:
		return "team:" + c.Team
	default:
		return "client:" + c.Client
	}
}

// Cancels says whether c may cancel what owner (an Owner) started, and as whom ("its owner"
// or "the organiser"): only its owner and the organiser may. Something started before owners
// were recorded (owner "") is the organiser's to cancel.
func (c Caller) Cancels(owner string) (by string, ok bool) {
	switch {
	case c.Role == Organiser:
		return "the organiser", true
	case owner != "" && c.Owner() == owner:
		return "its owner", true
	}
	return "", false
}

// ErrRefused is wrapped by every refusal of a policy.
var ErrRefused = errors.New("refused by the organiser's policy")

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, args...))
}

// Policy is what the organiser allows. The zero value allows nothing but the organiser's own
// requests within the runner's hard limits; Default is the safe starting point.
type Policy struct {
	// MaxMoveTimeout, MaxRetries and MaxReplyBytes bound a match's Limits (for every caller
	// but the organiser; the runner's hard limits bound the organiser's).
	MaxMoveTimeout time.Duration `yaml:"max_move_timeout"`
	MaxRetries     int32         `yaml:"max_retries"`
	MaxReplyBytes  int32         `yaml:"max_reply_bytes"`
	// HumanMoveTimeout is the time per move of a match with a person in a seat, whatever
	// door it came in by, when its request sets no move timeout (0: the preparer's default,
	// launch.DefaultHumanMoveTimeout). The organiser's setting: MaxMoveTimeout does not bound
	// it, the runner's hard limit does.
	HumanMoveTimeout time.Duration `yaml:"human_move_timeout"`
	// MaxMatchTime is the longest a match may last, wall clock; past it the match ends void
	// saying so. For every caller (0: no bound).
	MaxMatchTime time.Duration `yaml:"max_match_time"`
	// MaxRecordBytes bounds a match's record, for every caller (0: RecordBytesCeiling, the
	// most it may be): each seat may fill an equal share with its own events,
	// and plays the game's default move once it has, recorded as its fault.
	MaxRecordBytes int64 `yaml:"max_record_bytes"`
	// MaxTournamentMatches and MaxGamesPerAssignment bound a tournament's size; MaxConcurrency
	// its matches outstanding at once (organisers included).
	MaxTournamentMatches  int `yaml:"max_tournament_matches"`
	MaxGamesPerAssignment int `yaml:"max_games_per_assignment"`
	MaxConcurrency        int `yaml:"max_concurrency"`
	// Dial lists where the referee may dial agents: networks ("10.0.0.0/8", "127.0.0.1/32")
	// and host names ("bots.example.org"); "*" is anywhere. Empty: nowhere, so only built-in
	// agents, people and dial-out bots play. It applies to every address the referee dials,
	// given in a request or registered by a team, whoever asks.
	Dial []string `yaml:"dial"`
	// SpectatorsStart says what anonymous callers may start: "matches", "tournaments"
	// (matches too), or "nothing".
	SpectatorsStart string `yaml:"spectators_start"`
	// LLMRoles lists the roles that may start built-in language-model agents (their settings
	// name servers, files and environment variables of the referee's machine).
	LLMRoles []string `yaml:"llm_roles"`
	// StartsPerMinute bounds the matches, tournaments and human seat reservations one client
	// address (a spectator) or one team may start per minute; 0: no bound. The organiser is not bound.
	StartsPerMinute int `yaml:"starts_per_minute"`
	// MaxQueued bounds the match requests waiting in the work queue, and the matches queued or
	// running for callers other than the organiser, a tournament counting as all its matches:
	// past it, starting more is refused until the queue drains (0: no bound).
	MaxQueued int `yaml:"max_queued"`
	// Budgets bound what callers other than the organiser have outstanding at once (see
	// package budget); MaxQueued bounds them all together.
	Budgets Budgets `yaml:"budgets"`
	// MaxBootstrapSamples bounds the bootstrap samples a leaderboard request may ask for (their
	// cost grows with them), for every caller but the organiser (0: no bound but the analytics
	// service's own).
	MaxBootstrapSamples int `yaml:"max_bootstrap_samples"`
	// AuthFailuresPerMinute bounds the failed token attempts of one client address (0: none).
	AuthFailuresPerMinute int `yaml:"auth_failures_per_minute"`

	// The edge's connections (the gateway's listener). MaxConnsPerClient bounds the
	// connections open at once from one client address; MaxConns those open in all (0: the
	// process's file limit less ReservedFiles); ReservedFiles are the descriptors kept for the
	// store, agents' connections and everything else (at most half the file limit): when the
	// process's open descriptors come within half of them of the limit, new connections are
	// refused, never the store's files. ReadTimeout bounds reading a request's headers, and
	// its body again as long.
	MaxConnsPerClient int           `yaml:"max_conns_per_client"`
	MaxConns          int           `yaml:"max_conns"`
	ReservedFiles     int           `yaml:"reserved_files"`
	ReadTimeout       time.Duration `yaml:"read_timeout"`
}

// Budgets are the per-caller bounds on what is outstanding at once: each anonymous client
// address's, all anonymous callers' together, each team's. A tournament counts as all its
// matches until they have ended.
type Budgets struct {
	Client    Budget `yaml:"client"`
	Anonymous Budget `yaml:"anonymous"`
	Team      Budget `yaml:"team"`
}

// Budget bounds one caller's (or pool's) outstanding requests; 0 bounds nothing.
type Budget struct {
	// Matches queued or running.
	Matches int `yaml:"matches"`
	// WorkerTime is the worst-case time those matches hold workers, each its max_match_time.
	WorkerTime time.Duration `yaml:"worker_time"`
	// HumanSeats are the seats for people those matches hold open at once (a seat nobody
	// takes holds a worker for its move timeout).
	HumanSeats int `yaml:"human_seats"`
}

func (b Budget) negative() bool { return b.Matches < 0 || b.WorkerTime < 0 || b.HumanSeats < 0 }

// Default is the policy a public arena starts from: moves of at most two minutes (a person in a
// seat gets 120 s unless the request says otherwise), a few retries, replies well
// inside what the transport and the bus carry, matches of at most half an hour, tournaments
// of at most 20,000 matches, no dialling, no language models for callers other than the
// organiser, and quotas.
func Default() Policy {
	return Policy{
		MaxMoveTimeout: 2 * time.Minute, HumanMoveTimeout: 2 * time.Minute, MaxRetries: 5, MaxReplyBytes: 256 << 10, MaxMatchTime: 30 * time.Minute,
		MaxRecordBytes:       16 << 20,
		MaxTournamentMatches: 20_000, MaxGamesPerAssignment: 1000, MaxConcurrency: 64,
		SpectatorsStart: "tournaments", LLMRoles: []string{"organiser"},
		StartsPerMinute: 30, MaxQueued: 10_000, AuthFailuresPerMinute: 20, MaxBootstrapSamples: 200,
		Budgets: Budgets{
			Client:    Budget{Matches: 200, WorkerTime: 100 * time.Hour, HumanSeats: 8},
			Anonymous: Budget{Matches: 2000, WorkerTime: 1000 * time.Hour, HumanSeats: 64},
			Team:      Budget{Matches: 10_000, WorkerTime: 5000 * time.Hour, HumanSeats: 64},
		},
		MaxConnsPerClient: 64, ReservedFiles: 1024, ReadTimeout: 15 * time.Second,
	}
}

// Open reads a policy file (YAML, the keys of Policy's fields; durations as "90s"), over
// Default: keys left out keep their defaults. Unknown keys are errors.
func Open(path string) (Policy, error) {
	p := Default()
	data, err := os.ReadFile(path)
	if err != nil {
		return p, fmt.Errorf("policy: %w", err)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("policy %s: %w", path, err)
	}
	return p, p.Validate()
}

// Validate checks that the policy's own values make sense.
func (p Policy) Validate() error {
	switch {
	case p.MaxMoveTimeout < 0, p.HumanMoveTimeout < 0, p.MaxRetries < 0, p.MaxReplyBytes < 0, p.MaxMatchTime < 0, p.MaxRecordBytes < 0,
		p.MaxTournamentMatches < 0, p.MaxGamesPerAssignment < 0, p.MaxConcurrency < 0,
		p.StartsPerMinute < 0, p.MaxQueued < 0, p.AuthFailuresPerMinute < 0, p.MaxBootstrapSamples < 0,
		p.MaxConnsPerClient < 0, p.MaxConns < 0, p.ReservedFiles < 0, p.ReadTimeout < 0,
		p.Budgets.Client.negative(), p.Budgets.Anonymous.negative(), p.Budgets.Team.negative():
		return errors.New("policy: bounds must be 0 or more")
	case p.MaxRecordBytes > RecordBytesCeiling:
		return fmt.Errorf("policy: max_record_bytes %d: at most %d", p.MaxRecordBytes, RecordBytesCeiling)
	}
	switch p.SpectatorsStart {
	case "", "nothing", "matches", "tournaments":
	default:
		return fmt.Errorf("policy: spectators_start %q: want nothing, matches or tournaments", p.SpectatorsStart)
	}
	for _, r := range p.LLMRoles {
		if r != "spectator" && r != "team" && r != "organiser" {
			return fmt.Errorf("policy: llm_roles: %q is not a role (spectator, team, organiser)", r)
		}
	}
	for _, d := range p.Dial {
		if d == "*" || strings.Contains(d, "/") {
			if _, err := netip.ParsePrefix(d); d != "*" && err != nil {
				return fmt.Errorf("policy: dial %q: %v", d, err)
			}
		}
	}
	return nil
}

// StartMatch refuses a caller who may not start a match at all.
func (p Policy) StartMatch(c Caller) error {
	if c.Role == Spectator && (p.SpectatorsStart == "" || p.SpectatorsStart == "nothing") {
		return refuse("anonymous callers may not start matches here (spectators_start: nothing); ask with a team token")
	}
	return nil
}

// StartTournament refuses a caller who may not start a tournament, or one over the size bounds.
func (p Policy) StartTournament(c Caller, matches, gamesPerAssignment, concurrency int) error {
	if c.Role == Spectator && p.SpectatorsStart != "tournaments" {
		return refuse("anonymous callers may not start tournaments here (spectators_start: %s); ask with a team token", orNothing(p.SpectatorsStart))
	}
	switch {
	case p.MaxGamesPerAssignment > 0 && gamesPerAssignment > p.MaxGamesPerAssignment:
		return refuse("games_per_assignment %d is over max_games_per_assignment %d", gamesPerAssignment, p.MaxGamesPerAssignment)
	case p.MaxTournamentMatches > 0 && matches > p.MaxTournamentMatches:
		return refuse("the tournament would schedule %d matches, over max_tournament_matches %d (fewer games per assignment, or max_assignments)", matches, p.MaxTournamentMatches)
	case p.MaxConcurrency > 0 && concurrency > p.MaxConcurrency:
		return refuse("concurrency %d is over max_concurrency %d", concurrency, p.MaxConcurrency)
	}
	return nil
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// Limits checks a match's limits against the policy for c. The organiser is bound by the
// runner's hard limits only.
func (p Policy) Limits(c Caller, l *matchv1.Limits) error {
	if c.Role == Organiser {
		return nil
	}
	if d := l.GetMoveTimeout(); d != nil && p.MaxMoveTimeout > 0 && d.AsDuration() > p.MaxMoveTimeout {
		return refuse("move_timeout %s is over max_move_timeout %s", d.AsDuration(), p.MaxMoveTimeout)
	}
	if l != nil && l.MaxRetries != nil && l.GetMaxRetries() > p.MaxRetries {
		return refuse("max_retries %d is over max_retries %d", l.GetMaxRetries(), p.MaxRetries)
	}
	if n := l.GetMaxReplyBytes(); n > 0 && p.MaxReplyBytes > 0 && n > p.MaxReplyBytes {
		return refuse("max_reply_bytes %d is over max_reply_bytes %d", n, p.MaxReplyBytes)
	}
	return nil
}

// Reveal refuses a match that would show its private parts to spectators (reveal_private) when
// c is not the organiser and a seat holds a private party: anything but a built-in agent of the
// house, or, for a team, one of its own registered bots (registered holds each seat's
// registered label, TEAM/NAME@VERSION, "" for others). A dialled agent, a person, another
// team's bot keep their private notes private whoever starts the match.
func (p Policy) Reveal(c Caller, agents, registered []string) error {
	if c.Role == Organiser {
		return nil
	}
	for i, a := range agents {
		own := c.Role == Team && i < len(registered) && strings.HasPrefix(registered[i], c.Team+"/")
		if !strings.HasPrefix(a, "builtin:") && !own {
			return refuse("reveal_private: seat %d (%s) is not a built-in agent%s: its private parts are its own; only the organiser may reveal them", i, a, map[bool]string{true: " nor one of your team's bots"}[c.Role == Team])
		}
	}
	return nil
}

// Bootstrap refuses a leaderboard of more bootstrap samples than c may ask for.
func (p Policy) Bootstrap(c Caller, samples int32) error {
	if c.Role == Organiser || p.MaxBootstrapSamples == 0 || int(samples) <= p.MaxBootstrapSamples {
		return nil
	}
	return refuse("bootstrap_samples %d is over max_bootstrap_samples %d", samples, p.MaxBootstrapSamples)
}

// Agent refuses an agent address c may not use: a built-in language model, unless c's role
// is one of LLMRoles.
func (p Policy) Agent(c Caller, addr string) error {
	if addr == "builtin:llm" || strings.HasPrefix(addr, "builtin:llm?") {
		if !slices.Contains(p.LLMRoles, c.Role.String()) {
			return refuse("agent %q: built-in language models may be started by %s only (llm_roles); their settings name servers, files and environment variables of the referee's machine: serve the model with `parley agent llm` and give its address", addr, rolesOrNobody(p.LLMRoles))
		}
	}
	return nil
}

func rolesOrNobody(rs []string) string {
	if len(rs) == 0 {
		return "nobody"
	}
	return strings.Join(rs, ", ")
}

// Label checks a label c gives the agent in a seat and returns it as it is recorded: in NFKC
// form, so that one text has one spelling. Refused, for everyone: control, format and bidi
// characters (a right-to-left override or a newline would forge what a table shows). Refused
// for callers other than the organiser: '/' and '@', which only registered bots' labels have
// (team/name@version), unless it is that seat's bot's own — and any character whose TR39
// confusable skeleton holds one of them (a fullwidth '／', a division or fraction slash), so
// that no look-alike passes for a registered bot; more than 64 bytes.
func (p Policy) Label(c Caller, label, registered string) (string, error) {
	if label == "" || label == registered {
		return label, nil
	}
	if err := PlainText(label); err != nil {
		return "", refuse("label %q: %v", label, err)
	}
	normal := norm.NFKC.String(label)
	if normal == registered || c.Role == Organiser {
		return normal, nil
	}
	if strings.ContainsAny(confusables.Skeleton(normal), "/@") {
		return "", refuse("label %q: '/' and '@' (and characters that look like them) are kept for registered bots (TEAM/NAME@VERSION) and name the bot in that seat only", label)
	}
	if len(normal) > 64 {
		return "", refuse("label %q: at most 64 bytes", label)
	}
	return normal, nil
}

// PlainText refuses text that is not valid UTF-8 or holds a control, format or bidi
// character, naming the first one.
func PlainText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Bidi_Control, r) {
			return fmt.Errorf("holds the control or format character U+%04X", r)
		}
	}
	return nil
}

// DialRule returns the rule of where the referee may dial (see Dial), for the agent resolver.
func (p Policy) DialRule() *DialRule {
	r := &DialRule{list: p.Dial, lookup: net.DefaultResolver.LookupNetIP}
	for _, d := range p.Dial {
		switch pfx, err := netip.ParsePrefix(d); {
		case d == "*":
			r.any = true
		case err == nil:
			r.nets = append(r.nets, pfx)
		default:
			r.hosts = append(r.hosts, strings.ToLower(d))
		}
	}
	return r
}

// DialRule is where the referee may dial agents: networks, and host names. A name allows the
// public addresses it resolves to, checked when it is dialled; an address on the organiser's
// own networks (loopback, private, link-local such as a cloud's metadata service) must be
// allowed as a network, so that whoever controls a name's DNS cannot turn it towards them.
type DialRule struct {
	any    bool
	nets   []netip.Prefix
	hosts  []string
	list   []string
	lookup func(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Check refuses a target (host:port) whose host is neither an allowed name nor an address in
// an allowed network, before anything is dialled.
func (r *DialRule) Check(target string) error {
	if r.any {
		return nil
	}
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return refuse("address %q", target)
	}
	if r.named(host) {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil && r.inNets(ip) {
		return nil
	}
	return refuse("the referee may not dial %s (allowed: %s; set dial in the policy, or --allow-dial)", host, dialList(r.list))
}

// DialContext connects to target at the first address its host resolves to that the rule
// allows (see DialRule), checking each where it is dialled.
func (r *DialRule) DialContext(ctx context.Context, target string) (net.Conn, error) {
	if err := r.Check(target); err != nil {
		return nil, err
	}
	host, portText, _ := net.SplitHostPort(target)
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, refuse("address %q: port %q", target, portText)
	}
	ips, err := r.lookup(ctx, "ip", host)
	if err != nil {
		return nil, err
	}
	var d net.Dialer
	var last error
	for _, ip := range ips {
		ip = ip.Unmap()
		if !r.any && !r.inNets(ip) && !public(ip) {
			last = refuse("the referee may not dial %s at %s: a name in the dial rule allows public addresses only, and %s is on a loopback, private or link-local network (allow it as a network: dial %s)",
				host, ip, ip, netip.PrefixFrom(ip, ip.BitLen()))
			continue
		}
		conn, err := d.DialContext(ctx, "tcp", netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		last = err
	}
	if last == nil {
		last = fmt.Errorf("%s resolves to no address", host)
	}
	return nil, last
}

func (r *DialRule) named(host string) bool { return slices.Contains(r.hosts, strings.ToLower(host)) }

func (r *DialRule) inNets(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, n := range r.nets {
		if n.Contains(ip) {
			return true
		}
	}
	return false
}

// public is an address of the internet at large: not loopback, link-local, multicast,
// unspecified or private.
func public(ip netip.Addr) bool { return ip.IsGlobalUnicast() && !ip.IsPrivate() }

func dialList(d []string) string {
	if len(d) == 0 {
		return "nowhere"
	}
	return strings.Join(d, ", ")
}
