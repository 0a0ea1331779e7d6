package reproduce

import (
	"math/rand/v2"
	"net/url"
	"strconv"
	"strings"

	"github.com/parley-arena/parley/agents/llm"
	matchv1 "github.com/parley-arena/parley/gen/go/parley/match/v1"
	"github.com/parley-arena/parley/referee/games"
)

// Estimates of what a model call costs besides its first prompt.
const (
	// historyGrowth scales the first prompt for the history later prompts carry.
	historyGrowth = 1.5
	// defaultCompletion is the completion estimate when max_tokens is not set.
	defaultCompletion = 300
	// maxSimulated bounds the moves of a simulated match.
	maxSimulated = 10_000
)

// estimate fills a set-up's calls, tokens and cost: every language-model move is one call
// (corrections not counted) whose prompt is the agent's own rendering of the first
// observation, grown by historyGrowth for the history, plus the completion cap.
func (p *Plan) estimate(pl *Planned, game games.Game, params *matchv1.GameParams, seed uint64, prices llm.Prices) error {
	st, err := game.NewState(params, seed)
	if err != nil {
		return err
	}
	obs := st.Observe(st.ToMove()[0])
	moves := int64(obs.GetMaxTurns())
	seats := len(pl.Spec.GetEntrants())
	if moves <= 0 {
		moves = simulatedMoves(game, params, seed)
	}
	for _, m := range pl.Spec.GetMatches() {
		llmSeats := 0
		var cfg llm.Config
		for _, e := range m.GetEntrants() {
			addr := pl.Spec.GetEntrants()[e].GetAddress()
			if q, ok := strings.CutPrefix(addr, "builtin:llm?"); ok {
				llmSeats++
				if cfg.Model == "" {
					v, _ := url.ParseQuery(q)
					cfg, _ = llm.ConfigFromSettings(v, func(string) string { return "" })
				}
			}
		}
		if llmSeats == 0 {
			continue
		}
		seats = len(m.GetEntrants())
		cfg.CacheDir, cfg.Preflight = "", false
		a, err := llm.New(cfg)
		if err != nil {
			return err
		}
		prompt, err := a.PromptTokens(obs)
		a.Close()
		if err != nil {
			return err
		}
		prompt = int64(float64(prompt) * historyGrowth)
		completion := int64(defaultCompletion)
		if cfg.MaxTokens > 0 {
			completion = int64(cfg.MaxTokens)
		}
		calls := moves * int64(llmSeats) / int64(seats)
		pl.Calls += calls
		pl.Tokens += calls * (prompt + completion)
		pl.Cost += calls * prices.Cost(cfg.Model, prompt, completion)
	}
	return nil
}

// simulatedMoves plays a match with random legal moves and counts them, for games with no
// turn limit in their observation (coalition, matrix and tree games).
func simulatedMoves(game games.Game, params *matchv1.GameParams, seed uint64) int64 {
	st, err := game.NewState(params, seed)
	if err != nil {
		return 0
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	var n int64
	for n < maxSimulated {
		movers := st.ToMove()
		if len(movers) == 0 {
			break
		}
		for _, s := range movers {
			a := games.RandomAction(st.Observe(s), rng)
			if _, err := st.Apply(s, a); err != nil {
				if _, err := st.Apply(s, st.Default(s)); err != nil {
					return n
				}
			}
			n++
		}
	}
	return n
}

// Money writes micro-dollars as dollars.
func Money(micro int64) string { return "$" + strconv.FormatFloat(float64(micro)/1e6, 'f', 2, 64) }
