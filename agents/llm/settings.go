package llm

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// SettingsHelp documents the settings of builtin:llm?key=value&... (ConfigFromSettings).
const SettingsHelp = "model=NAME base_url=URL (both required); api_key_env=VAR (variable holding the API key, default " + DefaultAPIKeyEnv +
	"); temperature=T max_tokens=N seed=N; persona=NAME|FILE style=tagged|json|deliberation reasoning=STEPS prompt_dir=DIR; " +
	"cache=DIR (default: the user's cache dir) no_cache=true cache_scope=match|global; concurrency=N attempts=N request_timeout=DURATION " +
	"structured=auto|json_schema|json_object|off; budget_tokens=N budget_usd=D prices=FILE (price table, YAML); preflight=false (skip the endpoint check); target=PARTY (who a targeted persona works against)"

// settingKeys are the settings ConfigFromSettings reads.
var settingKeys = []string{
	"model", "base_url", "api_key_env", "temperature", "max_tokens", "seed", "persona", "style", "reasoning",
	"prompt_dir", "cache", "no_cache", "cache_scope", "concurrency", "attempts", "request_timeout", "structured",
	"budget_tokens", "budget_usd", "prices", "preflight", "target",
}

// reachSettings say where the model is reached and where its replies are kept, not which
// model answers or how it is asked.
var reachSettings = []string{"base_url", "api_key_env", "cache", "no_cache", "preflight"}

// Identity is what of an agent address names the agent that plays: for builtin:llm, the
// address without its reach settings (so a run resumed against another endpoint of the same
// model, or with another cache, is the same run); any other address whole. The reply cache
// agrees: scoped by match, its key holds no endpoint (see CacheKey).
func Identity(address string) string {
	query, ok := strings.CutPrefix(address, "builtin:llm?")
	if !ok {
		return address
	}
	s, err := url.ParseQuery(query)
	if err != nil {
		return address
	}
	for _, k := range reachSettings {
		s.Del(k)
	}
	return "builtin:llm?" + s.Encode()
}

// SettingKeys lists the settings ConfigFromSettings reads.
func SettingKeys() []string { return slices.Clone(settingKeys) }

// ConfigFromSettings reads a Config from key=value settings (the query of builtin:llm?...). The
// API key is read with getenv from the variable named by api_key_env (default OPENAI_API_KEY),
// never from a setting. The reply cache is on by default, in DefaultCacheDir.
func ConfigFromSettings(s url.Values, getenv func(string) string) (Config, error) {
	var c Config
	for key := range s {
		if strings.Contains(strings.ToLower(key), "key") && key != "api_key_env" {
			return c, fmt.Errorf("%w: setting %s: never put an API key in an agent address; name the environment variable that holds it with api_key_env=VAR", ErrConfig, key)
		}
		if !slices.Contains(settingKeys, key) {
			return c, fmt.Errorf("%w: unknown setting %q (accepted: %s)", ErrConfig, key, SettingsHelp)
		}
	}
	c.Model, c.BaseURL = s.Get("model"), s.Get("base_url")
	keyEnv := s.Get("api_key_env")
	if keyEnv == "" {
		keyEnv = DefaultAPIKeyEnv
	}
	c.APIKey, c.APIKeyEnv = getenv(keyEnv), keyEnv
	c.Persona, c.Style, c.Reasoning, c.PromptDir = s.Get("persona"), s.Get("style"), s.Get("reasoning"), s.Get("prompt_dir")
	c.Target = s.Get("target")
	c.Structured, c.CacheScope = s.Get("structured"), s.Get("cache_scope")
	var err error
	if v := s.Get("temperature"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return c, fmt.Errorf("%w: setting temperature=%q: want a number", ErrConfig, v)
		}
		c.Temperature = &f
	}
	if c.MaxTokens, err = intSetting(s, "max_tokens"); err != nil {
		return c, err
	}
	if v := s.Get("seed"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return c, fmt.Errorf("%w: setting seed=%q: want a whole number", ErrConfig, v)
		}
		c.Seed = &n
	}
	if c.Concurrency, err = intSetting(s, "concurrency"); err != nil {
		return c, err
	}
	if c.Attempts, err = intSetting(s, "attempts"); err != nil {
		return c, err
	}
	if v := s.Get("request_timeout"); v != "" {
		if c.RequestTimeout, err = time.ParseDuration(v); err != nil || c.RequestTimeout < 0 {
			return c, fmt.Errorf("%w: setting request_timeout=%q: want a duration such as 30s", ErrConfig, v)
		}
	}
	if v := s.Get("budget_tokens"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return c, fmt.Errorf("%w: setting budget_tokens=%q: want a non-negative whole number", ErrConfig, v)
		}
		c.BudgetTokens = n
	}
	if v := s.Get("budget_usd"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1e9 {
			return c, fmt.Errorf("%w: setting budget_usd=%q: want dollars from 0 to 1e9, e.g. 2.50", ErrConfig, v)
		}
		c.BudgetMicrodollars = int64(f * 1e6)
	}
	if c.Prices, err = LoadPrices(s.Get("prices")); err != nil {
		return c, err
	}
	c.Preflight = true
	if v := s.Get("preflight"); v != "" {
		if c.Preflight, err = strconv.ParseBool(v); err != nil {
			return c, fmt.Errorf("%w: setting preflight=%q: want true or false", ErrConfig, v)
		}
	}
	noCache := false
	if v := s.Get("no_cache"); v != "" {
		if noCache, err = strconv.ParseBool(v); err != nil {
			return c, fmt.Errorf("%w: setting no_cache=%q: want true or false", ErrConfig, v)
		}
	}
	switch {
	case noCache:
	case s.Get("cache") != "":
		c.CacheDir = s.Get("cache")
	default:
		if dir, err := DefaultCacheDir(); err == nil {
			c.CacheDir = dir
		}
	}
	return c, nil
}

func intSetting(s url.Values, key string) (int, error) {
	v := s.Get(key)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%w: setting %s=%q: want a non-negative whole number", ErrConfig, key, v)
	}
	return n, nil
}
