package agentcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/parley-arena/parley/agents/llm"
	"github.com/parley-arena/parley/agents/sdk"
	"github.com/parley-arena/parley/cmd/parley/internal/cli"
)

// llmOptions are the flags of `parley agent llm`.
type llmOptions struct {
	listen         string
	baseURL        string
	model          string
	apiKeyEnv      string
	temperature    optionalFloat
	maxTokens      int
	seed           optionalInt
	persona        string
	style          string
	reasoning      string
	promptDir      string
	cacheDir       string
	noCache        bool
	cacheScope     string
	concurrency    int
	attempts       int
	requestTimeout time.Duration
	structured     string
	list           bool
	budgetTokens   int64
	budgetUSD      float64
	prices         string
	target         string
	preflight      bool
	verbose        bool
}

func (o *llmOptions) bind(fs *pflag.FlagSet) {
	fs.StringVar(&o.listen, "listen", "127.0.0.1:50051", "address to serve on (host:port; port 0 picks a free one)")
	fs.StringVar(&o.baseURL, "base-url", "", "base URL of the OpenAI-compatible API: https://api.openai.com/v1, http://HOST:8000/v1 (vLLM), http://localhost:11434/v1 (Ollama), http://localhost:8080/v1 (llama.cpp)")
	fs.StringVar(&o.model, "model", "", "model name, as the server knows it")
	fs.StringVar(&o.apiKeyEnv, "api-key-env", llm.DefaultAPIKeyEnv, "environment variable holding the API key (the key itself is never a flag)")
	fs.Var(&o.temperature, "temperature", "sampling temperature, 0 to 2 (default: the server's)")
	fs.IntVar(&o.maxTokens, "max-tokens", 0, "cap on each completion's tokens (0: the server's default)")
	fs.Var(&o.seed, "sampling-seed", "sampling seed sent to the API (default: none)")
	fs.StringVar(&o.persona, "persona", "", "persona: a name (see --list) or a file holding the persona's text")
	fs.StringVar(&o.style, "style", "tagged", "output style: tagged, json or deliberation (the LLM-Deliberation study's answer format)")
	fs.StringVar(&o.reasoning, "reasoning", llm.DefaultReasoning, "reasoning steps and presets, comma-separated (see --list)")
	fs.StringVar(&o.promptDir, "prompt-dir", "", "directory of prompt templates overriding the shipped ones (same file names)")
	fs.StringVar(&o.cacheDir, "cache", "", "reply cache directory (default: parley/llm under the user's cache directory)")
	fs.BoolVar(&o.noCache, "no-cache", false, "do not cache replies")
	fs.StringVar(&o.cacheScope, "cache-scope", llm.CacheScopeGlobal, "global (same prompt, same reply, in any match) or match (the match id is part of the key)")
	fs.IntVar(&o.concurrency, "concurrency", llm.DefaultConcurrency, "most calls in flight to the endpoint at once, across all matches")
	fs.IntVar(&o.attempts, "attempts", llm.DefaultAttempts, "replies asked for per move, corrections included, before the fallback move")
	fs.DurationVar(&o.requestTimeout, "request-timeout", 0, "bound on one call, retried while the move has time (0: the move's deadline only)")
	fs.StringVar(&o.structured, "structured", llm.StructuredAuto, "structured output for the JSON style: auto, json_schema, json_object or off")
	fs.Int64Var(&o.budgetTokens, "budget-tokens", 0, "tokens the agent may spend while it serves (0: no cap); then it plays its fallback")
	fs.Float64Var(&o.budgetUSD, "budget-usd", 0, "dollars the agent may spend while it serves, by the price table (0: no cap)")
	fs.StringVar(&o.prices, "prices", "", "price table file (YAML, dollars per million tokens; default: the shipped one)")
	fs.StringVar(&o.target, "target", "", "the party a targeted persona works against")
	fs.BoolVar(&o.preflight, "preflight", true, "check the endpoint and key (GET /models) before serving")
	fs.BoolVar(&o.list, "list", false, "list personas, styles and reasoning steps, then exit")
	fs.BoolVar(&o.verbose, "verbose", false, "log every move to stderr")
}

func newLLMCmd(deps *cli.Deps) *cobra.Command {
	o := &llmOptions{}
	cmd := &cobra.Command{
		Use:   "llm --base-url URL --model NAME [flags]",
		Short: "Serve a language model (any OpenAI-compatible API) as an agent",
		Long: `Serve a language model as a gRPC AgentService that plays every game from its observation:
the briefing, its private notes, the visible history and what is legal now. The model answers
in the tagged or JSON style; unusable replies are corrected, then a fallback move is played;
rate limits, server errors and timeouts are retried within each move's deadline.

The API key is read from the environment variable named by --api-key-env (default
OPENAI_API_KEY), never from a flag; local servers need none. Base URLs:
  OpenAI     https://api.openai.com/v1
  vLLM       http://HOST:8000/v1
  Ollama     http://localhost:11434/v1
  llama.cpp  http://localhost:8080/v1

Replies are cached by model, messages and sampling parameters (--cache, on by default;
--no-cache to turn off), so a recorded match re-run with the same seed and agents replays
without calling the model. See agents/llm/README.md.`,
		Example: `  OPENAI_API_KEY=... parley agent llm --base-url https://api.openai.com/v1 --model gpt-4o --listen 127.0.0.1:50061
  parley agent llm --base-url http://localhost:11434/v1 --model llama3.1 --style json --persona cunning --reasoning cot`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runLLM(cmd.Context(), deps, o)
		},
	}
	o.bind(cmd.Flags())
	return cmd
}

func runLLM(ctx context.Context, deps *cli.Deps, o *llmOptions) error {
	if o.list {
		p, err := llm.LoadPrompts(o.promptDir)
		if err != nil {
			return cli.Usagef("%v", err)
		}
		fmt.Fprintf(deps.Out, "personas: %s\nstyles: %s\nreasoning steps: %s\nreasoning presets: %s\nprompt templates: sha256:%s\n",
			strings.Join(p.Personas(), ", "), strings.Join(llm.Styles(), ", "), strings.Join(p.Steps(), ", "), strings.Join(llm.ReasoningPresets(), "; "), p.Hash())
		return nil
	}
	switch {
	case o.baseURL == "":
		return cli.Usagef("--base-url is required (e.g. https://api.openai.com/v1 or http://localhost:11434/v1)")
	case o.model == "":
		return cli.Usagef("--model is required")
	}
	level := slog.LevelInfo
	if o.verbose {
		level = slog.LevelDebug
	}
	logger := deps.Logger(level)
	cfg := llm.Config{
		BaseURL: o.baseURL, Model: o.model, APIKey: deps.Getenv(o.apiKeyEnv),
		Temperature: o.temperature.value, MaxTokens: o.maxTokens, Seed: o.seed.value,
		Persona: o.persona, Style: o.style, Reasoning: o.reasoning, PromptDir: o.promptDir,
		CacheScope: o.cacheScope, Concurrency: o.concurrency, Attempts: o.attempts,
		RequestTimeout: o.requestTimeout, Structured: o.structured, Logger: logger,
		APIKeyEnv: o.apiKeyEnv, BudgetTokens: o.budgetTokens, BudgetMicrodollars: int64(o.budgetUSD * 1e6), Target: o.target,
	}
	prices, err := llm.LoadPrices(o.prices)
	if err != nil {
		return cli.Usagef("--prices: %v", err)
	}
	cfg.Prices = prices
	if !o.noCache {
		cfg.CacheDir = o.cacheDir
		if cfg.CacheDir == "" {
			dir, err := llm.DefaultCacheDir()
			if err != nil {
				return cli.Usagef("%v; give --cache DIR or --no-cache", err)
			}
			cfg.CacheDir = dir
		}
	}
	if cfg.APIKey == "" {
		logger.Info("no API key (fine for local servers)", "variable", o.apiKeyEnv)
	}
	agent, err := llm.New(cfg)
	if err != nil {
		if errors.Is(err, llm.ErrConfig) || errors.Is(err, llm.ErrPrompt) {
			return cli.Usagef("%v", err)
		}
		return err
	}
	defer agent.Close()
	if o.preflight {
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := agent.Check(cctx)
		cancel()
		if err != nil {
			return cli.Usagef("%v", err)
		}
	}
	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return cli.Usagef("--listen %s: %v", o.listen, err)
	}
	logger.Info("serving", "config", cfg, "prompt_hash", agent.PromptHash())
	fmt.Fprintf(deps.Out, "agent llm listening on %s\n", lis.Addr())
	err = sdk.ServeListener(ctx, lis, agent, sdk.WithLogger(logger))
	if stats := agent.Stats(); len(stats) > 0 {
		logger.Info("failures counted", "by_kind", fmt.Sprint(map[llm.FailureKind]int64(stats)))
	}
	return err
}

// optionalFloat is a float flag that may be left unset.
type optionalFloat struct{ value *float64 }

func (f *optionalFloat) String() string {
	if f.value == nil {
		return ""
	}
	return strconv.FormatFloat(*f.value, 'g', -1, 64)
}

func (f *optionalFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("want a number")
	}
	f.value = &v
	return nil
}

func (f *optionalFloat) Type() string { return "float" }

// optionalInt is an int flag that may be left unset.
type optionalInt struct{ value *int }

func (f *optionalInt) String() string {
	if f.value == nil {
		return ""
	}
	return strconv.Itoa(*f.value)
}

func (f *optionalInt) Set(s string) error {
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a whole number")
	}
	f.value = &v
	return nil
}

func (f *optionalInt) Type() string { return "int" }
