package policy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
)

var (
	spectator = Caller{Role: Spectator, Client: "203.0.113.9"}
	team      = Caller{Role: Team, Team: "acme", Client: "203.0.113.10"}
	organiser = Caller{Role: Organiser}
)

// Every bound refuses what a hostile request sets past it, naming the bound, and lets the
// organiser through (the runner's hard limits bound the organiser).
func TestLimits(t *testing.T) {
	p := Default()
	for _, tc := range []struct {
		name   string
		limits *matchv1.Limits
		bound  string // "" when allowed
	}{
		{"defaults", nil, ""},
		{"within", &matchv1.Limits{MoveTimeout: durationpb.New(30 * time.Second), MaxRetries: proto.Int32(3), MaxReplyBytes: 1 << 16}, ""},
		{"a day per move", &matchv1.Limits{MoveTimeout: durationpb.New(24 * time.Hour)}, "max_move_timeout"},
		{"retries near the int32 edge", &matchv1.Limits{MaxRetries: proto.Int32(2147483647)}, "max_retries"},
		{"huge replies", &matchv1.Limits{MaxReplyBytes: 2147483647}, "max_reply_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, c := range []Caller{spectator, team} {
				err := p.Limits(c, tc.limits)
				if tc.bound == "" && err != nil {
					t.Errorf("%s: %v", c.Role, err)
				}
				if tc.bound != "" && (!errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.bound)) {
					t.Errorf("%s: %v, want a refusal naming %s", c.Role, err, tc.bound)
				}
			}
			if err := p.Limits(organiser, tc.limits); err != nil {
				t.Errorf("organiser: %v", err)
			}
		})
	}
}

func TestWhoMayStartWhat(t *testing.T) {
	p := Default()
	if err := p.StartMatch(spectator); err != nil {
		t.Errorf("a spectator starting a match under the defaults: %v", err)
	}
	if err := p.StartTournament(spectator, 100, 10, 4); err != nil {
		t.Errorf("a spectator starting a tournament under the defaults: %v", err)
	}
	for _, tc := range []struct {
		matches, games, concurrency int
		bound                       string
	}{
		{20_001, 10, 4, "max_tournament_matches"},
		{100, 1001, 4, "max_games_per_assignment"},
		{100, 10, 65, "max_concurrency"},
	} {
		for _, c := range []Caller{spectator, team, organiser} {
			if err := p.StartTournament(c, tc.matches, tc.games, tc.concurrency); !strings.Contains(fmtErr(err), tc.bound) {
				t.Errorf("%s: %v, want a refusal naming %s", c.Role, err, tc.bound)
			}
		}
	}
	p.SpectatorsStart = "matches"
	if err := p.StartTournament(spectator, 10, 1, 1); !errors.Is(err, ErrRefused) {
		t.Errorf("a spectator's tournament with spectators_start: matches: %v", err)
	}
	if err := p.StartTournament(team, 10, 1, 1); err != nil {
		t.Errorf("a team's tournament: %v", err)
	}
	p.SpectatorsStart = "nothing"
	if err := p.StartMatch(spectator); !errors.Is(err, ErrRefused) {
		t.Errorf("a spectator's match with spectators_start: nothing: %v", err)
	}
	if err := p.StartMatch(team); err != nil {
		t.Errorf("a team's match: %v", err)
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestLanguageModelsAndLabels(t *testing.T) {
	p := Default()
	for _, a := range []string{"builtin:llm", "builtin:llm?model=x&api_key_env=HOME", "builtin:llm?prompt_dir=/etc"} {
		if err := p.Agent(spectator, a); !errors.Is(err, ErrRefused) {
			t.Errorf("a spectator's %s: %v", a, err)
		}
		if err := p.Agent(organiser, a); err != nil {
			t.Errorf("the organiser's %s: %v", a, err)
		}
	}
	if err := p.Agent(spectator, "builtin:llmish"); err != nil {
		t.Errorf("another agent: %v", err)
	}
	for _, tc := range []struct {
		label, registered string
		ok                bool
	}{
		{"fair", "", true},
		{"", "acme/fair@1.0", true},
		{"acme/fair@1.0", "acme/fair@1.0", true}, // the seat's own bot
		{"acme/fair@1.0", "", false},             // claiming a registered bot's name
		{"acme/fair@1.0", "evil/bot@2", false},
		{"fair@1", "", false},
		{strings.Repeat("x", 65), "", false},
		// Attack 7: look-alikes of a registered bot's name, and text that forges a table.
		{"acme\uff0ffair\uff201.0", "", false}, // fullwidth solidus and at sign
		{"acme\u2215fair", "", false},          // division slash
		{"acme\u2044fair", "", false},          // fraction slash
		{"acme\u29f8fair", "", false},          // big solidus
		{"fair\u202eriaf", "", false},          // right-to-left override
		{"fair\nacme/fair@1.0", "", false},
		{"fair\u200b", "", false}, // zero-width space
		{"caf\u00e9 \u00e0 la carte", "", true},
	} {
		_, err := p.Label(spectator, tc.label, tc.registered)
		if (err == nil) != tc.ok {
			t.Errorf("label %q in a seat of %q: %v, want ok %v", tc.label, tc.registered, err, tc.ok)
		}
	}
	// One text, one spelling: the label recorded is the NFKC form (worked out by hand: the
	// ligature "ﬁ" is "fi", fullwidth "Ｂ" is "B", "e" and a combining acute is "é").
	if got, err := p.Label(spectator, "\ufb01ne \uff22ot e\u0301", ""); err != nil || got != "fine Bot \u00e9" {
		t.Errorf("label recorded as %q (%v), want %q", got, err, "fine Bot \u00e9")
	}
	// Attack 8: reveal_private published another party's private notes.
	acme := Caller{Role: Team, Team: "acme"}
	for _, tc := range []struct {
		c                  Caller
		agents, registered []string
		ok                 bool
	}{
		{spectator, []string{"builtin:fair", "builtin:random"}, []string{"", ""}, true},
		{spectator, []string{"builtin:fair", "grpc://10.0.0.1:7070"}, []string{"", ""}, false},
		{spectator, []string{"builtin:fair", "human"}, []string{"", ""}, false},
		{spectator, []string{"builtin:fair", "bot:acme/fair"}, []string{"", "acme/fair@1"}, false},
		{acme, []string{"builtin:fair", "bot:acme/fair"}, []string{"", "acme/fair@1"}, true},
		{acme, []string{"bot:acmex/fair", "builtin:fair"}, []string{"acmex/fair@1", ""}, false},
		{organiser, []string{"grpc://10.0.0.1:7070", "human"}, []string{"", ""}, true},
	} {
		if err := p.Reveal(tc.c, tc.agents, tc.registered); (err == nil) != tc.ok {
			t.Errorf("%s revealing %v: %v, want ok %v", tc.c.Role, tc.agents, err, tc.ok)
		}
	}
	// Attack 6: a leaderboard of 5,000 bootstrap samples from anyone.
	if err := p.Bootstrap(spectator, 5000); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "max_bootstrap_samples 200") {
		t.Errorf("a spectator's 5000 bootstrap samples: %v", err)
	}
	if err := p.Bootstrap(spectator, 200); err != nil {
		t.Errorf("200 bootstrap samples: %v", err)
	}
	if err := p.Bootstrap(organiser, 5000); err != nil {
		t.Errorf("the organiser's 5000: %v", err)
	}
	if _, err := p.Label(organiser, "fair\u202e", ""); err == nil {
		t.Error("the organiser's label with a right-to-left override was taken")
	}
}

func TestDialRule(t *testing.T) {
	none := Default().DialRule()
	if err := none.Check("127.0.0.1:7070"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("dialling with no dial list: %v", err)
	}
	p := Default()
	p.Dial = []string{"10.0.0.0/8", "bots.example.org", "::1/128"}
	rule := p.DialRule()
	for target, ok := range map[string]bool{
		"10.1.2.3:50051":          true,
		"[::1]:50051":             true,
		"bots.example.org:1":      true,
		"BOTS.example.org:1":      true,
		"11.0.0.1:50051":          false,
		"127.0.0.1:4222":          false, // the organiser's own NATS
		"bots.example.org.evil:1": false,
		"[::ffff:10.0.0.1]:1":     true, // an IPv4 address written as IPv6 is the same address
	} {
		if err := rule.Check(target); (err == nil) != ok {
			t.Errorf("dial %s: %v, want allowed %v", target, err, ok)
		}
	}
	p.Dial = []string{"*"}
	if err := p.DialRule().Check("192.0.2.1:1"); err != nil {
		t.Errorf("dial anywhere: %v", err)
	}
}

// A name in the dial rule reaches public addresses only: where it resolves to a loopback,
// private or link-local address (a DNS answer pointed at the organiser's own services), the
// dial is refused unless that network is allowed too; the address is checked where it is
// dialled, and a later answer of another address is checked again.
func TestDialRuleChecksResolvedAddresses(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := lis.Addr().(*net.TCPAddr).Port
	target := fmt.Sprintf("localhost:%d", port)

	p := Default()
	p.Dial = []string{"localhost"}
	rule := p.DialRule() // the system's resolver: localhost is a loopback address
	if err := rule.Check(target); err != nil {
		t.Fatalf("the name is allowed: %v", err)
	}
	if c, err := rule.DialContext(t.Context(), target); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "as a network") {
		if c != nil {
			c.Close()
		}
		t.Fatalf("localhost (a loopback address) allowed by name only: %v, want a refusal naming the network to allow", err)
	}

	p.Dial = []string{"localhost", "127.0.0.0/8", "::1/128"}
	c, err := p.DialRule().DialContext(t.Context(), target)
	if err != nil {
		t.Fatalf("localhost with its network allowed: %v", err)
	}
	c.Close()

	// A name whose DNS answers change between the check and the dial: each answer is checked.
	p.Dial = []string{"bots.example.org", "127.0.0.0/8"}
	rebound := p.DialRule()
	answers := [][]netip.Addr{
		{netip.MustParseAddr("169.254.169.254")},                                   // a cloud's metadata service
		{netip.MustParseAddr("10.0.0.7"), netip.MustParseAddr("::ffff:127.0.0.1")}, // private, then allowed
	}
	rebound.lookup = func(_ context.Context, _, host string) ([]netip.Addr, error) {
		if host != "bots.example.org" {
			t.Errorf("looked up %q", host)
		}
		a := answers[0]
		answers = answers[1:]
		return a, nil
	}
	named := fmt.Sprintf("bots.example.org:%d", port)
	if _, err := rebound.DialContext(t.Context(), named); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "169.254.169.254/32") {
		t.Errorf("a name answering with the metadata address: %v", err)
	}
	c, err = rebound.DialContext(t.Context(), named)
	if err != nil {
		t.Fatalf("the second answer holds an allowed address: %v", err)
	}
	if got := c.RemoteAddr().(*net.TCPAddr).IP.String(); got != "127.0.0.1" {
		t.Errorf("dialled %s, want the allowed address 127.0.0.1 (not the private 10.0.0.7)", got)
	}
	c.Close()
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("max_move_timeout: 90s\ndial: [10.0.0.0/8]\nspectators_start: matches\nbudgets:\n  client:\n    human_seats: 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	if p.MaxMoveTimeout != 90*time.Second || p.SpectatorsStart != "matches" || p.MaxRetries != Default().MaxRetries {
		t.Errorf("read %+v", p)
	}
	// A budget's keys left out keep their defaults, as every key does.
	want := Default().Budgets
	want.Client.HumanSeats = 3
	if p.Budgets != want {
		t.Errorf("budgets read %+v, want %+v", p.Budgets, want)
	}
	for name, text := range map[string]string{
		"unknown key":     "max_move_timout: 90s\n",
		"bad network":     "dial: [10.0.0.0/33]\n",
		"negative":        "max_retries: -1\n",
		"bad role":        "llm_roles: [everyone]\n",
		"bad duration":    "max_match_time: soon\n",
		"huge record":     "max_record_bytes: 67108865\n",
		"negative budget": "budgets:\n  team:\n    matches: -1\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(path); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}
