// Package builtin is the catalogue of Parley's built-in Go agents, by name, with their
// configuration read from "key=value" settings (the query of builtin:NAME?key=value).
package builtin

import (
	"context"
	"fmt"
	"math/big"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parley-arena/parley/agents/bayes"
	"github.com/parley-arena/parley/agents/coalition"
	"github.com/parley-arena/parley/agents/concede"
	"github.com/parley-arena/parley/agents/deliberation"
	"github.com/parley-arena/parley/agents/dondgreedy"
	"github.com/parley-arena/parley/agents/equilibrium"
	"github.com/parley-arena/parley/agents/fair"
	"github.com/parley-arena/parley/agents/fixed"
	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/random"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/agents/spe"
	"github.com/parley-arena/parley/agents/trader"
)

// llmCheckTimeout bounds the language-model agent's endpoint check.
const llmCheckTimeout = 10 * time.Second

// Entry describes one built-in agent.
type Entry struct {
	// Name used in builtin:NAME and `parley agent NAME`.
	Name string
	// Summary is one line for listings.
	Summary string
	// Settings documents the accepted settings, e.g. "seed=N (default 0)".
	Settings string
	// Keys lists the accepted setting names.
	Keys []string
	// New builds the agent from its settings.
	New func(settings url.Values) (sdk.Agent, error)
}

// Catalog returns every built-in agent, sorted by name: built once (a referee looks an agent
// up for every match) and shared, so callers must not modify it.
func Catalog() []Entry { return catalog() }

var catalog = sync.OnceValue(func() []Entry {
	entries := []Entry{
		{
			Name:     "llm",
			Summary:  "any game: a language model over an OpenAI-compatible API (OpenAI, vLLM, Ollama, llama.cpp); see agents/llm",
			Settings: llm.SettingsHelp,
			Keys:     llm.SettingKeys(),
			New: func(s url.Values) (sdk.Agent, error) {
				cfg, err := llm.ConfigFromSettings(s, os.Getenv)
				if err != nil {
					return nil, err
				}
				a, err := llm.New(cfg)
				if err != nil || !cfg.Preflight {
					return a, err
				}
				// A wrong address, no network or a missing key is told now, in one line,
				// rather than as a void match.
				ctx, cancel := context.WithTimeout(context.Background(), llmCheckTimeout)
				defer cancel()
				if err := a.Check(ctx); err != nil {
					a.Close()
					return nil, err
				}
				return a, nil
			},
		},
		{
			Name:     "random",
			Summary:  "a uniformly random legal action in any game (seeded)",
			Settings: "seed=N (default 0)",
			Keys:     []string{"seed"},
			New: func(s url.Values) (sdk.Agent, error) {
				seed, err := uintSetting(s, "seed", 0)
				if err != nil {
					return nil, err
				}
				return random.New(seed), nil
			},
		},
		{
			Name:     "fair",
			Summary:  "ultimatum: asks for a bit over half, concedes to an even split, accepts fair offers",
			Settings: "open=F target=F floor=F (shares of the total; defaults 0.6 0.5 0.2)",
			Keys:     []string{"open", "target", "floor"},
			New: func(s url.Values) (sdk.Agent, error) {
				cfg := fair.DefaultConfig()
				var err error
				if cfg.Open, err = floatSetting(s, "open", cfg.Open); err != nil {
					return nil, err
				}
				if cfg.Target, err = floatSetting(s, "target", cfg.Target); err != nil {
					return nil, err
				}
				if cfg.Floor, err = floatSetting(s, "floor", cfg.Floor); err != nil {
					return nil, err
				}
				return fair.New(cfg)
			},
		},
		{
			Name:     "fixed",
			Summary:  "ultimatum, scripted: offers the opponent the same amount every time, never accepts",
			Settings: "offer=N (what the opponent gets; default 0)",
			Keys:     []string{"offer"},
			New: func(s url.Values) (sdk.Agent, error) {
				offer, err := uintSetting(s, "offer", 0)
				if err != nil {
					return nil, err
				}
				return fixed.New(int64(min(offer, 1<<62)))
			},
		},
		{
			Name:     "concede",
			Summary:  "buysell: concedes from an ambitious opening toward its private value, never past it; accepts prices at least as good as its next ask",
			Settings: "curve=linear|boulware (default linear) open=F (opening factor, at least 1: seller asks F x cost, buyer offers willingness / F; default 2)",
			Keys:     []string{"curve", "open"},
			New: func(s url.Values) (sdk.Agent, error) {
				cfg := concede.DefaultConfig()
				if v := s.Get("curve"); v != "" {
					cfg.Curve = v
				}
				var err error
				if cfg.Open, err = floatSetting(s, "open", cfg.Open); err != nil {
					return nil, err
				}
				return concede.New(cfg)
			},
		},
		{
			Name:     "trader",
			Summary:  "trading: proposes and accepts only trades that raise its own payoff by its own holdings and goal",
			Settings: "none",
			New:      func(url.Values) (sdk.Agent, error) { return trader.New(), nil },
		},
		{
			Name:     "coalition",
			Summary:  "coalition: offers and proposes the core (or Shapley) split of the grand coalition; accepts at least its share of it",
			Settings: "basis=core|shapley (default core; core falls back to shapley when empty) threshold=F (least share accepted, as a fraction of its basis share; default 1)",
			Keys:     []string{"basis", "threshold"},
			New: func(s url.Values) (sdk.Agent, error) {
				cfg := coalition.DefaultConfig()
				if v := s.Get("basis"); v != "" {
					cfg.Basis = coalition.Basis(v)
				}
				var err error
				if cfg.Threshold, err = floatSetting(s, "threshold", cfg.Threshold); err != nil {
					return nil, err
				}
				return coalition.New(cfg)
			},
		},
		{
			Name:     "cooperative",
			Summary:  "deliberation: any deal above its minimum beats no deal; as p1 concedes toward what the others' attached deals suggest, otherwise attaches the best deal for itself it believes can pass",
			Settings: "belief=F (estimated liking at which another party is believed to say yes; default 0.8)",
			Keys:     []string{"belief"},
			New: func(s url.Values) (sdk.Agent, error) {
				return newDeliberation(deliberation.Config{Role: deliberation.Cooperative}, s)
			},
		},
		{
			Name:     "greedy",
			Summary:  "deliberation: pushes for its own maximum, giving way only on the issues it values least, never below the middle of its minimum and maximum",
			Settings: "floor=F (least share of the way from its minimum to its maximum it keeps; default 0.5) belief=F (default 0.8)",
			Keys:     []string{"floor", "belief"},
			New: func(s url.Values) (sdk.Agent, error) {
				return newDeliberation(deliberation.Config{Role: deliberation.Greedy}, s)
			},
		},
		{
			Name:     "adversarial",
			Summary:  "deliberation: wants no deal; attaches deals it can live with that the others (or its target) like least; as p1 tables a deal believed to fail",
			Settings: "target=PARTY (id or name of the party to isolate; unset: untargeted) belief=F (default 0.8)",
			Keys:     []string{"target", "belief"},
			New: func(s url.Values) (sdk.Agent, error) {
				return newDeliberation(deliberation.Config{Role: deliberation.Adversarial, Target: s.Get("target")}, s)
			},
		},
		{
			Name:     "spe",
			Summary:  "ultimatum: plays the subgame-perfect equilibrium (backward induction)",
			Settings: "indifferent=BOOL (accept offers exactly as good as playing on; default false)",
			Keys:     []string{"indifferent"},
			New: func(s url.Values) (sdk.Agent, error) {
				v := s.Get("indifferent")
				if v == "" {
					return spe.New(false), nil
				}
				b, err := strconv.ParseBool(v)
				if err != nil {
					return nil, fmt.Errorf("setting indifferent=%q: want true or false", v)
				}
				return spe.New(b), nil
			},
		},
		{
			Name:     "equilibrium",
			Summary:  "matrix and sequential: plays a Pareto-optimal pure Nash equilibrium (mixed when none) or the subgame-perfect path; announces it in talk",
			Settings: "none",
			New:      func(url.Values) (sdk.Agent, error) { return equilibrium.New(), nil },
		},
		{
			Name:     "bayes",
			Summary:  "dealornodeal: the Bayesian workflow (belief over the opponent's values, envy-free candidates), exact; belief support in its private notes",
			Settings: "gamma=R (likelihood of rejecting an envy-free offer when a better one existed, 0 to 1; default 1) lambda=R (posterior weight, above 0 to 1; default 1); R a decimal or fraction",
			Keys:     []string{"gamma", "lambda"},
			New: func(s url.Values) (sdk.Agent, error) {
				cfg := bayes.DefaultConfig()
				for key, dst := range map[string]**big.Rat{"gamma": &cfg.Gamma, "lambda": &cfg.Lambda} {
					if v := s.Get(key); v != "" {
						r, err := ratSetting(key, v)
						if err != nil {
							return nil, err
						}
						*dst = r
					}
				}
				return bayes.New(cfg)
			},
		},
		{
			Name:     "dondgreedy",
			Summary:  "dealornodeal: proposes the splits worth at least half the pool to it, best for itself first; accepts what is worth at least its next proposal",
			Settings: "none",
			New:      func(url.Values) (sdk.Agent, error) { return dondgreedy.New(), nil },
		},
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	return entries
})

// Names returns the names of every built-in agent.
func Names() []string {
	var names []string
	for _, e := range Catalog() {
		names = append(names, e.Name)
	}
	return names
}

// New builds the built-in agent called name. Unknown names and settings are errors that say
// what would be accepted.
func New(name string, settings url.Values) (sdk.Agent, error) {
	for _, e := range Catalog() {
		if e.Name != name {
			continue
		}
		for key := range settings {
			if !slices.Contains(e.Keys, key) {
				return nil, fmt.Errorf("builtin agent %s: unknown setting %q (accepted: %s)", name, key, e.Settings)
			}
		}
		a, err := e.New(settings)
		if err != nil {
			return nil, fmt.Errorf("builtin agent %s: %w", name, err)
		}
		return a, nil
	}
	return nil, fmt.Errorf("unknown built-in agent %q (known: %s)", name, strings.Join(Names(), ", "))
}

// newDeliberation builds a deliberation agent of cfg's role with the settings belief and floor.
func newDeliberation(cfg deliberation.Config, s url.Values) (sdk.Agent, error) {
	var err error
	if cfg.Belief, err = floatSetting(s, "belief", deliberation.DefaultBelief); err != nil {
		return nil, err
	}
	if cfg.Floor, err = floatSetting(s, "floor", deliberation.DefaultFloor); err != nil {
		return nil, err
	}
	return deliberation.New(cfg)
}

func uintSetting(s url.Values, key string, def uint64) (uint64, error) {
	v := s.Get(key)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("setting %s=%q: want a non-negative whole number", key, v)
	}
	return n, nil
}

// plainRat is a decimal or a fraction of whole numbers of at most 9 digits each: exact, and
// small enough that the arithmetic of an agent using it stays quick (an exponent such as
// 1e-500000 would make every later number half a million digits long).
var plainRat = regexp.MustCompile(`^[0-9]{1,9}(\.[0-9]{1,9}|/[0-9]{1,9})?$`)

func ratSetting(key, v string) (*big.Rat, error) {
	r, ok := new(big.Rat), plainRat.MatchString(v)
	if ok {
		_, ok = r.SetString(v)
	}
	if !ok {
		return nil, fmt.Errorf("setting %s=%.40q: want a decimal or a fraction of whole numbers, at most 9 digits each (such as 0.25 or 1/3)", key, v)
	}
	return r, nil
}

func floatSetting(s url.Values, key string, def float64) (float64, error) {
	v := s.Get(key)
	if v == "" {
		return def, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, fmt.Errorf("setting %s=%q: want a number", key, v)
	}
	return f, nil
}
