// Package llm is a Parley agent backed by any language model that speaks the OpenAI chat
// completions API (OpenAI, vLLM, Ollama, llama.cpp's server, ...). It plays every game through
// the observation alone: the briefing, its private notes, the visible history, the referee's
// last rejection, and the generic fields that say what is legal (legal_moves, proposal_bounds
// and proposal_forms, choices, required_messages, message_term_forms). It never reads a game
// family's view, so it plays games written after it.
//
// Each move, the observation becomes a system and a user message (Go text/template files,
// shipped in the binary and overridable, see Prompts); the model answers in an output style
// (tagged sections or a JSON object); the answer is parsed and checked against what is legal
// before it is returned. A reply that cannot be used is sent back with a short correction, up
// to Config.Attempts replies; then the agent plays its fallback move and says so in its private
// reasoning. Rate limits, server errors and timeouts are retried with backoff within the move's
// deadline, which the agent never overruns. Replies can be cached on disk (Cache) so that a
// recorded match replays exactly without calling the model. What each action cost travels in
// Action.usage, the model's raw replies included (private: never sent to another seat).
package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/sashabaranov/go-openai"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	agentv1 "github.com/parley-arena/parley/gen/go/parley/agent/v1"
	gamev1 "github.com/parley-arena/parley/gen/go/parley/game/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Version is the agent's version, reported by Describe.
const Version = "1"

// Defaults of Config fields left zero.
const (
	DefaultAttempts      = 3
	DefaultConcurrency   = 4
	DefaultBackoff       = 500 * time.Millisecond
	DefaultMaxBackoff    = 8 * time.Second
	DefaultMaxRawBytes   = 24 << 10
	DefaultMaxReplyBytes = 56 << 10
	// DefaultAPIKeyEnv is the environment variable the API key is read from by default.
	DefaultAPIKeyEnv = "OPENAI_API_KEY"
)

// Bounds of the settings an agent address may carry: past them the agent would hold a move,
// a connection pool or a provider's quota far longer than any match needs.
const (
	MaxAttempts       = 10
	MaxConcurrency    = 64
	MaxTokens         = 1 << 20
	MaxRequestTimeout = 10 * time.Minute
)

// Cache scopes.
const (
	// CacheScopeMatch (the default) files replies by the match id too: a re-run of the same
	// match (same id, so the same seed, agents and settings where the id derives from them)
	// replays from the cache, and any other match samples afresh even when it sends the same
	// prompt.
	CacheScopeMatch = "match"
	// CacheScopeGlobal files replies by endpoint, model, messages and sampling parameters
	// only: any match that sends the same prompt gets the same reply. Only on request: at a
	// positive temperature it turns different matches of a game without chance into copies.
	CacheScopeGlobal = "global"
)

// Structured-output settings (Config.Structured), for the JSON style.
const (
	StructuredAuto       = "auto"
	StructuredJSONSchema = "json_schema"
	StructuredJSONObject = "json_object"
	StructuredOff        = "off"
)

// ErrConfig is wrapped by errors about a Config.
var ErrConfig = errors.New("llm: bad config")

// Config configures an Agent. Only BaseURL and Model are required.
type Config struct {
	// BaseURL of the OpenAI-compatible API, e.g. https://api.openai.com/v1,
	// http://localhost:11434/v1 (Ollama), http://HOST:8000/v1 (vLLM),
	// http://localhost:8080/v1 (llama.cpp's server).
	BaseURL string
	// Model to ask for, as the server names it.
	Model string
	// APIKey sent as a bearer token; may be empty for local servers. Secret: never logged,
	// never part of Describe, the cache or the record.
	APIKey string
	// APIKeyEnv names the variable the key was read from, for error messages (default
	// OPENAI_API_KEY).
	APIKeyEnv string
	// Temperature; nil leaves it to the server.
	Temperature *float64
	// MaxTokens caps each completion; 0 leaves it to the server.
	MaxTokens int
	// Seed is the sampling seed sent to the API; nil sends none.
	Seed *int
	// Persona: "" or "none", a persona name (see Prompts.Personas), or a file's path.
	Persona string
	// Target names the party a targeted persona works against (PromptData.Target), e.g. the
	// party a targeted adversary tries to isolate; "" for none.
	Target string
	// Style is the output style: "tagged" (default), "json" or "deliberation" (the LLM-Deliberation study's answer format).
	Style string
	// Reasoning: comma-separated reasoning steps and presets (see Prompts.Steps); "" means
	// DefaultReasoning.
	Reasoning string
	// PromptDir overrides shipped templates with files of the same path under it.
	PromptDir string
	// Structured, for the JSON style: StructuredAuto (default: a JSON schema, falling back to
	// a JSON object and then to none when the server refuses), or one of the others, fixed.
	Structured string
	// Attempts is how many replies the agent asks for per move, corrections included
	// (default 3). After that it plays its fallback.
	Attempts int
	// Concurrency limits the calls in flight to the endpoint at once (default 4), across
	// every match this agent plays.
	Concurrency int
	// RequestTimeout bounds one call; a call that overruns it is retried while the move has
	// time. 0: calls are bounded by the move's deadline only.
	RequestTimeout time.Duration
	// Backoff is the first retry's delay (default 500ms), doubled per retry up to MaxBackoff
	// (default 8s), or the server's Retry-After.
	Backoff, MaxBackoff time.Duration
	// SafetyMargin is kept back from the move's deadline for the answer's way back; 0 means a
	// tenth of the time, between 20ms and 2s.
	SafetyMargin time.Duration
	// CacheDir holds the reply cache; "" disables it.
	CacheDir string
	// CacheScope is CacheScopeMatch (default) or CacheScopeGlobal.
	CacheScope string
	// BudgetTokens caps the tokens (prompt and completion, cached replies at what they cost
	// when made) this agent spends over its life; 0: no cap. A call starts only when its worst
	// case fits what is left (the prompt counted at one token per two bytes, plus the
	// completion cap, sized down to what is left: with a budget every call sends a cap); when
	// none fits the agent plays its fallback with FALLBACK_CAUSE_BUDGET. A match's shared
	// budget (Observation.tokens_left) is a cap the same way.
	BudgetTokens int64
	// BudgetMicrodollars caps the cost, by Prices, in millionths of a dollar; 0: no cap.
	BudgetMicrodollars int64
	// Prices is the price table for costs (nil: DefaultPrices).
	Prices Prices
	// Preflight, when set, makes constructors that take it (the built-in agent) check the
	// endpoint and key with Check before the agent plays.
	Preflight bool
	// MaxRawBytes bounds the raw replies kept in one action's usage (default 24 KiB); longer
	// ones are cut, marked.
	MaxRawBytes int
	// MaxReplyBytes bounds the whole action as sent (default 56 KiB, under the referee's
	// default 64 KiB reply limit); raw replies are cut first to fit.
	MaxReplyBytes int
	// Logger (default: discard).
	Logger *slog.Logger
	// HTTPClient for the API (default: one with connection reuse sized to Concurrency).
	HTTPClient *http.Client
}

// LogValue writes the configuration for logs, without the API key.
func (c Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("base_url", c.BaseURL), slog.String("model", c.Model), slog.Bool("api_key_set", c.APIKey != ""),
		slog.String("temperature", optFloat(c.Temperature)), slog.Int("max_tokens", c.MaxTokens),
		slog.String("style", c.Style), slog.String("cache_dir", c.CacheDir), slog.Int("concurrency", c.Concurrency),
	)
}

// String writes the configuration without the API key.
func (c Config) String() string { return c.LogValue().String() }

func optFloat(f *float64) string {
	if f == nil {
		return "server default"
	}
	return strconv.FormatFloat(*f, 'g', -1, 64)
}

func (c *Config) setDefaults() {
	if c.Attempts <= 0 {
		c.Attempts = DefaultAttempts
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Backoff <= 0 {
		c.Backoff = DefaultBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultMaxBackoff
	}
	if c.MaxRawBytes <= 0 {
		c.MaxRawBytes = DefaultMaxRawBytes
	}
	if c.MaxReplyBytes <= 0 {
		c.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if c.Structured == "" {
		c.Structured = StructuredAuto
	}
	if c.CacheScope == "" {
		c.CacheScope = CacheScopeMatch
	}
	if c.Prices == nil {
		c.Prices = DefaultPrices()
	}
	if c.Style == "" {
		c.Style = "tagged"
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Agent is a language-model agent. It is safe for concurrent use: one Agent may play many
// matches at once, sharing its concurrency limit, cache and HTTP connections.
type Agent struct {
	cfg                 Config
	prompts             *Prompts
	style               outputStyle
	styleName           string
	persona             *template.Template
	steps               []string
	client              *openai.Client
	httpClient          *http.Client
	sem                 chan struct{}
	cache               *Cache
	level               atomic.Int32 // current structured level (JSON style)
	autoStructured      bool
	maxCompletionTokens bool // the model takes max_completion_tokens instead of max_tokens
	logger              *slog.Logger
	prices              Prices
	// spentTokens and spentCost are what the agent has spent over its life (its own budgets);
	// reserved is what calls in flight may still spend at worst (see reserve).
	spentTokens, spentCost atomic.Int64
	budgetMu               sync.Mutex
	reserved               reservation

	mu    sync.Mutex
	stats Stats
}

// Stats counts failures by kind, over the agent's life.
type Stats map[FailureKind]int64

// New returns an agent. Errors wrap ErrConfig or ErrPrompt.
func New(cfg Config) (*Agent, error) {
	cfg.setDefaults()
	switch {
	case cfg.BaseURL == "":
		return nil, fmt.Errorf("%w: the base URL is required (e.g. https://api.openai.com/v1)", ErrConfig)
	case !strings.HasPrefix(cfg.BaseURL, "http://") && !strings.HasPrefix(cfg.BaseURL, "https://"):
		return nil, fmt.Errorf("%w: base URL %q must start with http:// or https://", ErrConfig, cfg.BaseURL)
	case cfg.Model == "":
		return nil, fmt.Errorf("%w: the model is required", ErrConfig)
	case cfg.Temperature != nil && (*cfg.Temperature < 0 || *cfg.Temperature > 2 || *cfg.Temperature != *cfg.Temperature):
		return nil, fmt.Errorf("%w: temperature %v must be from 0 to 2", ErrConfig, *cfg.Temperature)
	case cfg.MaxTokens < 0 || cfg.MaxTokens > MaxTokens:
		return nil, fmt.Errorf("%w: max tokens %d must be from 0 (server default) to %d", ErrConfig, cfg.MaxTokens, MaxTokens)
	case cfg.Attempts > MaxAttempts:
		return nil, fmt.Errorf("%w: attempts %d must be from 1 to %d", ErrConfig, cfg.Attempts, MaxAttempts)
	case cfg.Concurrency > MaxConcurrency:
		return nil, fmt.Errorf("%w: concurrency %d must be from 1 to %d", ErrConfig, cfg.Concurrency, MaxConcurrency)
	case cfg.RequestTimeout < 0 || cfg.RequestTimeout > MaxRequestTimeout:
		return nil, fmt.Errorf("%w: request timeout %s must be from 0 (the move's deadline) to %s", ErrConfig, cfg.RequestTimeout, MaxRequestTimeout)
	case cfg.CacheScope != CacheScopeGlobal && cfg.CacheScope != CacheScopeMatch:
		return nil, fmt.Errorf("%w: cache scope %q must be %s or %s", ErrConfig, cfg.CacheScope, CacheScopeMatch, CacheScopeGlobal)
	case cfg.BudgetTokens < 0 || cfg.BudgetMicrodollars < 0:
		return nil, fmt.Errorf("%w: a budget must be 0 (none) or more", ErrConfig)
	}
	a := &Agent{cfg: cfg, logger: cfg.Logger, styleName: cfg.Style, stats: Stats{}, prices: cfg.Prices}
	var err error
	if a.style, err = styleByName(cfg.Style); err != nil {
		return nil, err
	}
	if a.prompts, err = LoadPrompts(cfg.PromptDir); err != nil {
		return nil, err
	}
	if !a.prompts.has(styleDir + "/" + cfg.Style + ".tmpl") {
		return nil, fmt.Errorf("%w: template %s/%s.tmpl is missing", ErrPrompt, styleDir, cfg.Style)
	}
	if a.persona, err = a.prompts.persona(cfg.Persona); err != nil {
		return nil, err
	}
	if a.steps, err = a.prompts.steps(cfg.Reasoning); err != nil {
		return nil, err
	}
	switch cfg.Structured {
	case StructuredAuto:
		a.autoStructured = true
		a.level.Store(int32(structuredSchema))
	case StructuredJSONSchema:
		a.level.Store(int32(structuredSchema))
	case StructuredJSONObject:
		a.level.Store(int32(structuredObject))
	case StructuredOff:
		a.level.Store(int32(structuredOff))
	default:
		return nil, fmt.Errorf("%w: structured output %q must be one of %s, %s, %s, %s", ErrConfig, cfg.Structured,
			StructuredAuto, StructuredJSONSchema, StructuredJSONObject, StructuredOff)
	}
	if cfg.CacheDir != "" {
		if a.cache, err = OpenCache(cfg.CacheDir); err != nil {
			return nil, err
		}
	}
	// Reasoning models refuse max_tokens (the library checks before sending): use
	// max_completion_tokens for them, and refuse settings they cannot take. The probe asks for
	// a cap even when none is set, since a budget makes the agent send one.
	probe := a.request(newTurn(&agentv1.Observation{}), nil, structuredOff, max(cfg.MaxTokens, 1))
	validator := openai.NewReasoningValidator()
	if err := validator.Validate(probe); err != nil {
		a.maxCompletionTokens = true
	}
	probe = a.request(newTurn(&agentv1.Observation{}), nil, structuredOff, cfg.MaxTokens)
	if err := validator.Validate(probe); err != nil {
		return nil, fmt.Errorf("%w: model %s: %v", ErrConfig, cfg.Model, err)
	}
	a.httpClient = cfg.HTTPClient
	if a.httpClient == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.MaxIdleConnsPerHost = cfg.Concurrency + 2
		a.httpClient = &http.Client{Transport: tr}
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = hintClient{http: a.httpClient}
	a.client = openai.NewClientWithConfig(oc)
	a.sem = make(chan struct{}, cfg.Concurrency)
	return a, nil
}

// Describe says who the agent is: the model, the sampling settings and the hash of the prompt
// templates, so that a record traces a result to its harness. Persona, style and reasoning
// steps stay agent-side: the referee and the other seats never learn them.
func (a *Agent) Describe() *gamev1.AgentInfo {
	maxTokens := "server default"
	if a.cfg.MaxTokens > 0 {
		maxTokens = strconv.Itoa(a.cfg.MaxTokens)
	}
	return &gamev1.AgentInfo{
		Name:    "llm:" + a.cfg.Model,
		Version: Version,
		Author:  "Parley",
		Description: fmt.Sprintf("Language model %s over an OpenAI-compatible chat API; temperature %s, max tokens %s; prompt templates sha256:%s.",
			a.cfg.Model, optFloat(a.cfg.Temperature), maxTokens, a.prompts.Hash()),
	}
}

// PromptHash is the hash of the agent's prompt templates (Prompts.Hash).
func (a *Agent) PromptHash() string { return a.prompts.Hash() }

// Stats returns the failures counted so far, by kind.
func (a *Agent) Stats() Stats {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(Stats, len(a.stats))
	for k, v := range a.stats {
		out[k] = v
	}
	return out
}

func (a *Agent) count(k FailureKind) {
	a.mu.Lock()
	a.stats[k]++
	a.mu.Unlock()
}

// Close releases idle connections.
func (a *Agent) Close() error {
	a.httpClient.CloseIdleConnections()
	return nil
}

// Act answers one observation. It returns within the move's deadline (the earlier of ctx's and
// the observation's time limit, less a safety margin) with a legal action: the model's, or its
// fallback. It returns an error only when ctx is cancelled.
func (a *Agent) Act(ctx context.Context, obs *agentv1.Observation) (*agentv1.Action, error) {
	t := newTurn(obs)
	mv := &moveState{model: a.cfg.Model}
	wctx, cancel := a.budget(ctx, obs)
	defer cancel()
	log := a.logger.With("match_id", obs.GetMatchId(), "game", obs.GetGame(), "seat", obs.GetSeat(), "turn", obs.GetTurn())

	data := promptData(t, a.style, a.styleName)
	data.Target = a.cfg.Target
	msgs, err := a.firstMessages(&data)
	if err != nil {
		log.Error("llm: prompt templates failed", "err", err)
		return a.finish(t, mv, nil, fmt.Sprintf("the prompt templates failed: %v", err), log), nil
	}
	var lastReasoning string
	for attempt := 1; attempt <= a.cfg.Attempts; attempt++ {
		reply, err := a.complete(wctx, t, msgs, mv)
		if errors.Is(err, errBudget) {
			mv.budgetSpent = true
			mv.failures = append(mv.failures, "no model call: "+strings.TrimPrefix(err.Error(), errBudget.Error()+": "))
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			log.Warn("llm: no reply", "err", err)
			mv.providerFailed = true
			break
		}
		d, ferr := a.style.parse(reply, t)
		var action *agentv1.Action
		if ferr == nil {
			lastReasoning = d.reasoning
			action, _, ferr = t.resolve(d)
		}
		if ferr == nil {
			return a.finish(t, mv, action, "", log), nil
		}
		a.count(ferr.kind)
		mv.formatFailures++
		mv.failures = append(mv.failures, fmt.Sprintf("reply %d unusable (%s): %s", len(mv.raw), ferr.kind, ferr.msg))
		log.Debug("llm: unusable reply", "kind", ferr.kind, "problem", ferr.msg)
		if attempt == a.cfg.Attempts {
			break
		}
		correction, err := a.prompts.render(correctionTemplate, CorrectionData{PromptData: data, Problem: ferr.msg, Legal: t.legalWords()})
		if err != nil {
			log.Error("llm: correction template failed", "err", err)
			break
		}
		mv.retries++
		msgs = append(msgs,
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: reply},
			openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: correction})
	}
	return a.finish(t, mv, nil, lastReasoning, log), nil
}

// budget bounds the work on one move: the earlier of ctx's deadline and the observation's time
// limit, less the safety margin.
func (a *Agent) budget(ctx context.Context, obs *agentv1.Observation) (context.Context, context.CancelFunc) {
	now := time.Now()
	deadline, ok := ctx.Deadline()
	if tl := obs.GetTimeLimit(); tl != nil && tl.AsDuration() > 0 {
		if d := now.Add(tl.AsDuration()); !ok || d.Before(deadline) {
			deadline, ok = d, true
		}
	}
	if !ok {
		return context.WithCancel(ctx)
	}
	margin := a.cfg.SafetyMargin
	if margin <= 0 {
		margin = min(max(deadline.Sub(now)/10, 20*time.Millisecond), 2*time.Second)
	}
	return context.WithDeadline(ctx, deadline.Add(-margin))
}

// firstMessages renders the system and user messages of a move.
func (a *Agent) firstMessages(data *PromptData) ([]openai.ChatCompletionMessage, error) {
	data.Plan = slices.Contains(a.steps, "plan")
	var err error
	if a.persona != nil {
		var b strings.Builder
		if err := a.persona.Execute(&b, data); err != nil {
			return nil, fmt.Errorf("%w: persona: %v", ErrPrompt, err)
		}
		data.Persona = strings.TrimSpace(b.String())
	}
	data.Steps = data.Steps[:0]
	for _, s := range a.steps {
		text, err := a.prompts.render(stepDir+"/"+s+".tmpl", data)
		if err != nil {
			return nil, err
		}
		data.Steps = append(data.Steps, text)
	}
	if data.Format, err = a.prompts.render(styleDir+"/"+a.styleName+".tmpl", data); err != nil {
		return nil, err
	}
	system, err := a.prompts.render(systemTemplate, data)
	if err != nil {
		return nil, err
	}
	user, err := a.prompts.render(turnTemplate, data)
	if err != nil {
		return nil, err
	}
	return []openai.ChatCompletionMessage{
		{Role: openai.ChatMessageRoleSystem, Content: system},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}, nil
}

// finish fills the action's usage. With no action the agent falls back: it sends no move of
// its own, only its usage (fallback set, with the cause) and its reasons in the private
// reasoning, and the referee plays the game's default move in its place, the least decisive
// legal one, so that no fallback ever decides a game. What it writes depends only on the
// replies (fresh or cached), never on how they were got, so a replay from the cache is the
// same.
func (a *Agent) finish(t *turn, mv *moveState, action *agentv1.Action, lastReasoning string, log *slog.Logger) *agentv1.Action {
	fallback := action == nil
	detail := ""
	if fallback {
		a.count(FailFallback)
		action = &agentv1.Action{}
		var b strings.Builder
		switch {
		case mv.budgetSpent:
			b.WriteString("FALLBACK: the budget is spent, so the agent did not ask the model; the game's default move stands in.")
		case mv.providerFailed:
			b.WriteString("FALLBACK: the model provider gave no answer, so the game's default move stands in.")
		default:
			b.WriteString("FALLBACK: the model gave no usable answer, so the game's default move stands in.")
		}
		failures := mv.failures
		if mv.providerFailed {
			// The provider's failures explain a void match; such a move is never replayed.
			failures = append(slices.Clone(failures), mv.callFailures...)
		}
		for _, f := range failures {
			fmt.Fprintf(&b, "\n- %s", f)
		}
		if r := strings.TrimSpace(lastReasoning); r != "" {
			fmt.Fprintf(&b, "\n\nThe model's last reasoning:\n%s", r)
		}
		action.PrivateReasoning = clip(b.String(), games.MaxTextBytes)
		detail = mv.fallbackDetail()
		log.Warn("llm: fallback", "failures", len(failures), "detail", detail)
	} else if len(mv.failures) > 0 {
		var b strings.Builder
		b.WriteString(action.GetPrivateReasoning())
		b.WriteString("\n\n[agent: recovered after")
		for _, f := range mv.failures {
			fmt.Fprintf(&b, "\n- %s", f)
		}
		b.WriteString("]")
		action.PrivateReasoning = clip(strings.TrimSpace(b.String()), games.MaxTextBytes)
	}
	if len(mv.callFailures) > 0 && !mv.providerFailed {
		log.Info("llm: model calls retried", "failures", strings.Join(mv.callFailures, "; "))
	}
	action.PrivateNotes = t.notesWithStanding(action)
	action.Usage = &agentv1.Usage{
		Model:            mv.model,
		PromptTokens:     mv.promptTokens,
		CompletionTokens: mv.completionTokens,
		Retries:          mv.retries,
		Latency:          durationpb.New(mv.latency),
		FormatFailures:   mv.formatFailures,
		Calls:            mv.calls,
		CacheHits:        mv.cacheHits,
		RawOutputs:       clipAll(mv.raw, a.cfg.MaxRawBytes),
		Style:            a.styleName,
		Fallback:         fallback,
		CachedTokens:     mv.cachedTokens,
		CostMicrodollars: mv.cost,
	}
	if fallback {
		action.Usage.FallbackCause = mv.fallbackCause()
		action.Usage.Fallbacks = 1
		action.Usage.FallbackDetail = detail
		if mv.budgetSpent {
			action.Usage.BudgetFallbacks = 1
		}
	}
	// Keep the whole answer under the reply limit (the referee's, when it says, less room for
	// the envelope): raw replies give way first.
	limit := a.cfg.MaxReplyBytes
	if ref := int(t.obs.GetMaxReplyBytes()); ref > 0 {
		limit = min(limit, ref-ref/8)
	}
	for proto.Size(action) > limit && len(action.Usage.RawOutputs) > 0 {
		raw := action.Usage.RawOutputs
		i := 0
		for j := range raw {
			if len(raw[j]) > len(raw[i]) {
				i = j
			}
		}
		if len(raw[i]) < 64 {
			action.Usage.RawOutputs = nil
			break
		}
		raw[i] = clip(raw[i], len(raw[i])/2)
	}
	log.Debug("llm: action", "calls", mv.calls, "cache_hits", mv.cacheHits, "retries", mv.retries,
		"format_failures", mv.formatFailures, "fallback", fallback, "latency", mv.latency)
	return action
}

// clipAll cuts texts so that together they take at most n bytes, cutting the longest first.
func clipAll(texts []string, n int) []string {
	out := slices.Clone(texts)
	total := 0
	for _, s := range out {
		total += len(s)
	}
	for total > n {
		i := 0
		for j := range out {
			if len(out[j]) > len(out[i]) {
				i = j
			}
		}
		if len(out[i]) < 64 {
			break
		}
		before := len(out[i])
		out[i] = clip(out[i], max(before-(total-n), before/2))
		total -= before - len(out[i])
	}
	return out
}
