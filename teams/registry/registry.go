// Package registry keeps the teams of a competition and the bots they register, in JetStream
// key-value buckets so that every gateway and referee sharing a NATS server sees the same
// ones. A team's token is shown once, when the team is added; only its SHA-256 is stored, and
// tokens are compared in constant time.
package registry

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	registryv1 "github.com/parley-arena/parley/gen/go/parley/registry/v1"
	"github.com/parley-arena/parley/internal/natsname"
)

// EndpointDialOut is the endpoint of a bot that connects to a gateway itself.
const EndpointDialOut = "dialout"

// AddressPrefix starts the agent address of a registered bot: "bot:team/name".
const AddressPrefix = "bot:"

// tokenPrefix marks Parley team tokens, so a leaked one is recognisable.
const tokenPrefix = "pt_"

// Errors returned, wrapped, by this package.
var (
	ErrNotFound  = errors.New("registry: not found")
	ErrExists    = errors.New("registry: already exists")
	ErrInvalid   = errors.New("registry: invalid")
	ErrBadToken  = errors.New("registry: invalid token")
	ErrForbidden = errors.New("registry: not this team's bot")
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)

// ValidName checks a team or bot name: lower-case letters, digits and '-', at most 63, not
// starting with '-'. Names are NATS subject tokens and key parts, so nothing else is allowed.
func ValidName(what, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w %s name %q: use lower-case letters, digits and '-' (at most 63, not starting with '-')", ErrInvalid, what, name)
	}
	return nil
}

// Team is a stored team: its name and the hash of its token.
type Team struct {
	Name      string    `json:"name"`
	TokenHash string    `json:"token_sha256"`
	Created   time.Time `json:"created"`
}

// Store reads and writes teams and bots. It is safe for concurrent use.
type Store struct {
	teams  jetstream.KeyValue
	tokens jetstream.KeyValue
	bots   jetstream.KeyValue
	locks  jetstream.KeyValue // of dial-out links, see LockLink
	now    func() time.Time
}

// linkLockTTL is how long a link lock lasts when its holder never lets it go (its gateway
// died while a session opened): the longest a bot's next session may wait for it.
const linkLockTTL = 15 * time.Second

// Open creates the buckets when they do not exist and returns a Store on them.
func Open(ctx context.Context, js jetstream.JetStream) (*Store, error) {
	teams, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: natsname.TeamsBucket, Description: "Parley teams: token hashes", History: 1})
	if err != nil {
		return nil, fmt.Errorf("registry: teams bucket: %w", err)
	}
	tokens, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: natsname.TokensBucket, Description: "Parley team token hashes, by hash", History: 1})
	if err != nil {
		return nil, fmt.Errorf("registry: tokens bucket: %w", err)
	}
	bots, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: natsname.BotsBucket, Description: "Parley registered bots", History: 1})
	if err != nil {
		return nil, fmt.Errorf("registry: bots bucket: %w", err)
	}
	locks, err := js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: natsname.LinkLocksBucket, Description: "Parley dial-out links being taken over", History: 1, TTL: linkLockTTL})
	if err != nil {
		return nil, fmt.Errorf("registry: link locks bucket: %w", err)
	}
	return &Store{teams: teams, tokens: tokens, bots: bots, locks: locks, now: time.Now}, nil
}

// LockLink takes the lock under which a new session of the dial-out bot team/name takes its
// link over from the one before, waiting while another session of it holds the lock, until ctx
// ends. Sessions opening at once on several gateways thus take turns, each taking over from
// the last. unlock lets the lock go (a lock never let go lapses after linkLockTTL).
func (s *Store) LockLink(ctx context.Context, team, name string) (unlock func(), err error) {
	key := botKey(team, name)
	for {
		rev, err := s.locks.Create(ctx, key, nil)
		switch {
		case err == nil:
			return func() { _ = s.locks.Delete(context.WithoutCancel(ctx), key, jetstream.LastRevision(rev)) }, nil
		case !errors.Is(err, jetstream.ErrKeyExists):
			return nil, fmt.Errorf("registry: lock the link of %s/%s: %w", team, name, err)
		}
		// Held: a session opening elsewhere takes a few round trips to NATS.
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("registry: lock the link of %s/%s: another session of the bot is opening: %w", team, name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// NewToken returns a fresh random team token.
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// AddTeam adds a team and returns its token, which is not stored and cannot be shown again.
func (s *Store) AddTeam(ctx context.Context, name string) (string, error) {
	if err := ValidName("team", name); err != nil {
		return "", err
	}
	token, err := NewToken()
	if err != nil {
		return "", err
	}
	hash := hashToken(token)
	data, err := jsonTeam(Team{Name: name, TokenHash: hash, Created: s.now().UTC()})
	if err != nil {
		return "", err
	}
	if _, err := s.teams.Create(ctx, name, data); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			return "", fmt.Errorf("%w: team %q", ErrExists, name)
		}
		return "", fmt.Errorf("registry: add team: %w", err)
	}
	if _, err := s.tokens.Put(ctx, hash, []byte(name)); err != nil {
		_ = s.teams.Purge(ctx, name) // a team without its token entry could never sign in
		return "", fmt.Errorf("registry: add team: %w", err)
	}
	return token, nil
}

// Teams lists the teams by name.
func (s *Store) Teams(ctx context.Context) ([]Team, error) {
	lister, err := s.teams.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("registry: list teams: %w", err)
	}
	var out []Team
	for k := range lister.Keys() {
		t, err := s.team(ctx, k)
		if errors.Is(err, ErrNotFound) {
			continue // revoked meanwhile
		} else if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func (s *Store) team(ctx context.Context, name string) (Team, error) {
	e, err := s.teams.Get(ctx, name)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return Team{}, fmt.Errorf("%w: team %q", ErrNotFound, name)
	} else if err != nil {
		return Team{}, fmt.Errorf("registry: team %q: %w", name, err)
	}
	return parseTeam(e.Value())
}

// Active returns nil when the team exists (was added and not revoked), an ErrNotFound error
// otherwise.
func (s *Store) Active(ctx context.Context, team string) error {
	_, err := s.team(ctx, team)
	return err
}

// RevokeTeam removes a team: its token stops working at once. Its bots stay listed but can no
// longer be changed or connect.
func (s *Store) RevokeTeam(ctx context.Context, name string) error {
	t, err := s.team(ctx, name)
	if err != nil {
		return err
	}
	// The team entry goes first: Authenticate needs both, so the token stops working here.
	if err := s.teams.Purge(ctx, name); err != nil {
		return fmt.Errorf("registry: revoke team: %w", err)
	}
	if err := s.tokens.Purge(ctx, t.TokenHash); err != nil {
		return fmt.Errorf("registry: revoke team: %w", err)
	}
	return nil
}

// Revoked returns a channel closed when the team is revoked (at once if it is gone already),
// so that links a team opened before it was revoked end too. The watch ends with ctx.
func (s *Store) Revoked(ctx context.Context, team string) (<-chan struct{}, error) {
	w, err := s.teams.Watch(ctx, team)
	if err != nil {
		return nil, fmt.Errorf("registry: watch team %q: %w", team, err)
	}
	gone := make(chan struct{})
	go func() {
		defer w.Stop() //nolint:errcheck // nothing to do about a failed stop
		// The watch first delivers the current entry (nil when there is none: the initial
		// values are done), then every change.
		seen := false
		for {
			var e jetstream.KeyValueEntry
			select {
			case <-ctx.Done():
				return
			case got, ok := <-w.Updates():
				if !ok {
					return
				}
				e = got
			}
			if e == nil {
				if !seen {
					close(gone)
					return
				}
				continue
			}
			seen = true
			if op := e.Operation(); op == jetstream.KeyValueDelete || op == jetstream.KeyValuePurge {
				close(gone)
				return
			}
		}
	}()
	return gone, nil
}

// Authenticate returns the team whose token this is, or an error wrapping ErrBadToken. The
// token's hash finds the team in one read; the team's stored hash is then compared in constant
// time, so a token whose team was revoked, or a stale index entry, never passes.
func (s *Store) Authenticate(ctx context.Context, token string) (string, error) {
	if !strings.HasPrefix(token, tokenPrefix) {
		return "", ErrBadToken
	}
	hash := hashToken(token)
	e, err := s.tokens.Get(ctx, hash)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return "", ErrBadToken
	} else if err != nil {
		return "", fmt.Errorf("registry: token: %w", err)
	}
	t, err := s.team(ctx, string(e.Value()))
	if errors.Is(err, ErrNotFound) {
		return "", ErrBadToken
	} else if err != nil {
		return "", err
	}
	if subtle.ConstantTimeCompare([]byte(hash), []byte(t.TokenHash)) != 1 {
		return "", ErrBadToken
	}
	return t.Name, nil
}

func botKey(team, name string) string { return team + "." + name }

// Address is the agent address of a team's bot.
func Address(team, name string) string { return AddressPrefix + team + "/" + name }

// ParseAddress splits "bot:team/name[@version]"; version is empty when not given.
func ParseAddress(addr string) (team, name, version string, err error) {
	rest, ok := strings.CutPrefix(addr, AddressPrefix)
	if !ok {
		return "", "", "", fmt.Errorf("%w bot address %q: want bot:TEAM/NAME[@VERSION]", ErrInvalid, addr)
	}
	rest, version, _ = strings.Cut(rest, "@")
	team, name, ok = strings.Cut(rest, "/")
	if !ok {
		return "", "", "", fmt.Errorf("%w bot address %q: want bot:TEAM/NAME[@VERSION]", ErrInvalid, addr)
	}
	if err := ValidName("team", team); err != nil {
		return "", "", "", err
	}
	if err := ValidName("bot", name); err != nil {
		return "", "", "", err
	}
	return team, name, version, nil
}

// Label is how a registered bot is named in tables: "team/name@version".
func Label(b *registryv1.Bot) string {
	return b.GetTeam() + "/" + b.GetName() + "@" + b.GetVersion()
}

// CheckEndpoint checks a bot's endpoint: "dialout" or "grpc://host:port".
func CheckEndpoint(ep string) error {
	if ep == EndpointDialOut {
		return nil
	}
	target, ok := strings.CutPrefix(ep, "grpc://")
	if ok {
		host, port, err := net.SplitHostPort(target)
		if err == nil && host != "" {
			if _, perr := strconv.ParseUint(port, 10, 16); perr == nil {
				return nil
			}
		}
	}
	return fmt.Errorf("%w endpoint %q: want %q (the bot connects to the gateway) or grpc://host:port", ErrInvalid, ep, EndpointDialOut)
}

func checkBot(b *registryv1.Bot) error {
	if err := ValidName("bot", b.GetName()); err != nil {
		return err
	}
	if v := b.GetVersion(); v == "" || len(v) > 64 || strings.ContainsAny(v, " \t\n/@") {
		return fmt.Errorf("%w version %q: give one of at most 64 characters, without spaces, '/' or '@'", ErrInvalid, v)
	}
	return CheckEndpoint(b.GetEndpoint())
}

// Bot returns a registered bot, retired or not.
func (s *Store) Bot(ctx context.Context, team, name string) (*registryv1.Bot, error) {
	b, _, err := s.bot(ctx, team, name)
	return b, err
}

func (s *Store) bot(ctx context.Context, team, name string) (*registryv1.Bot, uint64, error) {
	e, err := s.bots.Get(ctx, botKey(team, name))
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, 0, fmt.Errorf("%w: bot %s/%s is not registered", ErrNotFound, team, name)
	} else if err != nil {
		return nil, 0, fmt.Errorf("registry: bot %s/%s: %w", team, name, err)
	}
	b := new(registryv1.Bot)
	if err := proto.Unmarshal(e.Value(), b); err != nil {
		return nil, 0, fmt.Errorf("registry: bot %s/%s: %w", team, name, err)
	}
	return b, e.Revision(), nil
}

// Register adds a bot to team. A retired bot of the same name is replaced.
func (s *Store) Register(ctx context.Context, team string, req *registryv1.RegisterBotRequest) (*registryv1.Bot, error) {
	b := &registryv1.Bot{
		Team: team, Name: req.GetName(), Version: req.GetVersion(), Games: req.GetGames(), Endpoint: req.GetEndpoint(),
		Address: Address(team, req.GetName()), Updated: timestamppb.New(s.now()),
	}
	if err := checkBot(b); err != nil {
		return nil, err
	}
	data, err := proto.Marshal(b)
	if err != nil {
		return nil, err
	}
	old, rev, err := s.bot(ctx, team, b.GetName())
	switch {
	case errors.Is(err, ErrNotFound):
		_, err = s.bots.Create(ctx, botKey(team, b.GetName()), data)
	case err != nil:
		return nil, err
	case !old.GetRetired():
		return nil, fmt.Errorf("%w: bot %s/%s (update it, or retire it first)", ErrExists, team, b.GetName())
	default:
		_, err = s.bots.Update(ctx, botKey(team, b.GetName()), data, rev)
	}
	if errors.Is(err, jetstream.ErrKeyExists) || isWrongRevision(err) {
		return nil, fmt.Errorf("%w: bot %s/%s (registered meanwhile)", ErrExists, team, b.GetName())
	} else if err != nil {
		return nil, fmt.Errorf("registry: register: %w", err)
	}
	return b, nil
}

// Update changes a bot of team with change, then stores it unless the bot changed meanwhile.
func (s *Store) Update(ctx context.Context, team, name string, change func(*registryv1.Bot) error) (*registryv1.Bot, error) {
	b, rev, err := s.bot(ctx, team, name)
	if err != nil {
		return nil, err
	}
	if err := change(b); err != nil {
		return nil, err
	}
	if err := checkBot(b); err != nil {
		return nil, err
	}
	b.Updated = timestamppb.New(s.now())
	data, err := proto.Marshal(b)
	if err != nil {
		return nil, err
	}
	if _, err := s.bots.Update(ctx, botKey(team, name), data, rev); err != nil {
		if isWrongRevision(err) {
			return nil, fmt.Errorf("registry: bot %s/%s changed meanwhile; try again", team, name)
		}
		return nil, fmt.Errorf("registry: update: %w", err)
	}
	return b, nil
}

// Bots lists bots by team then name: only team's when team is set, retired ones only when
// asked.
func (s *Store) Bots(ctx context.Context, team string, retired bool) ([]*registryv1.Bot, error) {
	lister, err := s.bots.ListKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("registry: list bots: %w", err)
	}
	var out []*registryv1.Bot
	for k := range lister.Keys() {
		t, n, _ := strings.Cut(k, ".")
		if team != "" && t != team {
			continue
		}
		b, err := s.Bot(ctx, t, n)
		if errors.Is(err, ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		if b.GetRetired() && !retired {
			continue
		}
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].GetTeam() != out[j].GetTeam() {
			return out[i].GetTeam() < out[j].GetTeam()
		}
		return out[i].GetName() < out[j].GetName()
	})
	return out, nil
}

func isWrongRevision(err error) bool {
	var apiErr *jetstream.APIError
	return errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeStreamWrongLastSequence
}

func jsonTeam(t Team) ([]byte, error) { return json.Marshal(t) }

func parseTeam(data []byte) (Team, error) {
	var t Team
	if err := json.Unmarshal(data, &t); err != nil {
		return Team{}, fmt.Errorf("registry: stored team: %w", err)
	}
	return t, nil
}
